"""Nested quotas judge the pool once, and Truncate keeps what still fits: as ``cupel select`` and
``cupel explain`` users meet them, through a policy file, in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_new_user_habits import cupel

NESTED = """
scorers = ["priority"]
placer = "chronological"

[slicer]
type = "quota"
quotas = []

[slicer.inner]
type = "quota"
quotas = []

[slicer.inner.inner]
type = "count_quota"
scarcity = "{scarcity}"
entries = [{{ kind = "tool", require_count = 1, cap_count = 3 }}{absent}]
"""

TRUNCATE = """
scorers = ["priority"]
placer = "chronological"
overflow_strategy = "truncate"

[slicer]
type = "count_quota"
entries = [
    { kind = "tool", require_count = 1, cap_count = 1 },
    { kind = "msg", require_count = 1, cap_count = 1 },
]
"""


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path.name


@pytest.mark.parametrize("scarcity", ["throw", "degrade"])
def test_two_quota_levels_judge_the_pool_once(tmp_path: Path, scarcity: str) -> None:
    policy = write(tmp_path / "nested.toml", NESTED.format(scarcity=scarcity, absent=""))
    items = write(
        tmp_path / "items.json",
        [{"content": "t1", "tokens": 10, "kind": "tool"}, {"content": "m1", "tokens": 10, "kind": "msg"}],
    )
    selected = cupel("select", items, "--budget", "100", "--policy", policy, cwd=tmp_path)
    assert selected.returncode == 0, selected.stderr
    assert [item["content"] for item in json.loads(selected.stdout)] == ["t1", "m1"]
    explained = cupel("explain", items, "--budget", "100", "--policy", policy, cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert "Shortfall" not in explained.stdout


def test_a_kind_absent_from_the_pool_is_reported_once(tmp_path: Path) -> None:
    absent = ', { kind = "absent", require_count = 1, cap_count = 2 }'
    policy = write(tmp_path / "nested.toml", NESTED.format(scarcity="degrade", absent=absent))
    items = write(
        tmp_path / "items.json",
        [{"content": "t1", "tokens": 10, "kind": "tool"}, {"content": "m1", "tokens": 10, "kind": "msg"}],
    )
    explained = cupel("explain", items, "--budget", "100", "--policy", policy, cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    shortfalls = [line for line in explained.stdout.splitlines() if line.startswith("Shortfall")]
    assert shortfalls == ["Shortfall: kind absent required 1, found 0"]
    thrown = cupel(
        "select",
        items,
        "--budget",
        "100",
        "--policy",
        write(tmp_path / "throw.toml", NESTED.format(scarcity="throw", absent=absent)),
        cwd=tmp_path,
    )
    assert thrown.returncode == 1
    assert "kind 'absent' has 0 items" in thrown.stderr and "'tool'" not in thrown.stderr


def test_truncate_puts_back_what_still_fits(tmp_path: Path) -> None:
    policy = write(tmp_path / "truncate.toml", TRUNCATE)
    items = write(
        tmp_path / "items.json",
        [
            {"content": "A", "tokens": 100, "kind": "tool", "priority": 9},
            {"content": "B", "tokens": 5, "kind": "msg", "priority": 1},
        ],
    )
    selected = cupel("select", items, "--budget", "200:50", "--policy", policy, cwd=tmp_path)
    assert selected.returncode == 0, selected.stderr
    assert [item["content"] for item in json.loads(selected.stdout)] == ["B"]
    explained = cupel("explain", items, "--budget", "200:50", "--policy", policy, cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("1 of 2 candidates included")
    assert "BudgetExceeded: 100 tokens requested, 50 available" in explained.stdout
    # B is not reported as left out for want of room it had.
    assert "5 tokens requested" not in explained.stdout
