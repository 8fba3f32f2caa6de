"""RelevanceScorer: each item's relevance to the query of a call (an extension; spec notes, "Relevance").

Lexical by default: Okapi BM25 over the scoreable list, the list being the corpus (its document
frequencies and average length), divided by the list's best score so that scores lie in [0, 1]. With an
:class:`~cupel.protocols.Embedder` it is hybrid: ``(1 - semantic_weight) * bm25 + semantic_weight *
cosine`` (cosine similarity clipped to [0, 1]). Without a query every item scores 0.0: a relevance term
then adds nothing and changes no ranking; the report says so (``SelectionReport.notes``).

Conversation context (``neighbors=N``): in a conversation the turn that answers a question is often
next to the turn that names its terms ("Did you read the book?" / "I loved it"), so each item may
also take a share of its neighbours' relevance: ``neighbor_weight ** d`` of the score of each item
``d`` places before or after it in the list, for ``d`` up to ``N``, then divided by the best again.
The list order must then be the conversation's (chat candidates are; the pipeline's are the caller's).
Off by default; the chat presets use ``neighbors=3`` (docs/eval.md, "Relevance").

Text analysis, measured on the LoCoMo dev split (docs/eval.md, "Relevance"): lower-cased runs of letters
and digits, English stop words dropped, then :func:`stem` (inflectional suffixes only); the words and
their counting are :mod:`cupel.scorers.terms`'. Document length is the content's length in characters,
which weighs like a word count without counting words.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

from cupel import _numeric
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem
from cupel.protocols import Embedder
from cupel.scorers._base import ScorerBase, check_unit_interval, check_weight
from cupel.scorers.term_counts import TermCounts
from cupel.scorers.term_table import term_table
from cupel.scorers.terms import (
    STOP_WORDS,
    WHOLE_LIST_MINIMUM,
    Run,
    columns_of,
    common_terms,
    count_terms,
    count_words,
    query_terms,
    stem,
    term_search,
)

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    from cupel.scorers.columns import ItemColumns

__all__ = ["STOP_WORDS", "RelevanceScorer", "bm25_scores", "query_terms", "stem"]


def bm25_scores(
    query: str,
    texts: Sequence[str],
    *,
    k1: float = 1.2,
    b: float = 0.75,
    stemming: bool = True,
    stop_words: bool = True,
    kept: TermCounts | None = None,
) -> list[float]:
    """Okapi BM25 of every text against ``query``, the texts being the corpus; unnormalised, >= 0.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` (never negative); the length of a text is its
    number of characters. A text without any query term scores 0.0, exactly. The terms are counted
    in whole-array passes (numpy) when many of a long list's texts hold them, else by substring
    search, counting only what ``kept`` (a caller's, for a list that grows) did not keep: the same
    counts and the same floats every way (:mod:`cupel.scorers.terms`).
    """
    wanted = query_terms(query, stemming=stemming, stop_words=stop_words)
    count = len(texts)
    if not wanted or not count:
        return [0.0] * count
    lengths = list(map(len, texts))
    average = sum(lengths) / count
    np = _numeric.numpy_module() if count >= WHOLE_LIST_MINIMUM else None
    counting = partial(_count, np, stemming=stemming, stop_words=stop_words)
    if kept is not None:
        options = {"stemming": stemming, "stop_words": stop_words}
        if np is not None:
            counted = kept.table(np, wanted, texts, partial(_columns, counting), **options)
        else:
            counted = _rows(kept.columns(wanted, texts, partial(_columns, counting), **options))
    else:
        counted = counting(wanted, texts)
        if not isinstance(counted, dict):
            counted = counted.T  # a row a term
    if not isinstance(counted, dict):
        return _bm25_of_table(np, counted, lengths, average, k1=k1, b=b)
    found = sorted(counted.items())
    scores = [0.0] * count
    frequency = [0] * len(wanted)
    for _, row in found:
        for index, value in enumerate(row):
            if value:
                frequency[index] += 1
    idf = _idf(frequency, count)
    for doc, row in found:
        norm = k1 * (1.0 - b + b * lengths[doc] / average) if average > 0 else k1
        total = 0.0
        for index, value in enumerate(row):
            if value:
                total += idf[index] * value * (k1 + 1.0) / (value + norm)
        scores[doc] = total
    return scores


def _count(
    np: Any,
    wanted: list[str],
    texts: Sequence[str],
    runs: Sequence[Run] = (),
    *,
    stemming: bool,
    stop_words: bool,
) -> Any:
    """How often each text holds each term, by the path :func:`bm25_scores` takes: a numpy table (a row
    a text, a column a term) for terms many of a long list's texts hold, else the reference's rows: a
    short list's words tallied text by text, a long list's found by substring search (in one compiled
    pass when the ``fast`` extra is installed).
    ``runs``: the texts lowered (:func:`~cupel.scorers.terms.lowered_runs`), when a caller kept them."""
    if len(texts) < WHOLE_LIST_MINIMUM:
        return count_words(wanted, texts, stemming=stemming, stop_words=stop_words)
    if np is not None and common_terms(wanted, texts):
        return term_table(np, wanted, texts, stemming=stemming, stop_words=stop_words, runs=runs)
    search = term_search(wanted)
    return count_terms(wanted, texts, stemming=stemming, stop_words=stop_words, runs=runs, search=search)


def _columns(
    counting: Callable[[list[str], Sequence[str], list[Run]], Any],
    wanted: list[str],
    texts: Sequence[str],
    runs: list[Run],
) -> list[Any]:
    """``counting``'s counts as columns, a count per text (the form :class:`TermCounts` keeps: lists,
    or arrays where numpy counted them)."""
    counted = counting(wanted, texts, runs)
    if not isinstance(counted, dict):
        # An array a term, each of its own (a kept column must not hold a whole table in memory).
        return [column.copy() for column in counted.T]
    return columns_of(counted, len(wanted), len(texts))


def _rows(columns: list[list[int]]) -> dict[int, list[int]]:
    """Columns of counts as the reference's rows: the texts that hold a term, by position."""
    return {doc: list(row) for doc, row in enumerate(zip(*columns, strict=True)) if any(row)}


def _idf(frequency: list[int], count: int) -> list[float]:
    """Each term's inverse document frequency from the number of texts holding it (``df``)."""
    return [math.log(1.0 + (count - df + 0.5) / (df + 0.5)) for df in frequency]


def _bm25_of_table(
    np: Any, table: Any, lengths: list[int], average: float, *, k1: float, b: float
) -> list[float]:
    """:func:`bm25_scores`' sums over a table of counts (a row a term, a column a text), term by term
    in the reference's order of operations, so that the floats are the same, bit for bit."""
    idf = _idf(np.count_nonzero(table, axis=1).tolist(), len(lengths))
    if average > 0:
        norm = k1 * (1.0 - b + b * np.asarray(lengths, dtype=np.float64) / average)
    else:
        norm = np.full(len(lengths), k1)
    values = table.astype(np.float64)
    # Every term's part at once; the reference adds nothing for a term a text lacks (where 0/0 would
    # be NaN when k1 = 0).
    parts = np.divide(
        np.asarray(idf)[:, None] * values * (k1 + 1.0),
        values + norm,
        out=np.zeros(values.shape),
        where=values > 0,
    )
    total = np.zeros(len(lengths))
    for part in parts:  # summed term by term, as the reference sums
        total += part
    result: list[float] = total.tolist()
    return result


def _cosines(embedder: Embedder, query: str, texts: list[str]) -> list[float]:
    """Cosine similarity of each text to the query, clipped to [0, 1]; 0.0 for a zero vector."""
    vectors = list(embedder([query, *texts]))
    if len(vectors) != len(texts) + 1:
        raise CupelError(
            f"RelevanceScorer: embedder returned {len(vectors)} vectors for {len(texts) + 1} texts"
        )
    head = [float(value) for value in vectors[0]]
    head_norm = math.sqrt(math.fsum(value * value for value in head))
    result = []
    for index, vector in enumerate(vectors[1:]):
        values = [float(value) for value in vector]
        if len(values) != len(head):
            raise CupelError(
                f"RelevanceScorer: embedder returned a vector of {len(values)} dimensions for text "
                f"{index}, {len(head)} for the query"
            )
        norm = math.sqrt(math.fsum(value * value for value in values))
        if norm == 0.0 or head_norm == 0.0:
            result.append(0.0)
            continue
        cosine = math.fsum(a * b for a, b in zip(head, values, strict=True)) / (norm * head_norm)
        result.append(min(1.0, max(0.0, cosine)))
    return result


class RelevanceScorer(ScorerBase):
    """Scores items by relevance to a query: BM25, hybrid with an embedder (see the module docstring).

    ``RelevanceScorer()`` reads the query of each call (``pipeline.run(items, budget, query=...)``);
    ``RelevanceScorer("tree nut allergy")`` has a fixed one, which a call's query replaces.
    ``k1`` (term-frequency saturation) and ``b`` (length normalisation) are Okapi's parameters.
    """

    __slots__ = (
        "b",
        "embedder",
        "k1",
        "neighbor_weight",
        "neighbors",
        "query",
        "semantic_weight",
        "stemming",
        "stop_words",
    )

    query: str | None
    k1: float
    b: float
    stemming: bool
    stop_words: bool
    embedder: Embedder | None
    semantic_weight: float
    neighbors: int
    neighbor_weight: float

    def __init__(
        self,
        query: str | None = None,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        stemming: bool = True,
        stop_words: bool = True,
        embedder: Embedder | None = None,
        semantic_weight: float = 0.5,
        neighbors: int = 0,
        neighbor_weight: float = 0.5,
    ) -> None:
        if query is not None and not isinstance(query, str):
            raise CupelTypeError(f"RelevanceScorer: query must be a string or None, got {query!r}")
        for name, flag in (("stemming", stemming), ("stop_words", stop_words)):
            if not isinstance(flag, bool):
                raise CupelTypeError(f"RelevanceScorer: {name} must be a bool, got {flag!r}")
        if embedder is not None and not callable(embedder):
            raise CupelTypeError(
                f"RelevanceScorer: embedder must be callable (texts -> vectors), got {embedder!r}"
            )
        self.query = query
        self.k1 = check_weight("RelevanceScorer", "k1", k1, allow_zero=True)
        self.b = check_unit_interval("RelevanceScorer", "b", b)
        self.stemming = stemming
        self.stop_words = stop_words
        self.embedder = embedder
        self.semantic_weight = check_unit_interval("RelevanceScorer", "semantic_weight", semantic_weight)
        if isinstance(neighbors, bool) or not isinstance(neighbors, int):
            raise CupelTypeError(f"RelevanceScorer: neighbors must be an integer, got {neighbors!r}")
        if neighbors < 0:
            raise InvalidConfigurationError(f"RelevanceScorer: neighbors must be >= 0, got {neighbors!r}")
        self.neighbors = neighbors
        self.neighbor_weight = check_unit_interval("RelevanceScorer", "neighbor_weight", neighbor_weight)

    def with_query(self, query: str) -> RelevanceScorer:
        """This scorer answering ``query`` (``self`` when it already does)."""
        if not isinstance(query, str):
            raise CupelTypeError(f"query must be a string, got {query!r}")
        if query == self.query:
            return self
        return RelevanceScorer(
            query,
            k1=self.k1,
            b=self.b,
            stemming=self.stemming,
            stop_words=self.stop_words,
            embedder=self.embedder,
            semantic_weight=self.semantic_weight,
            neighbors=self.neighbors,
            neighbor_weight=self.neighbor_weight,
        )

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        items = list(all_items)
        for index, other in enumerate(items):
            if other is item:
                return self.score_all(items)[index]
        return self.score_all([*items, item])[-1]

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return self._score_texts([item.content for item in items])

    def score_columns(self, batch: ItemColumns) -> list[float]:
        """``score_all`` of the batch's contents (no item built for a batch given as columns), its
        terms counted with the batch's ``term_counts`` when it carries them."""
        if self.query is None:
            return [0.0] * batch.count
        return self._score_texts(batch.contents(), batch.term_counts)

    def _score_texts(self, texts: list[str], kept: TermCounts | None = None) -> list[float]:
        if self.query is None or not texts:
            return [0.0] * len(texts)
        raw = bm25_scores(
            self.query,
            texts,
            k1=self.k1,
            b=self.b,
            stemming=self.stemming,
            stop_words=self.stop_words,
            kept=kept,
        )
        best = max(raw)
        lexical = [value / best for value in raw] if best > 0 else raw
        if self.embedder is None or self.semantic_weight == 0.0:
            return self._spread(lexical)
        if not query_terms(self.query, stemming=self.stemming, stop_words=self.stop_words):
            # A query of stop words only carries no signal for either half: every item scores the same.
            return [0.0] * len(texts)
        semantic = _cosines(self.embedder, self.query, texts)
        weight = self.semantic_weight
        return self._spread(
            [(1.0 - weight) * lex + weight * sem for lex, sem in zip(lexical, semantic, strict=True)]
        )

    def _spread(self, scores: list[float]) -> list[float]:
        """Each score plus ``neighbor_weight ** d`` of the scores ``d <= neighbors`` places away, over
        the best (the module docstring's conversation context); ``scores`` itself when off."""
        if not self.neighbors or self.neighbor_weight == 0.0:
            return scores
        count = len(scores)
        np = _numeric.numpy_module() if count >= WHOLE_LIST_MINIMUM else None
        spread: Any = list(scores) if np is None else np.asarray(scores, dtype=np.float64)
        values: Any = scores if np is None else spread.copy()
        share = 1.0
        for distance in range(1, min(self.neighbors, count - 1) + 1):
            share *= self.neighbor_weight
            # Every item gains from the one `distance` before it, then from the one after it (the
            # array twin adds in the same order, so the floats are the same).
            if np is not None:
                spread[distance:] += share * values[:-distance]
                spread[:-distance] += share * values[distance:]
            else:
                for index in range(distance, count):
                    spread[index] += share * values[index - distance]
                    spread[index - distance] += share * values[index]
        if np is not None:
            spread = spread.tolist()
        best = max(spread)
        return [value / best for value in spread] if best > 0 else spread

    def __repr__(self) -> str:
        parts = [] if self.query is None else [repr(self.query)]
        if self.k1 != 1.2:
            parts.append(f"k1={self.k1!r}")
        if self.b != 0.75:
            parts.append(f"b={self.b!r}")
        if not self.stemming:
            parts.append("stemming=False")
        if not self.stop_words:
            parts.append("stop_words=False")
        if self.embedder is not None:
            parts.append(f"embedder={self.embedder!r}, semantic_weight={self.semantic_weight!r}")
        if self.neighbors:
            parts.append(f"neighbors={self.neighbors!r}")
        if self.neighbor_weight != 0.5:
            parts.append(f"neighbor_weight={self.neighbor_weight!r}")
        return f"RelevanceScorer({', '.join(parts)})"

    def _key(self) -> tuple[object, ...]:
        return (
            self.query,
            self.k1,
            self.b,
            self.stemming,
            self.stop_words,
            id(self.embedder),
            self.semantic_weight,
            self.neighbors,
            self.neighbor_weight,
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RelevanceScorer)
            and self._key() == other._key()
            and self.embedder is other.embedder
        )

    def __hash__(self) -> int:
        return hash((RelevanceScorer, *self._key()))
