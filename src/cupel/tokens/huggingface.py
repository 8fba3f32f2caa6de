"""HuggingFaceCounter: counts with a Hugging Face ``tokenizers`` tokenizer, loaded from a local file."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens._optional import import_optional
from cupel.tokens.base import TokenCounterBase, _check_texts

__all__ = ["HuggingFaceCounter"]


@dataclass(frozen=True, slots=True, init=False)
class HuggingFaceCounter(TokenCounterBase):
    """Counts ``len(tokenizer.encode(text).ids)``: ``HuggingFaceCounter("path/to/tokenizer.json")``.

    ``tokenizer`` is a path to a ``tokenizer.json`` file or a ``tokenizers.Tokenizer``. Nothing is
    fetched from the Hub: download the file yourself and pass its path. ``add_special_tokens`` (default
    False) adds the tokenizer's template tokens (BOS/EOS and the like) to every count. A path needs
    ``pip install 'pycupel[tokenizers]'``.
    """

    source: str
    add_special_tokens: bool
    _tokenizer: Any = field(repr=False, compare=False)

    def __init__(self, tokenizer: str | os.PathLike[str] | Any, *, add_special_tokens: bool = False) -> None:
        if not isinstance(add_special_tokens, bool):
            raise CupelTypeError(
                f"HuggingFaceCounter.add_special_tokens must be a bool, got {add_special_tokens!r}"
            )
        if isinstance(tokenizer, str | os.PathLike):
            path = Path(tokenizer)
            if not path.is_file():
                raise InvalidConfigurationError(
                    f"HuggingFaceCounter: no tokenizer file at {str(path)!r}. cupel never downloads "
                    "from the Hugging Face Hub: fetch tokenizer.json yourself and pass its path"
                )
            module = import_optional(
                "tokenizers", package="tokenizers", extra="tokenizers", feature="HuggingFaceCounter"
            )
            try:
                loaded = module.Tokenizer.from_file(str(path))
            except Exception as exc:
                # tokenizers raises a bare Exception for an unreadable file.
                raise InvalidConfigurationError(
                    f"HuggingFaceCounter: {str(path)!r} is not a readable tokenizer.json ({exc})"
                ) from exc
            source = str(path)
        elif all(callable(getattr(tokenizer, name, None)) for name in ("encode", "encode_batch")):
            loaded = tokenizer
            source = f"<{type(tokenizer).__name__}>"
        else:
            raise CupelTypeError(
                "HuggingFaceCounter.tokenizer must be a path to tokenizer.json or a tokenizers.Tokenizer, "
                f"got {tokenizer!r}"
            )
        setter = object.__setattr__
        setter(self, "source", source)
        setter(self, "add_special_tokens", add_special_tokens)
        setter(self, "_tokenizer", loaded)

    @property
    def tokenizer(self) -> Any:
        """The underlying ``tokenizers.Tokenizer``."""
        return self._tokenizer

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise CupelTypeError(f"HuggingFaceCounter.count needs a str, got {type(text).__name__}")
        return len(self._tokenizer.encode(text, add_special_tokens=self.add_special_tokens).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        checked = list(_check_texts("HuggingFaceCounter", texts))
        if not checked:
            return []
        encodings = self._tokenizer.encode_batch(checked, add_special_tokens=self.add_special_tokens)
        return [len(encoding.ids) for encoding in encodings]
