"""``screeneval audit FILE --run RUN``: a bias audit on historical data, written into the audit
document of a run (HTML and/or JSON) beside its counterfactual evidence, and recorded in the store
and its audit chain by the file's sha256, rows and dates."""

from __future__ import annotations

import argparse
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pytest_screeneval.cli.common import open_store, out
from pytest_screeneval.cli.report import final_decision_by
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.settings.validators import non_empty, positive_int

__all__ = ["audit", "audit_arguments"]

_SHOWN_BAD_ROWS = 10


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def audit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", help="the export: CSV or JSON Lines, one applicant a row"
    )
    parser.add_argument(
        "--run",
        dest="run_id",
        type=positive_int,
        required=True,
        help="the run whose audit document the historical audit is written into",
    )
    parser.add_argument("--by", required=True, type=non_empty, help="who conducts the audit")
    parser.add_argument("--score", metavar="COLUMN", help="the score column (a scoring tool)")
    parser.add_argument(
        "--selected", metavar="COLUMN", help="the selected flag column, yes/no (a selection tool)"
    )
    parser.add_argument("--sex", metavar="COLUMN", default="sex", help="default: sex")
    parser.add_argument("--race", metavar="COLUMN", default="race", help="default: race")
    parser.add_argument(
        "--age", metavar="COLUMN", help="an age band column: 'under 40' or '40 and over'"
    )
    parser.add_argument(
        "--category",
        metavar="NAME=COLUMN",
        type=_pair,
        action="append",
        default=[],
        help="another category to audit (repeatable)",
    )
    parser.add_argument("--date", metavar="COLUMN", help="the date column (ISO dates)")
    parser.add_argument(
        "--labels",
        metavar="NAME=A,B,...",
        type=_pair,
        action="append",
        default=[],
        help="the allowed labels of a category (default: the EEO-1 sex and race/ethnicity "
        "categories, the two age bands; other categories take any label; '*' takes any)",
    )
    parser.add_argument("--format", choices=("csv", "jsonl"), help="default: from the suffix")
    parser.add_argument(
        "--exclude-under-2-percent",
        metavar="JUSTIFICATION",
        type=non_empty,
        help="leave categories under 2%% of the data out of the impact ratios, for this reason "
        "(printed with the audit; their counts and rates are still shown)",
    )
    parser.add_argument("--audit-date", type=_day, help="the audit's date (default: today, UTC)")
    parser.add_argument("--html", metavar="PATH", help="write the audit page here")
    parser.add_argument("--json", metavar="PATH", help="write the audit document as JSON here")
    parser.add_argument(
        "--final-decision-by", metavar="TEXT", type=non_empty, help="as for `screeneval report`"
    )


def _labels(args: argparse.Namespace, dimensions: list[str]) -> dict[str, list[str] | None]:
    from pytest_screeneval.evidence.historical import DEFAULT_LABELS

    chosen: dict[str, list[str] | None] = {
        d: list(DEFAULT_LABELS[d]) if d in DEFAULT_LABELS else None for d in dimensions
    }
    for name, values in args.labels:
        if name not in chosen:
            raise ScreenevalError(
                f"--labels names {name!r}, which is not a category of this audit "
                f"({', '.join(dimensions)})."
            )
        chosen[name] = None if values == "*" else [v.strip() for v in values.split(",")]
    return chosen


def audit(args: argparse.Namespace) -> int:
    from pytest_screeneval.evidence.historical import AGE, ColumnMap, HistoricalAudit, valid_until
    from pytest_screeneval.golden.model import canonical_json
    from pytest_screeneval.report.audit import build_audit, write_audit_json
    from pytest_screeneval.report.historical import historical_document
    from pytest_screeneval.report.historical_file import read_export
    from pytest_screeneval.report.html.page import write_html
    from pytest_screeneval.store.database import utc_now
    from pytest_screeneval.store.historical import HistoricalRecord, record_historical_audit

    if not args.score and not args.selected:
        raise ScreenevalError("screeneval audit needs --score COLUMN, --selected COLUMN or both.")
    if not args.html and not args.json:
        raise ScreenevalError("screeneval audit needs --html PATH, --json PATH or both.")
    categories = {"sex": args.sex, "race": args.race}
    if args.age:
        categories[AGE] = args.age
    for name, column in args.category:
        if name in categories:
            raise ScreenevalError(f"The category {name!r} is given twice.")
        categories[name] = column
    labels = _labels(args, list(categories))
    columns = ColumnMap(categories, score=args.score, selected=args.selected, date=args.date)
    # a category given '*' (or not in the defaults) takes any label
    accumulator = HistoricalAudit(
        columns, labels={k: v for k, v in labels.items() if v is not None}
    )
    export = read_export(Path(args.file), accumulator, fmt=args.format)
    rates = accumulator.result(exclude_small=args.exclude_under_2_percent is not None)
    day = args.audit_date or datetime.now(UTC).date()
    how: dict[str, Any] = {
        "score": args.score,
        "selected": args.selected,
        "date": args.date,
        "categories": categories,
        "labels": labels,
        "exclusion": args.exclude_under_2_percent,
    }
    record = HistoricalRecord(
        file_name=export.name,
        file_sha256=export.sha256,
        file_format=export.format,
        file_size=export.size,
        rows=rates.rows,
        applicants=rates.applicants,
        bad_rows=rates.bad_rows,
        first_date=rates.first_date,
        last_date=rates.last_date,
        columns=canonical_json(how),
        run_id=args.run_id,
        audited_by=args.by,
        audited_at=utc_now(),
        audit_date=day.isoformat(),
        valid_until=valid_until(day).isoformat(),
    )
    with open_store(args) as store:
        config = store.get_run(args.run_id).config
        document = build_audit(
            store,
            args.run_id,
            final_decision_by=final_decision_by(args, config.get("final_decision_by")),
        )
        record = record_historical_audit(store, record)
    document["historical"] = historical_document(
        rates, export, record, columns=how, exclusion_reason=args.exclude_under_2_percent
    )
    _print_summary(document["historical"])
    for path, write in ((args.html, write_html), (args.json, write_audit_json)):
        if path:
            try:
                write(document, Path(path))
            except OSError as exc:
                raise ScreenevalError(f"Cannot write {path} ({exc.strerror}).") from None
            out(f"wrote the audit report of run {args.run_id} with the historical audit to {path}")
    return 0


def _print_summary(doc: dict[str, Any]) -> None:
    out(doc["label"])
    out(
        f"historical audit {doc['record']['id']} recorded (by {doc['audited_by']}, dated "
        f"{doc['audit_date']}, valid until {doc['valid_until']}); {doc['tool']} rates"
    )
    if doc["bad_rows"]:
        reasons = ", ".join(f"{n} {why}" for why, n in doc["bad_by_reason"].items())
        out(f"{doc['bad_rows']} bad rows left out, never guessed ({reasons}):")
        for bad in doc["bad_named"][:_SHOWN_BAD_ROWS]:
            out(f"  line {bad['line']}: {bad['reason']}")
        if doc["bad_rows"] > _SHOWN_BAD_ROWS:
            out(
                f"  ... and {doc['bad_rows'] - _SHOWN_BAD_ROWS} more (the JSON names the first 100)"
            )
    exclusion = doc["exclusion"]
    if exclusion["applied"]:
        out(
            f"categories under {exclusion['min_share']:.0%} of the data are left out of the "
            f"impact ratios because: {exclusion['justification']}"
        )
    for item in doc["breakdowns"]:
        for row in item["categories"]:
            for kind in ("selection", "scoring"):
                if row[f"{kind}_flag"] and doc[f"{kind}_tool"]:
                    out(
                        f"{item['dimension']} {row['category']}: {kind} ratio {row[f'{kind}_flag']}"
                    )
