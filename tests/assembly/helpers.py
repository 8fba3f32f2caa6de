"""Builders and Hypothesis strategies shared by the assembly tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import strategies as st

from cupel.assembly import Chunk, Document, RetrievalResult, TokenBudget


def result(
    doc: str,
    chunk_id: str,
    text: str,
    score: float,
    *,
    sequence: int = 0,
    byte_offset: int = 0,
    path: str | None = None,
) -> RetrievalResult:
    return RetrievalResult(
        chunk=Chunk(chunk_id, text, sequence, byte_offset),
        document=Document(doc, path if path is not None else doc),
        score=score,
    )


def sized(tokens: int) -> str:
    """A text that SimpleTokenizer counts as exactly ``tokens`` tokens."""
    return "x" * (4 * tokens)


def exact_budget(available: int, per_doc_overhead: int = 0) -> TokenBudget:
    """A budget with no reserves, so ``available`` is the whole budget."""
    return TokenBudget(available, 0, 0, 0, per_doc_overhead=per_doc_overhead)


_WORDS = ["key", "rotate", "token", "deploy", "revoke", "primary", "secondary", "graph", "scope", "audit"]
_PATHS = ["a.md", "b.md", "docs/c.md", "docs/d.md", "z/e.md"]


@st.composite
def result_sets(draw: st.DrawFn, max_size: int = 14) -> list[RetrievalResult]:
    """Small result sets with tied scores, shared words (near duplicates) and repeated texts."""
    count = draw(st.integers(min_value=0, max_value=max_size))
    documents = [Document(f"doc-{index}", path) for index, path in enumerate(_PATHS)]
    texts = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=30).map(" ".join)
    scores = st.one_of(st.sampled_from([0.1, 0.5, 0.5, 0.9]), st.floats(-1.0, 1.0, allow_nan=False))
    results = []
    for _ in range(count):
        document = draw(st.sampled_from(documents))
        # Few sequences per document, so the same chunk is sometimes retrieved twice.
        sequence = draw(st.integers(min_value=0, max_value=6))
        chunk_id = f"{document.id}#{sequence}"
        results.append(
            RetrievalResult(
                chunk=Chunk(chunk_id, draw(texts), sequence, sequence * 100),
                document=document,
                score=draw(scores),
            )
        )
    return results


budgets = st.builds(
    exact_budget,
    available=st.integers(min_value=1, max_value=300),
    per_doc_overhead=st.integers(min_value=0, max_value=15),
)


ROOT = Path(__file__).resolve().parents[2]


def cupel_assemble(*args: str | bytes, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``cupel assemble ARGS`` as a real command run from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "cupel", "assemble", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
