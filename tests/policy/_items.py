"""A realistic candidate set: an agent conversation with a system prompt, memories, tool output,
retrieved documents and code under review."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cupel import ContextItem

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def conversation() -> list[ContextItem]:
    return [
        ContextItem(
            "You are a careful assistant for the payments service.",
            40,
            kind="SystemPrompt",
            pinned=True,
            timestamp=at(0),
        ),
        ContextItem(
            "User prefers concise answers with code.", 30, kind="Memory", timestamp=at(1), tags=["prefs"]
        ),
        ContextItem(
            "How do I retry failed webhooks?", 20, kind="Message", timestamp=at(2), tags=["webhooks"]
        ),
        ContextItem(
            "Webhooks are retried with exponential backoff up to 5 times.",
            120,
            kind="Document",
            source="Rag",
            future_relevance_hint=0.9,
            tags=["webhooks"],
        ),
        ContextItem(
            "Payment intents can be cancelled before capture.",
            150,
            kind="Document",
            source="Rag",
            future_relevance_hint=0.3,
            tags=["payments"],
        ),
        ContextItem(
            "GET /webhooks/failed -> 3 events (evt_1, evt_2, evt_3)",
            200,
            kind="ToolOutput",
            source="Tool",
            timestamp=at(3),
            tags=["webhooks"],
        ),
        ContextItem(
            "Traceback: TimeoutError in webhook_sender.py:88",
            90,
            kind="ToolOutput",
            priority=9,
            timestamp=at(4),
        ),
        ContextItem(
            "diff --git a/webhook_sender.py b/webhook_sender.py",
            250,
            kind="Document",
            priority=7,
            timestamp=at(5),
        ),
        ContextItem(
            "Thanks! And what about idempotency keys?", 25, kind="Message", timestamp=at(6), tags=["payments"]
        ),
        ContextItem("Old chit-chat about the weather.", 60, kind="Message", timestamp=at(-60), priority=0),
        ContextItem(
            "How do I retry failed webhooks?", 20, kind="Message", timestamp=at(7), tags=["webhooks"]
        ),
    ]
