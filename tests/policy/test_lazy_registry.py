"""The registry names built-in scorers and slicers by class path and imports them when a policy uses them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cupel import GreedySlice, KindScorer, register_scorer
from cupel.errors import InvalidConfigurationError
from cupel.policy._entries import SCARCITY_VALUES, _Registry, class_path, component_class
from cupel.policy.registry import _PLACERS, _SCORERS, _SLICERS
from cupel.slicers import ScarcityBehavior

ROOT = Path(__file__).resolve().parents[2]


def test_scarcity_values_are_the_enum_values_default_first() -> None:
    assert tuple(member.value for member in ScarcityBehavior) == SCARCITY_VALUES
    assert SCARCITY_VALUES[0] == ScarcityBehavior.DEGRADE.value


@pytest.mark.parametrize("registry", [_SCORERS, _SLICERS, _PLACERS], ids=lambda r: r.role)
def test_every_builtin_class_path_names_its_class(registry: _Registry) -> None:
    for name in registry.names():
        entry = registry.get(name)
        assert entry is not None and entry.builtin
        cls = component_class(entry.cls)
        if isinstance(entry.cls, str):
            assert class_path(cls) == entry.cls


def test_a_builtin_instance_is_found_by_its_class_path() -> None:
    entry = _SCORERS.for_object(KindScorer())
    assert entry is not None and entry.name == "kind"
    slicer_entry = _SLICERS.for_object(GreedySlice())
    assert slicer_entry is not None and slicer_entry.name == "greedy"


def test_a_builtin_class_cannot_be_registered_under_another_name() -> None:
    with pytest.raises(
        InvalidConfigurationError, match="KindScorer is already registered as scorer type 'kind'"
    ):
        register_scorer("my_kind", KindScorer)


def test_a_preset_loads_only_its_own_components() -> None:
    code = (
        "import sys\nfrom cupel.policy import get_preset, dump_policy\n"
        "dump_policy(get_preset('tool_use'))\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.split()
    )
    unused = {
        "cupel.scorers.decay",
        "cupel.scorers.frequency",
        "cupel.scorers.metadata_key",
        "cupel.scorers.metadata_trust",
        "cupel.scorers.reflexive",
        "cupel.scorers.tag",
        "cupel.slicers.knapsack",
        "cupel.slicers.quota",
        "cupel.slicers.count_quota",
        "cupel.slicers.count_constrained_knapsack",
    }
    assert not unused & loaded
    assert {"cupel.scorers.kind", "cupel.scorers.recency", "cupel.scorers.priority"} <= loaded
