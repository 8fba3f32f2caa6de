"""Chat transcripts as context: trim a conversation without splitting tool calls from their results.

``select_messages(messages, budget)`` is the one-call form. ``messages_to_items`` and ``to_messages``
expose the two halves for custom pipelines. OpenAI-style message dicts are read, including
Anthropic-style ``tool_use``/``tool_result`` blocks; ``cupel.chat.langchain`` adapts LangChain messages
and is imported only when used. Every public name is imported from its module on first use
(``_LAZY``), so a caller that needs one part of the package does not load the rest.
"""

from collections.abc import Mapping
from types import MappingProxyType

from cupel._lazy import lazy_exports

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.chat.choose_units import Transcript, Turn, split_turns
    from cupel.chat.options import (
        DEFAULT_PART_COST,
        LOW_DETAIL_IMAGE_COST,
        ChatOptions,
        ChatPolicy,
        Compacted,
        IncompleteTurn,
        OrphanedToolResult,
        Summarized,
        UnansweredToolCall,
        chat_pipeline,
        resolve_budget,
    )
    from cupel.chat.parse import ROLES, SYSTEM_ROLES
    from cupel.chat.plan import FirstLines, Summarizer
    from cupel.chat.read import (
        INDICES_KEY,
        MESSAGES_KEY,
        ROLES_KEY,
        SYNTHETIC_EPOCH,
        is_chat_transcript,
        message_token_counts,
        messages_to_items,
    )
    from cupel.chat.render import ChatSelection, to_messages
    from cupel.chat.select import aselect_messages, select_messages
    from cupel.chat.session import ChatSession
    from cupel.chat.stable_window import DEFAULT_HIGH_WATER, DEFAULT_LOW_WATER, StableWindow
    from cupel.chat.validate import PROVIDERS, Provider, Violation, transcript_provider, validate_transcript
    from cupel.chat.window_state import StableSelection, WindowState, with_cache_control

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
    "ChatSession",
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
_LAZY: Mapping[str, str] = MappingProxyType(
    {
        "ChatSession": "cupel.chat.session",
        "ROLES": "cupel.chat.parse",
        "SYSTEM_ROLES": "cupel.chat.parse",
        "aselect_messages": "cupel.chat.select",
        "INDICES_KEY": "cupel.chat.read",
        "MESSAGES_KEY": "cupel.chat.read",
        "ROLES_KEY": "cupel.chat.read",
        "SYNTHETIC_EPOCH": "cupel.chat.read",
        "is_chat_transcript": "cupel.chat.read",
        "message_token_counts": "cupel.chat.read",
        "messages_to_items": "cupel.chat.read",
        "to_messages": "cupel.chat.render",
        "DEFAULT_PART_COST": "cupel.chat.options",
        "LOW_DETAIL_IMAGE_COST": "cupel.chat.options",
        "ChatOptions": "cupel.chat.options",
        "IncompleteTurn": "cupel.chat.options",
        "OrphanedToolResult": "cupel.chat.options",
        "Summarized": "cupel.chat.options",
        "UnansweredToolCall": "cupel.chat.options",
        "ChatPolicy": "cupel.chat.options",
        "ChatSelection": "cupel.chat.render",
        "chat_pipeline": "cupel.chat.options",
        "resolve_budget": "cupel.chat.options",
        "select_messages": "cupel.chat.select",
        "Compacted": "cupel.chat.options",
        "StableSelection": "cupel.chat.window_state",
        "with_cache_control": "cupel.chat.window_state",
        "DEFAULT_HIGH_WATER": "cupel.chat.stable_window",
        "DEFAULT_LOW_WATER": "cupel.chat.stable_window",
        "StableWindow": "cupel.chat.stable_window",
        "FirstLines": "cupel.chat.plan",
        "Summarizer": "cupel.chat.plan",
        "Transcript": "cupel.chat.choose_units",
        "Turn": "cupel.chat.choose_units",
        "split_turns": "cupel.chat.choose_units",
        "PROVIDERS": "cupel.chat.validate",
        "Provider": "cupel.chat.validate",
        "Violation": "cupel.chat.validate",
        "transcript_provider": "cupel.chat.validate",
        "validate_transcript": "cupel.chat.validate",
        "WindowState": "cupel.chat.window_state",
    }
)

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
