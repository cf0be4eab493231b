"""``screeneval review``: record that a person read a case that moved against the baseline."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.boundary.documents import safe_string
from pytest_screeneval.cli.common import open_store, out, run_argument
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import DECISION, ORIGINAL
from pytest_screeneval.settings.validators import non_empty

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Rubric
    from pytest_screeneval.store.database import ScoreRow

__all__ = ["movement", "review", "review_arguments"]


def movement(
    rubric: Rubric | None,
    current: Sequence[ScoreRow],
    baseline: Sequence[ScoreRow],
    *,
    case_id: str,
    target: str,
    run_id: int,
    baseline_run_id: int,
) -> tuple[str, str]:
    """(before, after) of one case's criterion score or decision, written as the plugin
    matches reviews: the score as a number, the decision as 'advance' or 'hold'."""

    def original_scores(rows: Sequence[ScoreRow], which: int) -> dict[str, int | None]:
        found = {
            row.criterion: row.score
            for row in rows
            if row.case_id == case_id and row.variant_key == ORIGINAL and row.repeat_index == 0
        }
        if not found:
            raise ScreenevalError(f"Run {which} has no score for case {case_id}.")
        return found

    after_scores = original_scores(current, run_id)
    before_scores = original_scores(baseline, baseline_run_id)
    if target != DECISION:
        if rubric is not None and target not in rubric.criterion_names:
            raise ScreenevalError(
                f"Rubric {rubric.id} has no criterion {target!r} "
                f"(it has: {', '.join(rubric.criterion_names)})."
            )
        before, after = before_scores.get(target), after_scores.get(target)
        for score, which in ((before, baseline_run_id), (after, run_id)):
            if score is None:
                raise ScreenevalError(
                    f"Run {which} has no usable {target} score for case {case_id}."
                )
        if before == after:
            raise ScreenevalError(
                f"Nothing moved: case {case_id} scored {after} on {target} in run {run_id} "
                f"and in its baseline run {baseline_run_id}."
            )
        return str(before), str(after)
    if rubric is None:
        raise ScreenevalError(f"The store has no rubric for run {run_id}, so no decision.")
    decisions = []
    for scores, which in ((before_scores, baseline_run_id), (after_scores, run_id)):
        missing = [c for c in rubric.criterion_names if scores.get(c) is None]
        if missing:
            raise ScreenevalError(
                f"Run {which} has no usable score for {', '.join(missing)} of case {case_id}, "
                "so it has no decision."
            )
        overall = rubric.overall({c: float(scores[c] or 0) for c in rubric.criterion_names})
        decisions.append(rubric.decision(overall))
    decision_before, decision_after = decisions
    if decision_before == decision_after:
        raise ScreenevalError(
            f"Nothing moved: the decision for case {case_id} is {decision_after} in run {run_id} "
            f"and in its baseline run {baseline_run_id}."
        )
    return decision_before, decision_after


def review_arguments(parser: argparse.ArgumentParser) -> None:
    run_argument(parser)
    parser.add_argument("case_id", metavar="CASE", help="the case id")
    parser.add_argument(
        "criterion",
        metavar="CRITERION",
        nargs="?",
        default=DECISION,
        help="the criterion that moved (default: the decision)",
    )
    parser.add_argument("--by", required=True, type=non_empty, help="who read it")
    parser.add_argument(
        "--note", required=True, type=non_empty, help="what they concluded, and why"
    )


def review(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        run = store.get_run(args.run_id)
        if run.baseline_run_id is None:
            raise ScreenevalError(
                f"Run {run.run_id} was not compared with a baseline, so it has no movement "
                "to review."
            )
        rubric = store.get_rubric(run.rubric_id, run.rubric_sha) or store.get_rubric(run.rubric_id)
        before, after = movement(
            rubric,
            store.scores(run.run_id),
            store.scores(run.baseline_run_id),
            case_id=args.case_id,
            target=args.criterion,
            run_id=run.run_id,
            baseline_run_id=run.baseline_run_id,
        )
        review = store.add_review(
            run_id=run.run_id,
            case_id=args.case_id,
            target=args.criterion,
            baseline_run_id=run.baseline_run_id,
            before=before,
            after=after,
            by=safe_string(args.by),  # typed by a person: no control character, no secret
            note=safe_string(args.note),
        )
    out(
        f"recorded: {review.reviewed_by} reviewed case {review.case_id} {review.target} "
        f"{review.before} -> {review.after} against baseline run {review.baseline_run_id}"
    )
    return 0
