"""Random provider-valid transcripts in OpenAI, Anthropic and LangChain form, for property tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from cupel import Pipeline
from cupel.chat import ChatOptions
from cupel.chat.options import AUTO, resolve_query, with_query
from cupel.chat.read import DICTS

WORDS = ["alpha", "beta", "gamma", "delta", "a", "ok", "the answer is", "x" * 30, ""]

texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


def _image(draw: st.DrawFn) -> dict[str, Any]:
    detail = draw(st.sampled_from(["low", "high"]))
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": detail}}


_ANTHROPIC_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}


def _user_content(draw: st.DrawFn, *, anthropic: bool = False) -> Any:
    if draw(st.integers(0, 4)) == 0:
        return [{"type": "text", "text": draw(texts)}, _ANTHROPIC_IMAGE if anthropic else _image(draw)]
    return draw(texts)


@st.composite
def openai_transcripts(draw: st.DrawFn, *, leading_systems: int = 2, middle_systems: bool = True) -> Any:
    """OpenAI chat-completions transcripts: parallel tool calls, several users, systems, images."""
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, leading_systems))):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(texts)})
    serial = 0
    kinds = ["user", "user", "assistant", "tools"] + (["system"] if middle_systems else [])
    for step in draw(st.lists(st.sampled_from(kinds), max_size=14)):
        if step == "user":
            messages.append({"role": "user", "content": _user_content(draw)})
        elif step == "assistant":
            messages.append({"role": "assistant", "content": draw(texts)})
        elif step == "system":
            # A system message in the middle: after the conversation began.
            if any(message["role"] not in ("system", "developer") for message in messages):
                messages.append({"role": "system", "content": draw(texts)})
        else:
            ids = [f"call_{serial + index}" for index in range(draw(st.integers(1, 3)))]
            serial += len(ids)
            calls = [
                {"id": call_id, "type": "function", "function": {"name": "f", "arguments": draw(texts)}}
                for call_id in ids
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            for call_id in draw(st.permutations(ids)):
                messages.append({"role": "tool", "tool_call_id": call_id, "content": draw(texts)})
    return messages


@st.composite
def anthropic_transcripts(draw: st.DrawFn) -> Any:
    """Messages-API transcripts: user first, strict alternation, tool_result blocks in user messages."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(texts)})
    serial = 0
    for _ in range(draw(st.integers(0, 6))):
        messages.append({"role": "user", "content": _user_content(draw, anthropic=True)})
        for _ in range(draw(st.integers(0, 2))):
            ids = [f"toolu_{serial + index}" for index in range(draw(st.integers(1, 3)))]
            serial += len(ids)
            blocks: list[dict[str, Any]] = [{"type": "text", "text": draw(texts)}]
            blocks.extend(
                {"type": "tool_use", "id": i, "name": "g", "input": {"q": draw(texts)}} for i in ids
            )
            messages.append({"role": "assistant", "content": blocks})
            results: list[dict[str, Any]] = [
                {"type": "tool_result", "tool_use_id": call_id, "content": draw(texts)}
                for call_id in draw(st.permutations(ids))
            ]
            messages.append({"role": "user", "content": results})
        if draw(st.integers(0, 3)) > 0:
            messages.append({"role": "assistant", "content": draw(texts)})
        else:
            break  # the transcript ends waiting for the model's answer
    return messages


def to_langchain(messages: list[dict[str, Any]]) -> list[Any]:
    """The LangChain messages of an OpenAI-form transcript, one per message."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    converted: list[Any] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role in ("system", "developer"):
            converted.append(SystemMessage(content))
        elif role == "user":
            converted.append(HumanMessage(content))
        elif role == "tool":
            converted.append(ToolMessage(content, tool_call_id=message["tool_call_id"]))
        else:
            calls = [
                {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "args": {"a": call["function"]["arguments"]},
                }
                for call in message.get("tool_calls") or []
            ]
            converted.append(AIMessage(content or "", tool_calls=calls))
    return converted


def plain_transcript(size: int) -> list[dict[str, Any]]:
    """A system message, then ``size`` alternating user and assistant messages of varied length."""
    messages = [{"role": "system", "content": "Be brief."}]
    for index in range(size):
        role = "user" if index % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"{index}: " + "word " * (index * 7 % 23)})
    return messages


def turn_arguments(pipelines: st.SearchStrategy[Any]) -> tuple[st.SearchStrategy[Any], ...]:
    """Arguments of a ``"turns"`` property test: an OpenAI or Anthropic transcript, a budget, one of
    ``pipelines``, chat options, ``keep_first_turn`` and ``recent_share``."""
    from cupel.chat import ChatOptions

    return (
        st.one_of(openai_transcripts(), anthropic_transcripts()),
        st.integers(0, 400),
        pipelines,
        st.builds(ChatOptions, pin_system=st.booleans(), pin_last_user=st.booleans()),
        st.booleans(),
        st.sampled_from([0.0, 0.3, 0.75, 1.0]),
    )


def answering(messages: list[dict[str, Any]], pipeline: Pipeline, chosen: ChatOptions) -> Pipeline:
    """``pipeline`` with the transcript's auto query bound, as ``select_messages`` binds it."""
    query = resolve_query(AUTO, len(messages), lambda index: DICTS.parse(messages[index], index, chosen))
    return with_query(pipeline, query)
