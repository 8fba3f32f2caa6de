"""The core package never imports OpenTelemetry, and cupel.otel explains a missing extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_importing_cupel_does_not_import_opentelemetry() -> None:
    result = run_python(
        """
        import sys
        import cupel
        import cupel.testing
        from cupel import ContextBudget, ContextItem, DiagnosticTraceCollector, GreedySlice, Pipeline
        from cupel import ReflexiveScorer, UShapedPlacer
        pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer())
        items = [ContextItem("a", 10), ContextItem("b", 500)]
        pipeline.run_traced(items, ContextBudget(100, 50), DiagnosticTraceCollector())
        pipeline.dry_run(items, ContextBudget(100, 50))
        loaded = sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry")
        print(loaded)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_missing_opentelemetry_names_the_extra() -> None:
    # None in sys.modules makes every import of the package fail, installed or not.
    result = run_python(
        """
        import sys
        sys.modules["opentelemetry"] = None
        try:
            import cupel.otel
        except ImportError as error:
            print(type(error).__name__, error)
        else:
            print("imported")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ImportError cupel.otel needs the OpenTelemetry API")
    assert "pip install 'pycupel[otel]'" in result.stdout
