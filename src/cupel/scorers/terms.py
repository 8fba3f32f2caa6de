"""Text analysis and term counting for :class:`~cupel.scorers.relevance.RelevanceScorer`.

Words are lower-cased runs of letters and digits; English stop words are dropped; :func:`stem` removes
inflectional suffixes (measured on the LoCoMo dev split: docs/eval.md, "Relevance"). How often each
text holds each query term is counted three ways, with the same counts (tests compare them):

- :func:`count_terms`, the reference: each term found by substring search over the texts joined,
  the path for terms that few texts hold; :func:`term_search` finds the same words for it in one
  compiled pass for all the terms (the ``fast`` extra);
- :func:`term_table`, whole-array passes (numpy) for a long list whose texts hold the terms often;
- :class:`~cupel.scorers.term_counts.TermCounts` keeps one call's counts, so that a caller scoring a
  list that grows (a chat session) counts only its new texts, and the terms it did not count before.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

from cupel._optional import optional_module

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "STOP_WORDS",
    "WHOLE_LIST_MINIMUM",
    "Run",
    "common_terms",
    "count_terms",
    "lowered_runs",
    "query_terms",
    "stem",
    "term_of",
    "term_search",
    "term_table",
    "word_starts",
    "words_of",
]

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
    for word in set(_WORD.findall(query.lower())):  # each distinct word analysed once
        term = term_of(word, stemming=stemming, stop_words=stop_words)
        if term is not None:  # not a stop word
            terms.add(term)
    return sorted(terms)


#: Below this many texts the substring search is cheap whatever the terms; from it on, terms common in
#: the texts (every chat message naming them) make visiting each occurrence cost more than the
#: whole-array passes (docs/spec-notes.md, "What relevance costs").
WHOLE_LIST_MINIMUM = 64


def common_terms(wanted: list[str], texts: Sequence[str]) -> bool:
    """Whether the terms occur often enough (as substrings, against a rough word count) that the
    whole-array passes cost less than visiting each occurrence: a choice of path, not of result."""
    sample = texts[:: max(1, len(texts) // 64)]  # a spread of at most about 64 texts
    corpus = "\n".join([text[:256] for text in sample]).lower()  # their openings: an estimate
    occurrences = sum(map(corpus.count, wanted))
    return 10 * occurrences > corpus.count(" ") + len(sample)


def term_of(word: str, *, stemming: bool, stop_words: bool) -> str | None:
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
    # Each text and its line break, summed in C (a Python lambda a text cost a tenth of the lowering).
    return corpus, list(accumulate(map((1).__add__, lengths), initial=1))[1:]


_PADDING = "\n" * 7

#: Texts are lowered and searched about this many characters at a time: a call holds one run's
#: lowered copy at a time, not one of the whole list, and a caller that keeps the runs
#: (:class:`TermCounts`) lowers again only those whose texts changed.
_RUN = 1 << 19


def _runs(texts: Sequence[str]) -> Iterator[tuple[int, Sequence[str]]]:
    """``texts`` as consecutive runs of about :data:`_RUN` characters (a text longer than that alone),
    each with the position of its first text."""
    totals = list(accumulate(map(len, texts)))  # the characters up to each text's end
    start = 0
    while start < len(texts):
        before = totals[start - 1] if start else 0
        end = min(bisect_left(totals, before + _RUN, lo=start) + 1, len(texts))
        yield start, texts[start:end]
        start = end


#: A run of lowered texts: the position of its first text, its corpus and ends (:func:`_lowered`).
Run = tuple[int, str, list[int]]


def lowered_runs(texts: Sequence[str], kept: Sequence[Run] = (), same: int = 0) -> Iterator[Run]:
    """``texts`` lower-cased run by run (:func:`_runs`, :func:`_lowered`), one run at a time; the runs
    of ``kept`` that lie within the first ``same`` texts (texts equal to those ``kept`` was lowered
    from) are given again as they are, but for last ones no longer than the texts after them, lowered
    again with those: a list that grows a little at a time (a chat session's) keeps about log2 of its
    size in runs, not a run a call, and each text is lowered again about as many times."""
    reused = []
    for run in kept:
        if run[0] + len(run[2]) > same:
            break
        reused.append(run)
    start = 0
    if reused:
        start = reused[-1][0] + len(reused[-1][2])
        # The size of what is still to lower as a run's last end measures it (1 + each text and its
        # line break).
        rest = 1 + sum(map(len, texts[start:])) + len(texts) - start
        while reused and rest >= reused[-1][2][-1] and reused[-1][2][-1] < _RUN:
            start, _, ends = reused.pop()
            rest += ends[-1] - 1
    yield from reused
    for first, part in _runs(texts[start:]):
        corpus, ends = _lowered(part)
        yield start + first, corpus, ends


def words_of(term: str, *, stemming: bool, stop_words: bool) -> list[str]:
    """Every word whose term is ``term``, sorted: few, as :func:`stem` only removes suffixes. A word
    stems to ``term`` only as ``term`` + (``e``/``y``) + (a doubled letter) + (``ing``/``ed``) + (``s``),
    each optional, or as ``term`` + ``ies``/``ied``; these are the ones whose term is ``term``."""
    words = {term}
    if stemming:
        words.update((term + "ies", term + "ied"))
        for vowel in ("", "e", "y"):
            base = term + vowel
            for double in ("", base[-1]):
                for ending in ("", "ing", "ed"):
                    words.update((base + double + ending, base + double + ending + "s"))
    return sorted(word for word in words if term_of(word, stemming=stemming, stop_words=stop_words) == term)


def term_table(
    np: Any,
    wanted: list[str],
    texts: Sequence[str],
    *,
    stemming: bool,
    stop_words: bool,
    runs: Iterable[Run] = (),
) -> Any:
    r""":func:`count_terms` in whole-array passes, as a table: a row a text, a column a term.

    Run by run (``runs``, when the caller kept them, else :func:`lowered_runs`), the lower-cased
    corpus becomes an array of code units (bytes when it is ASCII, else UTF-32) and a mask of its word
    units (letters and digits: ``str.isalnum``, the ``[^\W_]`` of the word pattern). The words a term
    begins are those with its first unit whose first eight bytes, read as one integer, match the
    term's; a longer one counts when its length and suffix are those of one of the term's words
    (:func:`words_of`); the matches are counted per text by binary search of where each text ends.
    """
    tables = [np.zeros((0, len(wanted)), dtype=np.int64)]
    for _, corpus, ends in runs or lowered_runs(texts):
        words = _Words(np, corpus)
        bounds = np.asarray(ends, dtype=np.int64)
        columns = []
        for term in wanted:
            found = words.of_term(term, stemming=stemming, stop_words=stop_words)
            columns.append(np.diff(np.searchsorted(found, bounds), prepend=0))
        tables.append(np.stack(columns, axis=1))
    return np.concatenate(tables)


class _Words:
    """The words of a lower-cased corpus, for :func:`term_table` (one run's, never kept).

    ``codes``: the corpus (:func:`_lowered`, padded) as code units, so that an eight-byte window
    (``windows``) starts at every unit of a text; ``is_word``: the mask of word units;
    ``starts``: where each word starts; ``first``: each word's first unit.
    """

    def __init__(self, np: Any, corpus: str) -> None:
        self.np = np
        if corpus.isascii():
            self.encoding, self.width = "ascii", 1
            data = corpus.encode("ascii")
            self.codes = codes = np.frombuffer(data, dtype=np.uint8)
            # Lower-cased: the word bytes are a-z and 0-9 (a byte below either range wraps round).
            self.is_word = ((codes - np.uint8(97)) < 26) | ((codes - np.uint8(48)) < 10)
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
        keep = ~longer  # the term itself, as a whole word, unless it is a stop word or stems further
        if term_of(term, stemming=stemming, stop_words=stop_words) != term:
            keep[:] = False
        if longer.any():
            going = np.flatnonzero(longer)
            keep[going[self._longer(term, found[going], stemming, stop_words)]] = True
        return found[keep]

    def _longer(self, term: str, found: Any, stemming: bool, stop_words: bool) -> Any:
        """Which of ``found`` (words that begin with ``term`` and go on) have ``term`` for their term,
        as a mask: each is compared, length and suffix, with the term's longer words (:func:`words_of`)."""
        np = self.np
        longer = [
            word for word in words_of(term, stemming=stemming, stop_words=stop_words) if len(word) > len(term)
        ]
        if self.width == 1:  # an ASCII corpus holds no other word
            longer = [word for word in longer if word.isascii()]
        if not longer:
            return np.zeros(len(found), dtype=bool)
        # Each word's length, counted no further than one past the longest of the term's words.
        lengths = np.full(len(found), len(term) + 1, dtype=np.int64)
        going = np.arange(len(found))
        for _ in range(max(map(len, longer)) - len(term)):
            going = going[self.is_word[found[going] + lengths[going]]]
            if not len(going):
                break
            lengths[going] += 1
        present = np.bincount(lengths).tolist()
        keep = np.zeros(len(found), dtype=bool)
        step = 8 // self.width
        for length in sorted(set(map(len, longer))):  # the words of one length share their windows
            if length >= len(present) or not present[length]:
                continue
            rows = np.flatnonzero(lengths == length)
            tails = found[rows] + len(term)
            windows = [self.windows[tails + offset] for offset in range(0, length - len(term), step)]
            matched = np.zeros(len(rows), dtype=bool)
            for word in longer:
                if len(word) != length:
                    continue
                suffix = word[len(term) :].encode(self.encoding, "surrogatepass")
                same = np.ones(len(rows), dtype=bool)
                for window, offset in zip(windows, range(0, len(suffix), 8), strict=True):
                    part = suffix[offset : offset + 8]  # the suffix, eight bytes at a time
                    same &= window & np.uint64((1 << 8 * len(part)) - 1) == int.from_bytes(part, "little")
                matched |= same
            keep[rows[matched]] = True
        return keep


def count_terms(
    wanted: list[str],
    texts: Sequence[str],
    *,
    stemming: bool,
    stop_words: bool,
    runs: Iterable[Run] = (),
    search: Callable[[str], Iterable[int]] | None = None,
) -> dict[int, list[int]]:
    """How often each text holds each term (texts without any are absent), by substring search: the
    reference of :func:`term_table`, and the path for terms that few texts hold.

    Exact without splitting every text into words: a stem is a prefix of its word, so each word
    whose term is wanted starts where the term occurs after a non-word character (:func:`word_starts`,
    or ``search``: :func:`term_search`), and is read whole and counted for its own term. The texts are
    searched run by run (``runs``, when the caller kept them, else :func:`lowered_runs`).
    """
    index_of = {term: index for index, term in enumerate(wanted)}
    indexes: dict[str, int | None] = {}  # word -> the index of its term, None if not wanted; this call only
    counts: dict[int, list[int]] = {}
    for first, corpus, ends in runs or lowered_runs(texts):
        for start in word_starts(wanted, corpus) if search is None else search(corpus):
            match = _WORD.match(corpus, start)
            assert match is not None  # a term starts with a word character
            word = match.group()
            index = indexes.get(word, -1)
            if index == -1:
                term = term_of(word, stemming=stemming, stop_words=stop_words)
                index = indexes[word] = None if term is None else index_of.get(term)
            if index is not None:
                row = counts.get(doc := first + bisect_right(ends, start))
                if row is None:
                    row = counts[doc] = [0] * len(wanted)
                row[index] += 1
    return counts


def word_starts(wanted: Iterable[str], corpus: str) -> set[int]:
    """Where words that begin with a term of ``wanted`` start in a lowered corpus (:func:`_lowered`):
    each term's occurrences, found by substring search, that follow a non-word character."""
    starts = set()
    for term in wanted:
        start = corpus.find(term)
        while start >= 0:
            if not corpus[start - 1].isalnum():  # the corpus starts with a line break
                starts.add(start)
            start = corpus.find(term, start + len(term))  # no word starts inside a term
    return starts


def term_search(wanted: list[str]) -> Callable[[str], Iterable[int]] | None:
    """:func:`word_starts` by one compiled pass for all the terms (Aho-Corasick, ``ahocorasick_rs``
    from the ``fast`` extra) over an ASCII corpus; None without the package. The pass reports the
    leftmost-longest occurrence of any term, then goes on after it; no occurrence spans the non-word
    character before a word, so each word that begins with a term is reported at its start (with
    whichever term: the word is read whole and counted for its own)."""
    module = optional_module("ahocorasick_rs", "CUPEL_NO_AHOCORASICK")
    if module is None:
        return None
    patterns = [term.encode("ascii") for term in wanted if term.isascii()]
    kind = module.MatchKind.LeftmostLongest
    matcher = module.BytesAhoCorasick(patterns, matchkind=kind) if patterns else None

    def search(corpus: str) -> Iterable[int]:
        if not corpus.isascii():  # offsets in UTF-8 bytes are not the corpus's: a pass a term
            return word_starts(wanted, corpus)
        if matcher is None:  # no term an ASCII corpus can hold
            return ()
        found = matcher.find_matches_as_indexes(corpus.encode("ascii"))
        return [start for _, start, _ in found if not corpus[start - 1].isalnum()]

    return search
