"""The optional compiled multi-pattern search (``ahocorasick_rs``, installed with ``pycupel[fast]``).

Relevance finds where a query's terms begin words with it (``cupel.scorers.terms.term_search``); the
plain substring search beside it gives the same results (tests compare the two).
"""

from __future__ import annotations

import importlib
import os

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

_module: Any = None
_checked = False


def aho_corasick_module() -> Any:
    """ahocorasick_rs if it is installed (and not disabled with ``CUPEL_NO_AHOCORASICK=1``), else None;
    looked up once, as an import is."""
    global _module, _checked
    if not _checked:
        _checked = True
        if not os.environ.get("CUPEL_NO_AHOCORASICK"):
            try:
                _module = importlib.import_module("ahocorasick_rs")
            except ImportError:
                _module = None
    return _module
