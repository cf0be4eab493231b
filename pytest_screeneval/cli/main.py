"""The ``screeneval`` command: the store's runs, acceptances, reviews and golden set.

Each subcommand is one :class:`Command` (its words, its arguments, its function) in ``COMMANDS``;
adding one (``diff``, ``report``, ``verify``) is adding an entry. Building the parser imports
nothing heavy, so ``screeneval --help`` is instant; SQLAlchemy loads when a command opens the
store. Exit status: 0 done, 1 refused (the one-sentence reason on stderr), 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.session.acceptance import accept_run, acceptance_blockers
from pytest_screeneval.settings.validators import non_empty as _non_empty
from pytest_screeneval.settings.validators import positive_int as _positive_int

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Rubric
    from pytest_screeneval.store.database import RunRecord, ScoreRow, Store

__all__ = [
    "COMMANDS",
    "DB_ENV",
    "Command",
    "build_parser",
    "main",
    "movement",
    "resolve_db_url",
]

DB_ENV = "SCREENEVAL_DB"
DECISION = "decision"
ORIGINAL = ""  # the variant key of a case's own text
_MAX_ERRORS_SHOWN = 20

# Given the store and the run about to be accepted, the reasons it should not be (failed gates,
# unreviewed crossings); an empty list lets the acceptance through.


@dataclass(frozen=True)
class Command:
    """One subcommand: ``words`` like ("cases", "import"), its arguments and what it runs."""

    words: tuple[str, ...]
    help: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    group_help: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def resolve_db_url(args: argparse.Namespace) -> str:
    """--db, else $SCREENEVAL_DB, else the default SQLite file under the current folder."""
    url = getattr(args, "db", None) or os.environ.get(DB_ENV)
    if url:
        return url
    from pytest_screeneval.store.database import default_url

    return default_url(Path.cwd())


def _open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    from pytest_screeneval.store.database import Store

    return Store.open(resolve_db_url(args), create=create)


def _out(line: str = "") -> None:
    print(line, file=sys.stdout)


def _when(timestamp: str | None) -> str:
    """An ISO timestamp shortened for a table: date and minutes, in UTC."""
    if not timestamp:
        return "-"
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%MZ")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), *(line(row) for row in rows)]


# --------------------------------------------------------------------------------------------
# cases import | export | retire
# --------------------------------------------------------------------------------------------


def _cases_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR", help="golden set folder (rubric.yaml, cases)")


def _cases_import(args: argparse.Namespace) -> int:
    from pytest_screeneval.golden.load import load_golden_set

    folder = Path(args.folder)
    # file names in messages as the user sees them: from here when the folder is below here
    inside = folder.resolve().is_relative_to(Path.cwd().resolve())
    golden = load_golden_set(folder.resolve(), relative_to=Path.cwd().resolve() if inside else None)
    with _open_store(args, create=True) as store:
        report = store.sync_golden_set(golden)
        where = store.masked_url
    parts = [
        f"{len(report.added)} added",
        f"{len(report.unchanged)} unchanged",
        f"{len(report.expectations_changed)} with new expectations",
        f"{len(report.ratings_changed)} with new ratings",
        f"{len(report.updated)} corrected",
        f"{len(report.retired)} retired",
    ]
    _out(f"imported {len(golden.cases)} cases from {args.folder} into {where}: {', '.join(parts)}")
    if report.missing:
        _out(
            f"{len(report.missing)} active case(s) in the store are not in {args.folder}: "
            f"{', '.join(report.missing)} (retire them with `screeneval cases retire`)"
        )
    return 0


def _cases_export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR", help="folder to write the golden set into")


def _cases_export(args: argparse.Namespace) -> int:
    from pytest_screeneval.golden.write import write_golden_set

    with _open_store(args) as store:
        golden = store.load_golden_set()
    write_golden_set(golden, Path(args.folder))
    retired = len(golden.cases) - len(golden.active_cases)
    _out(
        f"wrote rubric {golden.rubric.id}, the variants and {len(golden.cases)} cases "
        f"({retired} retired) to {args.folder}"
    )
    return 0


def _cases_retire_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case_id", metavar="CASE", help="the case id to retire")
    parser.add_argument("--by", required=True, type=_non_empty, help="who retires it")


def _cases_retire(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        store.retire_case(args.case_id, by=args.by)
    _out(f"retired case {args.case_id} (by {args.by}); its past scores stay in the store")
    return 0


# --------------------------------------------------------------------------------------------
# runs | show
# --------------------------------------------------------------------------------------------


def _runs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--limit", type=_positive_int, default=50, help="how many runs (default 50)"
    )


def _runs(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        runs = store.list_runs(limit=args.limit)
    if not runs:
        _out("no runs yet")
        return 0
    rows = [
        (
            str(run.run_id),
            run.status,
            run.scorer,
            run.model_id,
            _when(run.started_at),
            _when(run.finished_at),
            run.accepted.accepted_by if run.accepted else "-",
        )
        for run in runs
    ]
    header = ("id", "status", "scorer", "model", "started", "finished", "accepted by")
    for line in _table(header, rows):
        _out(line)
    return 0


def _run_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", type=_positive_int, help="the run id")


def _show(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        run = store.get_run(args.run_id)
        rows = store.scores(run.run_id)
    for line in describe_run(run, rows):
        _out(line)
    return 0


def describe_run(run: RunRecord, rows: Sequence[ScoreRow]) -> list[str]:
    """The lines of ``screeneval show``: identity, status, counts, acceptance, errors."""
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
    else:
        lines.append("  accepted     no")
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


# --------------------------------------------------------------------------------------------
# accept
# --------------------------------------------------------------------------------------------


def _accept_arguments(parser: argparse.ArgumentParser) -> None:
    _run_argument(parser)
    parser.add_argument("--by", required=True, type=_non_empty, help="who accepts it")
    parser.add_argument("--note", required=True, help="why it may become the baseline")
    parser.add_argument(
        "--force", action="store_true", help="accept despite failed gates (the note says why)"
    )


def _accept(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
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
    _out(f"run {acceptance.run_id} is the baseline now (accepted by {by}{replaces})")
    if overridden:
        _out(f"forced past: {'; '.join(overridden)}")
    return 0


# --------------------------------------------------------------------------------------------
# review
# --------------------------------------------------------------------------------------------


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
    before, after = decisions
    if before == after:
        raise ScreenevalError(
            f"Nothing moved: the decision for case {case_id} is {after} in run {run_id} "
            f"and in its baseline run {baseline_run_id}."
        )
    return before, after


def _review_arguments(parser: argparse.ArgumentParser) -> None:
    _run_argument(parser)
    parser.add_argument("case_id", metavar="CASE", help="the case id")
    parser.add_argument(
        "criterion",
        metavar="CRITERION",
        nargs="?",
        default=DECISION,
        help="the criterion that moved (default: the decision)",
    )
    parser.add_argument("--by", required=True, type=_non_empty, help="who read it")
    parser.add_argument(
        "--note", required=True, type=_non_empty, help="what they concluded, and why"
    )


def _review(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
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
            by=args.by,
            note=args.note,
        )
    _out(
        f"recorded: {review.reviewed_by} reviewed case {review.case_id} {review.target} "
        f"{review.before} -> {review.after} against baseline run {review.baseline_run_id}"
    )
    return 0


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------

FINAL_DECISION_ENV = "SCREENEVAL_FINAL_DECISION_BY"
# the run's own settings (in its stored config) that the audit report judges it by
_REPORT_LIMITS = {
    "expected_tolerance": "tolerance",
    "slice_min_n": "slice_min_n",
    "max_gap": "max_gap",
    "min_worst_slice": "min_worst_slice",
    "max_perturbation_shift": "max_perturbation_shift",
}


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    _run_argument(parser)
    parser.add_argument("--html", metavar="PATH", help="write the self-contained audit page here")
    parser.add_argument("--json", metavar="PATH", help="write the audit document as JSON here")
    parser.add_argument(
        "--final-decision-by",
        metavar="TEXT",
        type=_non_empty,
        help=f"who makes the final decision about a candidate (default: ${FINAL_DECISION_ENV}, "
        "else the plugin's default)",
    )


def _final_decision_by(args: argparse.Namespace, recorded: object) -> str:
    """The flag, else the environment, else what the run recorded from its ini, else the default."""
    from pytest_screeneval.settings.options import OPTIONS

    chosen = args.final_decision_by or os.environ.get(FINAL_DECISION_ENV, "").strip()
    if chosen:
        return chosen
    if isinstance(recorded, str) and recorded.strip():
        return recorded
    return next(o.default for o in OPTIONS if o.name == "screeneval_final_decision_by")


def _report(args: argparse.Namespace) -> int:
    if not args.html and not args.json:
        print("screeneval report: give --html PATH, --json PATH or both", file=sys.stderr)
        return 2
    from pytest_screeneval.report.audit import build_audit, write_audit_json
    from pytest_screeneval.report.html.page import write_html

    with _open_store(args) as store:
        config = store.get_run(args.run_id).config
        limits = {
            name: config[key]
            for key, name in _REPORT_LIMITS.items()
            if isinstance(config.get(key), int | float) and not isinstance(config[key], bool)
        }
        document = build_audit(
            store,
            args.run_id,
            final_decision_by=_final_decision_by(args, config.get("final_decision_by")),
            **limits,
        )
    for path, write in ((args.html, write_html), (args.json, write_audit_json)):
        if path:
            try:
                write(document, Path(path))
            except OSError as exc:
                raise ScreenevalError(f"Cannot write {path} ({exc.strerror}).") from None
            _out(f"wrote the audit report of run {args.run_id} to {path}")
    return 0


# --------------------------------------------------------------------------------------------
# diff
# --------------------------------------------------------------------------------------------


def _diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", type=_positive_int, metavar="BASE", help="the earlier run's id")
    parser.add_argument("cand", type=_positive_int, metavar="CAND", help="the later run's id")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=None,
        help="distance to the expected score that counts as agreement (default: CAND's setting)",
    )


def _diff(args: argparse.Namespace) -> int:
    from pytest_screeneval.report.diff import diff_lines, score_table

    with _open_store(args) as store:
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
        _out(line)
    return 0


# --------------------------------------------------------------------------------------------
# verify
# --------------------------------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        report = store.verify_chain()
        where = store.masked_url
    if not report.ok:
        raise ScreenevalError(
            f"The audit chain of {where} is broken ({report.entries} entries): "
            f"{report.first_break}."
        )
    backfilled = (
        f" ({report.backfilled} backfilled at the schema upgrade that introduced the chain)"
        if report.backfilled
        else ""
    )
    _out(f"chain intact: {report.entries} entries{backfilled}, last hash {report.last_hash}")
    return 0


# --------------------------------------------------------------------------------------------
# db upgrade
# --------------------------------------------------------------------------------------------


def _db_upgrade(args: argparse.Namespace) -> int:
    from pytest_screeneval.store.database import mask_url, upgrade

    url = resolve_db_url(args)
    before, after = upgrade(url)
    if before == after:
        _out(f"the store at {mask_url(url)} is already at schema revision {after}")
    else:
        _out(
            f"upgraded the store at {mask_url(url)} from schema revision "
            f"{before or '(empty)'} to {after}"
        )
    return 0


# --------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------

COMMANDS: list[Command] = [
    Command(("runs",), "list the recorded runs, newest first", _runs, _runs_arguments),
    Command(
        ("show",), "one run: identity, status, counts, acceptance, errors", _show, _run_argument
    ),
    Command(("accept",), "make a complete run the baseline", _accept, _accept_arguments),
    Command(
        ("review",),
        "record that a person read a moved case (a criterion, or its decision)",
        _review,
        _review_arguments,
    ),
    Command(
        ("diff",),
        "movement and agreement between any two runs",
        _diff,
        _diff_arguments,
    ),
    Command(
        ("report",),
        "write a run's audit report: a self-contained HTML page and/or JSON",
        _report,
        _report_arguments,
    ),
    Command(
        ("verify",),
        "check the audit chain: name the first run, acceptance or review whose rows changed",
        _verify,
    ),
    Command(
        ("cases", "import"),
        "store a golden set folder (new cases are frozen)",
        _cases_import,
        _cases_import_arguments,
        {"cases": "the golden set in the store"},
    ),
    Command(
        ("cases", "export"),
        "write the store's golden set as YAML",
        _cases_export,
        _cases_export_arguments,
    ),
    Command(
        ("cases", "retire"),
        "take a case out of service for good",
        _cases_retire,
        _cases_retire_arguments,
    ),
    Command(
        ("db", "upgrade"),
        "bring the store's schema to this version",
        _db_upgrade,
        group_help={"db": "the store's schema"},
    ),
]


def _add_db_option(parser: argparse.ArgumentParser, *, default: object) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        default=default,
        help=f"the store (default: ${DB_ENV}, else sqlite:///./.screeneval/screeneval.db)",
    )


def build_parser(commands: Sequence[Command] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="screeneval",
        description="Runs, baselines, reviews and the golden set of pytest-screeneval.",
    )
    _add_db_option(parser, default=None)
    groups: dict[tuple[str, ...], argparse._SubParsersAction[argparse.ArgumentParser]] = {
        (): parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    }
    for command in commands:
        for depth in range(1, len(command.words)):
            prefix = command.words[:depth]
            if prefix in groups:
                continue
            group = groups[prefix[:-1]].add_parser(
                prefix[-1], help=command.group_help.get(prefix[-1], "")
            )
            # dest must not collide with option names (a "db" group vs --db)
            groups[prefix] = group.add_subparsers(
                dest=f"{'_'.join(prefix)}_command", metavar="COMMAND", required=True
            )
        sub = groups[command.words[:-1]].add_parser(
            command.words[-1], help=command.help, description=command.help
        )
        # also after the subcommand; SUPPRESS keeps the top-level --db when not given here
        _add_db_option(sub, default=argparse.SUPPRESS)
        command.arguments(sub)
        sub.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # usage error (2) or --help (0): returned, so callers get a code
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        return int(args.handler(args))
    except ScreenevalError as exc:
        print(f"screeneval: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("screeneval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
