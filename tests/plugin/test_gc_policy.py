"""When the garbage collector runs during a session (plugin.gc_policy), and that it comes back."""

from __future__ import annotations

import gc
import json

import pytest
from support.plugin_project import write_project

from pytest_screeneval.plugin import gc_policy

# records, in the project's own process, what the collector was doing at each moment
RECORDER = """
import gc, json, pathlib

seen = {"collecting": [], "items": []}


def pytest_collect_file(file_path, parent):
    seen["collecting"].append(gc.isenabled())


def pytest_runtest_setup(item):
    seen["items"].append([gc.isenabled(), gc.get_threshold()[0]])


def pytest_unconfigure(config):
    pathlib.Path("gc_seen.json").write_text(json.dumps(seen))
"""


def test_collection_pauses_the_collector_and_items_run_with_wider_young_passes(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + RECORDER)
    before = gc.get_threshold()
    assert gc.isenabled()
    result = pytester.runpytest_inprocess("--screeneval")
    assert result.ret == 0, result.stdout.str()
    seen = json.loads((pytester.path / "gc_seen.json").read_text())
    assert seen["collecting"] and not any(seen["collecting"])
    assert seen["items"]
    assert all(
        on and young == gc_policy.YOUNG_THRESHOLD_DURING_ITEMS for on, young in seen["items"]
    )
    # all of it given back to this process, which lives on: state, thresholds, frozen objects
    assert gc.isenabled() and gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_paused_collector_comes_back_as_it_was_even_on_an_error() -> None:
    gc.disable()
    try:
        with gc_policy.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), gc_policy.collector_paused():
        raise RuntimeError("collection failed")
    assert gc.isenabled()


def test_wider_young_passes_are_restored_and_never_narrow_a_users() -> None:
    before = gc.get_threshold()
    try:
        restore = gc_policy.widen_young_passes()
        assert gc.get_threshold() == (gc_policy.YOUNG_THRESHOLD_DURING_ITEMS, *before[1:])
        restore()
        assert gc.get_threshold() == before
        gc.set_threshold(50_000, *before[1:])  # a user who set a wider one keeps it
        gc_policy.widen_young_passes()()
        assert gc.get_threshold()[0] == 50_000
    finally:
        gc.set_threshold(*before)
