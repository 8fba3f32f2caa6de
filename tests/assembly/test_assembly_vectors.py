"""The test vectors of CFS-021 (Packing, Determinism, Grouping) and its format example."""

from __future__ import annotations

import hashlib

import pytest

from cupel.assembly import (
    AssembledContext,
    ContextChunk,
    PackingStrategy,
    StaticRetriever,
    TokenBudget,
    assemble_context,
    format_context,
    group_by_document,
    pack_context,
    verify_determinism,
)
from tests.assembly.helpers import exact_budget, result, sized

PACKING_INPUT = [
    result("A", "A", sized(50), 0.9),
    result("B", "B", sized(100), 0.85),
    result("C", "C", sized(30), 0.8),
    result("D", "D", sized(80), 0.75),
]


@pytest.mark.parametrize("strategy", list(PackingStrategy))
def test_packing_vector_with_document_overhead(strategy: PackingStrategy) -> None:
    # Budget 150 with the per-document marker charged: after A (50 + 10), B needs 100 + 10 more and does
    # not fit, so it is skipped; C (30 + 10) fits; D does not. Chunk tokens: 50 + 30 = 80.
    context = pack_context(PACKING_INPUT, exact_budget(150, per_doc_overhead=10), strategy=strategy)
    assert context.chunk_ids == ("A", "C")
    assert sum(chunk.tokens or 0 for chunk in context.chunks) == 80
    assert context.total_tokens == 100
    assert context.truncated is False


@pytest.mark.parametrize("strategy", list(PackingStrategy))
def test_packing_vector_total_of_80(strategy: PackingStrategy) -> None:
    # Without marker overhead the vector's total of 80 holds exactly, given a budget B cannot fill: with
    # 150 available, 50 + 100 = 150 fits under the spec's own `<=` test (see the next test).
    context = pack_context(PACKING_INPUT, exact_budget(149), strategy=strategy)
    assert context.chunk_ids == ("A", "C")
    assert context.total_tokens == 80
    assert context.truncated is False


def test_a_chunk_that_fills_the_budget_exactly_fits() -> None:
    context = pack_context(PACKING_INPUT, exact_budget(150))
    assert context.chunk_ids == ("A", "B")
    assert context.total_tokens == 150


GROUPING_INPUT = [
    result("a", "a1", "Chunk 1", 0.9, sequence=1, path="a.md"),
    result("b", "b1", "Chunk 1", 0.88, sequence=1, path="b.md"),
    result("a", "a2", "Chunk 2", 0.85, sequence=2, path="a.md"),
    result("b", "b2", "Chunk 2", 0.82, sequence=2, path="b.md"),
]


def test_grouping_vector() -> None:
    groups = group_by_document(GROUPING_INPUT)
    assert [group.document.path for group in groups] == ["a.md", "b.md"]
    assert [[member.chunk.id for member in group.chunks] for group in groups] == [["a1", "a2"], ["b1", "b2"]]
    assert [group.max_score for group in groups] == [0.9, 0.88]


def test_grouping_vector_packed_output() -> None:
    context = pack_context(GROUPING_INPUT, TokenBudget(2000))
    assert format_context(context) == "[DOC: a.md]\nChunk 1\nChunk 2\n[DOC: b.md]\nChunk 1\nChunk 2\n"


def test_grouping_ties_are_broken_by_path_not_input_order() -> None:
    tied = [
        result("z", "z1", "zeta", 0.5, path="z.md"),
        result("m", "m1", "mu", 0.5, path="m.md"),
        result("a", "a1", "alpha", 0.5, path="a.md"),
    ]
    for ordering in (tied, tied[::-1], tied[1:] + tied[:1]):
        assert [group.document.path for group in group_by_document(ordering)] == ["a.md", "m.md", "z.md"]


def test_determinism_vector() -> None:
    results = [
        result("a", "chunk_A", "Text A", 0.9, path="a.md"),
        result("b", "chunk_B", "Text B", 0.8, path="b.md"),
        result("c", "chunk_C", "Text C", 0.7, path="c.md"),
    ]
    retriever = StaticRetriever(results, state_root="0xabc123")
    runs = [assemble_context("blockchain consensus", retriever, TokenBudget(2000)) for _ in range(2)]
    texts = [format_context(run) for run in runs]
    assert runs[0].chunk_ids == runs[1].chunk_ids == ("chunk_A", "chunk_B", "chunk_C")
    assert texts[0].startswith("[DOC: a.md]\nText A\n[DOC: b.md]\nText B\n")
    assert texts[0] == texts[1]
    digests = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
    assert digests[0] == digests[1]
    assert runs[0].metadata is not None and runs[0].metadata.state_root == "0xabc123"
    assert runs[0].metadata.query_hash == runs[1].metadata.query_hash  # type: ignore[union-attr]
    assert verify_determinism("blockchain consensus", retriever, TokenBudget(2000))


FORMAT_EXAMPLE = """\
[DOC: docs/blockchain/consensus.md]
Proof of Stake (PoS) is a consensus mechanism where validators
are selected based on their stake in the network.

Validators must lock tokens as collateral, which can be slashed
for malicious behavior.

[DOC: docs/blockchain/merkle.md]
Merkle trees provide efficient verification of data integrity.
Each leaf node is a hash of a data block.

[DOC: docs/blockchain/consensus.md]
Byzantine Fault Tolerance (BFT) ensures the network can reach
consensus even with malicious participants.
"""


PARAGRAPHS = [
    # (document path, chunk id, text, score, sequence). Paragraph chunks keep their trailing newline, which
    # is the blank line of the spec's example.
    (
        "docs/blockchain/consensus.md",
        "pos",
        "Proof of Stake (PoS) is a consensus mechanism where validators\n"
        "are selected based on their stake in the network.\n",
        0.95,
        0,
    ),
    (
        "docs/blockchain/consensus.md",
        "collateral",
        "Validators must lock tokens as collateral, which can be slashed\nfor malicious behavior.\n",
        0.93,
        1,
    ),
    (
        "docs/blockchain/merkle.md",
        "merkle",
        "Merkle trees provide efficient verification of data integrity.\n"
        "Each leaf node is a hash of a data block.\n",
        0.9,
        0,
    ),
    (
        "docs/blockchain/consensus.md",
        "bft",
        "Byzantine Fault Tolerance (BFT) ensures the network can reach\n"
        "consensus even with malicious participants.",
        0.85,
        4,
    ),
]


def test_format_example_byte_for_byte() -> None:
    chunks = tuple(ContextChunk(cid, path, text, score, seq) for path, cid, text, score, seq in PARAGRAPHS)
    assert format_context(AssembledContext(chunks, total_tokens=0, truncated=False)) == FORMAT_EXAMPLE


def test_format_example_through_score_weighted_packing() -> None:
    # The example's document order (consensus, merkle, consensus) is what strictly-by-score packing gives.
    results = [
        result(path, cid, text, score, sequence=seq, path=path) for path, cid, text, score, seq in PARAGRAPHS
    ]
    context = pack_context(results, TokenBudget(2000), strategy=PackingStrategy.SCORE_WEIGHTED)
    assert format_context(context) == FORMAT_EXAMPLE
