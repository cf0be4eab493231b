"""The package's import graph: no cycles, and the arrows point inward (ARCHITECTURE.md).

Every module under ``pytest_screeneval/`` is read with :mod:`ast`, not imported. Every import
statement counts, wherever it is: at module level, inside a function (the lazy imports that keep
``--help`` and plugin import light still run, so they can still close a cycle), and under
``if TYPE_CHECKING:`` (never run, but a pure module that names the session's types in its
annotations depends on it all the same). ``from package import name`` is an edge to
``package.name`` when that is a module, else to the package itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from itertools import pairwise
from pathlib import Path

import pytest

import pytest_screeneval

PACKAGE = "pytest_screeneval"
ROOT = Path(pytest_screeneval.__file__).resolve().parent

# The pure parts never reach the pytest glue, the CLI, the session or pytest itself.
PURE = (
    f"{PACKAGE}.golden",
    f"{PACKAGE}.evidence",
    f"{PACKAGE}.probes",
    f"{PACKAGE}.store",
    f"{PACKAGE}.scoring.protocol",
)
OUTER = (f"{PACKAGE}.cli", f"{PACKAGE}.session", f"{PACKAGE}.plugin", "pytest", "_pytest")
# (importer, what it may never import): prefixes of dotted module names
FORBIDDEN = [(pure, outer) for pure in PURE for outer in OUTER] + [
    (f"{PACKAGE}.session", f"{PACKAGE}.cli"),
    (f"{PACKAGE}.session", f"{PACKAGE}.plugin"),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def imported(module: str, path: Path, known: Mapping[str, Path]) -> Iterator[tuple[str, int]]:
    """(dotted name, line) of everything a module imports, ours resolved to a module."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package, up level - 1
                parent = module.split(".")
                parent = parent if is_package else parent[:-1]
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield (candidate if candidate in known else base), node.lineno


def ours(name: str) -> bool:
    return name == PACKAGE or name.startswith(f"{PACKAGE}.")


def import_graph() -> dict[str, dict[str, int]]:
    """Each module of the package -> the modules of the package it imports (with a line)."""
    known = package_modules()
    graph: dict[str, dict[str, int]] = {}
    for module, path in known.items():
        edges: dict[str, int] = {}
        for name, line in imported(module, path, known):
            if ours(name) and name != module:
                edges.setdefault(name, line)
        graph[module] = edges
    return graph


def find_cycle(graph: Mapping[str, Mapping[str, int]]) -> list[str] | None:
    """One import cycle (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, {})):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(f"{prefix}.")


def test_the_walk_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert len(graph) > 50  # every module, packages included
    # a module-level, a function-level (lazy) and a TYPE_CHECKING import, one of each
    assert f"{PACKAGE}.errors" in graph[f"{PACKAGE}.cli.main"]
    assert f"{PACKAGE}.store.database" in graph[f"{PACKAGE}.cli.common"]
    assert f"{PACKAGE}.golden.model" in graph[f"{PACKAGE}.cli.review"]


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) is None


def test_no_import_cycles() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    if cycle is not None:
        steps = [f"{a} -> {b} (line {graph[a][b]})" for a, b in pairwise(cycle)]
        pytest.fail("import cycle:\n  " + "\n  ".join(steps))


def test_the_arrows_point_inward() -> None:
    known = package_modules()
    wrong = []
    for module, path in known.items():
        for name, line in imported(module, path, known):
            for importer, target in FORBIDDEN:
                if within(module, importer) and within(name, target):
                    wrong.append(f"{module} imports {name} (line {line})")
    assert not wrong, "\n".join(sorted(set(wrong)))
