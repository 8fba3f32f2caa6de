"""Named policy presets for common workloads.

Every preset deduplicates and raises on overflow (``OverflowStrategy.THROW``); ``Kind`` is
``KindScorer`` with the spec's default weights. Weights are CompositeScorer weights (relative).

==============  ==========================================  ==========  =============
preset          scorer                                      slicer      placer
==============  ==========================================  ==========  =============
chat            Relevance(3) 10 + Recency 1 + Kind 1        Score       Chronological
code_review     Kind 2 + Priority 2 + Recency 1             Greedy      Chronological
rag             Relevance 2 + Reflexive 2                   Score       UShaped
document_qa     Relevance 2 + Reflexive 2 + Priority 1      Score       UShaped
tool_use        Relevance(3) 4 + Kind 2 + Recency 2         Score       Chronological
                + Priority 1
long_running    Relevance(3) 10 + Recency 1 + Kind 1        Score       Chronological
debugging       Priority 3 + Kind 2 + Recency 1             Greedy      Chronological
==============  ==========================================  ==========  =============

``Relevance`` is ``RelevanceScorer()``: BM25 relevance to the query of the call
(``pipeline.run(items, budget, query=...)``; in chat, by default, the latest user message and the
newest tool call); without a query it scores 0.0 everywhere and the other terms rank alone, so the
chat presets then keep the most recent turns. ``Relevance(3)`` is ``RelevanceScorer(neighbors=3)``:
in a conversation each turn also takes a share of the relevance of the three turns on either side
(the answer sits next to the turn that names the question's terms). ``Score`` is ``ScoreSlice`` (by
score, not score per token). The weights were tuned on the shipped evaluation cases and the LoCoMo
dev split (``cupel eval``, ``benchmarks/locomo_dev.py``; docs/eval.md, "Tuning the presets").

Chat transcripts (:func:`cupel.chat.select_messages`) are trimmed by whole turns. The chat presets
give the run of most recent turns 10% of the budget left after the latest turn (``recent_share``;
the rest goes by score), so the last exchange stays while older turns compete on relevance.
``chat`` starts without the first turn; ``tool_use`` and ``long_running`` keep it
(``keep_first_turn``), because an agent loop states its task once, at the start; ``tool_use`` also
clears older tool results before it drops units (``clear_tool_results``). Other presets use the chat
defaults.

``get_preset("code-review")`` also works: names are matched case-insensitively, ``-`` as ``_``.
"""

from __future__ import annotations

from collections.abc import Callable

from cupel import scorers, slicers  # packages whose members are imported on first use
from cupel._frozen import dataclass
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import OverflowStrategy
from cupel.placers import ChronologicalPlacer, UShapedPlacer
from cupel.policy._entries import _type_name
from cupel.policy.chat_settings import ChatSettings, ToolResultClearing
from cupel.policy.policy import Policy
from cupel.protocols import Placer, Scorer, Slicer

__all__ = [
    "UnknownPresetError",
    "chat",
    "code_review",
    "debugging",
    "document_qa",
    "get_preset",
    "long_running",
    "preset_description",
    "preset_names",
    "rag",
    "tool_use",
]


class UnknownPresetError(InvalidConfigurationError, KeyError):
    """No preset has the given name; the message lists the known ones."""

    def __init__(self, name: object) -> None:
        self.name = name
        super().__init__(f"unknown preset {name!r}; known presets: {', '.join(preset_names())}")

    def __str__(self) -> str:
        # KeyError would otherwise print the message with quotes around it.
        return str(self.args[0])

    def __reduce__(self) -> tuple[type[UnknownPresetError], tuple[object]]:
        return (type(self), (self.name,))


def _policy(
    weighted: list[tuple[Scorer, float]], slicer: Slicer, placer: Placer, chat: ChatSettings | None = None
) -> Policy:
    return Policy(
        scorers.CompositeScorer(weighted),
        slicer,
        placer,
        deduplication=True,
        overflow_strategy=OverflowStrategy.THROW,
        chat=chat,
    )


# The run of most recent turns takes a tenth of what is left; older turns compete on relevance.
_CHAT_RECENT_SHARE = 0.1
_CHAT = ChatSettings(recent_share=_CHAT_RECENT_SHARE)
# Agent loops restate their task only once, in the first turn: the agent presets keep it.
_AGENT_CHAT = ChatSettings(keep_first_turn=True, recent_share=_CHAT_RECENT_SHARE)
# tool_use also clears older tool results before dropping units: on agent loops it keeps more of the
# evidence; on long sessions it clears relevant results blindly (docs/chat.md), so long_running does not.
_TOOL_CHAT = ChatSettings(
    keep_first_turn=True, recent_share=_CHAT_RECENT_SHARE, clear_tool_results=ToolResultClearing()
)


def _conversation_relevance() -> scorers.RelevanceScorer:
    """Relevance to the query, shared with the three turns on either side (conversation context)."""
    return scorers.RelevanceScorer(neighbors=3)


def chat() -> Policy:
    """Conversations: relevance to the question, then recency (Relevance(3) 10 + Recency 1 + Kind 1)."""
    return _policy(
        [(_conversation_relevance(), 10.0), (scorers.RecencyScorer(), 1.0), (scorers.KindScorer(), 1.0)],
        slicers.ScoreSlice(),
        ChronologicalPlacer(),
        _CHAT,
    )


def code_review() -> Policy:
    """Code review: kind and caller priority, then recency (Kind 2 + Priority 2 + Recency 1)."""
    return _policy(
        [(scorers.KindScorer(), 2.0), (scorers.PriorityScorer(), 2.0), (scorers.RecencyScorer(), 1.0)],
        slicers.GreedySlice(),
        ChronologicalPlacer(),
    )


def rag() -> Policy:
    """Retrieval: relevance to the query and the retrieval hint (Relevance 2 + Reflexive 2, Score)."""
    return _policy(
        [(scorers.RelevanceScorer(), 2.0), (scorers.ReflexiveScorer(), 2.0)],
        slicers.ScoreSlice(),
        UShapedPlacer(),
    )


def document_qa() -> Policy:
    """Document QA: Relevance 2 + Reflexive 2 + Priority 1, by score (ScoreSlice), UShaped."""
    return _policy(
        [
            (scorers.RelevanceScorer(), 2.0),
            (scorers.ReflexiveScorer(), 2.0),
            (scorers.PriorityScorer(), 1.0),
        ],
        slicers.ScoreSlice(),
        UShapedPlacer(),
    )


def tool_use() -> Policy:
    """Tool-using agents: Relevance(3) 4 + Kind 2 + Recency 2 + Priority 1, Score, Chronological."""
    return _policy(
        [
            (_conversation_relevance(), 4.0),
            (scorers.KindScorer(), 2.0),
            (scorers.RecencyScorer(), 2.0),
            (scorers.PriorityScorer(), 1.0),
        ],
        slicers.ScoreSlice(),
        ChronologicalPlacer(),
        _TOOL_CHAT,
    )


def long_running() -> Policy:
    """Long sessions: Relevance(3) 10 + Recency 1 + Kind 1, Score, Chronological; keeps the task."""
    return _policy(
        [(_conversation_relevance(), 10.0), (scorers.RecencyScorer(), 1.0), (scorers.KindScorer(), 1.0)],
        slicers.ScoreSlice(),
        ChronologicalPlacer(),
        _AGENT_CHAT,
    )


def debugging() -> Policy:
    """Debugging: Priority 3 + Kind 2 + Recency 1, Greedy, Chronological."""
    return _policy(
        [(scorers.PriorityScorer(), 3.0), (scorers.KindScorer(), 2.0), (scorers.RecencyScorer(), 1.0)],
        slicers.GreedySlice(),
        ChronologicalPlacer(),
    )


@dataclass(frozen=True, slots=True)
class _Preset:
    factory: Callable[[], Policy]
    description: str


# In documentation order; preset_names() returns this order.
_PRESETS: dict[str, _Preset] = {
    "chat": _Preset(
        chat,
        "Conversational assistants: the turns relevant to the latest question (and their "
        "neighbours), the last exchange, then recent turns; chronological order.",
    ),
    "code_review": _Preset(
        code_review,
        "Reviewing code: ranks by kind and caller-set priority (the diff, the files under review), "
        "then recency; chronological order.",
    ),
    "rag": _Preset(
        rag,
        "Retrieval-augmented generation: ranks chunks by relevance to the query (BM25) and their "
        "retrieval hint (future_relevance_hint), by score; best chunks at both edges (U-shaped).",
    ),
    "document_qa": _Preset(
        document_qa,
        "Questions over long documents: relevance to the query, the retrieval hint and priority, "
        "by score; U-shaped order.",
    ),
    "tool_use": _Preset(
        tool_use,
        "Agents calling tools: relevance to the task and newest tool call, tool outputs and recent "
        "turns, then priority; chronological order.",
    ),
    "long_running": _Preset(
        long_running,
        "Long agent sessions: the turns relevant to the latest question (and their neighbours), "
        "then recency; keeps the opening task; chronological order.",
    ),
    "debugging": _Preset(
        debugging,
        "Debugging: caller-set priority first (errors, stack traces, failing tests), then kind and "
        "recency; chronological order.",
    ),
}


def _normalize(name: object) -> str:
    if not isinstance(name, str):
        raise CupelTypeError(f"preset name must be a string, got {name!r}")
    return _type_name(name)


def _lookup(name: object) -> _Preset:
    preset = _PRESETS.get(_normalize(name))
    if preset is None:
        raise UnknownPresetError(name)
    return preset


def preset_names() -> tuple[str, ...]:
    """The preset names, in documentation order."""
    return tuple(_PRESETS)


def get_preset(name: str) -> Policy:
    """The named preset's policy (case-insensitive; ``-`` and ``_`` are interchangeable).

    Raises :class:`UnknownPresetError` (an ``InvalidConfigurationError`` and a ``KeyError``) listing
    the known names.
    """
    return _lookup(name).factory()


def preset_description(name: str) -> str:
    """One line on when to use the named preset."""
    return _lookup(name).description
