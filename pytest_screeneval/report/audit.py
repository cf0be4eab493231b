"""The audit document of one stored run: every figure an auditor asks for, as plain JSON values.

``build_audit`` reads the run, its score rows, its baseline, the reviews, the acceptances and the
golden set from the store and recomputes each table from those rows, so the document of a run
looks the same whenever it is built (only ``generated_at`` differs). ``screeneval report RUN
--json PATH`` writes it; ``report/html/page.py`` renders it as one self-contained page.

Figures rest on the golden set *as stored when the report is built* (expectations, ratings,
demographics); the document says so, and says whether the golden set changed since the run.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pytest_screeneval.errors import ScreenevalError, StoreError
from pytest_screeneval.evidence.fairness_summary import (
    FairnessCases,
    collect,
    gap_summary,
    shift_summary,
)
from pytest_screeneval.evidence.historical import AGE
from pytest_screeneval.evidence.metrics import (
    criterion_agreement,
    crossings,
    movements,
    overall_by_case,
    slice_agreement,
)
from pytest_screeneval.evidence.rates import (
    IMPACT_THRESHOLD,
    MIN_SHARE,
    RACE,
    SEX,
    Candidate,
    GroupRates,
    group_rates,
)
from pytest_screeneval.evidence.reliability import rater_agreement
from pytest_screeneval.golden.model import DECISION, ORIGINAL, Case, GoldenSet, Rubric, Variants
from pytest_screeneval.probes.counterfactual import VariantScores, variant_key
from pytest_screeneval.report.audit_noise import noise_document, served_document
from pytest_screeneval.report.audit_sections import (
    acceptance_entry,
    group_rates_doc,
    provenance,
    run_identity,
)
from pytest_screeneval.report.datasheet import datasheet
from pytest_screeneval.report.historical import recorded_document
from pytest_screeneval.report.run_verdict import verdict_document
from pytest_screeneval.store.database import Acceptance, RunRecord, ScoreRow, Store, utc_now
from pytest_screeneval.store.historical import historical_audits

__all__ = [
    "FORMAT",
    "PERTURB_PREFIX",
    "build_audit",
    "run_movement",
    "write_audit_json",
]

FORMAT = "screeneval-audit/1"
PERTURB_PREFIX = "perturb:"
WORST_CASES_SHOWN = 5

Table = dict[tuple[str, str], int | None]


def build_audit(
    store: Store,
    run_id: int,
    *,
    final_decision_by: str,
    tolerance: float = 1.0,
    slice_min_n: int = 5,
    max_gap: float = 3.0,
    min_worst_slice: float = 80.0,
    max_perturbation_shift: float = 5.0,
) -> dict[str, Any]:
    """The audit document of run ``run_id``: identity, acceptance chain, agreement, movement,
    counterfactual gaps, perturbations, rater agreement, provenance, rates by group, and who
    makes the final decision. Raises StoreError when the run does not exist."""
    if not final_decision_by.strip():
        raise ScreenevalError("The audit report needs the name of who makes the final decision.")
    run = store.get_run(run_id)
    golden = store.load_golden_set()
    rubric = store.get_rubric(run.rubric_id, run.rubric_sha) or golden.rubric
    rows = store.scores(run_id)
    cases = {case.id: case for case in golden.cases}
    table = _table(rows, ORIGINAL)
    scored = [cases[c] for c in sorted({k[0] for k in table}) if c in cases]
    judged = [c for c in scored if all(n in c.expected for n in rubric.criterion_names)]
    baseline = _baseline(store, run)
    baseline_rows = store.scores(baseline.run_id) if baseline else []
    baseline_table = _table(baseline_rows, ORIGINAL) if baseline else None
    overall = overall_by_case(rubric, table)
    fairness = _fairness_cases(rows, rubric, golden.variants)
    records = store.case_records()
    return {
        "format": FORMAT,
        "generated_at": utc_now(),
        "run": run_identity(run, rubric),
        "limits": {
            "expected_tolerance": tolerance,
            "slice_min_n": slice_min_n,
            "min_worst_slice": min_worst_slice,
            "max_gap": max_gap,
            "max_perturbation_shift": max_perturbation_shift,
            "impact_ratio_mark": IMPACT_THRESHOLD,
            "rates_min_share": MIN_SHARE,
        },
        "scope": _scope(rows, table, scored, judged, golden, run),
        # the gates as the run judged them when it finished (stored, chained; not recomputed)
        "verdict": verdict_document(run),
        "acceptance": _acceptance(store, run, baseline),
        # the audit chain's head as this report was made: kept with the report, it anchors the
        # store (`screeneval verify --expect-head SEQ:HASH`)
        "audit_chain": {
            "head": store.chain_head().as_dict(),
            "run_golden_seq": run.golden_seq,
        },
        "agreement": _agreement(judged, rubric, table, baseline_table, tolerance, slice_min_n),
        "movement": _movement(store, rubric, run, baseline, table, baseline_table),
        "counterfactual": _counterfactual(fairness, max_gap),
        "perturbation": _perturbation(fairness, max_perturbation_shift),
        # re-scores are stored rows: the noise the run measured, as the store shows it
        "noise": noise_document(rows, rubric, int(run.config.get("repeat", 1) or 1)),
        # what the provider served, beside the noise: a backend change moves both
        "served_backend": served_document(
            rows, baseline_rows, baseline.run_id if baseline else None
        ),
        "raters": _raters(golden, rubric),
        "provenance": provenance(golden, records),
        "datasheet": datasheet(golden, records),
        "rates": _rates(golden, rubric, rows, scored, overall),
        # a bias audit on historical data: filled in by `screeneval audit FILE --run RUN`
        "historical": None,
        "historical_records": recorded_document(historical_audits(store)),
        "final_decision": {
            "by": final_decision_by,
            "statement": (
                "The screener never decides about a candidate. It scores and explains; every "
                f"decision to advance or hold a candidate is made by {final_decision_by}."
            ),
        },
    }


def write_audit_json(document: Mapping[str, Any], path: Path) -> None:
    from pytest_screeneval.boundary.documents import safe_document

    path.parent.mkdir(parents=True, exist_ok=True)
    # the run's config and rows as stored: a run stored before redaction still leaks nothing
    text = json.dumps(safe_document(document), indent=2, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Score tables
# --------------------------------------------------------------------------------------------


def _table(rows: Sequence[ScoreRow], variant: str) -> Table:
    """(case, criterion) → score of one variant's first repeat (None where the scorer failed)."""
    return {
        (r.case_id, r.criterion): r.score
        for r in rows
        if r.variant_key == variant and r.repeat_index == 0
    }


def _variant_overall(rows: Sequence[ScoreRow], rubric: Rubric) -> dict[tuple[str, str], Any]:
    """(case, variant key) → VariantScores, or None when a criterion is missing or failed."""
    scores: dict[tuple[str, str], dict[str, int | None]] = defaultdict(dict)
    for r in rows:
        if r.variant_key != ORIGINAL and r.repeat_index == 0:
            scores[(r.case_id, r.variant_key)][r.criterion] = r.score
    result: dict[tuple[str, str], Any] = {}
    for key, by_criterion in scores.items():
        usable = {c: s for c, s in by_criterion.items() if s is not None}
        if all(name in usable for name in rubric.criterion_names):
            criteria = {n: float(usable[n]) for n in rubric.criterion_names}
            result[key] = VariantScores(rubric.overall(criteria), criteria)
        else:
            result[key] = None
    return result


def _baseline(store: Store, run: RunRecord) -> RunRecord | None:
    if run.baseline_run_id is None:
        return None
    return store.get_run(run.baseline_run_id)


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------


def _scope(
    rows: Sequence[ScoreRow],
    table: Table,
    scored: Sequence[Case],
    judged: Sequence[Case],
    golden: GoldenSet,
    run: RunRecord,
) -> dict[str, Any]:
    case_ids = {k[0] for k in table}
    active = {c.id for c in golden.active_cases}
    return {
        "score_rows": len(rows),
        "cases_scored": len(case_ids),
        "cases_with_expectations": len(judged),
        "cases_unknown_to_store": sorted(case_ids - {c.id for c in scored}),
        "active_cases_not_scored": sorted(active - case_ids),
        "scorer_errors": sum(1 for r in rows if r.error),
        "variant_texts": len({(r.case_id, r.variant_key) for r in rows if r.variant_key}),
        "golden_sha_now": golden.sha,
        "golden_changed_since_run": golden.sha != run.golden_sha,
    }


def _acceptance(store: Store, run: RunRecord, baseline: RunRecord | None) -> dict[str, Any]:
    """This run's acceptance and the chain of baselines back from it (or from its baseline)."""
    chain: list[dict[str, Any]] = []
    current: RunRecord | None = run if run.accepted else baseline
    seen: set[int] = set()
    while current is not None and current.run_id not in seen:
        seen.add(current.run_id)
        acceptance: Acceptance | None = current.accepted
        chain.append(acceptance_entry(current))
        if acceptance is None or acceptance.previous_baseline_run_id is None:
            break
        try:
            current = store.get_run(acceptance.previous_baseline_run_id)
        except StoreError:
            chain.append({"run_id": acceptance.previous_baseline_run_id, "missing": True})
            break
    latest = store.baseline(run.rubric_id)
    return {
        "this_run": acceptance_entry(run) if run.accepted else None,
        "compared_with": acceptance_entry(baseline) if baseline else None,
        "chain": chain,
        "current_baseline_run_id": latest.run_id if latest else None,
    }


def _agreement(
    cases: Sequence[Case],
    rubric: Rubric,
    table: Table,
    baseline_table: Table | None,
    tolerance: float,
    slice_min_n: int,
) -> dict[str, Any]:
    ids = {c.id for c in cases}
    mine = {k: v for k, v in table.items() if k[0] in ids}
    theirs = {k: v for k, v in baseline_table.items() if k in mine} if baseline_table else None
    criteria = criterion_agreement(cases, rubric, mine, tolerance, theirs)
    slices = slice_agreement(cases, mine, tolerance)
    return {
        "criteria": [
            asdict(r) | {"exact_pct": r.exact_pct, "within_pct": r.within_pct, "change": r.change}
            for r in criteria
        ],
        "slices": [asdict(s) | {"pct": s.pct, "gated": s.cases >= slice_min_n} for s in slices],
    }


def _movement(
    store: Store,
    rubric: Rubric,
    run: RunRecord,
    baseline: RunRecord | None,
    table: Table,
    baseline_table: Table | None,
) -> dict[str, Any]:
    if baseline is None or baseline_table is None:
        return {"baseline_run_id": None, "compared": 0, "movements": [], "crossings": []}
    # a review covers the same movement against the same baseline, whichever run showed it
    reviews = {
        (r.case_id, r.target, r.before, r.after): r
        for r in store.reviews(baseline_run_id=baseline.run_id)
    }

    def reviewed(case_id: str, target: str, before: str, after: str) -> dict[str, Any] | None:
        review = reviews.get((case_id, target, before, after))
        if review is None:
            return None
        return {"by": review.reviewed_by, "at": review.reviewed_at, "note": review.note}

    moved = movements(table, baseline_table)
    flips = crossings(rubric, table, baseline_table)
    compared = sum(
        1 for k, v in table.items() if v is not None and baseline_table.get(k) is not None
    )
    return {
        "baseline_run_id": baseline.run_id,
        "compared": compared,
        "movements": [
            asdict(m)
            | {"delta": m.delta}
            | {"review": reviewed(m.case_id, m.criterion, str(m.before), str(m.after))}
            for m in moved
        ],
        "crossings": [
            asdict(c) | {"review": reviewed(c.case_id, DECISION, c.before, c.after)} for c in flips
        ],
    }


def run_movement(store: Store, run: RunRecord) -> dict[str, Any]:
    """The audit document's movement section alone: the run's movements and crossings against
    its baseline, each with the review that covers it (the Markdown summary reads this)."""
    rubric = store.get_rubric(run.rubric_id, run.rubric_sha) or store.load_golden_set().rubric
    baseline = _baseline(store, run)
    table = _table(store.scores(run.run_id), ORIGINAL)
    baseline_table = _table(store.scores(baseline.run_id), ORIGINAL) if baseline else None
    return _movement(store, rubric, run, baseline, table, baseline_table)


def _fairness_cases(rows: Sequence[ScoreRow], rubric: Rubric, variants: Variants) -> FairnessCases:
    """Every stored answer grouped as the live summary groups its results (one computation)."""
    answers: dict[tuple[str, str], dict[int, dict[str, int]]] = defaultdict(dict)
    for r in rows:
        levels = answers[(r.case_id, r.variant_key)].setdefault(r.repeat_index, {})
        if r.score is not None and r.error is None:
            levels[r.criterion] = r.score
    order = {
        attribute: [variant_key(attribute, v.value).split("=", 1)[1] for v in spec.values]
        for attribute, spec in variants.attributes.items()
    }
    return collect(
        {key: [lv for _r, lv in sorted(by.items())] for key, by in answers.items()}, rubric, order
    )


def _counterfactual(cases: FairnessCases, max_gap: float) -> dict[str, Any]:
    by_case = {a: {c.case_id: c for c in found} for a, found in cases.counterfactual.items()}
    attributes = []
    for attribute, gap in gap_summary(cases.counterfactual).items():
        worst = sorted(gap.case_gaps.items(), key=lambda kv: (-kv[1], kv[0]))
        attributes.append(
            gap.as_dict()
            | {
                "attribute": attribute,
                "over_limit": sum(1 for g in gap.case_gaps.values() if g > max_gap + 1e-9),
                "failed_variants": cases.failed_variants.get(attribute, 0),
                "worst_cases": [
                    {
                        "case_id": case_id,
                        "gap": case_gap,
                        "overall": by_case[attribute][case_id].means(),
                    }
                    for case_id, case_gap in worst[:WORST_CASES_SHOWN]
                ],
            }
        )
    return {"max_gap": max_gap, "attributes": attributes}


def _perturbation(cases: FairnessCases, limit: float) -> dict[str, Any]:
    shifts = shift_summary(cases.perturbation)
    kinds = []
    for kind in sorted(set(cases.perturbation) | set(cases.failed_examples)):
        found = shifts.get(kind)
        failed = cases.failed_examples.get(kind, 0)
        over = sum(
            1
            for case in cases.perturbation.get(kind, ())
            if case.original
            for shift in case.shifts().values()
            if shift > limit + 1e-9
        )
        kinds.append(
            {
                "kind": kind,
                "texts": (found.texts if found else 0) + failed,
                "cases": found.n_cases if found else 0,
                "worst_shift": found.worst_shift if found else None,
                "worst_case": found.worst_case if found else None,
                "mean_shift": found.mean_shift if found else None,
                "over_limit": over,
                "failed": failed,
            }
        )
    return {"max_shift": limit, "kinds": kinds}


def _raters(golden: GoldenSet, rubric: Rubric) -> dict[str, Any]:
    """How far the raters of the active cases agree, per criterion and pooled."""
    cases = golden.active_cases
    rows = []
    pooled: dict[str, Mapping[str, int]] = {}
    for criterion in rubric.criterion_names:
        units = {c.id: c.ratings[criterion] for c in cases if c.ratings.get(criterion)}
        pooled.update({f"{case_id}/{criterion}": r for case_id, r in units.items()})
        rows.append(
            asdict(rater_agreement(units))
            | {
                "criterion": criterion,
                "cases_rated": len(units),
                "contested": sum(1 for c in cases if c.is_contested(criterion)),
            }
        )
    raters = sorted({r for c in cases for by in c.ratings.values() for r in by})
    return {"raters": raters, "criteria": rows, "pooled": asdict(rater_agreement(pooled))}


def _rates(
    golden: GoldenSet,
    rubric: Rubric,
    rows: Sequence[ScoreRow],
    scored: Sequence[Case],
    overall: Mapping[str, float],
) -> dict[str, Any]:
    candidates = [
        Candidate(case.id, overall[case.id], dict(case.demographics))
        for case in scored
        if case.id in overall
    ]
    dimensions = [SEX, RACE] + ([AGE] if any(c.label(AGE) for c in candidates) else [])
    by_case = group_rates(candidates, rubric.advance_at, dimensions=dimensions)
    variant_groups: dict[str, GroupRates] = {}
    variant_scores = _variant_overall(rows, rubric)
    for name, attribute in sorted(golden.variants.attributes.items()):
        groups = {variant_key(name, v.value): dict(v.groups) for v in attribute.values if v.groups}
        if not groups:
            continue
        rated = [
            Candidate(f"{case_id}/{key}", scores.overall, groups[key])
            for (case_id, key), scores in sorted(variant_scores.items())
            if key in groups and scores is not None
        ]
        if not rated:
            continue
        present = list(dict.fromkeys(k for g in groups.values() for k in g))
        dimensions = [d for d in (SEX, RACE) if d in present] + [
            d for d in present if d not in (SEX, RACE)
        ]
        variant_groups[name] = group_rates(rated, rubric.advance_at, dimensions=dimensions)
    sources = Counter(case.source or "(not stated)" for case in scored)
    how = "; ".join(f"{n} case(s): {source}" for source, n in sorted(sources.items()))
    data = {
        "data": "test",
        "label": (
            f"Test data: the golden set (sha256 {golden.sha}), {len(candidates)} scored cases of "
            f"{len(golden.active_cases)} active"
        ),
        "why_not_historical": (
            "these rates describe the screener on its golden set, a frozen set of synthetic "
            "test cases scored by this run, so that the tool can be tested before and between "
            "uses; they are not the screener's real use. Historical data of its real use is "
            "audited with `screeneval audit FILE --run RUN`, shown in the section on historical "
            "data when it was given; where that section says none was given, no historical data "
            "was available to this report."
        ),
        "how_generated": (
            f"{how}. The demographics (sex, race/ethnicity, age band) were invented with each "
            "case, recorded beside it and never shown to the scorer; expected scores were set by "
            "the named raters in the datasheet."
        ),
    }
    return {
        "data": data,
        "cases": group_rates_doc(by_case),
        "candidates": [
            {
                "case_id": c.id,
                "overall": c.overall,
                "decision": rubric.decision(c.overall),
                SEX: c.label(SEX) or "unknown",
                RACE: c.label(RACE) or "unknown",
            }
            for c in candidates
        ],
        "variants": {name: group_rates_doc(r) for name, r in variant_groups.items()},
    }
