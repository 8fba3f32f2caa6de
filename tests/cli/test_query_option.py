"""``cupel select --query`` and ``cupel explain --query``: the question reaches the relevance scorer."""

from __future__ import annotations

import json
from pathlib import Path

from .test_cli import cupel

ITEMS = [
    {"content": "My flight LH 438 leaves Friday at 9", "tokens": 10},
    {"content": "The garden needs water twice a week", "tokens": 10},
    {"content": "Jazz tonight at the harbor", "tokens": 10},
]


def _files(tmp_path: Path) -> tuple[str, str]:
    items = tmp_path / "items.json"
    items.write_text(json.dumps(ITEMS), encoding="utf-8")
    policy = tmp_path / "relevance.toml"
    policy.write_text(
        'scorers = ["relevance"]\nslicer = "score"\nplacer = "chronological"\n', encoding="utf-8"
    )
    return str(items), str(policy)


def test_select_keeps_what_the_query_asks_for(tmp_path: Path) -> None:
    items, policy = _files(tmp_path)
    for query, expected in (("When is my flight?", ITEMS[0]), ("water the garden", ITEMS[1])):
        result = cupel(
            "select", items, "--budget", "10", "--policy", policy, "--query", query, "--format", "json"
        )
        assert result.returncode == 0, result.stderr
        assert [item["content"] for item in json.loads(result.stdout)] == [expected["content"]]


def test_explain_shows_relevance_and_the_query(tmp_path: Path) -> None:
    items, policy = _files(tmp_path)
    result = cupel("explain", items, "--budget", "10", "--policy", policy, "--query", "jazz")
    assert result.returncode == 0, result.stderr
    assert "relev" in result.stdout
    assert "Note: relevance: scored against the query 'jazz'" in result.stdout
    without = cupel("explain", items, "--budget", "10", "--policy", policy)
    assert "had no query" in without.stdout


def test_a_transcript_gets_the_query_too(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "My flight LH 438 leaves Friday at 9."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "The garden needs water twice a week."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Anything else?"},
        {"role": "assistant", "content": "No."},
        {"role": "user", "content": "Thanks."},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    _, policy = _files(tmp_path)

    def kept(*extra: str) -> list[str]:
        arguments = ("select", str(path), "--budget", "30", "--policy", policy, "--strategy", "messages")
        result = cupel(*arguments, "--format", "json", *extra)
        assert result.returncode == 0, result.stderr
        return [message["content"] for message in json.loads(result.stdout)]

    flight, garden = "My flight LH 438 leaves Friday at 9.", "The garden needs water twice a week."
    assert flight in kept("--query", "flight") and garden not in kept("--query", "flight")
    assert garden in kept("--query", "garden") and flight not in kept("--query", "garden")


def test_a_transcript_without_query_answers_its_latest_user_message(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "My flight LH 438 leaves Friday at 9."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "The garden needs water twice a week."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "When does my flight leave?"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    _, policy = _files(tmp_path)
    arguments = ("select", str(path), "--budget", "30", "--policy", policy, "--strategy", "messages")
    result = cupel(*arguments, "--format", "json")
    assert result.returncode == 0, result.stderr
    kept = [message["content"] for message in json.loads(result.stdout)]
    assert messages[0]["content"] in kept and messages[2]["content"] not in kept
    explained = cupel("explain", str(path), "--budget", "30", "--policy", policy)
    assert explained.returncode == 0, explained.stderr
    assert "scored against the query 'When does my flight leave?'" in explained.stdout
