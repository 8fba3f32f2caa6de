"""Packing retrieval results into a token budget (CFS-021 §7, §8).

All strategies share one accountant, so the budget rules are the same for each:

* A chunk costs its token count, plus ``budget.per_doc_overhead`` when it starts a new run of chunks from
  one document (exactly when the formatter prints a ``[DOC: path]`` marker), plus the tokens of its
  annotation line when metadata is included. ``total_tokens`` is the sum of those costs and never exceeds
  ``budget.available``.
* A chunk that does not fit whole is skipped and packing goes on with the next one, so that smaller,
  lower-ranked chunks can still use the room (this is what the spec's Packing test vector requires).
* Partial fit: a chunk that continues the document being emitted is instead cut to the remaining room
  with ``Tokenizer.truncate_to_tokens`` and packing stops, as in the spec's §7; ``truncated`` is then
  true. If nothing fits whole at all, the first chunk offered is cut to fit so that the context is never
  needlessly empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum

from cupel.assembly.budget import TokenBudget
from cupel.assembly.format import chunk_annotation, format_context, marker_line
from cupel.assembly.ordering import check_documents, group_positions, reading_key, sort_results
from cupel.assembly.tokenizer import Tokenizer, TokenizerLike, as_tokenizer, checked_count
from cupel.assembly.types import AssembledContext, ContextChunk, RetrievalResult
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens.truncate import ELLIPSIS

__all__ = ["PackingStrategy", "pack_context"]

# Bound on truncate/count rounds when a tokenizer's fragment overshoots the room it was given.
_MAX_FIT_ATTEMPTS = 32


class PackingStrategy(StrEnum):
    """The order in which chunks are offered to the budget (CFS-021 §7, §8, Configuration Parameters)."""

    GREEDY = "greedy"
    """Document groups by max score; each group's chunks in reading order, kept together (§7)."""
    INTERLEAVED = "interleaved"
    """Round-robin over document groups, each group's chunks best first (§8.1)."""
    SCORE_WEIGHTED = "score_weighted"
    """Strictly by the deterministic score order, regardless of document (§8.2)."""

    @classmethod
    def parse(cls, value: PackingStrategy | str) -> PackingStrategy:
        """A strategy from itself or its name (``"greedy"``, ``"interleaved"``, ``"score_weighted"``)."""
        if isinstance(value, PackingStrategy):
            return value
        if not isinstance(value, str):
            raise CupelTypeError(f"packing_strategy must be a PackingStrategy or str, got {value!r}")
        try:
            return cls(value.lower())
        except ValueError:
            names = ", ".join(member.value for member in cls)
            raise InvalidConfigurationError(
                f"packing_strategy must be one of {names}, got {value!r}"
            ) from None


def offer_order(ordered: Sequence[RetrievalResult], strategy: PackingStrategy) -> list[int]:
    """Positions in ``ordered`` (sorted by ``ordering_key``) in the order ``strategy`` offers them."""
    if strategy is PackingStrategy.SCORE_WEIGHTED:
        return list(range(len(ordered)))
    groups = group_positions(ordered)
    if strategy is PackingStrategy.GREEDY:
        return [
            position
            for group in groups
            for position in sorted(group, key=lambda position: reading_key(ordered[position]))
        ]
    # Round r offers each group's r-th best chunk, groups in group order.
    slots = [
        (round_, group_index, position)
        for group_index, group in enumerate(groups)
        for round_, position in enumerate(group)
    ]
    slots.sort()
    return [position for _, _, position in slots]


def _fit_fragment(tokenizer: Tokenizer, text: str, room: int) -> tuple[str, int] | None:
    """The longest fragment of ``text`` the tokenizer produces that counts at most ``room`` tokens."""
    limit = room
    for _ in range(_MAX_FIT_ATTEMPTS):
        if limit < 1:
            return None
        fragment = tokenizer.truncate_to_tokens(text, limit)
        if not isinstance(fragment, str):
            raise CupelTypeError(f"truncate_to_tokens must return a str, got {type(fragment).__name__}")
        tokens = checked_count(tokenizer.count_tokens, fragment)
        if tokens <= room:
            # A fragment whose kept part is only whitespace (e.g. a bare "...") says nothing: never pack it.
            return (fragment, tokens) if fragment.removesuffix(ELLIPSIS).strip() else None
        # The spec's SimpleTokenizer overshoots by the ellipsis; ask again for that much less.
        limit -= max(1, tokens - room)
    return None


class _Packer:
    """Budget accountant shared by every strategy (see the module docstring)."""

    __slots__ = (
        "_available",
        "_chunks",
        "_count",
        "_exact",
        "_include_metadata",
        "_last_path",
        "_overhead",
        "_tokenizer",
        "_truncated",
        "_used",
    )

    def __init__(
        self, budget: TokenBudget, tokenizer: Tokenizer, include_metadata: bool, exact: bool
    ) -> None:
        self._exact = exact
        self._available = budget.available
        self._overhead = budget.per_doc_overhead
        self._tokenizer = tokenizer
        self._count: Callable[[str], int] = tokenizer.count_tokens
        self._include_metadata = include_metadata
        self._used = 0
        self._last_path: str | None = None
        self._chunks: list[ContextChunk] = []
        self._truncated = False

    def _fixed_cost(self, result: RetrievalResult) -> int:
        new_document = result.document.path != self._last_path
        note = (
            chunk_annotation(result.chunk.id, result.chunk.sequence, result.score)
            if self._include_metadata
            else None
        )
        if self._exact:
            # Exact mode charges what the formatter prints around the chunk: its marker line, its
            # annotation line and the newline after its text, each counted by the tokenizer.
            around = (marker_line(result.document.path) if new_document else "") + (
                note + "\n" if note is not None else ""
            )
            cost = checked_count(self._count, "\n")
            return cost + checked_count(self._count, around) if around else cost
        cost = self._overhead if new_document else 0
        if note is not None:
            cost += checked_count(self._count, note)
        return cost

    def _take(self, result: RetrievalResult, text: str, tokens: int, fixed: int, truncated: bool) -> None:
        self._chunks.append(
            ContextChunk(
                chunk_id=result.chunk.id,
                document_path=result.document.path,
                text=text,
                score=result.score,
                sequence=result.chunk.sequence,
                byte_offset=result.chunk.byte_offset,
                document_id=result.document.id,
                tokens=tokens,
                truncated=truncated,
            )
        )
        self._used += fixed + tokens
        self._last_path = result.document.path
        self._truncated = self._truncated or truncated

    def offer(self, result: RetrievalResult, tokens: int) -> bool:
        """Pack ``result`` whole, as a fragment, or not at all; False once packing must stop."""
        fixed = self._fixed_cost(result)
        if self._used + fixed + tokens <= self._available:
            self._take(result, result.chunk.text, tokens, fixed, truncated=False)
            return True
        if result.document.path != self._last_path:
            return True
        return not self._take_fragment(result, fixed)

    def _take_fragment(self, result: RetrievalResult, fixed: int) -> bool:
        room = self._available - self._used - fixed
        fitted = _fit_fragment(self._tokenizer, result.chunk.text, room)
        if fitted is None:
            return False
        self._take(result, fitted[0], fitted[1], fixed, truncated=True)
        return True

    def finish(self, first: RetrievalResult | None) -> AssembledContext:
        if not self._chunks and first is not None:
            self._take_fragment(first, self._fixed_cost(first))
        if not self._exact:
            return AssembledContext(tuple(self._chunks), self._used, self._truncated)
        # Exact mode: total_tokens is the count of the formatted text itself. Per-part charges bound it
        # for tokenizers whose counts add up (SimpleTokenizer); for one that counts a joined text higher
        # than its parts, drop chunks from the end until the whole fits.
        while True:
            context = AssembledContext(tuple(self._chunks), 0, self._truncated)
            used = checked_count(
                self._count, format_context(context, include_metadata=self._include_metadata)
            )
            if used <= self._available or not self._chunks:
                break
            self._chunks.pop()
            self._truncated = any(chunk.truncated for chunk in self._chunks)
        return AssembledContext(tuple(self._chunks), used, self._truncated)


def pack_sorted(
    ordered: Sequence[RetrievalResult],
    budget: TokenBudget,
    tokenizer: Tokenizer,
    strategy: PackingStrategy,
    include_metadata: bool,
    exact_markers: bool = False,
) -> AssembledContext:
    """Pack results already in ``ordering_key`` order; each chunk is counted once."""
    packer = _Packer(budget, tokenizer, include_metadata, exact_markers)
    order = offer_order(ordered, strategy)
    for position in order:
        result = ordered[position]
        if not packer.offer(result, checked_count(tokenizer.count_tokens, result.chunk.text)):
            break
    return packer.finish(ordered[order[0]] if order else None)


def pack_context(
    results: Iterable[RetrievalResult],
    budget: TokenBudget,
    tokenizer: TokenizerLike = None,
    strategy: PackingStrategy | str = PackingStrategy.GREEDY,
    *,
    include_metadata: bool = False,
    marker_tokens: str = "fixed",
) -> AssembledContext:
    """Pack ``results`` (any order) into ``budget`` with ``strategy`` (CFS-021 §7, §8).

    Sorts once by :func:`~cupel.assembly.ordering.ordering_key`; does not deduplicate (see
    :func:`~cupel.assembly.assemble.assemble_context` for the whole pipeline). The result's ``metadata`` is
    ``None``. ``include_metadata`` charges the annotation lines :func:`format_context` will print.
    ``marker_tokens`` is ``"fixed"`` (the spec's ``per_doc_overhead`` per marker) or ``"exact"`` (see
    :class:`~cupel.assembly.config.AssemblyConfig`).
    """
    if not isinstance(budget, TokenBudget):
        raise CupelTypeError(f"budget must be a TokenBudget, got {type(budget).__name__}")
    if not isinstance(include_metadata, bool):
        raise CupelTypeError(f"include_metadata must be a bool, got {include_metadata!r}")
    ordered = sort_results(results)
    check_documents(ordered)
    return pack_sorted(
        ordered,
        budget,
        as_tokenizer(tokenizer),
        PackingStrategy.parse(strategy),
        include_metadata,
        check_marker_tokens(marker_tokens) == "exact",
    )


MARKER_TOKEN_MODES = ("fixed", "exact")


def check_marker_tokens(value: object, name: str = "marker_tokens") -> str:
    if value not in MARKER_TOKEN_MODES:
        raise InvalidConfigurationError(f"{name} must be 'fixed' or 'exact', got {value!r}")
    return str(value)
