"""Token counting: a :class:`TokenCounter` protocol and counters for common tokenizers.

``HeuristicCounter`` needs nothing; ``TiktokenCounter`` needs ``pycupel[tiktoken]`` and
``HuggingFaceCounter`` needs ``pycupel[tokenizers]``. Their third-party packages are imported only when
a counter is built. ``count_items`` fills ``ContextItem.tokens`` from a counter.
"""

from cupel.tokens._optional import OptionalDependencyError
from cupel.tokens.base import (
    CounterLike,
    FunctionCounter,
    TokenCounter,
    TokenCounterBase,
    count_texts,
)
from cupel.tokens.heuristic import HeuristicCounter
from cupel.tokens.huggingface import HuggingFaceCounter
from cupel.tokens.items import count_distinct, count_items, items_from_texts
from cupel.tokens.resolve import resolve_counter
from cupel.tokens.tiktoken import ENCODINGS, TiktokenCounter, encoding_for_model

__all__ = [
    "ENCODINGS",
    "CounterLike",
    "FunctionCounter",
    "HeuristicCounter",
    "HuggingFaceCounter",
    "OptionalDependencyError",
    "TiktokenCounter",
    "TokenCounter",
    "TokenCounterBase",
    "count_distinct",
    "count_items",
    "count_texts",
    "encoding_for_model",
    "items_from_texts",
    "resolve_counter",
]
