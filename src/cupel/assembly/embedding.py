"""Embedding functions for semantic search (CFS-021 §2 ``semantic_score``).

An embedder is any callable ``list[str] -> list[vector]`` (a vector is a sequence of floats, all of one
length). :func:`as_embedder` also adapts objects shaped like sentence-transformers models (an
``encode(texts)`` method) and fastembed models (an ``embed(texts)`` method returning an iterator).

:class:`HashingEmbedder` is the default. It needs no model download and no third-party package: it hashes
word unigrams and character trigrams into a fixed-size, L2-normalised vector. It is a **lexical-semantic
baseline**, not a neural model: texts that share words or word pieces ("rotate", "rotation") come out
similar, but synonyms with no shared spelling do not. Use a real embedding model for meaning.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.protocols import Embedder  # the protocol lives where scorers can import it

__all__ = [
    "Embedder",
    "EncodeAdapter",
    "HashingEmbedder",
    "as_embedder",
    "embed_texts",
    "embedder_name",
]

Vector = Sequence[float]

_WORD = re.compile(r"[^\W_]+")
_FEATURE_CACHE_LIMIT = 1 << 18


class HashingEmbedder:
    """Hashed word and character n-grams in ``dimension`` buckets (a lexical-semantic baseline).

    Text is NFKC-normalised and case-folded and split into words (runs of letters and digits). A word's
    features are the word itself (weight 2) and the character trigrams of ``"<word>"`` (weight 1 each), so
    ``rotate`` and ``rotation`` share ``<ro``, ``rot``, ``ota``, ``tat``. Each distinct word adds its
    features ``1 + ln(count)`` times (sublinear term frequency). Features are hashed with BLAKE2b (stable
    across processes, unlike ``hash()``) to a bucket and a sign, and the vector is L2-normalised. A text
    without words gives the zero vector.
    """

    __slots__ = ("_words", "dimension")

    def __init__(self, dimension: int = 512) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int):
            raise CupelTypeError(f"HashingEmbedder.dimension must be an int, got {dimension!r}")
        if not 16 <= dimension <= 65536:
            raise InvalidConfigurationError(
                f"HashingEmbedder.dimension must be between 16 and 65536, got {dimension}"
            )
        self.dimension = dimension
        self._words: dict[str, tuple[tuple[int, float], ...]] = {}

    @property
    def name(self) -> str:
        """Identifies the embedding space; a store refuses vectors from a different one."""
        return f"cupel-hashing-ngrams-v1/{self.dimension}"

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
        return digest % self.dimension, 1.0 if digest >> 63 else -1.0

    def _features(self, word: str) -> tuple[tuple[int, float], ...]:
        """A word's sparse feature vector, ``(bucket, weight)`` pairs; cached, as vocabularies are small."""
        found = self._words.get(word)
        if found is None:
            index, sign = self._bucket("w:" + word)
            sparse = {index: 2.0 * sign}
            padded = f"<{word}>"
            for start in range(len(padded) - 2):
                index, sign = self._bucket("c:" + padded[start : start + 3])
                sparse[index] = sparse.get(index, 0.0) + sign
            found = tuple(sparse.items())
            if len(self._words) >= _FEATURE_CACHE_LIMIT:
                self._words.clear()
            self._words[word] = found
        return found

    def embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        words = Counter(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))
        for word in sorted(words):  # a fixed order, so the float sums do not depend on dict order
            weight = 1.0 + math.log(words[word])
            for index, value in self._features(word):
                vector[index] += weight * value
        norm = math.hypot(*vector)
        if norm == 0.0:
            return vector
        return [value / norm for value in vector]

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_one(text) for text in texts]

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self.dimension})"


class EncodeAdapter:
    """Adapts a model object to the :class:`Embedder` protocol.

    ``method="encode"`` fits sentence-transformers' ``SentenceTransformer.encode(texts)`` (an array);
    ``method="embed"`` fits fastembed's ``TextEmbedding.embed(texts)`` (an iterator of arrays).
    """

    __slots__ = ("_method", "model", "name")

    def __init__(self, model: Any, method: str, name: str | None = None) -> None:
        if method not in ("encode", "embed"):
            raise InvalidConfigurationError(
                f"EncodeAdapter.method must be 'encode' or 'embed', got {method!r}"
            )
        if not callable(getattr(model, method, None)):
            raise CupelTypeError(f"{type(model).__name__} has no {method}() method")
        self.model = model
        self._method = method
        label = name or getattr(model, "model_name", None) or getattr(model, "name_or_path", None)
        self.name = f"{method}:{type(model).__module__}.{type(model).__qualname__}:{label or '?'}"

    def __call__(self, texts: list[str]) -> list[list[float]]:
        produced = getattr(self.model, self._method)(list(texts))
        return [[float(value) for value in vector] for vector in produced]


def as_embedder(embedder: object) -> Callable[[list[str]], Sequence[Vector]]:
    """An embedder from a callable, or from a model object with ``encode`` or ``embed`` (see above)."""
    if embedder is None:
        return HashingEmbedder()
    for method in ("encode", "embed"):
        if callable(getattr(embedder, method, None)):
            return EncodeAdapter(embedder, method)
    if callable(embedder):
        return embedder
    raise CupelTypeError(
        "embedder must be a callable list[str] -> list[vector] or have an encode()/embed() method, "
        f"got {type(embedder).__name__}"
    )


def embedder_name(embedder: object) -> str:
    """The name a store records for ``embedder``: its ``name`` attribute, else its qualified name."""
    name = getattr(embedder, "name", None)
    if isinstance(name, str) and name:
        return name
    target = embedder if hasattr(embedder, "__qualname__") else type(embedder)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"


def embed_texts(
    embedder: Callable[[list[str]], Sequence[Vector]], texts: Iterable[str], dimension: int | None
) -> list[list[float]]:
    """``embedder(texts)``, checked: one finite vector per text, all of ``dimension`` (when given)."""
    batch = list(texts)
    vectors = embedder(batch)
    if isinstance(vectors, str | bytes) or not hasattr(vectors, "__len__"):
        raise CupelTypeError(f"embedder must return a sequence of vectors, got {type(vectors).__name__}")
    if len(vectors) != len(batch):
        raise InvalidConfigurationError(f"embedder returned {len(vectors)} vectors for {len(batch)} texts")
    checked = []
    for index, vector in enumerate(vectors):
        values = [float(value) for value in vector]
        expected = dimension if dimension is not None else len(values)
        if len(values) != expected or not values:
            raise InvalidConfigurationError(
                f"embedder returned a vector of dimension {len(values)} at index {index}, expected {expected}"
            )
        if not _all_finite(values):
            raise InvalidConfigurationError(f"embedder returned a non-finite value at index {index}")
        dimension = expected
        checked.append(values)
    return checked


def _all_finite(values: list[float]) -> bool:
    # One C-level sum is finite exactly when every value is, barring overflow, which the fallback handles.
    try:
        if math.isfinite(math.fsum(values)):
            return True
    except (OverflowError, ValueError):
        pass
    return all(math.isfinite(value) for value in values)
