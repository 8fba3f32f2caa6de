"""cupel.integrations.langchain against real langchain-core (and langchain-classic's retriever)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from pydantic import Field

from cupel import CupelTypeError
from cupel.chat.langchain import select_messages
from cupel.integrations.langchain import CupelDocumentCompressor, message_trimmer


class RecordingModel(GenericFakeChatModel):
    """The framework's fake chat model, remembering the messages of every call."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def transcript() -> list[BaseMessage]:
    return [
        SystemMessage("You are a weather bot."),
        HumanMessage("What is the weather in Oslo? " * 8),
        AIMessage("", tool_calls=[{"id": "call-1", "name": "weather", "args": {"city": "Oslo"}}]),
        ToolMessage("Sunny, 21 degrees. " * 10, tool_call_id="call-1"),
        AIMessage("It is sunny in Oslo. " * 5),
        HumanMessage("And in Bergen?"),
    ]


def test_trimmer_is_a_runnable_that_keeps_tool_calls_with_their_results() -> None:
    trimmer = message_trimmer(60)
    assert isinstance(trimmer, Runnable)
    messages = transcript()
    kept = trimmer.invoke(messages)
    assert kept == list(select_messages(messages, 60).messages)  # the default strategy: whole turns
    assert kept == [messages[0], messages[-1]]  # the system message, then the latest turn's question
    assert message_trimmer(60, strategy="messages").invoke(messages) == list(
        select_messages(messages, 60, strategy="messages").messages
    )
    # A tool call never comes without its result, nor a result without its call.
    assert (messages[2] in kept) == (messages[3] in kept)


def test_invoke_ainvoke_batch_abatch_and_stream_agree() -> None:
    trimmer = message_trimmer(60)
    messages = transcript()
    expected = trimmer.invoke(messages)
    assert asyncio.run(trimmer.ainvoke(messages)) == expected
    assert trimmer.batch([messages, messages]) == [expected, expected]
    assert asyncio.run(trimmer.abatch([messages])) == [expected]
    assert list(trimmer.stream(messages)) == [expected]


def test_trimmer_sits_in_an_lcel_chain_before_a_chat_model_and_streams() -> None:
    model = RecordingModel(messages=iter([AIMessage("Rainy in Bergen."), AIMessage("Cloudy in Bergen.")]))
    chain = message_trimmer(60) | model
    assert chain.invoke(transcript()).content == "Rainy in Bergen."
    chunks = list(chain.stream(transcript()))
    assert "".join(str(chunk.content) for chunk in chunks) == "Cloudy in Bergen."
    assert [len(call) for call in model.calls] == [len(message_trimmer(60).invoke(transcript()))] * 2


def test_trimmer_follows_a_prompt_template() -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "Be brief."), MessagesPlaceholder("history")])
    chain = prompt | message_trimmer(40)
    history = [("human", "first question " * 20), ("ai", "first answer " * 20), ("human", "now?")]
    kept = chain.invoke({"history": history})
    assert isinstance(kept[0], SystemMessage) and kept[-1].content == "now?"
    assert len(kept) < 4


def test_tuples_dicts_and_strings_are_read_as_langchain_reads_them() -> None:
    kept = message_trimmer(1000).invoke(
        [("system", "rules"), {"role": "user", "content": "hi"}, ("ai", "hello"), "plain text"]
    )
    assert [type(message).__name__ for message in kept] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "HumanMessage",
    ]
    assert [message.content for message in kept] == ["rules", "hi", "hello", "plain text"]


def test_tool_schemas_are_charged_against_the_budget() -> None:
    @tool
    def weather(city: str) -> str:
        """Look up today's weather for a city, with temperature, wind and a short forecast."""
        return city

    messages = transcript()
    without = message_trimmer(200).invoke(messages)
    with_tools = message_trimmer(200, tools=[weather]).invoke(messages)
    assert len(with_tools) < len(without)


def test_an_async_counter_needs_the_async_calls() -> None:
    async def count(text: str) -> int:
        return len(text.split())

    trimmer = message_trimmer(60, counter=count)
    assert asyncio.run(trimmer.ainvoke(transcript())) == message_trimmer(
        60, counter=lambda text: len(text.split())
    ).invoke(transcript())
    with pytest.raises(CupelTypeError, match="async counter needs the async call"):
        trimmer.invoke(transcript())


def test_bad_input_is_one_line_naming_the_value() -> None:
    with pytest.raises(CupelTypeError, match="got int"):
        message_trimmer(60).invoke(42)  # type: ignore[arg-type]


# Document compressor ---------------------------------------------------------------------------------


def documents() -> list[Document]:
    return [
        Document(f"passage {index}: " + "context " * (5 + index), metadata={"relevance_score": score})
        for index, score in enumerate([0.2, 0.9, 0.5, 0.8, 0.1])
    ]


def test_compressor_packs_the_most_relevant_documents_u_shaped() -> None:
    docs = documents()
    kept = CupelDocumentCompressor(budget=40).compress_documents(docs, "query")
    assert all(any(doc is original for original in docs) for doc in kept)
    scores = [doc.metadata["relevance_score"] for doc in kept]
    # UShaped: the best at the start, the second best at the end.
    assert scores[0] == max(scores) and scores[-1] == sorted(scores)[-2]
    assert asyncio.run(CupelDocumentCompressor(budget=40).acompress_documents(docs, "q")) == kept


def test_compressor_rescales_scores_outside_zero_one_and_takes_a_scorer() -> None:
    docs = [
        Document(f"doc {index} " * 6, metadata={"score": score})
        for index, score in enumerate([3.0, 12.0, 7.0])
    ]
    kept = CupelDocumentCompressor(budget=10, score_key="score").compress_documents(docs, "q")
    assert kept == [docs[1]]
    by_query = CupelDocumentCompressor(
        budget=10, scorer=lambda query, doc: float("doc 2" in doc.page_content)
    )
    assert by_query.compress_documents(docs, "q") == [docs[2]]


def test_compressor_in_a_contextual_compression_retriever() -> None:
    retrievers = pytest.importorskip("langchain_classic.retrievers")

    class Fixed(BaseRetriever):
        docs: list[Document]

        def _get_relevant_documents(self, query: str, **kwargs: Any) -> list[Document]:
            return self.docs

    docs = documents()
    retriever = retrievers.ContextualCompressionRetriever(
        base_compressor=CupelDocumentCompressor(budget=40), base_retriever=Fixed(docs=docs)
    )
    kept = retriever.invoke("query")
    assert kept == list(CupelDocumentCompressor(budget=40).compress_documents(docs, "query"))
    assert asyncio.run(retriever.ainvoke("query")) == kept
