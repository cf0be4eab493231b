"""The golden set's datasheet: one place that says what the test data is, where it came from,
who judged it and how far they agreed, and what was screened out of it.

Under the EU AI Act a prompted system's test data carries the data-governance duties (Art. 10),
and for a screener tested with pytest-screeneval that test data is the golden set. The datasheet
gathers: provenance (sources, when the cases were frozen), counts by slice and by demographic
category, the raters and Krippendorff's alpha, the PII screen run on every case as the datasheet
is made, who set the expected scores and when, and the retirements. ``screeneval cases
datasheet`` prints it; the audit page has it as a section. Plain values, from the golden set
(and, when it comes from the store, the cases' freeze and retirement records).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from pytest_screeneval.evidence.reliability import rater_agreement
from pytest_screeneval.golden.model import GoldenSet
from pytest_screeneval.golden.pii import find_pii, has_phone_library
from pytest_screeneval.report.audit_sections import provenance

__all__ = ["DIMENSIONS", "datasheet", "datasheet_lines"]

DIMENSIONS = ("sex", "race", "age")


def _raters(golden: GoldenSet) -> dict[str, Any]:
    cases = golden.active_cases
    pooled: dict[str, Mapping[str, int]] = {}
    per_criterion = []
    for criterion in golden.rubric.criterion_names:
        units = {c.id: c.ratings[criterion] for c in cases if c.ratings.get(criterion)}
        pooled.update({f"{case_id}/{criterion}": r for case_id, r in units.items()})
        agreement = rater_agreement(units)
        per_criterion.append(
            {
                "criterion": criterion,
                "cases_rated": len(units),
                "alpha_ordinal": agreement.alpha_ordinal,
                "contested": sum(1 for c in cases if c.is_contested(criterion)),
            }
        )
    agreement = rater_agreement(pooled)
    ratings = Counter(r for c in cases for by in c.ratings.values() for r in by)
    return {
        "raters": [{"rater": r, "ratings": n} for r, n in sorted(ratings.items())],
        "alpha_ordinal": agreement.alpha_ordinal,
        "alpha_interval": agreement.alpha_interval,
        "units": agreement.n_units,
        "exact_pairwise_share": agreement.exact_pairwise_share,
        "criteria": per_criterion,
    }


def _counts(golden: GoldenSet) -> dict[str, Any]:
    """Active cases by slice × each demographic category, and in all."""
    cases = golden.active_cases
    by_dimension: dict[str, dict[str, int]] = {}
    by_slice: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for dimension in DIMENSIONS:
        totals: Counter[str] = Counter()
        per_slice: dict[str, Counter[str]] = defaultdict(Counter)
        for case in cases:
            value = str(case.demographics.get(dimension) or "unknown")
            totals[value] += 1
            per_slice[case.label][value] += 1
        by_dimension[dimension] = dict(sorted(totals.items()))
        for label, counter in per_slice.items():
            by_slice[label][dimension] = dict(sorted(counter.items()))
    return {
        "active": len(cases),
        "by_category": by_dimension,
        "by_slice": [
            {"slice": label, "cases": sum(by_slice[label]["sex"].values()), **by_slice[label]}
            for label in sorted(by_slice)
        ],
    }


def _pii(golden: GoldenSet) -> dict[str, Any]:
    """The PII screen run now on every case's text: what it looks for, what it found."""
    found = []
    for case in golden.cases:
        hit = find_pii(case.input_text)
        if hit is not None:
            found.append({"case_id": case.id, "kind": hit[0]})
    return {
        "screens_for": "e-mail addresses and phone numbers"
        + (
            " (every region's formats, with the phonenumbers library)"
            if has_phone_library()
            else " (the common national formats)"
        ),
        "cases_screened": len(golden.cases),
        "found": found,
        "note": "run on every load as well: a case with PII is refused before it is scored",
    }


_SEED = re.compile(r"\bseed \d+")


def _sources(golden: GoldenSet) -> list[dict[str, Any]]:
    """Cases by how they were made; a generator's per-case seed does not split a source."""
    counts: Counter[str] = Counter()
    for case in golden.cases:
        counts[_SEED.sub("one seed per case", case.source or "(not stated)")] += 1
    return [{"source": source, "cases": n} for source, n in sorted(counts.items())]


def datasheet(golden: GoldenSet, records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The datasheet of ``golden`` (``records``: each stored case's freeze and retirement)."""
    prov = provenance(golden, records)
    return {
        "golden_sha": golden.sha,
        "provenance": {
            "sources": _sources(golden),
            "frozen_first": prov["frozen_first"],
            "frozen_last": prov["frozen_last"],
            "people": "synthetic: every person, employer, college and rater is invented",
        },
        "counts": _counts(golden),
        "raters": _raters(golden),
        "pii_screen": _pii(golden),
        "expectations_by": prov["expectations_by"],
        "retired": prov["retired_cases"],
        "cases": prov["cases"],
        "rubric": {"id": golden.rubric.id, "version": golden.rubric.version},
    }


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def datasheet_lines(sheet: Mapping[str, Any]) -> list[str]:
    """The datasheet as text for a terminal or a Markdown file."""
    prov, counts, raters, pii = (
        sheet["provenance"],
        sheet["counts"],
        sheet["raters"],
        sheet["pii_screen"],
    )
    lines = [
        f"# Golden set datasheet (sha256 {sheet['golden_sha']})",
        "",
        f"Rubric {sheet['rubric']['id']} version {sheet['rubric']['version']}; "
        f"{sheet['cases']} cases, {counts['active']} active, {len(sheet['retired'])} retired.",
        f"People: {prov['people']}.",
        (
            f"Frozen: {prov['frozen_first']} to {prov['frozen_last']}."
            if prov["frozen_first"]
            else "Frozen: not yet (read from a folder; the store freezes each case as imported)."
        ),
        "",
        "## Provenance",
        *(f"- {s['cases']} case(s): {s['source']}" for s in prov["sources"]),
        "",
        "## Active cases by category",
    ]
    for dimension, values in counts["by_category"].items():
        shown = ", ".join(f"{name} {n}" for name, n in values.items())
        lines.append(f"- {dimension}: {shown}")
    lines += ["", "## Active cases by slice"]
    for row in counts["by_slice"]:
        parts = "; ".join(
            f"{d} " + ", ".join(f"{k} {v}" for k, v in row[d].items()) for d in DIMENSIONS
        )
        lines.append(f"- {row['slice']} ({row['cases']}): {parts}")
    lines += [
        "",
        "## Raters and their agreement",
        "- raters: "
        + (", ".join(f"{r['rater']} ({r['ratings']} ratings)" for r in raters["raters"]) or "none"),
        f"- Krippendorff's alpha, all criteria pooled: ordinal {_number(raters['alpha_ordinal'])}, "
        f"interval {_number(raters['alpha_interval'])} over {raters['units']} rated items",
        *(
            f"- {c['criterion']}: alpha (ordinal) {_number(c['alpha_ordinal'])} over "
            f"{c['cases_rated']} cases, {c['contested']} contested"
            for c in raters["criteria"]
        ),
        "",
        "## PII screen",
        f"- screens for {pii['screens_for']}; {pii['cases_screened']} cases screened, "
        f"{len(pii['found'])} found"
        + (
            ": " + ", ".join(f"{f['case_id']} ({f['kind']})" for f in pii["found"])
            if pii["found"]
            else ""
        ),
        f"- {pii['note']}",
        "",
        "## Expectations: by whom and when",
        *(
            f"- {e['set_by']}: {e['expectations']} expected scores on {e['cases']} cases, "
            f"{e['first']} to {e['last']}"
            for e in sheet["expectations_by"]
        ),
        "",
        "## Retirements",
        *(
            f"- {r['case_id']} ({r['label']}): retired {r['retired_at']} by "
            f"{r['retired_by'] or '(not recorded)'}"
            for r in sheet["retired"]
        ),
    ]
    if not sheet["retired"]:
        lines.append("- none")
    return lines
