"""Optional packages of the fast paths, looked up once each, as an import is.

numpy (``cupel._numeric``) and ahocorasick_rs (relevance's term search, ``cupel.scorers.terms``), both
installed with ``pycupel[fast]``; each fast path has a plain-Python twin that gives the same results.
"""

from __future__ import annotations

import importlib
import os

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

_found: dict[str, Any] = {}  # package name -> the module, or None when it is missing or switched off


def optional_module(name: str, switch: str) -> Any:
    """The package ``name`` if it is installed and the environment variable ``switch`` is not set
    (``CUPEL_NO_NUMPY=1`` turns the numpy paths off), else None."""
    if name not in _found:
        module = None
        if not os.environ.get(switch):
            try:
                module = importlib.import_module(name)
            except ImportError:
                module = None
        _found[name] = module
    return _found[name]
