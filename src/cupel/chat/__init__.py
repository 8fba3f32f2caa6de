"""Chat transcripts as context: trim a conversation without splitting tool calls from their results.

``select_messages(messages, budget)`` is the one-call form. ``messages_to_items`` and ``to_messages``
expose the two halves for custom pipelines. OpenAI-style message dicts are read, including
Anthropic-style ``tool_use``/``tool_result`` blocks; ``cupel.chat.langchain`` adapts LangChain messages
and is imported only when used. Every public name is imported from its module on first use
(``_LAZY``), so a caller that needs one part of the package does not load the rest.
"""

from cupel._lazy import lazy_exports

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.chat._counts import clear_counts
    from cupel.chat._item_cache import clear_items
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
    "clear_items",
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

#: Public names imported on first use: name -> module. Add new exports here (and to __all__).
_LAZY: dict[str, str] = {
    "clear_counts": "cupel.chat._counts",
    "clear_items": "cupel.chat._item_cache",
    "ROLES": "cupel.chat._parse",
    "SYSTEM_ROLES": "cupel.chat._parse",
    "aselect_messages": "cupel.chat.aselect",
    "INDICES_KEY": "cupel.chat.convert",
    "MESSAGES_KEY": "cupel.chat.convert",
    "ROLES_KEY": "cupel.chat.convert",
    "SYNTHETIC_EPOCH": "cupel.chat.convert",
    "is_chat_transcript": "cupel.chat.convert",
    "message_token_counts": "cupel.chat.convert",
    "messages_to_items": "cupel.chat.convert",
    "to_messages": "cupel.chat.convert",
    "DEFAULT_PART_COST": "cupel.chat.options",
    "LOW_DETAIL_IMAGE_COST": "cupel.chat.options",
    "ChatOptions": "cupel.chat.options",
    "IncompleteTurn": "cupel.chat.reasons",
    "OrphanedToolResult": "cupel.chat.reasons",
    "Summarized": "cupel.chat.reasons",
    "UnansweredToolCall": "cupel.chat.reasons",
    "ChatPolicy": "cupel.chat.select",
    "ChatSelection": "cupel.chat.select",
    "chat_pipeline": "cupel.chat.select",
    "resolve_budget": "cupel.chat.select",
    "select_messages": "cupel.chat.select",
    "Compacted": "cupel.chat.stable_selection",
    "StableSelection": "cupel.chat.stable_selection",
    "with_cache_control": "cupel.chat.stable_selection",
    "DEFAULT_HIGH_WATER": "cupel.chat.stable_window",
    "DEFAULT_LOW_WATER": "cupel.chat.stable_window",
    "StableWindow": "cupel.chat.stable_window",
    "FirstLines": "cupel.chat.summarize",
    "Summarizer": "cupel.chat.summarize",
    "Transcript": "cupel.chat.turns",
    "Turn": "cupel.chat.turns",
    "split_turns": "cupel.chat.turns",
    "PROVIDERS": "cupel.chat.validate",
    "Provider": "cupel.chat.validate",
    "Violation": "cupel.chat.validate",
    "transcript_provider": "cupel.chat.validate",
    "validate_transcript": "cupel.chat.validate",
    "WindowState": "cupel.chat.window_state",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
