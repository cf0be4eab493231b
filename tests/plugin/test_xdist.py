"""The scorer-call counts read the same with -n 2 as in one process: the
controller, which sees only rows, counts a shared text's twin rows as shared, not as calls."""

from __future__ import annotations

import json

import pytest
from support.plugin_project import write_project

pytest_plugins = ["pytester"]


def calls_of(pytester: pytest.Pytester, *args: str) -> dict[str, int]:
    (pytester.path / "store.db").unlink(missing_ok=True)
    result = pytester.runpytest("--screeneval", "--screeneval-json", "run.json", *args)
    assert result.ret == 0, result.stdout.str()[-2000:]
    line = next(line for line in result.stdout.lines if line.startswith("scorer calls:"))
    calls: dict[str, int] = json.loads((pytester.path / "run.json").read_text())["calls"]
    assert f"{calls['deduplicated']} identical texts shared" in line
    assert f"({calls['attempts']} attempts)" in line
    return calls


def test_counts_agree_under_xdist(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    alone = calls_of(pytester)
    spread = calls_of(pytester, "-n", "2")
    assert alone["deduplicated"] > 0  # the project shares texts (a case's own name and no gap)
    keys = ("scored", "reused", "deduplicated", "needed_retries", "attempts")
    assert {k: spread[k] for k in keys} == {k: alone[k] for k in keys}
