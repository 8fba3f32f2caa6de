"""The import graph's shape: no cycles and no upward import (docs/architecture.md).

``lint-imports`` (``.importlinter``) enforces the same in CI; this test also counts imports made
inside functions and under ``TYPE_CHECKING``, and runs with the suite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "import_graph.py"


@pytest.fixture(scope="module")
def graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_import_graph", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def collected(graph: ModuleType) -> tuple[dict[str, int], dict[str, set[str]], dict[str, set[str]]]:
    """Lines per module, load-time imports and deferred imports: the source is parsed once per run."""
    return graph.collect()


@pytest.fixture(scope="module")
def imports(
    collected: tuple[dict[str, int], dict[str, set[str]], dict[str, set[str]]],
) -> dict[str, set[str]]:
    """Every import of every module, load-time, deferred and TYPE_CHECKING alike."""
    _, eager, deferred = collected
    return {name: eager[name] | deferred[name] for name in eager}


def test_no_import_cycles_even_through_deferred_imports(
    graph: ModuleType, imports: dict[str, set[str]]
) -> None:
    assert graph.cycles(imports) == []


def test_no_module_imports_a_higher_layer(graph: ModuleType, imports: dict[str, set[str]]) -> None:
    assert graph.upward(imports) == []


def test_every_module_has_a_layer(graph: ModuleType, imports: dict[str, set[str]]) -> None:
    assert [name for name in imports if name != "cupel" and graph.layer_of(name) is None] == []


def test_cycle_finder_finds_a_cycle(graph: ModuleType) -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert graph.cycles(edges) == [["a", "b", "c"]]


def test_upward_finder_finds_an_upward_import(graph: ModuleType) -> None:
    assert graph.upward({"cupel.model": {"cupel.pipeline"}}) == [("cupel.model", "cupel.pipeline")]


def test_no_module_is_much_over_400_lines(
    graph: ModuleType, collected: tuple[dict[str, int], dict[str, set[str]], dict[str, set[str]]]
) -> None:
    lines, _, _ = collected
    assert {name: count for name, count in lines.items() if count > graph.MAX_LINES} == {}
