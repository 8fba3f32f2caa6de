"""RAG context assembly (CFS-021): turn retrieval results into a token-budgeted, deterministic context.

Rank results by a total deterministic order, drop exact and near duplicates, group chunks by document, pack
them into a :class:`TokenBudget` with a :class:`PackingStrategy`, and render them with ``[DOC: path]``
markers::

    context = assemble_context("how do I rotate keys?", retriever, TokenBudget(4000))
    print(format_context(context))

See ``docs/rag.md``. Independent of the core :class:`cupel.Pipeline`; it shares only the error types.
"""

from __future__ import annotations

from cupel.assembly.assemble import apply_recency, assemble_context, limit_per_document, verify_determinism
from cupel.assembly.budget import TokenBudget
from cupel.assembly.cache import CacheKey, ContextCache
from cupel.assembly.config import RECENCY_BOOST, AssemblyConfig
from cupel.assembly.dedup import (
    DEFAULT_DEDUP_THRESHOLD,
    SHINGLE_SIZE,
    compute_overlap,
    deduplicate_chunks,
    deduplicate_results,
    shingles,
)
from cupel.assembly.format import chunk_annotation, format_context
from cupel.assembly.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from cupel.assembly.hashing import HASH_ALGORITHM, content_hash
from cupel.assembly.jsonl import ResultsFormatError, parse_results, read_results, result_to_dict
from cupel.assembly.ordering import DocumentGroup, group_by_document, ordering_key, sort_results
from cupel.assembly.packing import PackingStrategy, pack_context
from cupel.assembly.retriever import Retriever, StaticRetriever, VersionedRetriever
from cupel.assembly.tokenizer import CallableTokenizer, SimpleTokenizer, Tokenizer
from cupel.assembly.types import (
    AssembledContext,
    Chunk,
    ContextChunk,
    ContextMetadata,
    Document,
    RetrievalResult,
)

__all__ = [
    "DEFAULT_DEDUP_THRESHOLD",
    "DEFAULT_RRF_K",
    "HASH_ALGORITHM",
    "RECENCY_BOOST",
    "SHINGLE_SIZE",
    "AssembledContext",
    "AssemblyConfig",
    "CacheKey",
    "CallableTokenizer",
    "Chunk",
    "ContextCache",
    "ContextChunk",
    "ContextMetadata",
    "Document",
    "DocumentGroup",
    "PackingStrategy",
    "ResultsFormatError",
    "RetrievalResult",
    "Retriever",
    "SimpleTokenizer",
    "StaticRetriever",
    "TokenBudget",
    "Tokenizer",
    "VersionedRetriever",
    "apply_recency",
    "assemble_context",
    "chunk_annotation",
    "compute_overlap",
    "content_hash",
    "deduplicate_chunks",
    "deduplicate_results",
    "format_context",
    "group_by_document",
    "limit_per_document",
    "ordering_key",
    "pack_context",
    "parse_results",
    "read_results",
    "reciprocal_rank_fusion",
    "result_to_dict",
    "shingles",
    "sort_results",
    "verify_determinism",
]
