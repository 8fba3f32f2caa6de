"""The whole-array counting of :mod:`cupel.scorers.terms` (numpy, from the ``fast`` extra).

:func:`term_table` counts what :func:`~cupel.scorers.terms.count_terms` counts, for a long list whose
texts hold the terms often: every word of the texts is looked up at once among the terms' words in a
hash table (:class:`_WordTable`), so the cost is a few passes over the texts whatever the number of
terms. Tests compare the two on random texts, hashes and pieces.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from cupel.scorers.terms import Run, joined_runs, lowered_runs, words_of

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

__all__ = ["narrowed_units", "term_table", "word_bytes"]


def term_table(
    np: Any,
    wanted: list[str],
    texts: Sequence[str],
    *,
    stemming: bool,
    stop_words: bool,
    runs: Iterable[Run] = (),
) -> Any:
    r""":func:`~cupel.scorers.terms.count_terms` in whole-array passes, as a table: a row a text, a
    column a term.

    Run by run (``runs``, lowered, when the caller kept them, else
    :func:`~cupel.scorers.terms.joined_runs`), the corpus becomes an array of lower-cased code units
    and a mask of its word units (letters and digits: ``str.isalnum``, the ``[^\W_]`` of the word
    pattern); all its words are then looked up at once among the terms' words (:class:`_WordTable`)
    and counted per text and term.
    """
    table = _WordTable(np, wanted, stemming=stemming, stop_words=stop_words)
    tables = [np.zeros((0, len(wanted)), dtype=np.int64)]
    for first, corpus, ends in runs or joined_runs(texts):
        counted = table.count(corpus, ends)
        if counted is None:  # a character whose lower case is longer (İ): the texts lowered first
            part = texts[first : first + len(ends)]
            counted = np.concatenate(
                [table.count(lowered, bounds) for _, lowered, bounds in lowered_runs(part)]
            )
        tables.append(counted)
    return np.concatenate(tables)


#: Odd 64-bit multipliers for :class:`_WordTable`'s hashes, rotated one place a level.
_MULTIPLIERS = (
    0x9E3779B97F4A7C15,
    0xC2B2AE3D27D4EB4F,
    0x165667B19E3779F9,
    0xD6E8FEB86659FD93,
    0xFF51AFD7ED558CCD,
    0xC4CEB9FE1A85EC53,
)

#: About how many code units :class:`_WordTable` reads at a time (a text longer than that alone).
_PIECE = 1 << 16

#: The byte that stands for a letter or digit beyond ASCII in a run narrowed to bytes: a word unit
#: that is no ASCII term's.
_WIDE_LETTER = 0x80


class _Level:
    """One hash of :class:`_WordTable`: the multipliers of a word's integers by their place (the
    length's last), and its slots (named by the hash's top ``bits``), each holding one of the words
    that fall in it (its position, or -1), and whether other words fell there too (``shared``)."""

    __slots__ = ("bits", "multipliers", "shared", "slots")

    def __init__(self, multipliers: list[int], bits: int, slots: Any, shared: Any) -> None:
        self.multipliers, self.bits, self.slots, self.shared = multipliers, bits, slots, shared


class _Hashed:
    """The terms' words in one encoding: each one's length in code units, its term's index and its
    integers (a column an integer, 0 beyond a word's end), and the levels that hash them."""

    __slots__ = ("chunks", "lengths", "levels", "terms")

    def __init__(self, lengths: Any, terms: Any, chunks: list[Any], levels: list[_Level]) -> None:
        self.lengths, self.terms, self.chunks, self.levels = lengths, terms, chunks, levels


class _WordTable:
    """The words of some terms (:func:`words_of`) in hash tables, and all the words of a lower-cased
    corpus looked up in them in whole-array passes (:func:`term_table`; one call's, never kept).

    A word is read as integers of eight bytes (the ``j``-th holds its bytes from ``8 * j`` on) and
    hashed with its length in code units: ``(length * M) ^ (int_0 * M_0) ^ (int_1 * M_1) ^ ...``
    modulo 2**64, whose top bits name its slot. A corpus word counts when the word in its slot has its
    length and all its integers. The terms' words that found their slot taken go to the next level,
    a hash with the multipliers rotated, and so do the corpus words that fall in such a slot and do not
    match its word: a level places at least one word, so every word has a slot at some level.

    A corpus is read as bytes: as it is when ASCII, else with each character beyond ASCII narrowed to
    one byte, :data:`_WIDE_LETTER` for a letter or digit and a space for any other, when the terms'
    words are all ASCII (no such word holds one). Else it is read as UTF-32 code units.
    """

    def __init__(self, np: Any, wanted: list[str], *, stemming: bool, stop_words: bool) -> None:
        self.np = np
        self.terms = len(wanted)
        self.words = [
            (word, index)
            for index, term in enumerate(wanted)
            for word in words_of(term, stemming=stemming, stop_words=stop_words)
        ]
        self.ascii = all(word.isascii() for word, _ in self.words)
        self.hashed: dict[int, _Hashed] = {}  # by the bytes of a code unit

    def count(self, corpus: str, ends: list[int]) -> Any | None:
        """How often each text of a run (:func:`~cupel.scorers.terms.joined_runs`) holds each term: a
        row a text; None when a character's lower case is not one character (see :meth:`_units`)."""
        np = self.np
        units = self._units(corpus)
        if units is None:
            return None
        table = np.zeros((len(ends), self.terms), dtype=np.int64)
        codes, wide_words = units
        width = codes.itemsize
        if width not in self.hashed:
            self.hashed[width] = self._hash(width)
        hashed = self.hashed[width]
        if not hashed.levels:  # no word of the terms'
            return table
        # An eight-byte window at every unit (unaligned reads of the same buffer, no copy).
        windows = np.ndarray((len(codes) - 8 // width + 1,), "<u8", codes, strides=(width,))
        # The texts a piece at a time, so that each piece's arrays are small enough to be made in
        # memory the last piece's freed (fresh pages cost more than the passes over them).
        first = 0
        while first < len(ends):
            last = bisect_left(ends, ends[first] + _PIECE, lo=first + 1, hi=len(ends))
            begin = ends[first - 1] - 1 if first else 0  # the line break before the piece's first text
            end = ends[last - 1]  # just past the line break after its last text
            is_word = word_bytes(np, codes[begin:end]) if wide_words is None else wide_words[begin:end]
            starts, terms = self._lookup(hashed, windows, is_word, begin)
            doc = np.searchsorted(np.asarray(ends[first:last], dtype=np.int64), starts, side="right")
            part = table[first:last]
            part += np.bincount(doc * self.terms + terms, minlength=part.size).reshape(part.shape)
            first = last
        return table

    def _lookup(self, hashed: _Hashed, windows: Any, is_word: Any, begin: int) -> tuple[Any, Any]:
        """The offsets of the words of a piece (its word mask ``is_word``, from offset ``begin``) that
        are the terms' words, ascending, and their terms' indexes."""
        np = self.np
        # Where each word starts, and its length (the piece begins and ends with a non-word unit);
        # only the words as long as one of the terms' are looked up.
        edges = np.flatnonzero(is_word[1:] != is_word[:-1])  # a word's start, then its end, in turn
        starts = edges[::2] + 1
        lengths = edges[1::2] - edges[::2]
        fits = np.flatnonzero((lengths >= hashed.lengths.min()) & (lengths <= hashed.lengths.max()))
        starts = starts[fits] + begin
        lengths = lengths[fits]
        step = 8 // windows.strides[0]  # the code units an integer holds
        masks = np.asarray(
            [(1 << 8 * windows.strides[0] * units) - 1 for units in range(step + 1)], dtype=np.uint64
        )
        chunks = [windows[starts] & masks[np.minimum(lengths, step)]]
        for span in range(1, len(hashed.chunks)):  # the longer words' further integers
            going = np.flatnonzero(lengths > span * step)
            chunk = np.zeros(len(starts), dtype=np.uint64)
            chunk[going] = (
                windows[starts[going] + span * step] & masks[np.minimum(lengths[going] - span * step, step)]
            )
            chunks.append(chunk)
        matched, owners = [], []
        pending: Any = slice(None)  # the words still to look up
        for level in hashed.levels:
            values = lengths[pending].astype(np.uint64) * np.uint64(level.multipliers[-1])
            for chunk, multiplier in zip(chunks, level.multipliers, strict=False):
                values ^= chunk[pending] * np.uint64(multiplier)
            slot = (values >> np.uint64(64 - level.bits)).astype(np.intp)
            owner = level.slots[slot]
            found = np.flatnonzero(owner >= 0)
            words = found if isinstance(pending, slice) else pending[found]
            held = owner[found]
            same = hashed.lengths[held] == lengths[words]
            for chunk, column in zip(chunks, hashed.chunks, strict=True):
                same &= column[held] == chunk[words]
            matched.append(words[same])
            owners.append(held[same])
            # The words in a shared slot that are not its word may be another's of the slot.
            missed = found[~same]
            pending = (missed if isinstance(pending, slice) else pending[missed])[level.shared[slot[missed]]]
            if not len(pending):
                break
        if len(matched) == 1:
            return starts[matched[0]], hashed.terms[owners[0]]
        order = np.argsort(np.concatenate(matched), kind="stable")  # the levels' matches interleave
        return starts[np.concatenate(matched)[order]], hashed.terms[np.concatenate(owners)[order]]

    def _units(self, corpus: str) -> tuple[Any, Any] | None:
        """The corpus's code units lower-cased (bytes, narrowed, or UTF-32; see the class), and its
        word mask for UTF-32 units (None for bytes: :func:`word_bytes` makes it a piece at a time);
        None when a character's lower case is not one character."""
        np = self.np
        if self.ascii or corpus.isascii():
            codes = narrowed_units(np, corpus)
            return None if codes is None else (codes, None)
        found = _wide_units(np, corpus)
        if found is None:
            return None
        wide, beyond, lowered, which = found
        codes = wide | (((wide - np.uint32(65)) < 26).astype(np.uint32) << np.uint32(5))  # A-Z to a-z
        codes[beyond] = np.asarray(list(map(ord, lowered)), dtype=np.uint32)[which]
        is_word = ((codes >= 97) & (codes <= 122)) | ((codes >= 48) & (codes <= 57))
        letters = np.asarray([low.isalnum() and not low.isascii() for low in lowered], dtype=bool)
        is_word[beyond[letters[which]]] = True
        return codes, is_word

    def _hash(self, width: int) -> _Hashed:
        """The terms' words that code units of ``width`` bytes can hold, hashed into levels (in whole
        arrays: the same arithmetic as the corpus words')."""
        np = self.np
        encoding = "ascii" if width == 1 else "utf-32-le"
        words = [
            (word.encode(encoding, "surrogatepass"), index)
            for word, index in self.words
            if width > 1 or word.isascii()
        ]
        spans = max((-(-len(word) // 8) for word, _ in words), default=0)  # the longest word's integers
        padded = b"".join([word.ljust(8 * spans, b"\0") for word, _ in words])
        chunks = np.frombuffer(padded, dtype="<u8").reshape(len(words), spans)  # 0 beyond a word's end
        lengths = np.asarray([len(word) // width for word, _ in words], dtype=np.int64)
        levels: list[_Level] = []
        left = np.arange(len(words))  # the words without a slot yet
        while len(left):
            rotation = len(levels) % len(_MULTIPLIERS)
            multipliers = [_MULTIPLIERS[(rotation + span) % len(_MULTIPLIERS)] for span in range(spans + 1)]
            values = lengths[left].astype(np.uint64) * np.uint64(multipliers[-1])
            for span in range(spans):
                values ^= chunks[left, span] * np.uint64(multipliers[span])
            bits = max(8, (8 * len(left)).bit_length())  # an eighth of the slots or fewer taken
            slot = (values >> np.uint64(64 - bits)).astype(np.intp)
            _, first = np.unique(slot, return_index=True)  # the first word in each slot takes it
            slots = np.full(1 << bits, -1, dtype=np.intp)
            slots[slot[first]] = left[first]
            shared = np.bincount(slot, minlength=1 << bits) > 1
            levels.append(_Level(multipliers, bits, slots, shared))
            waiting = np.ones(len(left), dtype=bool)
            waiting[first] = False
            left = left[waiting]
        terms = np.asarray([index for _, index in words], dtype=np.intp)
        return _Hashed(lengths, terms, [chunks[:, span].copy() for span in range(spans)], levels)


def narrowed_units(np: Any, corpus: str) -> Any | None:
    """A corpus lower-cased as bytes: as it is when ASCII, else each character beyond ASCII narrowed
    to one byte, :data:`_WIDE_LETTER` for a letter or digit and a space for any other (a character
    whose lower case is ASCII, the Kelvin sign, becomes that byte); None when a character's lower
    case is not one character. An ASCII word of the corpus is a word of these bytes, and no byte
    word holding :data:`_WIDE_LETTER` is an ASCII word."""
    if corpus.isascii():  # str.lower is fast on ASCII
        return np.frombuffer(corpus.lower().encode("ascii"), dtype=np.uint8)
    found = _wide_units(np, corpus)
    if found is None:
        return None
    wide, beyond, lowered, which = found
    narrow = [ord(low) if low.isascii() else _WIDE_LETTER if low.isalnum() else 0x20 for low in lowered]
    codes = wide.astype(np.uint8)  # the low byte: the character itself where it is ASCII
    codes |= ((codes - np.uint8(65)) < 26).view(np.uint8) << np.uint8(5)  # A-Z to a-z
    codes[beyond] = np.asarray(narrow, dtype=np.uint8)[which]
    return codes


def word_bytes(np: Any, codes: Any) -> Any:
    """Which bytes of a lower-cased run (:func:`narrowed_units`) are word units: a-z, 0-9 (a byte below
    either range wraps round) and :data:`_WIDE_LETTER`."""
    return ((codes - np.uint8(97)) < 26) | ((codes - np.uint8(48)) < 10) | (codes == _WIDE_LETTER)


def _wide_units(np: Any, corpus: str) -> tuple[Any, Any, list[str], Any] | None:
    """A corpus's UTF-32 code units, where those beyond ASCII are, the lower case of each distinct
    one of them and which of those each is; None when a lower case is not one character."""
    wide = np.frombuffer(corpus.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    beyond = np.flatnonzero(wide >= 128)
    found = wide[beyond]
    distinct = np.unique(found)
    lowered = [chr(code).lower() for code in distinct.tolist()]  # a few hundred at most
    if any(len(low) != 1 for low in lowered):
        return None
    return wide, beyond, lowered, np.searchsorted(distinct, found)
