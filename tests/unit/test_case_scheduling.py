"""The xdist scheduler of a run: after a worker crashes, its replacement gets work it can run.

Driven like xdist's controller drives it (nodes join, collect, run items, one crashes, a
replacement joins), with stand-in nodes that record what they are sent. With xdist 3.8's own
load-scope scheduler in ``SCHEDULING``'s place, both tests fail: that is how it hangs a run.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pytest_screeneval.plugin.case_scheduling import CaseScheduling

SCHEDULING = CaseScheduling


def collection(cases: int, items: int = 3) -> list[str]:
    return [f"cases/a/aa-{case:03d}.yaml::item{i}" for case in range(cases) for i in range(items)]


class StandInNode:
    """What the scheduler uses of xdist's WorkerController."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True

    @property
    def items(self) -> list[int]:
        return [index for batch in self.sent for index in batch]

    def __repr__(self) -> str:
        return f"<{self.gateway.id}>"


class StandInConfig:
    option = SimpleNamespace(loadscopereorder=False)

    def getvalue(self, name: str) -> Any:
        assert name == "tx"
        return ["2*popen"]


def started(cases: list[str]) -> tuple[Any, StandInNode, StandInNode]:
    sched = SCHEDULING(StandInConfig())  # type: ignore[arg-type]
    first, second = StandInNode("gw0"), StandInNode("gw1")
    for node in (first, second):
        sched.add_node(node)
        sched.add_node_collection(node, cases)
    sched.schedule()
    return sched, first, second


def run(sched: Any, node: StandInNode, count: int) -> None:
    """The node runs its first ``count`` items, in the order it was sent them (more may come
    as it goes)."""
    for position in range(count):
        sched.mark_test_complete(node, node.items[position])


def replaced(sched: Any, crashed: StandInNode, cases: list[str]) -> StandInNode:
    sched.remove_node(crashed)
    replacement = StandInNode("gw2")
    sched.add_node(replacement)
    sched.add_node_collection(replacement, cases)
    sched.schedule()
    return replacement


def test_a_finished_case_of_a_crashed_worker_is_not_handed_out_again() -> None:
    cases = collection(4)
    sched, first, second = started(cases)
    run(sched, first, 4)  # its first case finished, one item of its next one, then it crashes
    done, not_run = first.items[:4], first.items[4:]
    assert len(not_run) >= 2
    replacement = replaced(sched, first, cases)
    assert [] not in replacement.sent
    assert set(replacement.items).isdisjoint(done)
    # what the crashed worker had not run goes to the replacement (or gw1), once
    after_crash = replacement.items + second.items
    assert all(after_crash.count(index) == 1 for index in not_run)


def test_a_replacement_holding_one_item_is_told_to_stop_so_it_runs_it() -> None:
    cases = collection(2)  # one case each: the queue is empty from the start
    sched, first, _ = started(cases)
    run(sched, first, 2)  # it crashes on the last item of its case
    replacement = replaced(sched, first, cases)
    # a worker runs an item once it knows the next one or that there is none
    assert replacement.items == [first.items[2]]
    assert replacement.shutting_down
