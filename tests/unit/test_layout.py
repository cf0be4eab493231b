"""The package's import graph is a checked contract: no cycles, every part in its rank, and each
pure part importing only what its allowlist names (ARCHITECTURE.md, "Code map").

Every module under ``pytest_screeneval/`` is read with :mod:`ast`, not imported. Every import
statement counts, wherever it is: at module level, inside a function (the lazy imports that keep
``--help`` and plugin import light still run, so they can still close a cycle), and under
``if TYPE_CHECKING:`` (never run, but a pure module that names the session's types in its
annotations depends on it all the same). ``from package import name`` is an edge to
``package.name`` when that is a module, else to the package itself.

The tree checked is the installed package, or the copy named by ``SCREENEVAL_LAYOUT_ROOT``: the
mutation tests copy the tree and add outward imports; tests/slow/test_layout_contract.py runs this
file against such a copy, which must fail.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from itertools import pairwise
from pathlib import Path

import pytest

PACKAGE = "pytest_screeneval"
ROOT_ENV = "SCREENEVAL_LAYOUT_ROOT"
ROOT = (
    Path(os.environ[ROOT_ENV])
    if os.environ.get(ROOT_ENV)
    else Path(__file__).resolve().parents[2] / PACKAGE
)

# The rank of every part, lowest first. A module may import its own part and parts of a lower
# rank only; two parts of one rank never import each other. The package's face (its
# ``__init__``) stands above everything: nothing inside imports it.
RANKS: dict[str, int] = {
    "boundary": 0,  # text, numbers, secrets and logs at the edges: imports nothing of ours
    "version": 0,
    "errors": 1,
    "golden": 2,
    "settings": 2,
    "evidence": 3,
    "probes": 3,
    "scoring": 3,
    "store": 4,
    "session": 5,
    "report": 6,
    "cli": 7,
    "plugin": 7,
    "testing": 7,  # shipped for users' tests; nothing imports it
    "": 8,  # pytest_screeneval/__init__.py, the public face
}

# Each pure part's allowlist: the parts of ours and the libraries it may import (the standard
# library always). None of them may import pytest, the CLI, the session, the plugin or settings
# unless named here.
ALLOWED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "boundary": (frozenset(), frozenset()),
    "errors": (frozenset({"boundary"}), frozenset()),
    "settings": (frozenset({"errors"}), frozenset()),
    "golden": (frozenset({"boundary", "errors"}), frozenset({"yaml", "phonenumbers"})),
    "evidence": (frozenset({"errors", "golden"}), frozenset({"yaml"})),
    "probes": (frozenset({"errors", "golden"}), frozenset({"hypothesis"})),
    "scoring.protocol": (frozenset({"errors", "golden"}), frozenset()),
    "store": (
        frozenset({"boundary", "errors", "golden", "scoring.protocol"}),
        frozenset({"sqlalchemy", "alembic"}),
    ),
}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = (PACKAGE, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules(root: Path = ROOT) -> dict[str, Path]:
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


@functools.cache
def _import_nodes(source: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements of a module's source, parsed once per text (the tests read the
    tree and copies of it many times; a copy's unchanged files are the same texts)."""
    return tuple(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
    )


def imported(module: str, path: Path, known: Mapping[str, Path]) -> Iterator[tuple[str, int]]:
    """(dotted name, line) of everything a module imports, ours resolved to a module."""
    is_package = path.name == "__init__.py"
    for node in _import_nodes(path.read_text(encoding="utf-8")):
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


def part_of(name: str) -> str:
    """The part a module of ours belongs to: ``store``, ``scoring.protocol``, "" (the face)."""
    parts = name.split(".")[1:]
    if parts[:2] == ["scoring", "protocol"]:
        return "scoring.protocol"
    return parts[0] if parts else ""


def rank_of(part: str) -> int:
    return RANKS["scoring" if part == "scoring.protocol" else part]


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """Each module of the package -> the modules of the package it imports (with a line)."""
    known = package_modules(root)
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


def rank_violations(root: Path = ROOT) -> list[str]:
    """Every import from a part to a part of its own rank or higher."""
    wrong = []
    for module, targets in import_graph(root).items():
        here = part_of(module)
        for target, line in targets.items():
            there = part_of(target)
            if {here, there} == {"scoring", "scoring.protocol"} or here == there:
                continue
            if rank_of(there) >= rank_of(here):
                wrong.append(
                    f"{module} imports {target} (line {line}): {there or 'the package face'} "
                    f"is rank {rank_of(there)}, {here or 'the package face'} is {rank_of(here)}"
                )
    return sorted(wrong)


def allowlist_violations(root: Path = ROOT) -> list[str]:
    """Every import of a pure part that its allowlist does not name."""
    known = package_modules(root)
    wrong = []
    for module, path in known.items():
        here = part_of(module)
        if here not in ALLOWED:
            continue
        parts, libraries = ALLOWED[here]
        for name, line in imported(module, path, known):
            top = name.split(".")[0]
            if ours(name):
                there = part_of(name)
                if there != here and there not in parts:
                    wrong.append(f"{module} imports {name} (line {line}): {here} may not")
            elif top not in (*sys.stdlib_module_names, "__future__", *libraries):
                wrong.append(f"{module} imports {top} (line {line}): {here} may not")
    return sorted(set(wrong))


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


def test_every_part_has_a_rank() -> None:
    parts = {part_of(module) for module in package_modules()}
    assert parts - {"scoring.protocol"} <= set(RANKS), sorted(parts - set(RANKS))


def test_the_arrows_point_down_the_ranks() -> None:
    wrong = rank_violations()
    assert not wrong, "\n".join(wrong)


def test_each_pure_part_imports_only_its_allowlist() -> None:
    wrong = allowlist_violations()
    assert not wrong, "\n".join(wrong)


# one outward import each, added on a copy of the tree: the layout test must fail on each
OUTWARD = [
    ("evidence/noise.py", "from pytest_screeneval.settings.options import OPTIONS"),
    ("store/values.py", "from pytest_screeneval.report import json"),
    ("scoring/keyword.py", "from pytest_screeneval.testing import chat_server"),
    ("golden/model.py", "import pytest"),
    ("probes/draw.py", "from pytest_screeneval.session import core"),
    ("session/plan.py", "from pytest_screeneval.cli import main"),
    ("report/diff.py", "from pytest_screeneval.plugin import hooks"),
]


def _copy_with(tmp_path: Path, *mutations: tuple[str, str]) -> Path:
    copy = tmp_path / PACKAGE
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for module, line in mutations:
        target = copy / module
        target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    return copy


def _dotted(module: str) -> str:
    return f"{PACKAGE}." + module.removesuffix(".py").replace("/", ".")


def test_the_checks_fail_on_each_outward_import(tmp_path: Path) -> None:
    # one copy holding every mutation, read once: each is a module of its own, and each must be
    # named (a copy per mutation read the tree seven times, most of this folder's time)
    copy = _copy_with(tmp_path, *OUTWARD)
    found = rank_violations(copy) + allowlist_violations(copy)
    missed = [
        m for m, _ in OUTWARD if not any(v.startswith(_dotted(m) + " imports") for v in found)
    ]
    assert not missed, (missed, found)


def test_the_unchanged_copy_passes(tmp_path: Path) -> None:
    copy = _copy_with(tmp_path)
    assert rank_violations(copy) == [] and allowlist_violations(copy) == []


ARCHITECTURE = Path(__file__).resolve().parents[2] / "ARCHITECTURE.md"
LONG_MODULE = 600  # lines: a module longer than this is named in ARCHITECTURE.md with its reason


def _named_paths(text: str) -> set[str]:
    """Every `file.py` or `folder/` path ARCHITECTURE.md names (outside tests/ and scripts/)."""
    return {
        name
        for name in re.findall(r"`([^`\s]+)`", text)
        if name.endswith(("/", ".py")) and not name.startswith(("tests/", "scripts/", "."))
    }


def test_architecture_names_only_files_that_exist() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    modules = {str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")}
    folders = {str(p.relative_to(ROOT)) + "/" for p in ROOT.rglob("*") if p.is_dir()}
    # a file may be named within its folder's paragraph (`runs.py` under `store/`)
    known = modules | folders
    missing = [
        name
        for name in _named_paths(text)
        if name not in known
        and not any(k.endswith("/" + name) for k in known)
        and not (ARCHITECTURE.parent / name).exists()  # named from the repository's root
    ]
    assert not missing, f"ARCHITECTURE.md names files that do not exist: {sorted(missing)}"


def test_every_long_module_is_explained() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Modules over 600 lines", 1)
    assert len(section) == 2, "ARCHITECTURE.md has no 'Modules over 600 lines' section"
    explained = section[1].split("\n## ", 1)[0]
    long = [
        str(path.relative_to(ROOT))
        for path in sorted(ROOT.rglob("*.py"))
        if len(path.read_text(encoding="utf-8").splitlines()) > LONG_MODULE
    ]
    unexplained = [name for name in long if f"`{name}`" not in explained]
    assert not unexplained, f"over {LONG_MODULE} lines and not explained: {unexplained}"
