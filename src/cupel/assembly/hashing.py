"""Content hashing for deduplication, query hashes and cache keys (CFS-021 §10, §11, Caching).

The spec names BLAKE3. When the optional ``blake3`` package is installed (``pip install "pycupel[assembly]"``)
it is used; otherwise hashing falls back to the standard library's BLAKE2b with a 32-byte digest. Both are
cryptographic 256-bit hashes, so exact-duplicate detection behaves identically either way; only the digest
values differ, which is why every digest is prefixed with its algorithm (``"blake3:…"`` or
``"blake2b-256:…"``) and digests from different installations never compare equal by accident.
"""

from __future__ import annotations

import hashlib
import importlib
from typing import Any

__all__ = ["HASH_ALGORITHM", "content_hash", "raw_digest"]


def _load_blake3() -> Any:
    # Imported by name so that type checking does not depend on the optional package being installed.
    try:
        return importlib.import_module("blake3").blake3
    except ImportError:
        return None


_blake3: Any = _load_blake3()

HASH_ALGORITHM: str = "blake3" if _blake3 is not None else "blake2b-256"
"""The algorithm :func:`content_hash` uses in this installation."""


def raw_digest(data: bytes) -> bytes:
    """The 32-byte digest of ``data``: BLAKE3 when available, else BLAKE2b-256."""
    if _blake3 is not None:
        digest: bytes = _blake3(data).digest()
        return digest
    return hashlib.blake2b(data, digest_size=32).digest()


def content_hash(data: bytes | str) -> str:
    """``"<algorithm>:<hex digest>"`` of ``data`` (a str is hashed as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    algorithm = "blake3" if _blake3 is not None else "blake2b-256"
    return f"{algorithm}:{raw_digest(data).hex()}"
