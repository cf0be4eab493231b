"""``screeneval report | diff``: a run's audit report, and the movement between two runs."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pytest_screeneval.cli.common import open_store, out, run_argument
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.settings.validators import non_empty, non_negative_float, positive_int

__all__ = [
    "FINAL_DECISION_ENV",
    "diff",
    "diff_arguments",
    "final_decision_by",
    "report",
    "report_arguments",
]

FINAL_DECISION_ENV = "SCREENEVAL_FINAL_DECISION_BY"
# the run's own settings (in its stored config) that the audit report judges it by
_REPORT_LIMITS = {
    "expected_tolerance": "tolerance",
    "slice_min_n": "slice_min_n",
    "max_gap": "max_gap",
    "min_worst_slice": "min_worst_slice",
    "max_perturbation_shift": "max_perturbation_shift",
}


def report_arguments(parser: argparse.ArgumentParser) -> None:
    run_argument(parser)
    parser.add_argument("--html", metavar="PATH", help="write the self-contained audit page here")
    parser.add_argument("--json", metavar="PATH", help="write the audit document as JSON here")
    parser.add_argument(
        "--final-decision-by",
        metavar="TEXT",
        type=non_empty,
        help=f"who makes the final decision about a candidate (default: ${FINAL_DECISION_ENV}, "
        "else the plugin's default)",
    )


def final_decision_by(args: argparse.Namespace, recorded: object) -> str:
    """The flag, else the environment, else what the run recorded from its ini, else the default."""
    from pytest_screeneval.settings.options import OPTIONS

    chosen = args.final_decision_by or os.environ.get(FINAL_DECISION_ENV, "").strip()
    if chosen:
        return chosen
    if isinstance(recorded, str) and recorded.strip():
        return recorded
    return next(o.default for o in OPTIONS if o.name == "screeneval_final_decision_by")


def report(args: argparse.Namespace) -> int:
    if not args.html and not args.json:
        print("screeneval report: give --html PATH, --json PATH or both", file=sys.stderr)
        return 2
    from pytest_screeneval.report.audit import build_audit, write_audit_json
    from pytest_screeneval.report.html.page import write_html

    with open_store(args, read_only=True) as store:
        config = store.get_run(args.run_id).config
        limits = {
            name: config[key]
            for key, name in _REPORT_LIMITS.items()
            if isinstance(config.get(key), int | float) and not isinstance(config[key], bool)
        }
        document = build_audit(
            store,
            args.run_id,
            final_decision_by=final_decision_by(args, config.get("final_decision_by")),
            **limits,
        )
    for path, write in ((args.html, write_html), (args.json, write_audit_json)):
        if path:
            folder = Path(path).parent
            created = not folder.exists()
            try:
                write(document, Path(path))
            except OSError as exc:
                raise ScreenevalError(f"Cannot write {path} ({exc.strerror}).") from None
            if created:
                out(f"created the folder {folder}")
            out(f"wrote the audit report of run {args.run_id} to {path}")
    return 0


def diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", type=positive_int, metavar="BASE", help="the earlier run's id")
    parser.add_argument("cand", type=positive_int, metavar="CAND", help="the later run's id")
    parser.add_argument(
        "--tolerance",
        type=non_negative_float,  # finite: a NaN tolerance would agree with nothing
        default=None,
        help="distance to the expected score that counts as agreement (default: CAND's setting)",
    )


def diff(args: argparse.Namespace) -> int:
    from pytest_screeneval.report.diff import diff_lines, score_table

    with open_store(args, read_only=True) as store:
        base, cand = store.get_run(args.base), store.get_run(args.cand)
        golden = store.load_golden_set()
        tolerance = args.tolerance
        if tolerance is None:
            tolerance = float(cand.config.get("expected_tolerance", 1))
        lines = diff_lines(
            base,
            cand,
            score_table(store.scores(base.run_id)),
            score_table(store.scores(cand.run_id)),
            golden.cases,
            store.get_rubric(cand.rubric_id, cand.rubric_sha) or golden.rubric,
            tolerance,
            slice_min_n=int(cand.config.get("slice_min_n", 5)),
        )
    for line in lines:
        out(line)
    return 0
