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
and digits, English stop words dropped, then :func:`stem` (inflectional suffixes only). Document length
is the content's length in characters, which weighs like a word count without counting words.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from cupel import _numeric
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem
from cupel.protocols import Embedder
from cupel.scorers._base import ScorerBase, check_unit_interval, check_weight

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    from cupel.scorers.columns import ItemColumns

__all__ = ["STOP_WORDS", "RelevanceScorer", "bm25_scores", "query_terms", "stem"]

_WORD = re.compile(r"[^\W_]+")

#: Function words dropped from queries and documents: they say nothing about what a text is about.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing don down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t d ll m re ve
    """.split()  # noqa: SIM905 - read as prose; the words one a line took 140 lines
)

_KEEP_DOUBLE = frozenset("lsz")


def stem(word: str) -> str:
    """A light English stemmer that only removes suffixes, so a stem is always a prefix of its word.

    Plurals and verb inflections: ``-ies``/``-ied``, then ``-s`` (not ``-ss``, ``-us``, ``-is``), then
    ``-ing``/``-ed``; then a doubled final consonant (``runn`` -> ``run``), a final ``e`` or a ``y``
    after a consonant, so ``study``, ``studies``, ``studied`` and ``studying`` all become ``stud`` and
    ``paintings`` becomes ``paint``. A stem keeps at least three characters. (Porter's stemmer rewrites
    suffixes, ``happy`` -> ``happi``; a prefix lets a whole list be filtered by substring search before
    any text is split into words.)
    """
    if len(word) <= 3:
        return word
    if word.endswith(("ies", "ied")) and len(word) > 5:
        return word[:-3]
    base = word
    if base.endswith("s") and not base.endswith(("ss", "us", "is")):
        base = base[:-1]
    if base.endswith("ing") and len(base) >= 6:
        base = base[:-3]
    elif base.endswith("ed") and len(base) >= 5:
        base = base[:-2]
    if len(base) < len(word) and len(base) >= 4 and base[-1] == base[-2] and base[-1] not in _KEEP_DOUBLE:
        base = base[:-1]
    # A final e (bake, baking -> bak) or a y after a consonant (study, studies -> stud).
    if len(base) >= 4 and (base[-1] == "e" or (base[-1] == "y" and base[-2] not in "aeiouy")):
        base = base[:-1]
    return base


def query_terms(query: str, *, stemming: bool = True, stop_words: bool = True) -> list[str]:
    """The distinct terms of ``query`` that BM25 looks for, sorted (a fixed order for the float sums)."""
    terms = set()
    for word in _WORD.findall(query.lower()):
        if stop_words and word in STOP_WORDS:
            continue
        terms.add(stem(word) if stemming else word)
    return sorted(terms)


def bm25_scores(
    query: str,
    texts: Sequence[str],
    *,
    k1: float = 1.2,
    b: float = 0.75,
    stemming: bool = True,
    stop_words: bool = True,
) -> list[float]:
    """Okapi BM25 of every text against ``query``, the texts being the corpus; unnormalised, >= 0.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` (never negative); the length of a text is its
    number of characters. A text without any query term scores 0.0, exactly. Terms that many of a
    long list's texts hold are counted and summed in whole-array passes (numpy), the same floats.
    """
    wanted = query_terms(query, stemming=stemming, stop_words=stop_words)
    count = len(texts)
    if not wanted or not count:
        return [0.0] * count
    lengths = list(map(len, texts))
    average = sum(lengths) / count
    if count >= _WHOLE_LIST_MINIMUM and _common(wanted, texts):
        np = _numeric.numpy_module()
        if np is not None:
            table = _term_table(np, wanted, texts, stemming=stemming, stop_words=stop_words)
            return _bm25_of_table(np, table, lengths, average, k1=k1, b=b)
    scores = [0.0] * count
    found = sorted(_term_counts_plain(wanted, texts, stemming=stemming, stop_words=stop_words).items())
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


def _idf(frequency: list[int], count: int) -> list[float]:
    """Each term's inverse document frequency from the number of texts holding it (``df``)."""
    return [math.log(1.0 + (count - df + 0.5) / (df + 0.5)) for df in frequency]


def _bm25_of_table(
    np: Any, table: Any, lengths: list[int], average: float, *, k1: float, b: float
) -> list[float]:
    """:func:`bm25_scores`' sums over a table of counts (a row a text, a column a term), column by
    column in the reference's order of operations, so that the floats are the same, bit for bit."""
    idf = _idf(np.count_nonzero(table, axis=0).tolist(), len(lengths))
    if average > 0:
        norm = k1 * (1.0 - b + b * np.asarray(lengths, dtype=np.float64) / average)
    else:
        norm = np.full(len(lengths), k1)
    total = np.zeros(len(lengths))
    term = np.zeros(len(lengths))
    for index, weight in enumerate(idf):
        value = table[:, index].astype(np.float64)
        present = value > 0  # the reference adds nothing for a term a text lacks (0/0 when k1 = 0)
        np.divide(weight * value * (k1 + 1.0), value + norm, out=term, where=present)
        term[~present] = 0.0
        total += term
    result: list[float] = total.tolist()
    return result


#: Below this many texts the substring search is cheap whatever the terms; from it on, terms common in
#: the texts (every chat message naming them) make visiting each occurrence cost more than the
#: whole-array passes (docs/spec-notes.md, "What relevance costs").
_WHOLE_LIST_MINIMUM = 64


def _common(wanted: list[str], texts: Sequence[str]) -> bool:
    """Whether the terms occur often enough (as substrings, against a rough word count) that the
    whole-array passes cost less than visiting each occurrence: a choice of path, not of result."""
    sample = texts[:: max(1, len(texts) // 64)]  # a spread of at most about 64 texts
    corpus = "\n".join(sample).lower()
    occurrences = sum(map(corpus.count, wanted))
    return 10 * occurrences > corpus.count(" ") + len(sample)


def _term_of(word: str, *, stemming: bool, stop_words: bool) -> str | None:
    """The term a word counts for (``None``: a stop word)."""
    return None if stop_words and word in STOP_WORDS else stem(word) if stemming else word


def _lowered(texts: Sequence[str]) -> tuple[str, list[int]]:
    """The texts lower-cased, each after a line break (which no word spans) and all before eight
    more, and where each ends (the offset just past its line break): text ``i`` holds the offsets
    before ``ends[i]``. The padding gives every word a non-word character before it and lets an
    eight-character window start anywhere in the texts."""
    lengths = list(map(len, texts))
    corpus = "\n".join(["", *texts, _PADDING]).lower()
    if len(corpus) != sum(lengths) + len(texts) + len(_PADDING) + 1:
        # A character whose lower case is longer (İ): lower each text on its own.
        lowered = [text.lower() for text in texts]
        corpus = "\n".join(["", *lowered, _PADDING])
        lengths = list(map(len, lowered))
    return corpus, list(accumulate(lengths, lambda total, length: total + length + 1, initial=1))[1:]


_PADDING = "\n" * 7


def _term_table(np: Any, wanted: list[str], texts: Sequence[str], *, stemming: bool, stop_words: bool) -> Any:
    r""":func:`_term_counts_plain` in whole-array passes, as a table: a row a text, a column a term.

    The lower-cased corpus becomes an array of code units (bytes when it is ASCII, else UTF-32) and a
    mask of its word units (letters and digits: ``str.isalnum``, the ``[^\W_]`` of the word pattern).
    The words a term begins are those with its first unit whose first eight bytes, read as one
    integer, match the term's; each distinct such word is mapped to its term once, in Python;
    the matches are counted per text by binary search of where each text ends.
    """
    corpus, ends = _lowered(texts)
    words = _Words(np, corpus)
    bounds = np.asarray(ends, dtype=np.int64)
    columns = []
    for term in wanted:
        found = words.of_term(term, stemming=stemming, stop_words=stop_words)
        columns.append(np.diff(np.searchsorted(found, bounds), prepend=0))
    return np.stack(columns, axis=1)


#: Byte -> 1 for an ASCII letter or digit, else 0: the word mask of an ASCII corpus in one pass.
_WORD_BYTES = bytes(1 if chr(code).isascii() and chr(code).isalnum() else 0 for code in range(256))


class _Words:
    """The words of a lower-cased corpus, for :func:`_term_table` (one call's, never kept).

    ``codes``: the corpus (:func:`_lowered`, padded) as code units, so that an eight-byte window
    (``windows``) starts at every unit of a text; ``is_word``: the mask of word units;
    ``starts``: where each word starts; ``first``: each word's first unit.
    """

    def __init__(self, np: Any, corpus: str) -> None:
        self.np = np
        self.corpus = corpus
        if corpus.isascii():
            self.encoding, self.width = "ascii", 1
            data = corpus.encode("ascii")
            self.codes = np.frombuffer(data, dtype=np.uint8)
            self.is_word = np.frombuffer(data.translate(_WORD_BYTES), dtype=bool)
        else:
            self.encoding, self.width = "utf-32-le", 4
            data = corpus.encode("utf-32-le", "surrogatepass")
            self.codes = codes = np.frombuffer(data, dtype=np.uint32)
            # Lower-cased: no A-Z. Letters and digits beyond ASCII are found among the distinct units.
            self.is_word = ((codes >= 97) & (codes <= 122)) | ((codes >= 48) & (codes <= 57))
            wide = np.unique(codes[codes >= 128])
            alnum = [chr(code).isalnum() for code in wide.tolist()]
            self.is_word |= np.isin(codes, wide[np.asarray(alnum, dtype=bool)])
        self.starts = np.flatnonzero(self.is_word[1:] > self.is_word[:-1])
        self.starts += 1
        # An eight-byte window at every unit (unaligned reads of the same buffer, no copy).
        self.windows = np.ndarray(
            (len(self.codes) - 8 // self.width + 1,), "<u8", data, strides=(self.width,)
        )
        self.first = self.codes[self.starts]

    def of_term(self, term: str, *, stemming: bool, stop_words: bool) -> Any:
        """The offsets (sorted) of the words whose term is ``term``."""
        np = self.np
        if self.width == 1 and not term.isascii():
            return np.empty(0, dtype=np.int64)
        head = term.encode(self.encoding, "surrogatepass")[:8]
        found = self.starts[np.flatnonzero(self.first == ord(term[0]))]
        # A shorter word fails the comparison at its end: a non-word unit is no term's.
        keys = self.windows[found] & np.uint64((1 << 8 * len(head)) - 1)
        found = found[keys == int.from_bytes(head, "little")]
        for offset in range(len(head) // self.width, len(term)):  # the units beyond the key's
            found = found[self.codes[found + offset] == ord(term[offset])]
        longer = self.is_word[found + len(term)]
        exact = found[~longer]
        if _term_of(term, stemming=stemming, stop_words=stop_words) != term:
            exact = exact[:0]
        if not longer.any():
            return exact
        return np.sort(np.concatenate([exact, self._longer(term, found[longer], stemming, stop_words)]))

    def _longer(self, term: str, found: Any, stemming: bool, stop_words: bool) -> Any:
        """Those of ``found`` (words that begin with ``term`` and go on) whose term is ``term``: the
        words are grouped by length and each distinct one is mapped to its term once."""
        np = self.np
        lengths = np.full(len(found), len(term) + 1, dtype=np.int64)
        going = np.arange(len(found))
        while len(going):  # one more unit at a time, for the words that have not ended yet
            going = going[self.is_word[found[going] + lengths[going]]]
            lengths[going] += 1
        keep = np.zeros(len(found), dtype=bool)
        step = 8 // self.width
        for length in np.unique(lengths).tolist():
            group = np.flatnonzero(lengths == length)
            tails = found[group] + len(term)
            columns = []
            for offset in range(0, length - len(term), step):  # the suffix, eight bytes at a time
                units = min(step, length - len(term) - offset)
                columns.append(self.windows[tails + offset] & np.uint64((1 << 8 * units * self.width) - 1))
            suffixes = columns[0] if len(columns) == 1 else np.stack(columns, axis=1)
            _, first, inverse = np.unique(suffixes, axis=0, return_index=True, return_inverse=True)
            matches = [
                _term_of(self.corpus[begin : begin + length], stemming=stemming, stop_words=stop_words)
                == term
                for begin in found[group[first]].tolist()
            ]
            keep[group] = np.asarray(matches, dtype=bool)[inverse.reshape(-1)]
        return found[keep]


def _term_counts_plain(
    wanted: list[str], texts: Sequence[str], *, stemming: bool, stop_words: bool
) -> dict[int, list[int]]:
    """How often each text holds each term (texts without any are absent), by substring search: the
    reference of :func:`_term_table`, and the path for terms that few texts hold.

    Exact without splitting every text into words: a stem is a prefix of its word, so each word
    whose term is wanted starts where the term occurs as a substring after a non-word character.
    """
    corpus, ends = _lowered(texts)
    term_of: dict[str, str | None] = {}  # word -> its term, or None for a stop word; this call only
    counts: dict[int, list[int]] = {}
    for index, term in enumerate(wanted):
        start = corpus.find(term)
        while start >= 0:
            word = None
            if start == 0 or not corpus[start - 1].isalnum():
                match = _WORD.match(corpus, start)
                assert match is not None  # a term starts with a word character
                word = match.group()
                found = term_of.get(word, "")
                if found == "":
                    found = term_of[word] = _term_of(word, stemming=stemming, stop_words=stop_words)
                if found == term:
                    row = counts.get(doc := bisect_right(ends, start))
                    if row is None:
                        row = counts[doc] = [0] * len(wanted)
                    row[index] += 1
            start = corpus.find(term, start + (len(word) if word else 1))
    return counts


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
        """``score_all`` of the batch's contents (no item built for a batch given as columns)."""
        if self.query is None:
            return [0.0] * batch.count
        return self._score_texts(batch.contents())

    def _score_texts(self, texts: list[str]) -> list[float]:
        if self.query is None or not texts:
            return [0.0] * len(texts)
        raw = bm25_scores(
            self.query, texts, k1=self.k1, b=self.b, stemming=self.stemming, stop_words=self.stop_words
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
        spread = list(scores)
        share = 1.0
        for distance in range(1, min(self.neighbors, count - 1) + 1):
            share *= self.neighbor_weight
            # Whole-list shifts: every item gains from the one `distance` before and after it.
            for index in range(distance, count):
                spread[index] += share * scores[index - distance]
                spread[index - distance] += share * scores[index]
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
