"""Token counting: a :class:`TokenCounter` protocol and counters for common tokenizers.

``HeuristicCounter`` needs nothing; ``TiktokenCounter`` needs ``pycupel[tiktoken]`` and
``HuggingFaceCounter`` needs ``pycupel[tokenizers]``. Their third-party packages are imported only when
a counter is built. ``count_items`` fills ``ContextItem.tokens`` from a counter.
"""

from typing import TYPE_CHECKING

from cupel._lazy import lazy_exports

if TYPE_CHECKING:
    from cupel.tokens._optional import (
        OptionalDependencyError,
    )
    from cupel.tokens.base import (
        CounterLike,
        FunctionCounter,
        TokenCounter,
        TokenCounterBase,
        TruncatingCounter,
        count_texts,
    )
    from cupel.tokens.heuristic import (
        HeuristicCounter,
    )
    from cupel.tokens.huggingface import (
        HuggingFaceCounter,
    )
    from cupel.tokens.items import (
        count_distinct,
        count_items,
        items_from_texts,
    )
    from cupel.tokens.named import COUNTER_NAMES, counter_from_name
    from cupel.tokens.resolve import resolve_counter
    from cupel.tokens.tiktoken import (
        ENCODINGS,
        TiktokenCounter,
        encoding_for_model,
    )

__all__ = [
    "COUNTER_NAMES",
    "ENCODINGS",
    "CounterLike",
    "FunctionCounter",
    "HeuristicCounter",
    "HuggingFaceCounter",
    "OptionalDependencyError",
    "TiktokenCounter",
    "TokenCounter",
    "TokenCounterBase",
    "TruncatingCounter",
    "count_distinct",
    "count_items",
    "count_texts",
    "counter_from_name",
    "encoding_for_model",
    "items_from_texts",
    "resolve_counter",
]

# Each counter's module is imported when the counter is first used.
_LAZY: dict[str, str] = {
    "COUNTER_NAMES": "cupel.tokens.named",
    "counter_from_name": "cupel.tokens.named",
    "TruncatingCounter": "cupel.tokens.base",
    "OptionalDependencyError": "cupel.tokens._optional",
    "CounterLike": "cupel.tokens.base",
    "FunctionCounter": "cupel.tokens.base",
    "TokenCounter": "cupel.tokens.base",
    "TokenCounterBase": "cupel.tokens.base",
    "count_texts": "cupel.tokens.base",
    "resolve_counter": "cupel.tokens.resolve",
    "HeuristicCounter": "cupel.tokens.heuristic",
    "HuggingFaceCounter": "cupel.tokens.huggingface",
    "count_distinct": "cupel.tokens.items",
    "count_items": "cupel.tokens.items",
    "items_from_texts": "cupel.tokens.items",
    "ENCODINGS": "cupel.tokens.tiktoken",
    "TiktokenCounter": "cupel.tokens.tiktoken",
    "encoding_for_model": "cupel.tokens.tiktoken",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
