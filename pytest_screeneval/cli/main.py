"""The ``screeneval`` command: the parser, the table of subcommands, and the exit status.

Each subcommand is one :class:`Command` (its words, its arguments, its function) in ``COMMANDS``;
the functions live by group in ``cases``, ``runs``, ``review``, ``report`` and ``store_admin``.
Adding one is adding a function there and an entry here. Building the parser imports nothing
heavy, so ``screeneval --help`` is instant; SQLAlchemy loads when a command opens the store.
Exit status: 0 done, 1 refused (the one-sentence reason on stderr), 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pytest_screeneval.boundary.terminal import terminal_safe
from pytest_screeneval.cli import audit, cases, judge_check, report, review, runs, store_admin
from pytest_screeneval.cli.common import DB_ENV, Command
from pytest_screeneval.errors import ScreenevalError

__all__ = ["COMMANDS", "Command", "build_parser", "main"]

COMMANDS: list[Command] = [
    Command(("runs",), "list the recorded runs, newest first", runs.runs, runs.runs_arguments),
    Command(
        ("show",),
        "one run: identity, status, counts, acceptance, errors",
        runs.show,
        runs.show_arguments,
    ),
    Command(("accept",), "make a complete run the baseline", runs.accept, runs.accept_arguments),
    Command(
        ("review",),
        "record that a person read a moved case (a criterion, or its decision)",
        review.review,
        review.review_arguments,
    ),
    Command(
        ("diff",),
        "movement and agreement between any two runs",
        report.diff,
        report.diff_arguments,
    ),
    Command(
        ("report",),
        "write a run's audit report: a self-contained HTML page and/or JSON",
        report.report,
        report.report_arguments,
    ),
    Command(
        ("audit",),
        "a bias audit on historical data (CSV or JSON Lines), written into a run's audit report "
        "and recorded in the chain",
        audit.audit,
        audit.audit_arguments,
    ),
    Command(
        ("judge-check",),
        "measure a configured rationale judge on the held-out part of a labelled rationale "
        "corpus: per-flag precision and recall with Wilson intervals",
        judge_check.judge_check,
        judge_check.judge_check_arguments,
    ),
    Command(
        ("verify",),
        "check the audit chain: name the first run, acceptance, review or golden-set row "
        "that changed",
        store_admin.verify,
        store_admin.verify_arguments,
    ),
    Command(
        ("anchor",),
        "export the chain's head (signed with SCREENEVAL_CHAIN_KEY) to keep outside the database",
        store_admin.anchor,
        store_admin.anchor_arguments,
    ),
    Command(
        ("cases", "import"),
        "store a golden set folder (new cases are frozen)",
        cases.cases_import,
        cases.cases_import_arguments,
        {"cases": "the golden set in the store"},
    ),
    Command(
        ("cases", "export"),
        "write the store's golden set as YAML",
        cases.cases_export,
        cases.cases_export_arguments,
    ),
    Command(
        ("cases", "datasheet"),
        "the golden set's datasheet: provenance, counts, raters and alpha, PII screen, "
        "expectations, retirements",
        cases.cases_datasheet,
        cases.cases_datasheet_arguments,
    ),
    Command(
        ("cases", "retire"),
        "take a case out of service for good",
        cases.cases_retire,
        cases.cases_retire_arguments,
    ),
    Command(
        ("db", "upgrade"),
        "bring the store's schema to this version",
        store_admin.db_upgrade,
        group_help={"db": "the store's schema and spool"},
    ),
    Command(
        ("db", "recover"),
        "import the score rows a run kept in the spool when the store would not take them",
        store_admin.db_recover,
        store_admin.db_recover_arguments,
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
        code = int(args.handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:
        # `screeneval runs | head`: the reader has all it wanted; end quietly, as `cat` does
        _quiet_stdout()
        return 141  # the status of a shell pipeline whose writer met a closed pipe
    except ScreenevalError as exc:
        print(terminal_safe(f"screeneval: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("screeneval: interrupted", file=sys.stderr)
        return 130


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush meets no closed pipe."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
