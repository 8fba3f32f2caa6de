"""cupel.integrations.llamaindex inside a real LlamaIndex query engine (MockLLM, local embeddings)."""

from __future__ import annotations

import hashlib

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from cupel import GreedySlice, Pipeline, ReflexiveScorer
from cupel.integrations.llamaindex import CupelNodePostprocessor
from cupel.placers import ChronologicalPlacer


class HashedWords(BaseEmbedding):
    """A local bag-of-words embedding: each word hashed into one of 64 dimensions."""

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * 64
        for word in text.lower().replace("?", " ").replace(".", " ").split():
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 64] += 1.0
        return vector

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


TEXTS = [
    "Keys rotate every month.",
    "Cats sleep most of the day and dream of fish and sunshine and long naps.",
    "Rotate keys with the admin console; rotation takes a minute.",
    "Bread needs flour, water, salt and time to rise before baking in the oven.",
    "Old keys stay valid for a day after they rotate.",
]


def test_postprocessor_in_a_query_engine_packs_nodes_under_the_budget() -> None:
    index = VectorStoreIndex.from_documents(
        [Document(text=text) for text in TEXTS], embed_model=HashedWords()
    )
    postprocessor = CupelNodePostprocessor(budget=40)
    engine = index.as_query_engine(llm=MockLLM(), similarity_top_k=5, node_postprocessors=[postprocessor])
    response = engine.query("how often do keys rotate?")
    kept = response.source_nodes
    assert 0 < len(kept) < len(TEXTS)
    texts = [entry.node.get_content() for entry in kept]
    assert "Keys rotate every month." in texts
    # The best-scored node leads (UShaped puts the best at the edges).
    assert kept[0].score == max(entry.score or 0.0 for entry in kept)
    assert str(response)  # MockLLM answered over the packed context


def nodes(scores: list[float]) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text=f"node {i} " * 5, id_=f"n{i}"), score=s)
        for i, s in enumerate(scores)
    ]


def test_u_shaped_by_default_with_the_same_node_objects() -> None:
    given = nodes([0.1, 0.9, 0.5, 0.7])
    kept = CupelNodePostprocessor(budget=1000).postprocess_nodes(given, QueryBundle("q"))
    # The two best (n1 0.9, n3 0.7) at the two edges, the weakest in the middle.
    assert [entry.node.id_ for entry in kept] == ["n1", "n2", "n0", "n3"]
    assert all(any(entry is original for original in given) for entry in kept)


def test_another_policy_places_in_another_order() -> None:
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer())
    kept = CupelNodePostprocessor(budget=1000, policy=pipeline).postprocess_nodes(nodes([0.1, 0.9, 0.5]))
    # Untimed items keep the order they reach the placer in: GreedySlice's, best first.
    assert [entry.node.id_ for entry in kept] == ["n1", "n2", "n0"]


def test_scores_outside_zero_one_are_rescaled() -> None:
    kept = CupelNodePostprocessor(budget=15).postprocess_nodes(nodes([4.0, 19.0, 7.5]))
    assert [entry.node.id_ for entry in kept] == ["n1"]
