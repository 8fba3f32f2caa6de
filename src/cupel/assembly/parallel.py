"""Assembly with the two retrieval channels run concurrently (CFS-021 Performance Optimization)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from cupel.assembly.assemble import assemble_context
from cupel.assembly.budget import TokenBudget
from cupel.assembly.config import AssemblyConfig
from cupel.assembly.hybrid import HybridRetriever, SearchableSnapshot, SearchParams, Substrate
from cupel.assembly.tokenizer import TokenizerLike
from cupel.assembly.types import AssembledContext
from cupel.errors import CupelTypeError

__all__ = ["parallel_assemble"]


def parallel_assemble(
    query: str,
    substrate: Substrate | SearchableSnapshot,
    budget: TokenBudget,
    tokenizer: TokenizerLike = None,
    config: AssemblyConfig | None = None,
    *,
    params: SearchParams | None = None,
    state_root: str | None = None,
    clock: Callable[[], datetime] | None = None,
) -> AssembledContext:
    """Assemble a context with the semantic and lexical searches running in parallel threads (CFS-021).

    ``substrate`` (e.g. a ``SqliteStore``) is searched at ``state_root`` (default: its latest version) by
    ``hybrid_search(query, substrate, params)``. The two channels are fused by reciprocal rank and packed
    sequentially, exactly as ``assemble_context`` does, so the result equals the sequential one (tested
    on random stores).
    SQLite and numpy release the GIL while they work, so the two searches overlap.
    """
    if not isinstance(substrate, Substrate):
        raise CupelTypeError(
            "substrate must have a snapshot(state_root) method (e.g. a SqliteStore), "
            f"got {type(substrate).__name__}"
        )
    retriever = HybridRetriever(substrate.snapshot(state_root), params, parallel=True)
    return assemble_context(query, retriever, budget, tokenizer, config, clock=clock)
