"""What an xdist worker sends its controller survives the wire, and a value of another shape is
one sentence, not a KeyError in the summary."""

from __future__ import annotations

import json

import pytest

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import ItemKind
from pytest_screeneval.session.scores import ItemNeed
from pytest_screeneval.session.worker_output import WorkerOutput

OUTPUT = WorkerOutput(
    write_error=None,
    needs=(ItemNeed("al-001", ItemKind.CRITERION, "skills"),),
    fairness_outcomes=(("counterfactual", "name", "al-001", "passed"),),
    movements=(("al-001", "skills", "confirmed"),),
    scorer_calls=14,
    warnings=("a warning",),
    served_models=("acme-screener-2025-03-01",),
    judge_counts=(5, 2, 1, 1),
    judge_store_error="The store x failed: disk I/O error.",
)


def test_an_output_comes_back_equal_through_json() -> None:
    wire = json.loads(json.dumps(OUTPUT.to_wire()))
    assert WorkerOutput.from_wire(wire) == OUTPUT


def test_a_worker_without_a_judge_sends_zero_counts() -> None:
    wire = OUTPUT.to_wire()
    del wire["judge_counts"], wire["judge_store_error"]
    back = WorkerOutput.from_wire(wire)
    assert back.judge_counts == (0, 0, 0, 0) and back.judge_store_error is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("judge_counts", [1, 2, 3]),
        ("judge_counts", [1, 2, 3, -1]),
        ("judge_counts", [1, 2, True, 0]),
        ("judge_store_error", 7),
        ("write_error", ["no"]),
        ("scorer_calls", "14"),
    ],
)
def test_a_field_of_another_shape_is_one_sentence(field: str, value: object) -> None:
    wire = OUTPUT.to_wire() | {field: value}
    with pytest.raises(ScreenevalError, match="An xdist worker sent an output this version"):
        WorkerOutput.from_wire(wire)
