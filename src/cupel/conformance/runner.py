"""Discover and run conformance vectors; one PASS/FAIL line per vector."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cupel import _input
from cupel.conformance.builders import (
    VectorError,
    build_budget,
    build_item,
    build_overflow,
    build_placer,
    build_scored_item,
    build_scorer,
    build_slicer,
    pipeline_scorer,
)
from cupel.diagnostics.reasons import QuotaCapExceeded
from cupel.errors import CupelError
from cupel.model import ContextItem
from cupel.pipeline import Pipeline
from cupel.scorers._base import score_items

DEFAULT_EPSILON = 1e-9


class VectorFailure(Exception):
    """The implementation's behaviour differs from the vector's expectation."""


@dataclass(frozen=True, slots=True)
class VectorResult:
    """The outcome of one vector file."""

    path: Path
    name: str
    passed: bool
    reason: str = ""

    def line(self) -> str:
        return f"PASS {self.path}" if self.passed else f"FAIL {self.path}: {self.reason}"


def load_toml(path: Path) -> dict[str, Any]:
    """Read a TOML 1.1 document (vectors may omit seconds in date-times)."""
    try:
        import tomli
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise VectorError(
            "reading conformance vectors needs a TOML 1.1 parser: pip install 'pycupel[toml]'"
        ) from None
    try:
        text = _input.read_text(path)
    except _input.InputError as error:
        raise VectorError(error.problem) from None
    try:
        data: dict[str, Any] = tomli.loads(text)
    except tomli.TOMLDecodeError as error:
        raise VectorError(f"invalid TOML: {error}") from None
    except RecursionError:
        raise VectorError("invalid TOML: arrays or tables nested too deep") from None
    except ValueError as error:  # an integer beyond Python's digit limit
        raise VectorError(f"invalid TOML: {str(error).split(';')[0]}") from None
    return data


def discover_vectors(paths: Iterable[str | Path]) -> list[Path]:
    """Every ``*.toml`` file named or found below the given paths, sorted within each path."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.toml") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or directory: {path}")
    return found


def run_vectors(paths: Iterable[str | Path]) -> list[VectorResult]:
    return [run_vector(path) for path in discover_vectors(paths)]


def run_vector(path: str | Path) -> VectorResult:
    """Run one vector file; never raises for a failing or broken vector."""
    path = Path(path)
    name = path.stem
    try:
        vector = load_toml(path)
        test = vector.get("test", {})
        name = test.get("name", name)
        stage = test.get("stage")
        runner = _STAGES.get(stage)
        if runner is None:
            raise VectorError(f"unknown stage {stage!r}")
        runner(vector)
    except (VectorFailure, VectorError) as error:
        return VectorResult(path, name, False, str(error))
    except Exception as error:
        return VectorResult(path, name, False, f"{type(error).__name__}: {error}")
    return VectorResult(path, name, True)


def _epsilon(vector: Mapping[str, Any]) -> float:
    return float(vector.get("tolerance", {}).get("score_epsilon", DEFAULT_EPSILON))


def _close(actual: float, expected: float, epsilon: float) -> bool:
    return abs(actual - expected) < epsilon or (math.isnan(actual) and math.isnan(expected))


def _by_content(items: Sequence[ContextItem], content: str) -> ContextItem:
    for item in items:
        if item.content == content:
            return item
    raise VectorError(f"no item with content {content!r}")


def _run_scoring(vector: Mapping[str, Any]) -> None:
    test = vector["test"]
    config = vector.get("config", {})
    if test.get("expect_construction_error", False):
        try:
            build_scorer(test["scorer"], config)
        except (CupelError, ValueError, TypeError):
            return
        raise VectorFailure("scorer construction succeeded but the vector expects an error")
    scorer = build_scorer(test["scorer"], config)
    items = [build_item(table) for table in vector.get("items", [])]
    epsilon = _epsilon(vector)
    batch = score_items(scorer, items)
    for expected in vector.get("expected", []):
        item = _by_content(items, expected["content"])
        want = float(expected["score_approx"])
        got = scorer.score(item, items)
        if not _close(got, want, epsilon):
            raise VectorFailure(
                f"score mismatch for {expected['content']!r}: expected {want}, got {got} (epsilon={epsilon})"
            )
        got_batch = batch[next(i for i, other in enumerate(items) if other is item)]
        if not _close(got_batch, want, epsilon):
            raise VectorFailure(
                f"whole-list score mismatch for {expected['content']!r}: expected {want}, got {got_batch}"
            )


def _run_slicing(vector: Mapping[str, Any]) -> None:
    test = vector["test"]
    config = vector.get("config", {})
    if test.get("expect_construction_error", False):
        try:
            build_slicer(test["slicer"], config)
        except (CupelError, ValueError, TypeError):
            return
        raise VectorFailure("slicer construction succeeded but the vector expects an error")
    slicer = build_slicer(test["slicer"], config)
    scored = [build_scored_item(table) for table in vector.get("scored_items", [])]
    budget = build_budget(vector["budget"])
    expected = vector.get("expected", {})
    _expect_error(expected.get("error_contains"), lambda: slicer.slice(scored, budget))
    if "error_contains" in expected:
        return
    selected = slicer.slice(scored, budget)
    actual = sorted(item.content for item in selected)
    wanted = sorted(expected.get("selected_contents", []))
    if actual != wanted:
        raise VectorFailure(f"selection mismatch: expected {wanted}, got {actual}")
    if "shortfall_count" in expected or "cap_excluded_count" in expected:
        detailed = getattr(slicer, "slice_detailed", None)
        if detailed is None:
            raise VectorError(f"{type(slicer).__name__} does not report shortfalls or exclusions")
        outcome = detailed(scored, budget)
        if sorted(item.content for item in outcome.selected) != wanted:
            raise VectorFailure("slice_detailed selected a different set than slice")
        if "shortfall_count" in expected and len(outcome.shortfalls) != expected["shortfall_count"]:
            raise VectorFailure(
                f"shortfall count: expected {expected['shortfall_count']}, got {len(outcome.shortfalls)}"
            )
        if "cap_excluded_count" in expected:
            caps = sum(1 for _, r in outcome.exclusions if isinstance(r, QuotaCapExceeded))
            if caps != expected["cap_excluded_count"]:
                raise VectorFailure(f"cap exclusions: expected {expected['cap_excluded_count']}, got {caps}")


def _expect_error(fragment: str | None, action: Callable[[], object]) -> None:
    """With ``[expected] error_contains``, the action must raise a CupelError containing the text."""
    if fragment is None:
        return
    try:
        action()
    except CupelError as raised:
        if fragment not in str(raised):
            raise VectorFailure(f"expected an error containing {fragment!r}, got {raised}") from None
        return
    raise VectorFailure(f"expected an error containing {fragment!r}, but the call succeeded")


def _run_placing(vector: Mapping[str, Any]) -> None:
    placer = build_placer(vector["test"]["placer"])
    scored = [build_scored_item(table) for table in vector.get("items", [])]
    actual = [item.content for item in placer.place(scored)]
    wanted = list(vector.get("expected", {}).get("ordered_contents", []))
    if actual != wanted:
        raise VectorFailure(f"placement order mismatch: expected {wanted}, got {actual}")


def _run_pipeline(vector: Mapping[str, Any]) -> None:
    config = vector.get("config", {})
    pipeline = Pipeline(
        pipeline_scorer(config.get("scorers", [])),
        build_slicer(config.get("slicer", "greedy"), config),
        build_placer(config.get("placer", "chronological")),
        deduplication=config.get("deduplication", True),
        overflow_strategy=build_overflow(config.get("overflow_strategy", "throw")),
    )
    items = [build_item(table) for table in vector.get("items", [])]
    budget = build_budget(vector["budget"])
    error = vector.get("expected", {}).get("error_contains")
    if error is not None:
        _expect_error(error, lambda: pipeline.run(items, budget))
        return
    output = [item.content for item in pipeline.run(items, budget)]
    wanted = [entry["content"] for entry in vector.get("expected_output", [])]
    if output != wanted:
        raise VectorFailure(f"pipeline output mismatch: expected {wanted}, got {output}")
    diagnostics = vector.get("expected", {}).get("diagnostics")
    if diagnostics is not None:
        _check_diagnostics(pipeline, items, budget, diagnostics, _epsilon(vector), output)


_REASON_FIELDS = (
    "item_tokens",
    "available_tokens",
    "deduplicated_against",
    "tokens",
    "displaced_by",
    "threshold",
    "filter_name",
)


def _check_diagnostics(
    pipeline: Pipeline,
    items: list[ContextItem],
    budget: Any,
    diagnostics: Mapping[str, Any],
    epsilon: float,
    output: list[str],
) -> None:
    report = pipeline.dry_run(items, budget)
    if [entry.item.content for entry in report.included] != output:
        raise VectorFailure("dry_run included items differ from run output")
    if "included" in diagnostics:
        wanted = diagnostics["included"]
        if len(wanted) != len(report.included):
            raise VectorFailure(f"included count: expected {len(wanted)}, got {len(report.included)}")
        for index, (want, got) in enumerate(zip(wanted, report.included, strict=True)):
            where = f"included[{index}]"
            if got.item.content != want["content"]:
                raise VectorFailure(f"{where}: expected {want['content']!r}, got {got.item.content!r}")
            if not _close(got.score, float(want["score_approx"]), epsilon):
                raise VectorFailure(f"{where}: expected score {want['score_approx']}, got {got.score}")
            if got.reason.value != want["inclusion_reason"]:
                raise VectorFailure(
                    f"{where}: expected reason {want['inclusion_reason']}, got {got.reason.value}"
                )
    if "excluded" in diagnostics:
        wanted = diagnostics["excluded"]
        if len(wanted) != len(report.excluded):
            raise VectorFailure(f"excluded count: expected {len(wanted)}, got {len(report.excluded)}")
        for index, (want, got_excluded) in enumerate(zip(wanted, report.excluded, strict=True)):
            where = f"excluded[{index}]"
            if got_excluded.item.content != want["content"]:
                raise VectorFailure(
                    f"{where}: expected {want['content']!r}, got {got_excluded.item.content!r}"
                )
            if not _close(got_excluded.score, float(want["score_approx"]), epsilon):
                raise VectorFailure(
                    f"{where}: expected score {want['score_approx']}, got {got_excluded.score}"
                )
            reason = got_excluded.reason.to_dict()
            if reason["reason"] != want["exclusion_reason"]:
                raise VectorFailure(
                    f"{where}: expected reason {want['exclusion_reason']}, got {reason['reason']}"
                )
            for field in _REASON_FIELDS:
                if field in want and reason.get(field) != want[field]:
                    raise VectorFailure(
                        f"{where}: expected {field}={want[field]!r}, got {reason.get(field)!r}"
                    )
    summary = diagnostics.get("summary", {})
    for field in ("total_candidates", "total_tokens_considered"):
        if field in summary and getattr(report, field) != summary[field]:
            raise VectorFailure(f"summary {field}: expected {summary[field]}, got {getattr(report, field)}")


_STAGES = {
    "scoring": _run_scoring,
    "slicing": _run_slicing,
    "placing": _run_placing,
    "pipeline": _run_pipeline,
}
