"""The historical-data section of the audit document: a bias audit over an export of the
screener's real use, labelled as historical data (the file, its hash, rows and dates), with its
date and the date it is valid until, as plain JSON values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_screeneval.evidence.historical import HistoricalRates
from pytest_screeneval.evidence.rates import IMPACT_THRESHOLD, MIN_SHARE, TIE_RULE
from pytest_screeneval.evidence.significance import ALPHA, CONFIDENCE
from pytest_screeneval.report.audit_sections import breakdown_doc
from pytest_screeneval.report.historical_file import ExportFile
from pytest_screeneval.store.historical import HistoricalRecord

__all__ = ["historical_document", "recorded_document"]

_SELECTION_NOTE = "no included category has anyone selected"
_SCORING_NOTE = "no included category scores above the median"


def _notes_for(note: str, rates: HistoricalRates) -> str:
    """A breakdown's notes, without the ones about a rate the export does not have."""
    parts = [p for p in note.split("; ") if p]
    if not rates.selection_tool:
        parts = [p for p in parts if not p.startswith(_SELECTION_NOTE)]
    if not rates.scoring_tool:
        parts = [p for p in parts if not p.startswith(_SCORING_NOTE)]
    return "; ".join(parts)


def historical_document(
    rates: HistoricalRates,
    export: ExportFile,
    record: HistoricalRecord,
    *,
    columns: Mapping[str, Any],
    exclusion_reason: str | None,
) -> dict[str, Any]:
    """Everything the audit page and ``--json`` show of one historical audit."""
    breakdowns = []
    for item in rates.breakdowns:
        doc = breakdown_doc(item, IMPACT_THRESHOLD)
        doc["note"] = _notes_for(doc["note"], rates)
        breakdowns.append(doc)
    tool = (
        "selection and scoring"
        if rates.selection_tool and rates.scoring_tool
        else "selection"
        if rates.selection_tool
        else "scoring"
    )
    return {
        "data": "historical",
        "label": (
            f"Historical data: {export.name} (sha256 {export.sha256}), {rates.applicants} "
            f"applicants in {rates.rows} rows"
            + (
                f", {rates.first_date} to {rates.last_date}"
                if rates.first_date
                else ", no date column"
            )
        ),
        "record": record.as_dict(),
        "file": {
            "name": export.name,
            "format": export.format,
            "size": export.size,
            "sha256": export.sha256,
        },
        "rows": rates.rows,
        "applicants": rates.applicants,
        "bad_rows": rates.bad_rows,
        "bad_by_reason": dict(rates.bad_by_reason),
        "bad_named": [{"line": b.line, "reason": b.reason} for b in rates.bad_named],
        "first_date": rates.first_date,
        "last_date": rates.last_date,
        "audit_date": record.audit_date,
        "valid_until": record.valid_until,
        "audited_by": record.audited_by,
        "tool": tool,
        "selection_tool": rates.selection_tool,
        "scoring_tool": rates.scoring_tool,
        "median": rates.median,
        "tie_rule": TIE_RULE,
        "threshold": IMPACT_THRESHOLD,
        "columns": dict(columns),
        "exclusion": {
            "applied": rates.min_share > 0,
            "min_share": MIN_SHARE,
            "justification": exclusion_reason,
        },
        "significance": {
            "test": "Fisher's exact test, two-sided, each category against the reference",
            "alpha": ALPHA,
            "interval": f"{CONFIDENCE:.0%} interval on the impact ratio, Katz's log method",
        },
        "breakdowns": breakdowns,
    }


def recorded_document(records: list[HistoricalRecord]) -> list[dict[str, Any]]:
    """The historical audits recorded in the store (hash, rows, dates; the figures are in the
    document ``screeneval audit`` wrote, recomputed from the file)."""
    return [record.as_dict() for record in records]
