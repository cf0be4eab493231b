"""The audit page's sections about the run itself: who decides, a summary, identity,
acceptance chain, agreement, movement, and the method. Each takes the audit document."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_screeneval.evidence.gate_status import GateStatus
from pytest_screeneval.report.html.parts import Raw, facts, num, pct, section, table, text, when
from pytest_screeneval.report.html.svg import Bar, interval_bars

__all__ = [
    "acceptance",
    "criteria",
    "decides",
    "gates",
    "method",
    "movement",
    "run",
    "slices",
    "summary",
]

Doc = Mapping[str, Any]


def decides(doc: Doc) -> str:
    final = doc["final_decision"]
    return section(
        "decides",
        "Who decides",
        final["statement"],
        "<p>The scores, rationales and rates below describe what the screener produced on a "
        "frozen set of synthetic, de-identified candidates. They are evidence about the tool, "
        "not decisions about people.</p>",
    )


def summary(doc: Doc) -> str:
    run, acc, mov = doc["run"], doc["acceptance"], doc["movement"]
    criteria = doc["agreement"]["criteria"]
    gated = [s for s in doc["agreement"]["slices"] if s["gated"]]
    gaps = doc["counterfactual"]["attributes"]
    shifts = [k for k in doc["perturbation"]["kinds"] if k["worst_shift"] is not None]
    marked = [
        c
        for b in doc["rates"]["cases"]["breakdowns"]
        for c in b["categories"]
        if c["below_threshold"]
    ]
    unreviewed = [c for c in mov["crossings"] if c["review"] is None]
    worst_gap = max(gaps, key=lambda g: g["worst_gap"], default=None)
    worst_shift = max(shifts, key=lambda k: k["worst_shift"], default=None)
    verdict = doc.get("verdict") or {"summary": "no gate verdict recorded", "failed": []}
    pairs = [
        ("Run", f"{run['run_id']} ({run['status']})"),
        ("Gates", Raw(_gates_fact(verdict))),
        (
            "Accepted",
            f"by {acc['this_run']['accepted_by']} on {when(acc['this_run']['accepted_at'])}"
            if acc["this_run"]
            else "no",
        ),
        ("Compared with", f"run {mov['baseline_run_id']}" if mov["baseline_run_id"] else "none"),
        ("Cases scored", doc["scope"]["cases_scored"]),
        (
            "Worst criterion",
            f"{criteria[0]['criterion']}: {pct(criteria[0]['exact_pct'])} exact"
            if criteria
            else None,
        ),
        (
            "Worst gated slice",
            f"{gated[0]['slice']}: {pct(gated[0]['pct'])} within tolerance" if gated else None,
        ),
        ("Decision crossings", _crossings_fact(len(mov["crossings"]), len(unreviewed))),
        (
            "Worst counterfactual gap",
            f"{num(worst_gap['worst_gap'])} points ({worst_gap['attribute']})"
            if worst_gap
            else None,
        ),
        (
            "Worst perturbation shift",
            f"{num(worst_shift['worst_shift'])} points ({worst_shift['kind']})"
            if worst_shift
            else None,
        ),
        (
            "Impact ratios under the mark",
            f"{len(marked)} categories (test data: the golden set's cases, by group)",
        ),
        ("Golden set changed since the run", doc["scope"]["golden_changed_since_run"]),
    ]
    return section("summary", "At a glance", "", facts(pairs))


def _gates_fact(verdict: Doc) -> str:
    words = text(verdict["summary"])
    return f'<strong class="flag">{words}</strong>' if verdict["failed"] else words


def _crossings_fact(count: int, unreviewed: int) -> str:
    if count == 0:
        return "none: no decision changed against the baseline"
    if unreviewed == 0:
        return f"{count}, all reviewed"
    return f"{count}, {unreviewed} not yet reviewed by a person"


def gates(doc: Doc) -> str:
    """The gate table the run recorded when it finished, statuses as stored."""
    verdict = doc.get("verdict") or {"recorded": False, "gates": [], "summary": ""}
    if not verdict["recorded"]:
        return section(
            "gates", "Gates", "This run recorded no gate verdict (it did not finish).", ""
        )
    rows = [
        (
            g.get("name"),
            Raw(f'<strong class="flag">{text(g.get("status"))}</strong>')
            if g.get("status") == GateStatus.FAIL
            else g.get("status"),
            num(g.get("value")),
            g.get("limit"),
            g.get("n"),
            g.get("detail") or None,
        )
        for g in verdict["gates"]
    ]
    return section(
        "gates",
        "Gates",
        f"As the run judged itself when it finished, with its own settings: {verdict['summary']}.",
        table(["Gate", "Status", "Value", "Limit", "n", "Detail"], rows),
    )


def run(doc: Doc) -> str:
    run = doc["run"]
    identity = [
        ("Scorer", run["scorer"]),
        ("Model as requested", run["model_requested"]),
        ("Model as served", run["model_served"]),
        ("Prompt sha256", run["prompt_sha"]),
        (
            "Rubric",
            f"{run['rubric_id']} version {run['rubric_version']}"
            if run["rubric_version"]
            else f"{run['rubric_id']} (this rubric sha is not in the store; figures use the "
            "latest stored rubric)",
        ),
        ("Rubric sha256", run["rubric_sha"]),
        ("Advance threshold", f"overall ≥ {run['advance_at']:g}"),
        ("Temperature", run["temperature"]),
        ("Golden set sha256", run["golden_sha"]),
        ("Plugin version", run["plugin_version"]),
        ("VCS commit", run["vcs_commit"]),
        ("Started", when(run["started_at"])),
        ("Finished", when(run["finished_at"])),
        ("Status", run["status"]),
        ("Selection", run["selection"] or "everything"),
        ("Notes", run["notes"] or None),
    ]
    config = [(k, json.dumps(v, ensure_ascii=False)) for k, v in sorted(run["config"].items())]
    return section(
        "run",
        "The run",
        "What was tested: the scorer identity that makes two runs comparable.",
        table(["Field", "Value"], identity, code=[1]),
        table(["Setting", "Value"], config, caption="Configuration", code=[1]),
    )


def acceptance(doc: Doc) -> str:
    acc = doc["acceptance"]
    if acc["this_run"]:
        lead = "This run is an accepted baseline; the chain below starts with it."
    elif acc["compared_with"]:
        lead = (
            f"This run is not accepted. It was compared with run {acc['compared_with']['run_id']}, "
            "whose acceptance chain follows."
        )
    else:
        lead = "This run is not accepted and was not compared with any baseline."
    rows = [
        (
            e["run_id"],
            e.get("model"),
            e.get("accepted_by"),
            when(e.get("accepted_at")),
            e.get("forced"),
            e.get("replaced_run_id"),
            e.get("note") if not e.get("missing") else "(run not in the store)",
        )
        for e in acc["chain"]
    ]
    current = acc["current_baseline_run_id"]
    return section(
        "acceptance",
        "Acceptance chain",
        lead,
        table(
            ["Run", "Model", "Accepted by", "Accepted at", "Forced", "Replaced run", "Note"],
            rows,
            numeric=[0, 5],
            empty="No acceptance to show.",
        ),
        f'<p class="note">The current baseline of this rubric is '
        f"{text(f'run {current}' if current else 'none')}.</p>",
        _chain_note(doc),
    )


def _chain_note(doc: Doc) -> str:
    """The audit chain's head as the report was made, to keep outside the store."""
    chain = doc.get("audit_chain")
    if not chain:
        return ""
    head = chain["head"]
    golden = chain.get("run_golden_seq")
    scored = (
        f" The run was scored against the golden set at chain entry {golden}." if golden else ""
    )
    return (
        f'<p class="note">Audit chain head when this report was made: entry {text(head["seq"])} '
        f"<code>{text(head['hash'])}</code>.{text(scored)} Keep it outside the store; "
        f"<code>screeneval verify --expect-head {text(head['seq'])}:{text(head['hash'])}</code> "
        "then fails if the chain was truncated, wiped or re-written.</p>"
    )


def criteria(doc: Doc) -> str:
    tol = doc["limits"]["expected_tolerance"]
    rows = [
        (
            r["criterion"],
            r["cases"],
            r["exact"],
            pct(r["exact_pct"]),
            pct(r["within_pct"]),
            num(r["mae"], 2),
            "–" if r["change"] is None else f"{r['change']:+.1f}",
            f"{r['contested_within_range']}/{r['contested']}",
            r["errors"],
        )
        for r in doc["agreement"]["criteria"]
    ]
    return section(
        "criteria",
        "Agreement by criterion",
        f"Scores against the people's expected scores, worst exact agreement first. Within "
        f"tolerance means at most {tol:g} point away; contested items (raters 2 or more points "
        "apart) are counted apart, as in range when inside the raters' range.",
        table(
            [
                "Criterion",
                "Cases",
                "Exact",
                "Exact %",
                "Within %",
                "MAE",
                "Change",
                "Contested in range",
                "Errors",
            ],
            rows,
            numeric=range(1, 9),
        ),
    )


def slices(doc: Doc) -> str:
    limits = doc["limits"]
    slices = doc["agreement"]["slices"]
    bars = [
        Bar(s["slice"], s["pct"], s["ci_low"], s["ci_high"], muted=not s["gated"]) for s in slices
    ]
    chart = interval_bars(
        bars,
        gate=limits["min_worst_slice"],
        gate_label=f"gate {limits['min_worst_slice']:g}%",
        title="Agreement by slice with 95% Wilson intervals",
    )
    rows = [
        (
            s["slice"],
            s["cases"],
            s["items"],
            s["within"],
            pct(s["pct"]),
            f"{s['ci_low']:.1f}–{s['ci_high']:.1f}%",
            "yes" if s["gated"] else f"no (n < {limits['slice_min_n']})",
        )
        for s in slices
    ]
    return section(
        "slices",
        "Agreement by slice",
        "Share of (case, criterion) items within tolerance per slice, worst first, with a 95% "
        f"Wilson interval. The gate asks at least {limits['min_worst_slice']:g}% on the worst "
        f"slice; slices with fewer than {limits['slice_min_n']} cases are shown pale, not gated.",
        '<div class="figure">',
        Raw(chart),
        table(
            ["Slice", "Cases", "Items", "Within", "%", "95% interval", "Gated"],
            rows,
            numeric=range(1, 6),
        ),
        "</div>",
    )


def _review(review: Mapping[str, Any] | None) -> str:
    if review is None:
        return "not reviewed"
    return f"{review['by']} ({when(review['at'])}): {review['note']}"


def movement(doc: Doc) -> str:
    mov = doc["movement"]
    if mov["baseline_run_id"] is None:
        return section(
            "movement",
            "Movement against the baseline",
            "This run was not compared with a baseline, so nothing can have moved.",
        )
    moved = [
        (
            m["case_id"],
            m["criterion"],
            m["before"],
            m["after"],
            f"{m['delta']:+d}",
            _review(m["review"]),
        )
        for m in mov["movements"]
    ]
    flips = [
        (
            c["case_id"],
            f"{c['before']} ({c['before_overall']:.1f})",
            f"{c['after']} ({c['after_overall']:.1f})",
            _review(c["review"]),
        )
        for c in mov["crossings"]
    ]
    return section(
        "movement",
        "Movement against the baseline",
        f"Against run {mov['baseline_run_id']}: {len(mov['movements'])} of {mov['compared']} "
        f"compared items moved; {len(mov['crossings'])} decisions crossed the advance threshold. "
        "A review records that a person read the movement.",
        table(
            ["Case", "Criterion", "Before", "After", "Change", "Review"],
            moved,
            numeric=[2, 3, 4],
            caption="Moved scores, biggest first",
            empty="Nothing moved.",
        ),
        table(
            ["Case", "Before", "After", "Review"],
            flips,
            caption="Crossings (decision flips)",
            empty="No decision flipped.",
        ),
    )


def method(doc: Doc) -> str:
    limits = doc["limits"]
    scope = doc["scope"]
    pairs = [
        ("Expected-score tolerance", f"{limits['expected_tolerance']:g} point"),
        (
            "Worst-slice gate",
            f"{limits['min_worst_slice']:g}% (slices with n ≥ {limits['slice_min_n']})",
        ),
        ("Counterfactual gap limit", f"{limits['max_gap']:g} overall points"),
        ("Perturbation shift limit", f"{limits['max_perturbation_shift']:g} overall points"),
        ("Impact-ratio mark", f"under {limits['impact_ratio_mark']:g}"),
        ("Small-category exclusion", f"under {limits['rates_min_share']:.0%} of the data"),
        ("Score rows read", scope["score_rows"]),
        ("Scorer errors", scope["scorer_errors"]),
        ("Active cases not scored", ", ".join(scope["active_cases_not_scored"]) or "none"),
        ("Golden set sha256 now", Raw(f"<code>{text(scope['golden_sha_now'])}</code>")),
    ]
    return section(
        "method",
        "Method and limits",
        "Every figure is recomputed from the run's stored score rows (first repeat of each "
        "text). Expected scores, ratings and demographics are the golden set as stored when "
        "this report was generated; the overall score is the weighted mean of each criterion's "
        "place on the rubric's scale, 0–100.",
        facts(pairs),
    )
