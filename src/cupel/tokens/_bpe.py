"""Byte-pair merging exactly as tiktoken does it, in O(n log n) for a piece of n bytes.

tiktoken merges, again and again, the adjacent pair of parts whose concatenation has the lowest rank,
the leftmost one on ties, until no pair is in the vocabulary; the parts left are the tokens. Scanning
every pair for the minimum after each merge (tiktoken's own loop, and ``reference_merge`` here) costs
O(n²): seconds for a 20,000-byte run of one character. ``byte_pair_encode`` keeps the candidate pairs
in a heap keyed by ``(rank, start offset)`` over a linked list of parts, so each merge costs O(log n)
and the result is the same: the heap's minimum is tiktoken's "lowest rank, leftmost" pair.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping

__all__ = ["byte_pair_encode", "reference_merge"]

_NONE = -1
#: Pieces up to this many bytes use the plain scan: for them it is faster than heap bookkeeping.
_SCAN_LIMIT = 32


def byte_pair_encode(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """The token ids of ``piece`` (a pre-token's UTF-8 bytes) under ``ranks``."""
    whole = ranks.get(piece)
    if whole is not None:
        return [whole]
    if len(piece) <= _SCAN_LIMIT:
        return reference_merge(piece, ranks)
    return _heap_merge(piece, ranks)


def reference_merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """tiktoken's loop, literally: find the lowest-ranked pair, merge it, repeat (O(n²))."""
    get = ranks.get
    bounds = list(range(len(piece) + 1))
    while len(bounds) > 2:
        best_rank = _NONE
        best = _NONE
        for index in range(len(bounds) - 2):
            rank = get(piece[bounds[index] : bounds[index + 2]])
            if rank is not None and (best == _NONE or rank < best_rank):
                best_rank, best = rank, index
        if best == _NONE:
            break
        del bounds[best + 1]
    return [ranks[piece[start:end]] for start, end in itertools.pairwise(bounds)]


def _heap_merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    get = ranks.get
    size = len(piece)
    # Parts are identified by their start offset; following[s] is where the part starting at s ends.
    following = list(range(1, size + 2))
    preceding = list(range(-1, size))
    # pair_rank[s]: rank of the part at s joined with the next part, or _NONE. A heap entry
    # (rank, s) is current only while pair_rank[s] == rank: a pair's end only grows, so a rank
    # (which names one byte string) never comes back to the same start.
    pair_rank = [_NONE] * (size + 1)
    heap: list[tuple[int, int]] = []
    for start in range(size - 1):
        rank = get(piece[start : start + 2])
        if rank is not None:
            pair_rank[start] = rank
            heap.append((rank, start))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        rank, start = pop(heap)
        if pair_rank[start] != rank:
            continue
        absorbed = following[start]
        end = following[absorbed]
        pair_rank[absorbed] = _NONE
        following[start] = end
        preceding[end] = start
        if end < size:
            rank = get(piece[start : following[end]], _NONE)
            pair_rank[start] = rank
            if rank != _NONE:
                push(heap, (rank, start))
        else:
            pair_rank[start] = _NONE
        if start > 0:
            before = preceding[start]
            rank = get(piece[before:end], _NONE)
            pair_rank[before] = rank
            if rank != _NONE:
                push(heap, (rank, before))
    tokens: list[int] = []
    start = 0
    while start < size:
        end = following[start]
        tokens.append(ranks[piece[start:end]])
        start = end
    return tokens
