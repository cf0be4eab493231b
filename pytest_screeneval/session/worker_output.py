"""What an xdist worker sends its controller at the end: one typed value, plain on the wire.

execnet carries only plain values (dicts, lists, strings, numbers), so the worker sends
``WorkerOutput.to_wire()`` and the controller reads it back with ``WorkerOutput.from_wire``,
which checks every field's shape: a worker of another version fails with one sentence, not with a
``KeyError`` deep in the summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import ItemKind
from pytest_screeneval.session.scores import ItemNeed

__all__ = ["FairnessOutcome", "WorkerOutput"]

# (item kind, attribute or perturbation kind, case id, what the item concluded)
FairnessOutcome = tuple[str, str, str, str]


@dataclass(frozen=True)
class WorkerOutput:
    write_error: str | None  # the worker's last rows could not be stored: the run is partial
    needs: tuple[ItemNeed, ...]  # the items it ran
    # the fairness items it ran: their figures come from the stored rows, as the audit's do
    fairness_outcomes: tuple[FairnessOutcome, ...]
    movements: tuple[tuple[str, str, str], ...]  # (case, criterion, what confirmation concluded)
    scorer_calls: int
    warnings: tuple[str, ...]
    served_models: tuple[str, ...]
    # the rationale judge's work on this worker: asked, reused, failed, not stored; and the
    # store's sentence when it refused a verdict (the controller's summary counts them all)
    judge_counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    judge_store_error: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "write_error": self.write_error,
            "needs": [[n.case_id, n.kind.value, n.target] for n in self.needs],
            "fairness_outcomes": [list(row) for row in self.fairness_outcomes],
            "movements": [list(row) for row in self.movements],
            "scorer_calls": self.scorer_calls,
            "warnings": list(self.warnings),
            "served_models": list(self.served_models),
            "judge_counts": list(self.judge_counts),
            "judge_store_error": self.judge_store_error,
        }

    @classmethod
    def from_wire(cls, wire: Mapping[str, object]) -> WorkerOutput:
        try:
            write_error = _optional_string(wire.get("write_error"))
            judge_error = _optional_string(wire.get("judge_store_error"))
            calls = wire["scorer_calls"]
            if not isinstance(calls, int):
                raise TypeError
            asked, reused, failed, unstored = _counts(wire.get("judge_counts") or [0, 0, 0, 0])
            return cls(
                write_error=write_error,
                needs=tuple(
                    ItemNeed(case_id, ItemKind(kind), target)
                    for case_id, kind, target in _triples(wire["needs"])
                ),
                fairness_outcomes=_quadruples(wire["fairness_outcomes"]),
                movements=_triples(wire.get("movements") or []),
                scorer_calls=calls,
                warnings=_strings(wire["warnings"]),
                served_models=_strings(wire["served_models"]),
                judge_counts=(asked, reused, failed, unstored),
                judge_store_error=judge_error,
            )
        except (KeyError, TypeError, ValueError):
            raise ScreenevalError(
                "An xdist worker sent an output this version cannot read; "
                "install the same pytest-screeneval on every worker."
            ) from None


def _quadruples(value: object) -> tuple[FairnessOutcome, ...]:
    if not isinstance(value, list | tuple):
        raise TypeError
    rows = []
    for row in value:
        a, b, c, d = _strings(row)
        rows.append((a, b, c, d))
    return tuple(rows)


def _optional_string(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError
    return value


def _counts(value: object) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise TypeError
    return tuple(int(v) for v in value)


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise TypeError
    return tuple(str(v) for v in value)


def _triples(value: object) -> tuple[tuple[str, str, str], ...]:
    if not isinstance(value, list | tuple):
        raise TypeError
    triples = []
    for row in value:
        a, b, c = _strings(row)
        triples.append((a, b, c))
    return tuple(triples)
