"""The session's side of pytest-xdist: what a worker streams, sends back, and the controller
rebuilds.

A worker is given whole cases, one scope at a time; :class:`WorkerCases` holds the needs of the
cases it was given and hands over, when the first item of a case runs, that case's and those of
every case already waiting in its queue, so the worker's runner keeps ahead of its items. At the
end the worker sends one :class:`~pytest_screeneval.session.worker_output.WorkerOutput`; the
controller merges each and rebuilds the results from the rows the workers stored
(``needs_from_rows`` when no worker could answer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pytest_screeneval.golden.model import DECISION, ORIGINAL, ItemKind
from pytest_screeneval.session.scores import ItemNeed

__all__ = ["WorkerCases", "needs_from_rows"]


class WorkerCases:
    """On an xdist worker: the needs of its cases not yet queued, by case."""

    def __init__(self, needs: Sequence[ItemNeed], upcoming: Callable[[], list[str]]) -> None:
        self._pending: dict[str, list[ItemNeed]] = {}
        for need in needs:
            self._pending.setdefault(need.case_id, []).append(need)
        self._upcoming = upcoming

    def due(self, case_id: str) -> list[list[ItemNeed]]:
        """The needs to queue now: this case's and every case already sent to the worker."""
        if not self._pending:
            return []
        due = []
        for upcoming in [case_id, *self._upcoming()]:
            pending = self._pending.pop(upcoming, None)
            if pending:
                due.append(pending)
        return due


def needs_from_rows(
    results: Iterable[tuple[str, str, int]], criterion_names: Sequence[str]
) -> list[ItemNeed]:
    """The items the stored rows stand for, when no worker said which ran (stopped by Ctrl-C):
    each scored case's criteria and decision."""
    scored = sorted({case_id for case_id, variant, _ in results if variant == ORIGINAL})
    return [
        ItemNeed(case_id, ItemKind.CRITERION, criterion)
        for case_id in scored
        for criterion in criterion_names
    ] + [ItemNeed(case_id, ItemKind.DECISION, DECISION) for case_id in scored]
