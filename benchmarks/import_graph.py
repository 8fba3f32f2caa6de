"""Measure the shape of cupel's import graph: module count, largest modules, cycles, upward imports.

Run ``python benchmarks/import_graph.py`` (``--json`` for machine-readable output). Only imports executed
when a module loads count as edges: imports under ``if TYPE_CHECKING:`` and inside function bodies are
listed separately because they do not create load-time cycles. The layer order is the one in
docs/architecture.md.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import json
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "cupel"

CONTRACTS = SRC.parent / ".importlinter"


def read_layers(path: Path = CONTRACTS) -> tuple[tuple[str, ...], ...]:
    """The layers of the ``layers`` contract in ``.importlinter``, lowest first, as full module names."""
    config = configparser.ConfigParser()
    config.read(path, encoding="utf-8")
    section = config["importlinter:contract:layers"]
    container = section["containers"].strip()
    layers = []
    for line in section["layers"].strip().splitlines():
        names = re.split(r"[|:]", line.split("#")[0])
        layers.append(tuple(f"{container}.{name.strip().strip('()')}" for name in names if name.strip()))
    return tuple(reversed(layers))


# One concept per module: a module past this many lines is doing two jobs (docs/architecture.md).
MAX_LINES = 450

# Lowest layer first; a module may import only from its own layer or below (see docs/architecture.md).
LAYERS = read_layers()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _in_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def collect() -> tuple[dict[str, int], dict[str, set[str]], dict[str, set[str]]]:
    """Return (lines per module, load-time edges, deferred edges) for every module of the package."""
    files = sorted((SRC / PACKAGE).rglob("*.py"))
    modules = {module_name(f): f for f in files}
    lines = {name: len(f.read_text(encoding="utf-8").splitlines()) for name, f in modules.items()}
    eager: dict[str, set[str]] = {name: set() for name in modules}
    deferred: dict[str, set[str]] = {name: set() for name in modules}

    def target(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    for name, file in modules.items():
        is_package = file.name == "__init__.py"

        def imported(node: ast.AST, name: str = name, is_package: bool = is_package) -> list[str]:
            if isinstance(node, ast.Import):
                return [alias.name for alias in node.names]
            if isinstance(node, ast.ImportFrom):
                # As import-linter does: ``from pkg import sub`` imports the submodule when it is one.
                base = _resolve(name, is_package, node)
                return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            return []

        def visit(node: ast.AST, bucket: dict[str, set[str]], name: str = name) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _in_type_checking(child):
                    for sub in child.body:
                        visit(ast.Module(body=[sub], type_ignores=[]), deferred)
                    for sub in child.orelse:
                        visit(ast.Module(body=[sub], type_ignores=[]), bucket)
                    continue
                for full in imported(child):
                    hit = target(full) if full.split(".")[0] == PACKAGE else None
                    if hit is not None and hit != name:
                        bucket[name].add(hit)
                is_function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                visit(child, deferred if is_function else bucket)

        visit(ast.parse(file.read_text(encoding="utf-8")), eager)
    return lines, eager, deferred


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(10_000)

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return sorted(out)


def layer_of(module: str) -> int | None:
    for level, group in enumerate(LAYERS):
        for prefix in group:
            if module == prefix or module.startswith(prefix + "."):
                return level
    return None


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from a lower layer to a higher one."""
    found = []
    for src, targets in edges.items():
        for dst in targets:
            a, b = layer_of(src), layer_of(dst)
            if a is not None and b is not None and b > a:
                found.append((src, dst))
    return sorted(found)


def measure() -> dict[str, object]:
    lines, eager, deferred = collect()
    largest = sorted(lines.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
    return {
        "modules": len(lines),
        "largest": largest,
        "over_max_lines": sorted(m for m, n in lines.items() if n > MAX_LINES),
        "cycles": cycles(eager),
        "cycles_all_imports": cycles({m: eager[m] | deferred[m] for m in eager}),
        "upward_imports": upward(eager),
        "deferred_upward_imports": upward(deferred),
        "unlayered": sorted(m for m in lines if layer_of(m) is None and m != PACKAGE),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args()
    result = measure()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"modules: {result['modules']}")
    print("largest modules:")
    for name, count in result["largest"]:  # type: ignore[attr-defined]
        print(f"  {count:5d}  {name}")
    found = result["cycles"]
    print(f"import cycles (load-time, strongly connected groups): {len(found)}")  # type: ignore[arg-type]
    for group in found:  # type: ignore[attr-defined]
        print("  " + " <-> ".join(group))
    every = result["cycles_all_imports"]
    print(f"import cycles counting deferred and TYPE_CHECKING imports: {len(every)}")  # type: ignore[arg-type]
    for group in every:  # type: ignore[attr-defined]
        print("  " + " <-> ".join(group))
    up = result["upward_imports"]
    print(f"upward imports (load-time): {len(up)}")  # type: ignore[arg-type]
    for src, dst in up:  # type: ignore[attr-defined]
        print(f"  {src} -> {dst}")
    deferred = result["deferred_upward_imports"]
    print(f"upward imports deferred to call time or TYPE_CHECKING: {len(deferred)}")  # type: ignore[arg-type]
    for src, dst in deferred:  # type: ignore[attr-defined]
        print(f"  {src} -> {dst}")
    if result["unlayered"]:
        print(f"modules outside every layer: {result['unlayered']}")


if __name__ == "__main__":
    main()
