"""The xdist scheduler of a screeneval run: whole cases to a worker, and no hang after a crash.

Items of one case share its scored inputs, so a case is one work unit (xdist's load-scope
scheduling, whose scope is the case file). pytest-xdist 3.8 has two faults on the path a
crashed worker takes, each of which leaves the run waiting forever instead of ending it
``partial`` (both fixed upstream after 3.8, unreleased when this was written):

- the crashed worker's units go back on the queue whole, the cases it had finished among them;
  a replacement given a finished case is sent no item and never asks for more, and the run
  never ends;
- a replacement given one unit of one item waits for a next item before it runs that one (a
  worker always runs an item knowing the next), but is told neither of one nor to stop.

This module is imported only on an xdist controller, by ``plugin.xdist``.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScopeScheduling

__all__ = ["CaseScheduling"]


class CaseScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
    """Load-scope scheduling by case file, sound when a worker crashes and is replaced."""

    def remove_node(self, node: Any) -> str | None:
        workload = self.assigned_work.pop(node)
        crashed_on: str | None = next(
            (nodeid for unit in workload.values() for nodeid, done in unit.items() if not done),
            None,
        )
        if crashed_on is None:
            return None  # a worker that finished its work, or one that never had any
        # only the cases with an item still to run go back on the queue
        for scope, unit in workload.items():
            if not all(unit.values()):
                self.workqueue[scope] = unit
        for other in self.assigned_work:
            self._reschedule(other)
        return crashed_on

    def schedule(self) -> None:
        rescheduling = self.collection is not None  # a replacement worker has joined
        super().schedule()
        if rescheduling:
            # A second round gives each worker a second unit, or, with the queue empty, the
            # word to stop: either lets a worker holding a single item run it.
            for node in self.nodes:
                self._reschedule(node)
