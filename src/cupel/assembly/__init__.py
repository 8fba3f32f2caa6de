"""RAG context assembly (CFS-021): turn retrieval results into a token-budgeted, deterministic context.

Rank results by a total deterministic order, drop exact and near duplicates, group chunks by document, pack
them into a :class:`TokenBudget` with a :class:`PackingStrategy`, and render them with ``[DOC: path]``
markers::

    context = assemble_context("how do I rotate keys?", retriever, TokenBudget(4000))
    print(format_context(context))

or retrieve from the embedded, versioned :class:`SqliteStore` (FTS5 BM25 with Porter stemming, plus cosine
similarity fused by reciprocal rank when an embedder is configured)::

    with SqliteStore("kb.db") as store:
        context = parallel_assemble("how do I rotate keys?", store, TokenBudget(4000))

See ``docs/rag.md``. Independent of the core :class:`cupel.Pipeline`; it shares only the error types.
"""

from __future__ import annotations

from cupel.assembly.assemble import apply_recency, assemble_context, limit_per_document, verify_determinism
from cupel.assembly.budget import TokenBudget
from cupel.assembly.cache import CacheKey, ContextCache
from cupel.assembly.chunking import ChunkingOptions, chunk_document
from cupel.assembly.config import RECENCY_BOOST, AssemblyConfig
from cupel.assembly.dedup import (
    DEFAULT_DEDUP_THRESHOLD,
    SHINGLE_SIZE,
    compute_overlap,
    deduplicate_chunks,
    deduplicate_results,
    shingles,
)
from cupel.assembly.embedding import Embedder, EncodeAdapter, HashingEmbedder, as_embedder
from cupel.assembly.format import chunk_annotation, format_context
from cupel.assembly.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from cupel.assembly.hashing import HASH_ALGORITHM, content_hash
from cupel.assembly.hybrid import HybridRetriever, SearchParams, hybrid_search
from cupel.assembly.indexing import IndexReport, index_paths
from cupel.assembly.jsonl import ResultsFormatError, parse_results, read_results, result_to_dict
from cupel.assembly.lexical import lexical_terms
from cupel.assembly.ordering import DocumentGroup, group_by_document, ordering_key, sort_results
from cupel.assembly.packing import PackingStrategy, pack_context
from cupel.assembly.parallel import parallel_assemble
from cupel.assembly.retriever import PinnableRetriever, Retriever, StaticRetriever, VersionedRetriever
from cupel.assembly.store import SqliteStore, StoreError, StoreSnapshot
from cupel.assembly.tokenizer import CallableTokenizer, SimpleTokenizer, Tokenizer
from cupel.assembly.types import (
    AssembledContext,
    Chunk,
    ContextChunk,
    ContextMetadata,
    Document,
    RetrievalResult,
)
from cupel.assembly.versioning import StoreVersion, UnknownStateRootError, merkle_root

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
    "ChunkingOptions",
    "ContextCache",
    "ContextChunk",
    "ContextMetadata",
    "Document",
    "DocumentGroup",
    "Embedder",
    "EncodeAdapter",
    "HashingEmbedder",
    "HybridRetriever",
    "IndexReport",
    "PackingStrategy",
    "PinnableRetriever",
    "ResultsFormatError",
    "RetrievalResult",
    "Retriever",
    "SearchParams",
    "SimpleTokenizer",
    "SqliteStore",
    "StaticRetriever",
    "StoreError",
    "StoreSnapshot",
    "StoreVersion",
    "TokenBudget",
    "Tokenizer",
    "UnknownStateRootError",
    "VersionedRetriever",
    "apply_recency",
    "as_embedder",
    "assemble_context",
    "chunk_annotation",
    "chunk_document",
    "compute_overlap",
    "content_hash",
    "deduplicate_chunks",
    "deduplicate_results",
    "format_context",
    "group_by_document",
    "hybrid_search",
    "index_paths",
    "lexical_terms",
    "limit_per_document",
    "merkle_root",
    "ordering_key",
    "pack_context",
    "parallel_assemble",
    "parse_results",
    "read_results",
    "reciprocal_rank_fusion",
    "result_to_dict",
    "shingles",
    "sort_results",
    "verify_determinism",
]
