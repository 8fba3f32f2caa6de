"""LlamaIndex: a node postprocessor packing retrieved nodes into a token budget.

Needs ``pip install 'pycupel[llamaindex]'`` (``llama-index-core``)::

    engine = index.as_query_engine(node_postprocessors=[CupelNodePostprocessor(budget=2000)])

See ``docs/integrations.md``.
"""

from __future__ import annotations

from typing import Any

from cupel.integrations._common import missing_extra, select_ranked

try:
    from llama_index.core.bridge.pydantic import Field
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
except ImportError as error:  # pragma: no cover - exercised with the extra blocked
    raise missing_extra("cupel.integrations.llamaindex", "llama-index-core", "llamaindex", error) from error

__all__ = ["CupelNodePostprocessor"]


class CupelNodePostprocessor(BaseNodePostprocessor):
    """Selects and orders ``NodeWithScore`` objects under ``budget`` tokens with a policy's scorers.

    Each node's retrieval score is its relevance hint (rescaled to [0, 1] when the scores fall outside
    it); its text is counted as the LLM sees it (``MetadataMode.LLM``, metadata included). ``policy``
    defaults to the ``rag`` preset (Relevance 2 + Reflexive 2, ScoreSlice, UShaped: no query reaches its
    Relevance term, so nodes are kept by retrieval score, highest first while they fit, the best at the two
    edges of the context, where models attend most); pass ``"document_qa"``, a Policy or a Pipeline to
    choose another, e.g. one with a ChronologicalPlacer. Returns the same node objects, in placed order.
    """

    budget: int = Field(description="Token budget for the nodes' text.")
    policy: Any = Field(
        default=None, description="None (the rag preset), a preset name, a Policy or a Pipeline."
    )
    counter: Any = Field(default=None, description="Token counter; HeuristicCounter when None.")

    @classmethod
    def class_name(cls) -> str:
        return "CupelNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        texts = [entry.node.get_content(metadata_mode=MetadataMode.LLM) for entry in nodes]
        positions, _ = select_ranked(
            texts, [entry.score for entry in nodes], self.budget, self.policy, self.counter
        )
        return [nodes[position] for position in positions]
