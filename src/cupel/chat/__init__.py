"""Chat transcripts as context: trim a conversation without splitting tool calls from their results.

``select_messages(messages, budget)`` is the one-call form. ``messages_to_items`` and ``to_messages``
expose the two halves for custom pipelines. OpenAI-style message dicts are read, including
Anthropic-style ``tool_use``/``tool_result`` blocks; ``cupel.chat.langchain`` adapts LangChain messages
and is imported only when used.
"""

from cupel.chat._counts import clear_counts
from cupel.chat._parse import ROLES, SYSTEM_ROLES
from cupel.chat.aselect import aselect_messages
from cupel.chat.convert import (
    INDICES_KEY,
    MESSAGES_KEY,
    ROLES_KEY,
    SYNTHETIC_EPOCH,
    is_chat_transcript,
    message_token_counts,
    messages_to_items,
    to_messages,
)
from cupel.chat.options import DEFAULT_PART_COST, LOW_DETAIL_IMAGE_COST, ChatOptions
from cupel.chat.reasons import IncompleteTurn, OrphanedToolResult, Summarized, UnansweredToolCall
from cupel.chat.select import (
    ChatPolicy,
    ChatSelection,
    chat_pipeline,
    resolve_budget,
    select_messages,
)
from cupel.chat.stable_selection import Compacted, StableSelection, with_cache_control
from cupel.chat.stable_window import DEFAULT_HIGH_WATER, DEFAULT_LOW_WATER, StableWindow
from cupel.chat.summarize import FirstLines, Summarizer
from cupel.chat.turns import Transcript, Turn, split_turns
from cupel.chat.validate import PROVIDERS, Provider, Violation, transcript_provider, validate_transcript
from cupel.chat.window_state import WindowState

__all__ = [
    "DEFAULT_HIGH_WATER",
    "DEFAULT_LOW_WATER",
    "DEFAULT_PART_COST",
    "INDICES_KEY",
    "LOW_DETAIL_IMAGE_COST",
    "MESSAGES_KEY",
    "PROVIDERS",
    "ROLES",
    "ROLES_KEY",
    "SYNTHETIC_EPOCH",
    "SYSTEM_ROLES",
    "ChatOptions",
    "ChatPolicy",
    "ChatSelection",
    "Compacted",
    "FirstLines",
    "IncompleteTurn",
    "OrphanedToolResult",
    "Provider",
    "StableSelection",
    "StableWindow",
    "Summarized",
    "Summarizer",
    "Transcript",
    "Turn",
    "UnansweredToolCall",
    "Violation",
    "WindowState",
    "aselect_messages",
    "chat_pipeline",
    "clear_counts",
    "is_chat_transcript",
    "message_token_counts",
    "messages_to_items",
    "resolve_budget",
    "select_messages",
    "split_turns",
    "to_messages",
    "transcript_provider",
    "validate_transcript",
    "with_cache_control",
]
