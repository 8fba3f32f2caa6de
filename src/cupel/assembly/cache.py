"""An LRU cache of assembled contexts (CFS-021 Performance Optimization: Caching)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime

from cupel.assembly.assemble import RetrieverLike, assemble_context
from cupel.assembly.budget import TokenBudget
from cupel.assembly.config import AssemblyConfig
from cupel.assembly.hashing import content_hash
from cupel.assembly.retriever import pin, state_root_of
from cupel.assembly.tokenizer import TokenizerLike, as_tokenizer
from cupel.assembly.types import AssembledContext
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = ["CacheKey", "ContextCache"]


@dataclass(frozen=True, slots=True)
class CacheKey:
    """What an assembled context depends on (CFS-021 Caching).

    The spec's key is (query hash, state root, budget hash); ``config_hash`` is added because the packing
    strategy, dedup threshold and the other settings change the result just as much as the budget does.
    """

    query_hash: str
    state_root: str
    budget_hash: str
    config_hash: str

    @classmethod
    def of(cls, query: str, state_root: str, budget: TokenBudget, config: AssemblyConfig) -> CacheKey:
        return cls(
            content_hash(query), state_root, content_hash(budget.to_bytes()), content_hash(config.to_bytes())
        )


class _Identity:
    """Hashes and compares by identity, and keeps its object alive so the id cannot be reused."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj


def _tokenizer_key(tokenizer: object) -> Hashable:
    try:
        hash(tokenizer)
    except TypeError:
        return _Identity(tokenizer)
    return tokenizer


class ContextCache:
    """Least-recently-used cache of :class:`AssembledContext` with at most ``max_size`` entries.

    Entries are keyed by :class:`CacheKey` plus the tokenizer (equal tokenizers share entries; unhashable
    ones are told apart by identity). Safe to share between threads. A cached context keeps the metadata
    timestamp of the assembly that produced it.
    """

    __slots__ = ("_entries", "_lock", "hits", "max_size", "misses")

    def __init__(self, max_size: int = 128) -> None:
        if isinstance(max_size, bool) or not isinstance(max_size, int):
            raise CupelTypeError(f"ContextCache.max_size must be an int, got {max_size!r}")
        if max_size < 1:
            raise InvalidConfigurationError(f"ContextCache.max_size must be >= 1, got {max_size}")
        self.max_size = max_size
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Hashable, AssembledContext] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> AssembledContext | None:
        """The cached context for ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            context = self._entries.get(key)
            if context is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return context

    def put(self, key: Hashable, context: AssembledContext) -> None:
        """Store ``context``, evicting the least recently used entry when full."""
        if not isinstance(context, AssembledContext):
            raise CupelTypeError(f"context must be an AssembledContext, got {type(context).__name__}")
        with self._lock:
            self._entries[key] = context
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def assemble(
        self,
        query: str,
        retriever: RetrieverLike,
        budget: TokenBudget,
        tokenizer: TokenizerLike = None,
        config: AssemblyConfig | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> AssembledContext:
        """``assemble_context`` through the cache (the spec's ``cached_assemble``).

        A retriever without a state root (not a ``VersionedRetriever``) cannot say when its data changed, so
        its contexts are assembled every time and never cached.
        """
        config = config if config is not None else AssemblyConfig()
        retriever = pin(retriever)  # type: ignore[assignment]
        state_root = state_root_of(retriever)
        if (
            not isinstance(query, str)
            or state_root is None
            or not isinstance(budget, TokenBudget)
            or not isinstance(config, AssemblyConfig)
        ):
            return assemble_context(query, retriever, budget, tokenizer, config, clock=clock)
        counter = as_tokenizer(tokenizer)
        key = (CacheKey.of(query, state_root, budget, config), _tokenizer_key(counter))
        cached = self.get(key)
        if cached is not None:
            return cached
        context = assemble_context(query, retriever, budget, counter, config, clock=clock)
        self.put(key, context)
        return context
