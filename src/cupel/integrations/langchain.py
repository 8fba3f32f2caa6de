"""LangChain: a ``Runnable`` message trimmer for LCEL chains and a document compressor for retrievers.

Needs ``pip install 'pycupel[langchain]'`` (``langchain-core``, and ``langchain-classic`` for
``ContextualCompressionRetriever``)::

    chain = message_trimmer(4000) | chat_model
    retriever = ContextualCompressionRetriever(
        base_compressor=CupelDocumentCompressor(budget=2000), base_retriever=base
    )

Message conversion and token accounting are :mod:`cupel.chat.langchain`'s; see
``docs/integrations.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cupel.chat.options import ChatOptions, ChatPolicy, OnInvalid
from cupel.chat.plan import Summarizer
from cupel.integrations._common import missing_extra, select_ranked
from cupel.model import ContextBudget
from cupel.policy.chat_settings import ChatStrategy
from cupel.tokens.asynchronous import AsyncCounterLike
from cupel.tokens.base import CounterLike

try:
    from langchain_core.callbacks import Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.language_models import LanguageModelInput
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable, RunnableLambda

    from cupel.integrations._lc import as_messages, tool_schemas, trimmer
    from cupel.integrations._trim import TrimSettings
except ImportError as error:  # pragma: no cover - exercised with the extra blocked
    raise missing_extra("cupel.integrations.langchain", "langchain-core", "langchain", error) from error

__all__ = ["CupelDocumentCompressor", "message_trimmer"]


def message_trimmer(
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: AsyncCounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    tools: Sequence[Any] | None = None,
    strategy: ChatStrategy | None = None,
    on_invalid: OnInvalid = "error",
    summarize: Summarizer | bool | None = None,
    summary_tokens: int = 0,
) -> Runnable[LanguageModelInput, list[BaseMessage]]:
    """A ``Runnable`` that trims a conversation to ``budget`` tokens, for use before a chat model.

    Input: a list of messages in any form LangChain accepts (``BaseMessage``, ``(role, text)``
    tuples, dicts, strings) or a ``PromptValue``; output: the kept ``BaseMessage`` objects in
    transcript order, tool calls with all their results. ``invoke``, ``ainvoke``, ``batch``, ``abatch``
    and ``stream``/``astream`` (one chunk: the trimmed list) all work; an async ``counter`` needs the
    async calls. ``tools`` (anything ``bind_tools`` takes) are charged against the budget first.
    ``policy``, ``counter``, ``options``, ``strategy`` (default ``"turns"``: whole turns, so the model
    gets a valid conversation), ``on_invalid``, ``summarize`` and ``summary_tokens`` are those of
    :func:`cupel.chat.langchain.select_messages`; a text summary becomes a ``SystemMessage``.
    """
    trim = trimmer(
        budget, policy, counter, options, TrimSettings(strategy, on_invalid, summarize, summary_tokens)
    )
    schemas = tool_schemas(tools)

    def invoke(value: LanguageModelInput) -> list[BaseMessage]:
        return list(trim.select(as_messages(value), schemas).messages)

    async def ainvoke(value: LanguageModelInput) -> list[BaseMessage]:
        return list((await trim.aselect(as_messages(value), schemas)).messages)

    return RunnableLambda(invoke, afunc=ainvoke, name="cupel_message_trimmer")


class CupelDocumentCompressor(BaseDocumentCompressor):
    """Packs retrieved ``Document`` objects into a token budget, most relevant at the window's edges.

    Each document's relevance is ``metadata[score_key]`` (rescaled to [0, 1] when the retriever's
    scores fall outside it) or, with ``scorer``, ``scorer(query, document)``. ``policy`` defaults to
    the ``rag`` preset (Relevance 2 + Reflexive 2, ScoreSlice, UShaped); the query does not reach its
    Relevance term, so documents are kept by that relevance alone, highest first while they fit. Returns
    the same ``Document`` objects in placed order. Usable as
    ``ContextualCompressionRetriever(base_compressor=...)``.
    """

    budget: int
    score_key: str = "relevance_score"
    scorer: Callable[[str, Document], float] | None = None
    policy: Any = None
    counter: Any = None

    def _select(self, documents: Sequence[Document], query: str) -> list[Document]:
        docs = list(documents)
        if self.scorer is not None:
            scores: list[object] = [self.scorer(query, document) for document in docs]
        else:
            scores = [document.metadata.get(self.score_key) for document in docs]
        counter: CounterLike | None = self.counter
        positions, _ = select_ranked(
            [d.page_content for d in docs], scores, self.budget, self.policy, counter
        )
        return [docs[position] for position in positions]

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The documents that fit, in placed order."""
        return self._select(documents, query)

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """:meth:`compress_documents` on the event loop's thread: packing is fast CPU work."""
        return self._select(documents, query)
