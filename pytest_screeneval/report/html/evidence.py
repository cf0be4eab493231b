"""The audit page's sections about fairness and evidence: counterfactual gaps, perturbations,
rates by group, rater agreement and the golden set's provenance. Each takes the audit document."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from pytest_screeneval.report.html.parts import (
    Raw,
    num,
    rate,
    section,
    table,
    tested_ratio,
    text,
    when,
)
from pytest_screeneval.report.html.svg import Strip, paired_bars, strip_plot

__all__ = [
    "counterfactual",
    "perturbation",
    "provenance",
    "raters",
    "rates",
    "rates_table",
]

Doc = Mapping[str, Any]


def counterfactual(doc: Doc) -> str:
    cf = doc["counterfactual"]
    limit = cf["max_gap"]
    attributes = cf["attributes"]
    chart = paired_bars(
        [(a["attribute"], a["mean_gap"], a["worst_gap"]) for a in attributes],
        limit=limit,
        title="Counterfactual gap per attribute: mean and worst, in overall points",
    )
    rows = [
        (
            a["attribute"],
            a["n_cases"],
            num(a["mean_gap"]),
            num(a["worst_gap"]),
            f"{a['worst_case']} ({' vs '.join(a['worst_values'])})",
            a["over_limit"],
            ", ".join(f"{k} {v:g}" for k, v in sorted(a["per_criterion"].items()) if v) or "–",
        )
        for a in attributes
    ]
    worst = []
    for a in attributes:
        detail = [
            (
                c["case_id"],
                num(c["gap"]),
                "; ".join(
                    f"{v}: {o:.1f}" for v, o in sorted(c["overall"].items(), key=lambda kv: -kv[1])
                ),
            )
            for c in a["worst_cases"]
        ]
        worst.append(
            table(
                ["Case", "Gap", "Overall per value"],
                detail,
                numeric=[1],
                caption=f"Worst cases: {a['attribute']}",
            )
        )
    parts = [
        '<div class="figure">',
        Raw(chart) if attributes else "",
        table(
            [
                "Attribute",
                "Cases",
                "Mean gap",
                "Worst gap",
                "Worst case (high vs low)",
                "Over limit",
                "Worst gap per criterion (scale points)",
            ],
            rows,
            numeric=[1, 2, 3, 5],
            empty="No counterfactual variants were scored in this run.",
        ),
        "</div>",
        *worst,
    ]
    return section(
        "counterfactual",
        "Counterfactual gaps",
        "The same resume with one attribute rewritten (a name, a college, a career-gap line). "
        "The job requirements do not change, so the ideal gap is zero; the gap is the spread "
        f"of the overall score across the attribute's values. Limit: {limit:g} points.",
        *parts,
    )


def perturbation(doc: Doc) -> str:
    pert = doc["perturbation"]
    rows = [
        (
            k["kind"],
            k["texts"],
            k["cases"],
            num(k["mean_shift"]),
            num(k["worst_shift"]),
            k["worst_case"],
            k["over_limit"],
            k["failed"],
        )
        for k in pert["kinds"]
    ]
    return section(
        "perturbation",
        "Perturbations",
        "Reformatted, noisy or reordered versions of a resume should score like the original. "
        f"Shift: distance of a perturbed text's overall score from the original's; limit "
        f"{pert['max_shift']:g} points.",
        table(
            [
                "Kind",
                "Texts scored",
                "Cases",
                "Mean shift",
                "Worst shift",
                "Worst case",
                "Over limit",
                "Scorer failed",
            ],
            rows,
            numeric=[1, 2, 3, 4, 6, 7],
            empty="No perturbed texts were scored in this run.",
        ),
    )


def _dimension(name: str) -> str:
    """How a dimension reads on the page: 'race' is race/ethnicity, as the rule words it."""
    return name.replace("race", "race/ethnicity")


def rates_table(
    breakdown: Mapping[str, Any],
    threshold: float,
    data_label: str,
    *,
    scoring: bool = True,
    selection: bool = True,
) -> str:
    """One rate table; its caption says what data it was computed on (test or historical)."""
    headers = ["Category", "Candidates", "Share"]
    if scoring:
        headers += ["Above median", "Scoring rate", "Scoring ratio"]
    if selection:
        headers += ["Selected", "Selection rate", "Selection ratio"]
    headers.append("Excluded because")
    rows = []
    for c in breakdown["categories"]:
        row: list[object] = [c["category"], c["n"], rate(c["share"])]
        if scoring:
            row += [
                c["scored_above"],
                rate(c["scoring_rate"]),
                tested_ratio(
                    c["scoring_impact_ratio"],
                    threshold,
                    c["excluded"],
                    c.get("scoring_test"),
                    c.get("scoring_flag", ""),
                ),
            ]
        if selection:
            row += [
                c["selected"],
                rate(c["selection_rate"]),
                tested_ratio(
                    c["selection_impact_ratio"],
                    threshold,
                    c["excluded"],
                    c.get("selection_test"),
                    c.get("selection_flag", ""),
                ),
            ]
        row.append(
            Raw(f'<span class="reason">{text(c["excluded"])}</span>') if c["excluded"] else ""
        )
        rows.append(row)
    note = f"Unknown category: {breakdown['unknown']} (excluded from the ratios)."
    if breakdown["note"]:
        note += f" {breakdown['note']}."
    return (
        table(
            headers,
            rows,
            numeric=range(1, len(headers) - 1),
            caption=f"By {_dimension(breakdown['dimension'])} — {data_label}",
            empty=f"No known category. {note}",
        )
        + f'<p class="note">{text(note)}</p>'
    )


def _distribution(doc: Doc, dimension: str, advance_at: float) -> str:
    groups: dict[str, list[float]] = {}
    for c in doc["rates"]["candidates"]:
        groups.setdefault(c[dimension], []).append(c["overall"])
    strips = [Strip(name, tuple(values)) for name, values in sorted(groups.items())]
    chart = strip_plot(
        strips,
        threshold=advance_at,
        threshold_label=f"advance at {advance_at:g}",
        title=f"Overall score by {_dimension(dimension)}",
    )
    rows = [
        (
            s.label,
            len(s.values),
            num(min(s.values)),
            num(statistics.median(s.values)),
            num(max(s.values)),
            sum(1 for v in s.values if v >= advance_at),
        )
        for s in strips
    ]
    return (
        '<div class="figure">'
        + chart
        + table(
            [
                dimension.capitalize(),
                "Candidates",
                "Lowest",
                "Median",
                "Highest",
                "At/above advance",
            ],
            rows,
            numeric=range(1, 6),
            caption=f"Overall score by {dimension}",
        )
        + "</div>"
    )


def _statement(data: Mapping[str, Any]) -> str:
    """The §5-302(b) statement every golden-set rate table stands under."""
    return (
        '<div class="statement"><p><strong>Test data, not a bias audit.</strong> '
        f"{text(data['label'])}.</p>"
        f"<p><strong>Why historical data was not used (6 RCNY §5-302(b)):</strong> "
        f"{text(data['why_not_historical'])}</p>"
        f"<p><strong>How the test data was generated and obtained:</strong> "
        f"{text(data['how_generated'])}</p></div>"
    )


def rates(doc: Doc) -> str:
    rates = doc["rates"]
    cases = rates["cases"]
    data = rates["data"]
    label = "test data (the golden set)"
    threshold = cases["threshold"]
    advance_at = cases["advance_at"]
    parts = [
        _statement(data),
        f"<p>Over {cases['total']} scored cases; median overall score "
        f"{text(num(cases['median']))}. <strong>Selection rate</strong>: share at or above the "
        f"advance threshold ({advance_at:g}). <strong>Scoring rate</strong>: share scoring above "
        f"the median of the full sample. {text(cases['tie_rule'])} <strong>Impact ratio</strong>: "
        "a category's rate over the highest included category's rate (the reference); under "
        f"{threshold:g} is marked ▼ and says whether the difference is significant. Beside each "
        "ratio: its 95% interval (Katz's log method), the two-sided p-value of Fisher's exact "
        "test against the reference category and the pooled two-proportion z statistic; "
        f"significant means p &lt; 0.05. Categories under {cases['min_share']:.0%} of the data are "
        "shown but excluded from the ratios; unknown categories are counted, never guessed.</p>",
        *(rates_table(b, threshold, label) for b in cases["breakdowns"]),
        "<h3>Score distribution by group</h3>",
        _distribution(doc, "sex", advance_at),
        _distribution(doc, "race", advance_at),
    ]
    for attribute, variant_rates in sorted(rates["variants"].items()):
        parts.append(f"<h3>Counterfactual variants of {text(attribute)}, by the value's group</h3>")
        parts.append(
            f'<p class="note">{variant_rates["total"]} variant texts; median '
            f"{text(num(variant_rates['median']))}. Each variant counts as a candidate labelled "
            "with its value's groups.</p>"
        )
        variant_label = f"test data (variants of {attribute} in the golden set)"
        parts.extend(rates_table(b, threshold, variant_label) for b in variant_rates["breakdowns"])
    return section(
        "rates",
        "Rates by group on test data",
        "Scoring and selection rates with impact ratios by sex, race/ethnicity, their "
        "intersection and age band, computed the way 6 RCNY §5-301 computes them, over the "
        "golden set's recorded demographics (never shown to the scorer). These are rates on "
        "test data: they describe the screener on synthetic cases and are not a bias audit.",
        *parts,
    )


def raters(doc: Doc) -> str:
    raters = doc["raters"]
    rows = [
        (
            r["criterion"],
            r["cases_rated"],
            r["n_pairable"],
            num(r["alpha_ordinal"], 2),
            num(r["alpha_interval"], 2),
            rate(r["exact_pairwise_share"]),
            r["contested"],
        )
        for r in raters["criteria"]
    ]
    pooled = raters["pooled"]
    rows.append(
        (
            "all criteria",
            pooled["n_units"],
            pooled["n_pairable"],
            num(pooled["alpha_ordinal"], 2),
            num(pooled["alpha_interval"], 2),
            rate(pooled["exact_pairwise_share"]),
            "–",
        )
    )
    return section(
        "raters",
        "Rater agreement",
        "How far the human raters of the active cases agree (Krippendorff's alpha; 1 is full "
        "agreement, 0 is chance). Where raters disagree by 2 or more points the item is "
        "contested, and the screener should not be confident either.",
        table(
            [
                "Criterion",
                "Cases rated",
                "Ratings",
                "Alpha (ordinal)",
                "Alpha (interval)",
                "Exact pairwise",
                "Contested",
            ],
            rows,
            numeric=range(1, 7),
        ),
        f'<p class="note">Raters: {text(", ".join(raters["raters"]) or "none")}.</p>',
    )


def provenance(doc: Doc) -> str:
    prov = doc["provenance"]
    rubric = prov["rubric"]
    return section(
        "provenance",
        "How the golden set was built",
        f"{prov['cases']} cases ({prov['active']} active, {prov['retired']} retired), frozen "
        f"from {when(prov['frozen_first'])} to {when(prov['frozen_last'])}. Each case's text is "
        "frozen by its sha256; expectations are a named person's judgement at a date.",
        table(
            ["Slice", "Active", "Retired"],
            [(s["slice"], s["active"], s["retired"]) for s in prov["by_slice"]],
            numeric=[1, 2],
            caption="Cases by slice",
        ),
        table(
            ["Source", "Cases"],
            [(s["source"], s["cases"]) for s in prov["by_source"]],
            numeric=[1],
            caption="Cases by source",
        ),
        table(
            ["Set by", "Expectations", "Cases", "First", "Last"],
            [
                (e["set_by"], e["expectations"], e["cases"], when(e["first"]), when(e["last"]))
                for e in prov["expectations_by"]
            ],
            numeric=[1, 2],
            caption="Who set the expected scores, and when",
        ),
        table(
            ["Case", "Slice", "Retired at", "Retired by"],
            [
                (r["case_id"], r["label"], when(r["retired_at"]), r["retired_by"])
                for r in prov["retired_cases"]
            ],
            caption="Retired cases",
            empty="No case has been retired.",
        ),
        table(
            ["Criterion", "Weight", "Description"],
            [(c["name"], f"{c['weight']:g}", c["description"]) for c in rubric["criteria"]],
            numeric=[1],
            caption=f"Rubric {rubric['id']} version {rubric['version']} "
            f"(scale {rubric['scale'][0]}–{rubric['scale'][1]}, advance at "
            f"{rubric['advance_at']:g})",
        ),
        table(
            ["Attribute", "Kind", "Values (groups)"],
            [
                (
                    v["attribute"],
                    v["kind"],
                    "; ".join(
                        f"{x['value'] if x['value'] is not None else '(none)'}"
                        + (
                            f" ({', '.join(f'{k}: {g}' for k, g in x['groups'].items())})"
                            if x["groups"]
                            else ""
                        )
                        for x in v["values"]
                    ),
                )
                for v in prov["variants"]
            ],
            caption="Counterfactual attributes",
            empty="No counterfactual attributes.",
        ),
    )
