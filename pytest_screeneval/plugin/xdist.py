"""pytest-xdist support: one run row, workers score their own cases, the controller decides.

The controller opens the run before the workers start and hands them its id; each worker scores
the inputs of the cases it is given (a case's items never split across workers: the scheduler
groups them by case) and writes its rows; at the end each worker sends what it measured (the
items it ran, counterfactual gaps, perturbation shifts) and the controller rebuilds the results
from the store, computes the gates and prints the summary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_screeneval.errors import ScreenevalError

if TYPE_CHECKING:
    from pytest_screeneval.plugin.completeness import Completeness
    from pytest_screeneval.session.core import ScreenevalSession
    from pytest_screeneval.session.worker_output import WorkerOutput

__all__ = [
    "RUN_ID_KEY",
    "WORKER_OUTPUT_KEY",
    "ControllerPlugin",
    "assigned_run",
    "is_controller",
    "is_worker",
    "send_to_controller",
    "upcoming_cases",
]

RUN_ID_KEY = "screeneval_run_id"
WORKER_OUTPUT_KEY = "screeneval"


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def assigned_run(config: pytest.Config) -> tuple[int, int]:
    """On a worker: the run id its controller opened, and how many workers share it."""
    given: dict[str, object] = getattr(config, "workerinput", {})
    run_id, workers = given.get(RUN_ID_KEY), given.get("workercount", 1)
    assert isinstance(run_id, int) and isinstance(workers, int), "set by ControllerPlugin"
    return run_id, max(1, workers)


def send_to_controller(config: pytest.Config, output: WorkerOutput) -> None:
    outbox: dict[str, object] = getattr(config, "workeroutput", {})
    outbox[WORKER_OUTPUT_KEY] = output.to_wire()


def is_controller(config: pytest.Config) -> bool:
    return not is_worker(config) and getattr(config.option, "dist", "no") != "no"


def upcoming_cases(session: pytest.Session) -> Callable[[], list[str]]:
    """On a worker: the case ids of the items already sent to it and not yet run, in order.

    xdist hands a worker whole cases (one scope each) ahead of time; queueing their texts as
    soon as the first item of any case runs keeps the worker's runner busy ahead of its items.
    """
    interactor = next(
        (p for p in session.config.pluginmanager.get_plugins() if hasattr(p, "torun")), None
    )

    def upcoming() -> list[str]:
        if interactor is None:
            return []
        with interactor.torun.lock() as queued:
            indices = [i for i in queued if isinstance(i, int)]
        nxt = getattr(interactor, "nextitem_index", None)
        if isinstance(nxt, int):
            indices.insert(0, nxt)
        cases = (getattr(session.items[i], "case", None) for i in indices)
        return list(dict.fromkeys(case.id for case in cases if case is not None))

    return upcoming


class ControllerPlugin:
    """Registered on the xdist controller while ``--screeneval`` is on."""

    def __init__(self, screeneval: ScreenevalSession, completeness: Completeness) -> None:
        self.screeneval = screeneval
        self.completeness = completeness

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # Items of one case share its scored inputs: keep them on one worker.
        from pytest_screeneval.plugin.case_scheduling import CaseScheduling

        return CaseScheduling(config, log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[RUN_ID_KEY] = self.screeneval.run_id

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        wire = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
        if not wire:
            return  # a worker stopped by Ctrl-C sends nothing back
        from pytest_screeneval.session.worker_output import WorkerOutput

        try:
            output = WorkerOutput.from_wire(wire)
        except ScreenevalError as exc:
            self.completeness.write_error(str(exc))
            return
        self.screeneval.merge_worker_output(output)
        if output.write_error:
            self.completeness.write_error(output.write_error)
