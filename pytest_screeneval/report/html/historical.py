"""The audit page's section on historical data: the bias audit ``screeneval audit FILE`` ran on
an export of the screener's real use, labelled with its file, hash, rows and dates, its date and
the date it is valid until; or, without one, a plain statement that none was given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_screeneval.report.html.evidence import rates_table
from pytest_screeneval.report.html.parts import Raw, facts, num, section, table, text, when

__all__ = ["historical"]

Doc = Mapping[str, Any]


def _recorded(doc: Doc) -> str:
    records = doc.get("historical_records") or []
    return table(
        ["Audit", "File", "sha256", "Applicants", "Bad rows", "Dates", "Audited by", "Valid until"],
        [
            (
                r["id"],
                r["file_name"],
                r["file_sha256"],
                r["applicants"],
                r["bad_rows"],
                f"{r['first_date'] or '–'} to {r['last_date'] or '–'}",
                f"{r['audited_by']} on {r['audit_date']}",
                r["valid_until"],
            )
            for r in records
        ],
        numeric=[0, 3, 4],
        code=[2],
        caption="Historical audits recorded in the store (and in its audit chain)",
        empty="No historical audit is recorded in this store.",
    )


def historical(doc: Doc) -> str:
    audit = doc.get("historical")
    if not audit:
        return section(
            "historical",
            "Bias audit on historical data",
            "No historical data was given to this report, so it holds no bias audit: every rate "
            "on this page is computed on test data (the golden set). A bias audit under 6 RCNY "
            "§5-302(a) uses historical data of the tool's real use: `screeneval audit FILE --run "
            "RUN` computes it and writes it here.",
            _recorded(doc),
        )
    label = f"historical data ({audit['file']['name']})"
    exclusion = audit["exclusion"]
    pairs: list[tuple[str, object]] = [
        ("Data", "historical data of the screener's real use"),
        ("File", audit["file"]["name"]),
        ("sha256", Raw(f"<code>{text(audit['file']['sha256'])}</code>")),
        ("Rows read", audit["rows"]),
        ("Applicants (the full sample)", audit["applicants"]),
        ("Bad rows, left out", audit["bad_rows"]),
        ("Dates", f"{audit['first_date'] or '–'} to {audit['last_date'] or '–'}"),
        ("Audit date", audit["audit_date"]),
        ("Valid until", f"{audit['valid_until']} (12 months: 6 RCNY §5-301(a))"),
        ("Audited by", audit["audited_by"]),
        ("Recorded", f"audit {audit['record']['id']} at {when(audit['record']['audited_at'])}"),
        ("Tool", f"{audit['tool']} rates"),
        ("Median score of the full sample", num(audit["median"], 2)),
        (
            "Small-category exclusion",
            f"categories under {exclusion['min_share']:.0%} of the data are left out of the "
            f"impact ratios because: {exclusion['justification']}"
            if exclusion["applied"]
            else "not applied: every category is in the impact ratios",
        ),
    ]
    bad = table(
        ["Line", "Why the row was left out"],
        [(b["line"], b["reason"]) for b in audit["bad_named"]],
        numeric=[0],
        caption=f"Bad rows (the first {len(audit['bad_named'])} of {audit['bad_rows']}), "
        "never guessed",
        empty="No bad row.",
    )
    tables = [
        rates_table(
            b,
            audit["threshold"],
            label,
            scoring=audit["scoring_tool"],
            selection=audit["selection_tool"],
        )
        for b in audit["breakdowns"]
    ]
    return section(
        "historical",
        "Bias audit on historical data",
        f"{audit['label']}. Rates and impact ratios as 6 RCNY §5-301 asks: by sex, "
        "race/ethnicity, their intersection and any other category given; applicants of "
        f"unknown category counted and left out of that category's rates. {audit['tie_rule']}",
        facts(pairs),
        *tables,
        bad,
        _recorded(doc),
    )
