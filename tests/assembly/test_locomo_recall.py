"""Recall on LoCoMo (read from the shared data directory; skipped where it is absent)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LOCOMO", ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"))


@pytest.mark.skipif(not DATA.is_file(), reason=f"LoCoMo not found at {DATA}")
def test_default_hybrid_search_never_loses_to_lexical_search_on_locomo() -> None:
    spec = importlib.util.spec_from_file_location("recall_rag", ROOT / "benchmarks" / "recall_rag.py")
    assert spec is not None and spec.loader is not None
    recall_rag = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recall_rag)
    recall = recall_rag.measure(DATA, unstemmed=False, vectors=False)["recall"]
    hybrid = recall["store hybrid (default), stemmed"]["R@10"]
    assert hybrid >= recall["FTS5 porter unicode61"]["R@10"]
    assert hybrid >= recall["store lexical, stemmed"]["R@10"]
    assert hybrid > 0.5
