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

__all__ = ["MeasuredRows", "WorkerOutput"]

# attribute (or perturbation kind) -> case id -> the row it measured (plain values)
MeasuredRows = Mapping[str, Mapping[str, Mapping[str, object]]]


@dataclass(frozen=True)
class WorkerOutput:
    write_error: str | None  # the worker's last rows could not be stored: the run is partial
    needs: tuple[ItemNeed, ...]  # the items it ran
    counterfactual: MeasuredRows
    perturbation: MeasuredRows
    movements: tuple[tuple[str, str, str], ...]  # (case, criterion, what confirmation concluded)
    scorer_calls: int
    warnings: tuple[str, ...]
    served_models: tuple[str, ...]

    def to_wire(self) -> dict[str, object]:
        return {
            "write_error": self.write_error,
            "needs": [[n.case_id, n.kind.value, n.target] for n in self.needs],
            "counterfactual": _plain_rows(self.counterfactual),
            "perturbation": _plain_rows(self.perturbation),
            "movements": [list(row) for row in self.movements],
            "scorer_calls": self.scorer_calls,
            "warnings": list(self.warnings),
            "served_models": list(self.served_models),
        }

    @classmethod
    def from_wire(cls, wire: Mapping[str, object]) -> WorkerOutput:
        try:
            write_error = wire.get("write_error")
            calls = wire["scorer_calls"]
            if not isinstance(calls, int) or not (
                write_error is None or isinstance(write_error, str)
            ):
                raise TypeError
            return cls(
                write_error=write_error,
                needs=tuple(
                    ItemNeed(case_id, ItemKind(kind), target)
                    for case_id, kind, target in _triples(wire["needs"])
                ),
                counterfactual=_rows(wire["counterfactual"]),
                perturbation=_rows(wire["perturbation"]),
                movements=_triples(wire.get("movements") or []),
                scorer_calls=calls,
                warnings=_strings(wire["warnings"]),
                served_models=_strings(wire["served_models"]),
            )
        except (KeyError, TypeError, ValueError):
            raise ScreenevalError(
                "An xdist worker sent an output this version cannot read; "
                "install the same pytest-screeneval on every worker."
            ) from None


def _plain_rows(rows: MeasuredRows) -> dict[str, dict[str, dict[str, object]]]:
    return {
        name: {case: dict(row) for case, row in by_case.items()} for name, by_case in rows.items()
    }


def _rows(value: object) -> dict[str, dict[str, dict[str, object]]]:
    if not isinstance(value, Mapping):
        raise TypeError
    rows: dict[str, dict[str, dict[str, object]]] = {}
    for name, by_case in value.items():
        if not isinstance(by_case, Mapping):
            raise TypeError
        rows[str(name)] = {}
        for case, row in by_case.items():
            if not isinstance(row, Mapping):
                raise TypeError
            rows[str(name)][str(case)] = {str(k): v for k, v in row.items()}
    return rows


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
