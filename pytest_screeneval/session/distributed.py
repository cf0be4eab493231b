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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import DECISION, ORIGINAL, ItemKind
from pytest_screeneval.session.scores import ItemNeed
from pytest_screeneval.session.worker_output import WorkerOutput

if TYPE_CHECKING:
    from pytest_screeneval.session.baseline_confirm import BaselineConfirmation
    from pytest_screeneval.session.fairness import Fairness
    from pytest_screeneval.session.rationale_judging import RationaleJudging
    from pytest_screeneval.session.run import RunLog
    from pytest_screeneval.session.scores import Scores

__all__ = ["SharedParts", "WorkerCases", "needs_from_rows"]


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


@dataclass(frozen=True)
class SharedParts:
    """The parts of a session whose state crosses from an xdist worker to its controller: what
    a worker sends at the end, and how the controller takes it in."""

    run: RunLog
    scores: Scores
    fairness: Fairness
    movements: BaselineConfirmation
    judging: RationaleJudging | None  # the rationale judge, when one is configured

    def output(self, ran: Sequence[ItemNeed], warnings: Sequence[str]) -> WorkerOutput:
        """The worker's last rows stored (a failure is said, not raised: the controller closes
        the run as partial, saying it), then what it ran and concluded."""
        write_error: str | None = None
        try:
            self.run.flush(force=True)
        except ScreenevalError as exc:
            write_error = f"the last score rows of a worker could not be stored ({exc})"
        if write_error is None and self.run.write_errors:
            write_error = "; ".join(self.run.write_errors)
        return WorkerOutput(
            write_error=write_error,
            needs=tuple(ran),
            fairness_outcomes=self.fairness.output(),
            movements=self.movements.output(),
            scorer_calls=self.scores.calls,
            warnings=tuple(warnings),
            served_models=tuple(sorted(self.scores.served())),
            judge_counts=self.judging.counts() if self.judging is not None else (0, 0, 0, 0),
            judge_store_error=self.judging.store_error if self.judging is not None else None,
        )

    def merge(self, output: WorkerOutput, needs: list[ItemNeed], warnings: list[str]) -> None:
        """On the controller: one worker's output taken in (its items, outcomes, calls)."""
        needs.extend(output.needs)
        self.fairness.merge(output.fairness_outcomes)
        self.movements.merge(output.movements)
        self.scores.add_worker_calls(output.scorer_calls, output.served_models)
        warnings.extend(w for w in output.warnings if w not in warnings)
        if self.judging is not None:
            self.judging.add_counts(output.judge_counts, output.judge_store_error)
