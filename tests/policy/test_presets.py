"""The seven presets: their exact configuration, and each one running on a realistic item set."""

from __future__ import annotations

import pickle

import pytest

import cupel.presets
from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    ContextItem,
    ContextKind,
    GreedySlice,
    InvalidConfigurationError,
    KindScorer,
    OverflowStrategy,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    UShapedPlacer,
)
from cupel.policy import (
    ChatSettings,
    Policy,
    UnknownPresetError,
    get_preset,
    preset_description,
    preset_names,
)
from cupel.scorers import DEFAULT_KIND_WEIGHTS, RelevanceScorer
from cupel.slicers import ScoreSlice
from tests.policy._items import conversation

EXPECTED = {
    "chat": (
        [(RelevanceScorer(neighbors=3), 10.0), (RecencyScorer(), 1.0), (KindScorer(), 1.0)],
        ScoreSlice(),
        ChronologicalPlacer(),
    ),
    "code_review": (
        [(KindScorer(), 2.0), (PriorityScorer(), 2.0), (RecencyScorer(), 1.0)],
        GreedySlice(),
        ChronologicalPlacer(),
    ),
    "rag": ([(RelevanceScorer(), 2.0), (ReflexiveScorer(), 2.0)], ScoreSlice(), UShapedPlacer()),
    "document_qa": (
        [(RelevanceScorer(), 2.0), (ReflexiveScorer(), 2.0), (PriorityScorer(), 1.0)],
        ScoreSlice(),
        UShapedPlacer(),
    ),
    "tool_use": (
        [
            (RelevanceScorer(neighbors=3), 4.0),
            (KindScorer(), 2.0),
            (RecencyScorer(), 2.0),
            (PriorityScorer(), 1.0),
        ],
        ScoreSlice(),
        ChronologicalPlacer(),
    ),
    "long_running": (
        [(RelevanceScorer(neighbors=3), 10.0), (RecencyScorer(), 1.0), (KindScorer(), 1.0)],
        ScoreSlice(),
        ChronologicalPlacer(),
    ),
    "debugging": (
        [(PriorityScorer(), 3.0), (KindScorer(), 2.0), (RecencyScorer(), 1.0)],
        GreedySlice(),
        ChronologicalPlacer(),
    ),
}


def test_names_in_documentation_order() -> None:
    assert preset_names() == (
        "chat",
        "code_review",
        "rag",
        "document_qa",
        "tool_use",
        "long_running",
        "debugging",
    )


@pytest.mark.parametrize("name", list(EXPECTED))
def test_configuration_is_pinned(name: str) -> None:
    entries, slicer, placer = EXPECTED[name]
    policy = get_preset(name)
    assert isinstance(policy.scorer, CompositeScorer)
    assert policy.scorer.entries == tuple(entries)
    assert policy.slicer == slicer
    assert policy.placer == placer
    assert policy.deduplication is True
    assert policy.overflow_strategy is OverflowStrategy.THROW
    # Kind scorers use the spec's default weights.
    for scorer, _ in policy.scorer.entries:
        if isinstance(scorer, KindScorer):
            assert dict(scorer.weights) == dict(DEFAULT_KIND_WEIGHTS)
    chat = None
    if name in CHAT_PRESETS:
        agent = name in AGENT_PRESETS
        clearing = name == "tool_use"
        chat = ChatSettings(keep_first_turn=agent, recent_share=0.1, clear_tool_results=clearing)
    assert policy == Policy(CompositeScorer(entries), slicer, placer, chat=chat)


AGENT_PRESETS = ("tool_use", "long_running")
CHAT_PRESETS = ("chat", *AGENT_PRESETS)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_chat_settings_keep_the_first_turn_only_for_agent_presets(name: str) -> None:
    settings = get_preset(name).chat or ChatSettings()
    assert settings.strategy == "turns"
    assert settings.keep_first_turn is (name in AGENT_PRESETS)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_module_functions_and_cupel_presets(name: str) -> None:
    assert getattr(cupel.presets, name)() == get_preset(name)
    # Every call builds fresh components; the values are equal.
    assert get_preset(name) == get_preset(name)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_description_is_one_line(name: str) -> None:
    description = preset_description(name)
    assert description and "\n" not in description and description.endswith(".")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_runs_on_a_realistic_item_set(name: str) -> None:
    items = conversation()
    budget = ContextBudget(700, 600)
    report = Pipeline.from_policy(get_preset(name)).dry_run(items, budget)
    assert report.included_tokens <= budget.target_tokens
    assert report.total_candidates == len(items)
    assert len(report.included) + len(report.excluded) == len(items)
    contents = [entry.item.content for entry in report.included]
    assert "You are a careful assistant for the payments service." in contents  # pinned
    # Deduplication: the repeated question appears once at most.
    assert contents.count("How do I retry failed webhooks?") <= 1
    assert report.items == get_preset(name).build_pipeline().run(items, budget)


def test_presets_differ_where_they_should() -> None:
    items = conversation()
    budget = ContextBudget(700, 600)

    def included(name: str) -> list[ContextItem]:
        return Pipeline.from_policy(get_preset(name)).run(items, budget)

    chat = [item.content for item in included("chat")]
    assert "Thanks! And what about idempotency keys?" in chat  # the latest turn
    assert "Old chit-chat about the weather." not in chat
    rag = Pipeline.from_policy(get_preset("rag")).dry_run(items, budget)
    # U-shaped: the pinned system prompt (score 1.0) and the best chunk take the two edges.
    edges = {rag.included[0].item.content, rag.included[-1].item.content}
    assert "Webhooks are retried with exponential backoff up to 5 times." in edges
    debugging = [item.content for item in included("debugging")]
    assert "Traceback: TimeoutError in webhook_sender.py:88" in debugging
    assert "diff --git a/webhook_sender.py b/webhook_sender.py" in debugging
    chronological = included("tool_use")
    stamps = [item.timestamp for item in chronological if item.timestamp is not None]
    assert stamps == sorted(stamps)


@pytest.mark.parametrize("spelling", ["code-review", "Code_Review", " CODE-REVIEW "])
def test_names_are_forgiving(spelling: str) -> None:
    assert get_preset(spelling) == get_preset("code_review")
    assert preset_description(spelling) == preset_description("code_review")


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownPresetError) as raised:
        get_preset("summarise")
    message = str(raised.value)
    assert message == (
        "unknown preset 'summarise'; known presets: chat, code_review, rag, document_qa, tool_use, "
        "long_running, debugging"
    )
    assert isinstance(raised.value, InvalidConfigurationError)
    assert isinstance(raised.value, KeyError)
    with pytest.raises(UnknownPresetError):
        preset_description("summarise")
    copy = pickle.loads(pickle.dumps(raised.value))
    assert str(copy) == message and copy.name == "summarise"


def test_non_string_name() -> None:
    with pytest.raises(TypeError):
        get_preset(3)  # type: ignore[arg-type]


def test_kind_constant_used_in_items() -> None:
    # Guard for the realistic set: kinds are the well-known ones.
    assert {item.kind for item in conversation()} <= {
        ContextKind.SYSTEM_PROMPT,
        ContextKind.MEMORY,
        ContextKind.MESSAGE,
        ContextKind.DOCUMENT,
        ContextKind.TOOL_OUTPUT,
    }
