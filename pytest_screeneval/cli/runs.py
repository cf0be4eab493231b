"""``screeneval runs | show | accept``: the recorded runs and which one is the baseline."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.cli.common import open_store, out, run_argument, table, when
from pytest_screeneval.golden.model import ORIGINAL
from pytest_screeneval.report.run_verdict import (
    acceptance_phrase,
    gate_status_cell,
    replacements,
    verdict_summary,
)
from pytest_screeneval.session.acceptance import accept_run, acceptance_blockers
from pytest_screeneval.settings.validators import non_empty, positive_int

if TYPE_CHECKING:
    from pytest_screeneval.store.database import RunRecord, ScoreRow

__all__ = [
    "accept",
    "accept_arguments",
    "describe_run",
    "runs",
    "runs_arguments",
    "show",
    "show_arguments",
]

_MAX_ERRORS_SHOWN = 20
# how far back `show` looks for the acceptance that replaced a baseline
_RUNS_SEARCHED = 10_000


def runs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=positive_int, default=50, help="how many runs (default 50)")


def runs(args: argparse.Namespace) -> int:
    with open_store(args, read_only=True) as store:
        found = store.list_runs(limit=args.limit)
    if not found:
        out("no runs yet")
        return 0
    replaced = replacements(found)
    rows = [
        (
            str(run.run_id),
            run.status,
            gate_status_cell(run.verdict),
            run.scorer,
            run.model_id,
            when(run.started_at),
            when(run.finished_at),
            acceptance_phrase(run, replaced),
        )
        for run in found
    ]
    header = ("id", "status", "gates", "scorer", "model", "started", "finished", "accepted by")
    for line in table(header, rows):
        out(line)
    return 0


def show_arguments(parser: argparse.ArgumentParser) -> None:
    run_argument(parser)
    parser.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text (default), or the Markdown summary CI shows (--screeneval-markdown)",
    )


def show(args: argparse.Namespace) -> int:
    if args.format == "markdown":
        from pytest_screeneval.report.markdown_run import markdown_of_run

        with open_store(args, read_only=True) as store:
            text = markdown_of_run(store, args.run_id)
        out(text.rstrip("\n"))
        return 0
    with open_store(args, read_only=True) as store:
        run = store.get_run(args.run_id)
        rows = store.scores(run.run_id)
        baseline_rows = store.scores(run.baseline_run_id) if run.baseline_run_id else []
        # the acceptance that replaced this run as the baseline, if one did
        later = store.list_runs(limit=_RUNS_SEARCHED) if run.accepted else []
    for line in describe_run(run, rows, replacements(later).get(run.run_id), baseline_rows):
        out(line)
    return 0


def describe_run(
    run: RunRecord,
    rows: Sequence[ScoreRow],
    replaced_by: int | None = None,
    baseline_rows: Sequence[ScoreRow] = (),
) -> list[str]:
    """The lines of ``screeneval show``: identity, status, gates, counts, what the provider
    served, acceptance, errors."""
    served = f", served {run.served_model}" if run.served_model else ""
    lines = [
        f"run {run.run_id}: {run.status}",
        f"  scorer       {run.scorer} (model {run.model_id}{served}, "
        f"temperature {run.temperature:g})",
        f"  prompt sha   {run.prompt_sha}",
        f"  rubric       {run.rubric_id} (sha {run.rubric_sha})",
        f"  golden sha   {run.golden_sha}",
        f"  started      {run.started_at}",
        f"  finished     {run.finished_at or '-'}",
        f"  plugin       {run.plugin_version}, commit {run.vcs_commit or '-'}",
        f"  baseline     {f'run {run.baseline_run_id}' if run.baseline_run_id else '-'}",
    ]
    lines.append(f"  gates        {verdict_summary(run.verdict)}")
    if run.selection:
        lines.append(f"  selection    {run.selection}")
    if run.notes:
        lines.append(f"  notes        {run.notes}")
    errors = [row for row in rows if row.error]
    cases = {row.case_id for row in rows}
    variants = {row.variant_key for row in rows if row.variant_key != ORIGINAL}
    repeats = {row.repeat_index for row in rows}
    reused = sum(1 for row in rows if row.reused_from_run is not None)
    lines.append(
        f"  scores       {len(rows)} rows: {len(cases)} cases, {len(variants)} variants, "
        f"{len(repeats)} repeat(s), {len(errors)} errors, {reused} reused"
    )
    from pytest_screeneval.report.audit_noise import served_of_rows

    backend = served_of_rows(rows, baseline_rows, run.baseline_run_id)
    if backend.fingerprints:
        lines.append(f"  served by    {backend.describe()}")
        lines += [f"  FLAG         {flag}" for flag in backend.flags()]
    if run.accepted:
        accepted = run.accepted
        previous = (
            f", replaced run {accepted.previous_baseline_run_id}"
            if accepted.previous_baseline_run_id
            else ""
        )
        forced = " (forced)" if accepted.forced else ""
        note = f": {accepted.note}" if accepted.note else ""
        lines.append(
            f"  accepted     by {accepted.accepted_by} at {accepted.accepted_at}"
            f"{forced}{previous}{note}"
        )
        if replaced_by is not None:
            lines.append(f"  baseline     no longer: replaced by run {replaced_by}")
    else:
        lines.append("  accepted     no")
    gates = (run.verdict or {}).get("gates") or []
    if gates:
        lines.append("gates:")
        lines += table(
            ("  gate", "status", "value", "limit", "n"),
            [
                (
                    f"  {g.get('name')}",
                    str(g.get("status")),
                    "-" if g.get("value") is None else f"{g['value']:.1f}",
                    str(g.get("limit")),
                    str(g.get("n")),
                )
                for g in gates
            ],
        )
    if errors:
        lines.append("errors:")
        for row in errors[:_MAX_ERRORS_SHOWN]:
            variant = f" [{row.variant_key}]" if row.variant_key else ""
            lines.append(
                f"  {row.case_id}{variant} {row.criterion} (repeat {row.repeat_index}): {row.error}"
            )
        if len(errors) > _MAX_ERRORS_SHOWN:
            lines.append(f"  ... and {len(errors) - _MAX_ERRORS_SHOWN} more")
    return lines


def accept_arguments(parser: argparse.ArgumentParser) -> None:
    run_argument(parser)
    parser.add_argument("--by", required=True, type=non_empty, help="who accepts it")
    parser.add_argument("--note", required=True, help="why it may become the baseline")
    parser.add_argument(
        "--force", action="store_true", help="accept despite failed gates (the note says why)"
    )


def accept(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        acceptance, overridden = accept_run(
            store,
            args.run_id,
            by=args.by,
            note=args.note,
            force=args.force,
            check=acceptance_blockers,
        )
    previous = acceptance.previous_baseline_run_id
    replaces = f", replacing run {previous}" if previous else ""
    by = acceptance.accepted_by
    out(f"run {acceptance.run_id} is the baseline now (accepted by {by}{replaces})")
    if overridden:
        out(f"forced past: {'; '.join(overridden)}")
    return 0
