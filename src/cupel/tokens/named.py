"""Counters by name, as the CLI's ``--tokenizer`` gives them."""

from __future__ import annotations

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens.base import TokenCounterBase

__all__ = ["COUNTER_NAMES", "counter_from_name"]

COUNTER_NAMES = (
    "heuristic (chars/4), bytes/4, cl100k_base, o200k_base, o200k_harmony, an OpenAI model name, "
    "or a tokenizer.json path"
)
"""What :func:`counter_from_name` accepts, for help texts and errors."""


def counter_from_name(spec: str) -> TokenCounterBase:
    """The counter ``spec`` names.

    ``heuristic`` (also ``chars/4``, ``default``) is ``HeuristicCounter()``; ``bytes/4`` (also ``simple``)
    is the spec's UTF-8-byte heuristic, the RAG assembly's default; a tiktoken encoding name or an
    OpenAI model name (``gpt-4o``) gives a ``TiktokenCounter``; a path to a ``tokenizer.json`` gives a
    ``HuggingFaceCounter``.
    """
    if not isinstance(spec, str):
        raise CupelTypeError(f"tokenizer must be a str, got {type(spec).__name__}")
    name = spec.strip()
    if name in ("heuristic", "chars/4", "default"):
        from cupel.tokens.heuristic import HeuristicCounter

        return HeuristicCounter()
    if name in ("bytes/4", "simple"):
        from cupel.tokens.heuristic import HeuristicCounter

        return HeuristicCounter(unit="utf8_bytes")
    from cupel.tokens._vocabulary import ENCODINGS

    if name in ENCODINGS:
        from cupel.tokens.tiktoken import TiktokenCounter

        return TiktokenCounter(name)
    from pathlib import Path  # not for the heuristics above

    if name.lower().endswith(".json") or Path(name).is_file():
        from cupel.tokens.huggingface import HuggingFaceCounter

        return HuggingFaceCounter(name)
    from cupel.tokens._models import encoding_for_model

    try:
        encoding = encoding_for_model(name)
    except InvalidConfigurationError:
        raise InvalidConfigurationError(f"unknown tokenizer {spec!r}; use {COUNTER_NAMES}") from None
    from cupel.tokens.tiktoken import TiktokenCounter

    return TiktokenCounter(encoding)
