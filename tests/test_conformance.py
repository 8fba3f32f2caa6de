"""Conformance vectors: the project's own under tests/conformance, and the reference suite beside the repo."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cupel.conformance import discover_vectors, run_vector

HERE = Path(__file__).resolve().parent
OWN = HERE / "conformance"
REFERENCE = HERE.parent.parent / "shared" / "conformance" / "required"

own_vectors = discover_vectors([OWN])
reference_vectors = discover_vectors([REFERENCE]) if REFERENCE.is_dir() else []


def _id(path: Path) -> str:
    return str(path.relative_to(path.parents[1]))


@pytest.mark.parametrize("path", own_vectors, ids=_id)
def test_own_vector(path: Path) -> None:
    result = run_vector(path)
    assert result.passed, result.reason


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference vectors not found at {REFERENCE}")
@pytest.mark.parametrize("path", reference_vectors, ids=_id)
def test_reference_vector(path: Path) -> None:
    result = run_vector(path)
    assert result.passed, result.reason


def test_own_vectors_cover_every_stage() -> None:
    stages = {path.parent.name for path in own_vectors}
    assert {"scoring", "slicing", "placing", "pipeline"} <= stages


def test_cli_prints_one_line_per_vector_and_a_summary(tmp_path: Path) -> None:
    good = OWN / "placing" / "u-shaped-seven-items.toml"
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace('"A", "C", "E"', '"C", "A", "E"'))
    result = subprocess.run(
        [sys.executable, "-m", "cupel", "conformance", str(good), str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = result.stdout.strip().splitlines()
    assert lines[0] == f"PASS {good}"
    assert lines[1].startswith(f"FAIL {bad}: placement order mismatch")
    assert lines[-1] == "1 passed, 1 failed"
    assert result.returncode == 1


def test_missing_feature_fails_with_a_reason(tmp_path: Path) -> None:
    vector = tmp_path / "unknown.toml"
    vector.write_text(
        '[test]\nname = "x"\nstage = "slicing"\nslicer = "telepathy"\n[budget]\ntarget_tokens = 1\n'
    )
    result = run_vector(vector)
    assert not result.passed
    assert "unknown slicer type 'telepathy'" in result.reason


def test_unknown_keys_are_ignored(tmp_path: Path) -> None:
    source = (OWN / "placing" / "u-shaped-two-items.toml").read_text()
    vector = tmp_path / "extra.toml"
    vector.write_text(source + '\n[future]\nsomething = "new"\n')
    assert run_vector(vector).passed
