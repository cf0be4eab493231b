"""The audit page's datasheet of the golden set: provenance, counts by slice and category, the
raters and Krippendorff's alpha, the PII screen, expectations by whom and when, retirements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_screeneval.report.datasheet import DIMENSIONS
from pytest_screeneval.report.html.parts import Raw, facts, num, rate, section, table, text, when

__all__ = ["datasheet"]

Doc = Mapping[str, Any]


def _values(values: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in values.items())


def datasheet(doc: Doc) -> str:
    sheet = doc["datasheet"]
    prov, counts, raters, pii = (
        sheet["provenance"],
        sheet["counts"],
        sheet["raters"],
        sheet["pii_screen"],
    )
    found = pii["found"]
    pairs: list[tuple[str, object]] = [
        ("Golden set sha256", Raw(f"<code>{text(sheet['golden_sha'])}</code>")),
        ("Cases", f"{sheet['cases']} ({counts['active']} active, {len(sheet['retired'])} retired)"),
        ("People", prov["people"]),
        ("Sources", "; ".join(f"{s['cases']} case(s): {s['source']}" for s in prov["sources"])),
        ("Frozen", f"{when(prov['frozen_first'])} to {when(prov['frozen_last'])}"),
        (
            "PII screen",
            f"{pii['cases_screened']} cases screened for {pii['screens_for']}: "
            + (
                ", ".join(f"{f['case_id']} ({f['kind']})" for f in found)
                if found
                else "nothing found"
            )
            + f"; {pii['note']}",
        ),
        (
            "Raters' agreement",
            f"Krippendorff's alpha {num(raters['alpha_ordinal'], 2)} (ordinal), "
            f"{num(raters['alpha_interval'], 2)} (interval) over {raters['units']} items rated "
            f"twice or more; exact pairwise agreement {rate(raters['exact_pairwise_share'])}",
        ),
    ]
    return section(
        "datasheet",
        "Datasheet of the golden set",
        "What the test data is, where it came from, who judged it and how far they agreed, and "
        "what was screened out of it: the data-governance record of the golden set.",
        facts(pairs),
        table(
            ["Category", "Active cases"],
            [(d, _values(counts["by_category"][d])) for d in DIMENSIONS],
            caption="Active cases by demographic category (invented labels, never shown to the "
            "scorer)",
        ),
        table(
            ["Slice", "Cases", *DIMENSIONS],
            [
                (r["slice"], r["cases"], *(_values(r[d]) for d in DIMENSIONS))
                for r in counts["by_slice"]
            ],
            numeric=[1],
            caption="Active cases by slice and category",
        ),
        table(
            ["Rater", "Ratings"],
            [(r["rater"], r["ratings"]) for r in raters["raters"]],
            numeric=[1],
            caption="Raters",
            empty="No ratings.",
        ),
        table(
            ["Set by", "Expected scores", "Cases", "First", "Last"],
            [
                (e["set_by"], e["expectations"], e["cases"], when(e["first"]), when(e["last"]))
                for e in sheet["expectations_by"]
            ],
            numeric=[1, 2],
            caption="Expectations: by whom and when",
        ),
        table(
            ["Case", "Slice", "Retired at", "Retired by"],
            [
                (r["case_id"], r["label"], when(r["retired_at"]), r["retired_by"])
                for r in sheet["retired"]
            ],
            caption="Retirements",
            empty="No case has been retired.",
        ),
    )
