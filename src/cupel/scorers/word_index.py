"""WordIndex: where each word of a run of lowered texts occurs, for a caller that asks new terms of the
same texts again and again (a chat session's queries; :class:`~cupel.scorers.term_counts.TermCounts`).

Counting a term no earlier call asked for means reading every text again
(:func:`~cupel.scorers.term_table.term_table`, :func:`~cupel.scorers.terms.count_terms`); an index
of the texts' words, made once, answers it from the occurrences of that term's few words
(:func:`~cupel.scorers.terms.candidate_words`) alone. Tests compare its counts with the reference's.
"""

from __future__ import annotations

from collections.abc import Callable

from cupel.scorers.term_table import narrowed_units, word_bytes
from cupel.scorers.terms import Run

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

__all__ = ["WordIndex", "WordKeys"]

#: Odd 64-bit multipliers of the hash of a word longer than eight bytes, one an integer of it in turn.
_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)
_LENGTH_MULTIPLIER = 0xC4CEB9FE1A85EC53
_MASK = (1 << 64) - 1


def _key(word: bytes) -> int:
    """A word's key (:class:`WordIndex`): its bytes as an integer when they fit in eight, else a hash
    of its length and its eight-byte integers."""
    if len(word) <= 8:
        return int.from_bytes(word, "little")
    value = len(word) * _LENGTH_MULTIPLIER & _MASK
    for span in range(0, len(word), 8):
        value ^= int.from_bytes(word[span : span + 8], "little") * _MULTIPLIERS[span // 8 % 4] & _MASK
    return value


def _long_keys(np: Any, lengths: Any, integers: Callable[[int, Any], Any]) -> Any:
    """:func:`_key` of words longer than eight bytes, in whole arrays: ``integers(span, going)`` gives
    the ``span``-th eight-byte integers of the words at positions ``going`` (0 past a word's end)."""
    values = lengths.astype(np.uint64) * np.uint64(_LENGTH_MULTIPLIER)
    going = np.arange(len(lengths))
    span = 0
    while len(going):
        values[going] ^= integers(span, going) * np.uint64(_MULTIPLIERS[span % 4])
        span += 1
        going = going[lengths[going] > 8 * span]
    return values


class WordIndex:
    """Where each ASCII word of a run of lowered texts (:func:`~cupel.scorers.terms.lowered_runs`)
    occurs: the text of each occurrence, grouped by word (numpy arrays, about the texts' size).

    The run is read as bytes, each character beyond ASCII narrowed to one byte
    (:func:`~cupel.scorers.term_table.narrowed_units`: a word holding one is no ASCII word). A word is
    keyed by its bytes as an integer when it has eight or fewer (no word holds a zero byte, so the key
    is the word), else by a 64-bit hash of its length and its integers; the occurrences are sorted by
    key. The words sharing a key with a longer word are compared whole when the index is made; an index
    where two differ is not made (:meth:`of`: None), so a key found is always one word.
    """

    __slots__ = ("_bounds", "_corpus", "_docs", "_keys", "_lengths", "_np", "_starts", "texts")

    def __init__(self, np: Any, corpus: str, texts: int, arrays: tuple[Any, Any, Any, Any, Any]) -> None:
        self._np, self._corpus, self.texts = np, corpus, texts
        self._keys, self._bounds, self._starts, self._lengths, self._docs = arrays

    @classmethod
    def of(cls, np: Any, run: Run) -> WordIndex | None:
        """The index of a run's words; None where its lower case lengthens a character (İ) or two of its
        words share a key."""
        _, corpus, ends = run
        codes = narrowed_units(np, corpus)
        if codes is None:
            return None
        is_word = word_bytes(np, codes)
        edges = np.flatnonzero(is_word[1:] != is_word[:-1])  # a word's start, then its end, in turn
        starts = edges[::2] + 1
        lengths = edges[1::2] - edges[::2]
        # An eight-byte window at every byte (the run ends with seven line breaks, see _lowered).
        windows = np.ndarray((len(codes) - 7,), "<u8", codes, strides=(1,))
        masks = np.asarray([(1 << 8 * size) - 1 for size in range(9)], dtype=np.uint64)
        keys = windows[starts] & masks[np.minimum(lengths, 8)]
        long = np.flatnonzero(lengths > 8)
        if len(long):
            at, sizes = starts[long], lengths[long]
            keys[long] = _long_keys(
                np,
                sizes,
                lambda span, going: (
                    windows[at[going] + 8 * span] & masks[np.minimum(sizes[going] - 8 * span, 8)]
                ),
            )
        order = np.argsort(keys)
        ordered = keys[order]
        opens = np.empty(len(ordered), dtype=bool)  # where a key's run of the sorted occurrences opens
        opens[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=opens[1:])
        firsts = np.flatnonzero(opens)
        if len(long) and not cls._one_word_a_key(np, windows, masks, (starts, lengths), order, opens):
            return None
        # The text of each word: as many of each text's number as the words before its end.
        counts = np.diff(np.searchsorted(starts, np.asarray(ends, dtype=np.int64)), prepend=0)
        docs = np.repeat(np.arange(len(ends), dtype=np.int32), counts)
        first_of = order[firsts]
        offset = np.int32 if len(corpus) < 1 << 31 else np.int64  # 32 bits for any real run
        arrays = (
            ordered[firsts],
            np.append(firsts, len(order)).astype(offset),
            starts[first_of].astype(offset),
            lengths[first_of].astype(offset),
            docs[order],
        )
        return cls(np, corpus, len(ends), arrays)

    @staticmethod
    def _one_word_a_key(
        np: Any, windows: Any, masks: Any, words: tuple[Any, Any], order: Any, opens: Any
    ) -> bool:
        """Whether every occurrence of a key that a longer word has (``order``: the occurrences by key,
        ``opens``: where each key's run of them opens) is the key's first word."""
        starts, lengths = words
        group = np.cumsum(opens) - 1  # each sorted occurrence's key
        long = np.zeros(int(group[-1]) + 1, dtype=bool)
        long[group[lengths[order] > 8]] = True
        checked = np.flatnonzero(long[group])  # the occurrences of such keys, by sorted place
        these, first = order[checked], order[np.flatnonzero(opens)[group[checked]]]
        if not np.array_equal(lengths[these], lengths[first]):
            return False
        span = 0
        while len(these):
            rest = lengths[these] - 8 * span
            size = masks[np.minimum(rest, 8)]
            if not np.array_equal(
                windows[starts[these] + 8 * span] & size, windows[starts[first] + 8 * span] & size
            ):
                return False
            span += 1
            going = rest > 8
            these, first = these[going], first[going]
        return True

    def counts(self, words: WordKeys, terms: int, accepts: Callable[[int], bool]) -> Any:
        """How often each text holds each term: a row a term, a column a text, given words that may
        be the terms' (:class:`WordKeys`); a word the texts hold counts for its row if ``accepts`` its
        position among ``words`` (it is one of its term's words)."""
        np = self._np
        table = np.zeros(terms * self.texts, dtype=np.int64)
        if not len(words.keys) or not len(self._keys):
            return table.reshape(terms, self.texts)
        at = np.minimum(np.searchsorted(self._keys, words.keys), len(self._keys) - 1)
        found = np.flatnonzero((self._keys[at] == words.keys) & (self._lengths[at] == words.lengths))
        if len(found) and words.long:
            # A word longer than eight bytes is found by its hash: the texts' word is compared whole.
            corpus = self._corpus
            same = [
                words.lengths[index] <= 8
                or corpus[start : start + len(words.words[index])] == words.words[index]
                for index, start in zip(found.tolist(), self._starts[at[found]].tolist(), strict=True)
            ]
            found = found[np.asarray(same, dtype=bool)]
        if len(found):
            found = found[np.asarray(list(map(accepts, found.tolist())), dtype=bool)]
        if len(found):
            place = at[found]
            first = self._bounds[place]
            sizes = self._bounds[place + 1] - first
            # Every occurrence of the words found: each word's run of the sorted occurrences.
            offsets = np.repeat(first - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
            cells = np.repeat(words.rows[found] * self.texts, sizes) + self._docs[offsets]
            table += np.bincount(cells, minlength=table.size)
        return table.reshape(terms, self.texts)


class WordKeys:
    """Words (ASCII, lower-cased) each with a row (its term's), keyed as :class:`WordIndex` keys the
    texts' words: looked up in each index in turn."""

    __slots__ = ("keys", "lengths", "long", "rows", "words")

    def __init__(self, words: list[str], keys: Any, lengths: Any, rows: Any) -> None:
        self.words, self.keys, self.lengths, self.rows = words, keys, lengths, rows
        self.long = bool(len(words)) and int(lengths.max()) > 8

    @classmethod
    def of(cls, np: Any, words: list[str], rows: list[int]) -> WordKeys:
        """``words`` keyed (:func:`_key`, in whole arrays), each with its row."""
        lengths = np.asarray(list(map(len, words)), dtype=np.int64)
        spans = max(1, -(-int(lengths.max(initial=0)) // 8))
        padded = b"".join([word.encode("ascii").ljust(8 * spans, b"\0") for word in words])
        chunks = np.frombuffer(padded, dtype="<u8").reshape(len(words), spans)  # 0 beyond a word's end
        keys = chunks[:, 0].astype(np.uint64)
        long = np.flatnonzero(lengths > 8)
        if len(long):
            keys[long] = _long_keys(np, lengths[long], lambda span, going: chunks[long[going], span])
        return cls(words, keys, lengths, np.asarray(rows, dtype=np.int64))
