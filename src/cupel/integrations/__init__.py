"""Framework integrations: cupel where its users already are (see ``docs/integrations.md``).

One module per framework, each needing its own extra and importing its framework only when imported:

- :mod:`cupel.integrations.langchain` (``pycupel[langchain]``): a ``Runnable`` message trimmer for LCEL
  chains and a ``BaseDocumentCompressor`` for retrieved documents.
- :mod:`cupel.integrations.langgraph` (``pycupel[langgraph]``): a ``pre_model_hook`` for LangGraph's
  ``create_react_agent`` and an ``AgentMiddleware`` for ``langchain.agents.create_agent``.
- :mod:`cupel.integrations.llamaindex` (``pycupel[llamaindex]``): a ``BaseNodePostprocessor``.
- :mod:`cupel.integrations.pydantic_ai` (``pycupel[pydantic-ai]``): a ``history_processors`` entry.
- :mod:`cupel.integrations.openai_agents` (``pycupel[openai-agents]``): a ``call_model_input_filter``.

This package imports nothing itself, so ``import cupel.integrations`` never needs an extra.
"""

__all__: list[str] = []
