"""Text analysis and term counting for :class:`~cupel.scorers.relevance.RelevanceScorer`.

Words are lower-cased runs of letters and digits; English stop words are dropped; :func:`stem` removes
inflectional suffixes (measured on the LoCoMo dev split: docs/eval.md, "Relevance"). How often each
text holds each query term is counted four ways, with the same counts (tests compare them):

- :func:`count_terms`, the reference: each term found by substring search over the texts joined,
  the path for terms that few texts hold; :func:`term_search` finds the same words for it in one
  compiled pass for all the terms (the ``fast`` extra); :func:`count_words` tallies a short list's
  words text by text instead;
- :func:`~cupel.scorers.term_table.term_table`, whole-array passes (numpy) for a long list whose
  texts hold the terms often;
- :class:`~cupel.scorers.term_counts.TermCounts` keeps the counts of the latest calls, so that a
  caller scoring a list that grows (a chat session) counts only its new texts, and the terms it did
  not count before.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

from cupel._optional import optional_module

__all__ = [
    "STOP_WORDS",
    "WHOLE_LIST_MINIMUM",
    "Run",
    "candidate_words",
    "columns_of",
    "common_terms",
    "count_terms",
    "count_words",
    "joined_runs",
    "lowered_runs",
    "query_terms",
    "stem",
    "tally",
    "term_of",
    "term_search",
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


#: Below this many texts each text's words are tallied (:func:`count_words`), cheap whatever the terms;
#: from it on, terms common in the texts (every chat message naming them) make visiting each occurrence
#: cost more than the whole-array passes (docs/spec-notes.md, "What relevance costs").
WHOLE_LIST_MINIMUM = 64


def common_terms(wanted: list[str], texts: Sequence[str]) -> bool:
    """Whether the terms occur often enough (as substrings, against a rough word count) that the
    whole-array passes cost less than visiting each occurrence: a choice of path, not of result."""
    sample = texts[:: max(1, len(texts) // 64)]  # a spread of at most about 64 texts
    corpus = "\n".join([text[:256] for text in sample]).lower()  # their openings: an estimate
    occurrences = sum(map(corpus.count, wanted))
    return 40 * occurrences > corpus.count(" ") + len(sample)


def term_of(word: str, *, stemming: bool, stop_words: bool) -> str | None:
    """The term a word counts for (``None``: a stop word)."""
    return None if stop_words and word in STOP_WORDS else stem(word) if stemming else word


def _lowered(texts: Sequence[str], *, lower: bool = True) -> tuple[str, list[int]]:
    """The texts lower-cased (``lower``), each after a line break (which no word spans) and all before
    eight more, and where each ends (the offset just past its line break): text ``i`` holds the
    offsets before ``ends[i]``. The padding gives every word a non-word character before it and lets
    an eight-character window start anywhere in the texts."""
    lengths = list(map(len, texts))
    corpus = "\n".join(["", *texts, _PADDING])
    if lower:
        corpus = corpus.lower()
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


def joined_runs(texts: Sequence[str]) -> Iterator[Run]:
    """:func:`lowered_runs` without the lowering (for a reader that lowers as it reads: the whole-array
    counting)."""
    for first, part in _runs(texts):
        corpus, ends = _lowered(part, lower=False)
        yield first, corpus, ends


def words_of(term: str, *, stemming: bool, stop_words: bool) -> list[str]:
    """Every word whose term is ``term``, sorted: few, as :func:`stem` only removes suffixes (the
    :func:`candidate_words` whose term is ``term``)."""
    candidates = candidate_words(term, stemming=stemming)
    return [word for word in candidates if term_of(word, stemming=stemming, stop_words=stop_words) == term]


def candidate_words(term: str, *, stemming: bool) -> list[str]:
    """The words that may have ``term`` as their term, sorted: with ``stemming``, a word stems to
    ``term`` only as ``term`` + (``e``/``y``) + (a doubled letter) + (``ing``/``ed``) + (``s``), each
    optional, or as ``term`` + ``ies``/``ied``."""
    words = {term}
    if stemming:
        words.update((term + "ies", term + "ied"))
        for vowel in ("", "e", "y"):
            base = term + vowel
            for double in ("", base[-1]):
                for ending in ("", "ing", "ed"):
                    words.update((base + double + ending, base + double + ending + "s"))
    return sorted(words)


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


def count_words(
    wanted: list[str],
    texts: Sequence[str],
    *,
    stemming: bool,
    stop_words: bool,
    tallies: Sequence[dict[str, int] | None] = (),
    word_terms: dict[str, str | None] | None = None,
) -> dict[int, list[int]]:
    """:func:`count_terms` text by text: each text's words found in one regex pass and tallied
    (:func:`tally`; ``tallies``: a caller's, by text position, where at hand), then each distinct word
    counted for its term (``word_terms``: a caller's memo of words' terms, added to); the path for a
    short list, where one pass over a text's words costs less than a search for each term (a chat
    session's new texts)."""
    index_of = {term: index for index, term in enumerate(wanted)}
    terms = {} if word_terms is None else word_terms
    counts: dict[int, list[int]] = {}
    for doc, text in enumerate(texts):
        found = tallies[doc] if doc < len(tallies) else None
        row = None
        for word, times in (tally(text) if found is None else found).items():
            term = terms.get(word, "")
            if term == "":  # no term is empty
                term = terms[word] = term_of(word, stemming=stemming, stop_words=stop_words)
            index = None if term is None else index_of.get(term)
            if index is not None:
                if row is None:
                    row = counts[doc] = [0] * len(wanted)
                row[index] += times
    return counts


def columns_of(rows: dict[int, list[int]], terms: int, texts: int) -> list[list[int]]:
    """Counts in the form :func:`count_terms` gives them (a row for each text holding a term, by
    position) as columns: a column a term, a count a text (the form a kept count takes)."""
    columns = [[0] * texts for _ in range(terms)]
    for doc, row in rows.items():  # only the texts that hold a term
        for index, value in enumerate(row):
            columns[index][doc] = value
    return columns


def tally(text: str) -> dict[str, int]:
    """How often ``text`` holds each of its words (lower-cased)."""
    return Counter(_WORD.findall(text.lower()))


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
    """:func:`word_starts` by one compiled pass for all the ASCII terms (Aho-Corasick, ``ahocorasick_rs``
    from the ``fast`` extra); None without the package. The pass reads the corpus as bytes, each
    character beyond ASCII as a ``?`` (so that an offset is a character's), reports the leftmost-longest
    occurrence of any term, then goes on after it; no occurrence spans the non-word character before a
    word, so each word that begins with a term is reported at its start (with whichever term: the word
    is read whole and counted for its own). A term beyond ASCII is searched for on its own."""
    module = optional_module("ahocorasick_rs", "CUPEL_NO_AHOCORASICK")
    if module is None:
        return None
    patterns = [term.encode("ascii") for term in wanted if term.isascii()]
    others = [term for term in wanted if not term.isascii()]
    kind = module.MatchKind.LeftmostLongest
    matcher = module.BytesAhoCorasick(patterns, matchkind=kind) if patterns else None

    def search(corpus: str) -> Iterable[int]:
        found = [] if matcher is None else matcher.find_matches_as_indexes(corpus.encode("ascii", "replace"))
        starts = [start for _, start, _ in found if not corpus[start - 1].isalnum()]
        if others and not corpus.isascii():
            starts.extend(word_starts(others, corpus))
        return starts

    return search
