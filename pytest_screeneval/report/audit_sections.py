"""Plain-value sections of the audit document that need no score rows: the run's identity, an
acceptance entry, the golden set's provenance, and rates by group as JSON values."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from pytest_screeneval.evidence.rates import Breakdown, GroupRates
from pytest_screeneval.evidence.significance import ALPHA, CONFIDENCE, Comparison
from pytest_screeneval.golden.model import GoldenSet, Rubric
from pytest_screeneval.store.database import RunRecord

__all__ = ["acceptance_entry", "breakdown_doc", "group_rates_doc", "provenance", "run_identity"]


def run_identity(run: RunRecord, rubric: Rubric) -> dict[str, Any]:
    """What ran: the scorer identity as requested and as served, and where it ran from."""
    return {
        "run_id": run.run_id,
        "status": run.status,
        "scorer": run.scorer,
        "model_requested": run.model_id,
        "model_served": run.served_model,
        "prompt_sha": run.prompt_sha,
        "rubric_id": run.rubric_id,
        "rubric_sha": run.rubric_sha,
        "rubric_version": rubric.version if rubric.sha == run.rubric_sha else None,
        "advance_at": rubric.advance_at,
        "temperature": run.temperature,
        "golden_sha": run.golden_sha,
        "plugin_version": run.plugin_version,
        "vcs_commit": run.vcs_commit,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "notes": run.notes,
        "selection": run.selection,
        "baseline_run_id": run.baseline_run_id,
        "host": run.host,
        "config": dict(run.config),
    }


def acceptance_entry(run: RunRecord) -> dict[str, Any]:
    """One link of the acceptance chain: the run, who accepted it, when, why, what it replaced."""
    acceptance = run.accepted
    return {
        "run_id": run.run_id,
        "scorer": run.scorer,
        "model": run.model_id,
        "status": run.status,
        "started_at": run.started_at,
        "accepted": acceptance is not None,
        "accepted_by": acceptance.accepted_by if acceptance else None,
        "accepted_at": acceptance.accepted_at if acceptance else None,
        "note": acceptance.note if acceptance else None,
        "forced": acceptance.forced if acceptance else None,
        "replaced_run_id": acceptance.previous_baseline_run_id if acceptance else None,
    }


def provenance(golden: GoldenSet, records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """How the golden set was built and by whom: slices, sources, expectations, retirements."""
    cases = golden.cases
    by_slice: dict[str, Counter[str]] = defaultdict(Counter)
    for case in cases:
        for name in case.all_slices:
            by_slice[name]["retired" if case.retired_at else "active"] += 1
    setters: dict[str, dict[str, Any]] = {}
    for case in cases:
        for expectation in case.expected.values():
            entry = setters.setdefault(
                expectation.set_by,
                {"set_by": expectation.set_by, "expectations": 0, "cases": set()},
            )
            entry["expectations"] += 1
            entry["cases"].add(case.id)
            entry.setdefault("dates", []).append(expectation.set_at)
    frozen = sorted(str(r["frozen_at"]) for r in records.values() if r.get("frozen_at"))
    return {
        "cases": len(cases),
        "active": len(golden.active_cases),
        "retired": len(cases) - len(golden.active_cases),
        "by_slice": [
            {"slice": name, "active": count["active"], "retired": count["retired"]}
            for name, count in sorted(by_slice.items())
        ],
        "by_source": [
            {"source": source or "(not stated)", "cases": n}
            for source, n in sorted(Counter(c.source for c in cases).items())
        ],
        "expectations_by": [
            {
                "set_by": e["set_by"],
                "expectations": e["expectations"],
                "cases": len(e["cases"]),
                "first": min(e["dates"]),
                "last": max(e["dates"]),
            }
            for e in sorted(setters.values(), key=lambda e: (-e["expectations"], e["set_by"]))
        ],
        "raters": sorted({r for c in cases for by in c.ratings.values() for r in by}),
        "retired_cases": [
            {
                "case_id": case.id,
                "retired_at": case.retired_at,
                "retired_by": records.get(case.id, {}).get("retired_by"),
                "label": case.label,
            }
            for case in sorted(cases, key=lambda c: (str(c.retired_at), c.id))
            if case.retired_at
        ],
        "frozen_first": frozen[0] if frozen else None,
        "frozen_last": frozen[-1] if frozen else None,
        "rubric": {
            "id": golden.rubric.id,
            "version": golden.rubric.version,
            "sha": golden.rubric.sha,
            "advance_at": golden.rubric.advance_at,
            "scale": [golden.rubric.scale.min, golden.rubric.scale.max],
            "criteria": [
                {"name": c.name, "weight": c.weight, "description": c.description}
                for c in golden.rubric.criteria
            ],
        },
        "variants": [
            {
                "attribute": a.name,
                "kind": a.kind,
                "values": [{"value": v.value, "groups": dict(v.groups)} for v in a.values],
            }
            for a in golden.variants.attributes.values()
        ],
    }


def _test_doc(test: Comparison | None) -> dict[str, Any] | None:
    return test.as_dict() if test is not None else None


def breakdown_doc(item: Breakdown, threshold: float) -> dict[str, Any]:
    return {
        "dimension": item.dimension,
        "unknown": item.unknown,
        "total": item.total,
        "note": item.note,
        "scoring_reference": item.scoring_reference,
        "selection_reference": item.selection_reference,
        "categories": [
            {
                "category": r.category,
                "n": r.n,
                "share": r.share,
                "scored_above": r.scored_above,
                "scoring_rate": r.scoring_rate,
                "scoring_impact_ratio": r.scoring_impact_ratio,
                "selected": r.selected,
                "selection_rate": r.selection_rate,
                "selection_impact_ratio": r.selection_impact_ratio,
                "excluded": r.excluded,
                "below_threshold": list(r.below(threshold)),
                "scoring_test": _test_doc(r.scoring_test),
                "selection_test": _test_doc(r.selection_test),
                "scoring_flag": r.flag("scoring", threshold),
                "selection_flag": r.flag("selection", threshold),
            }
            for r in item.categories
        ],
    }


def group_rates_doc(rates: GroupRates) -> dict[str, Any]:
    return {
        "total": rates.total,
        "median": rates.median,
        "advance_at": rates.advance_at,
        "min_share": rates.min_share,
        "threshold": rates.threshold,
        "tie_rule": rates.tie_rule,
        "significance": {
            "test": "Fisher's exact test, two-sided, each category against the reference",
            "alpha": ALPHA,
            "z": "pooled two-proportion z statistic (negative: below the reference)",
            "interval": f"{CONFIDENCE:.0%} interval on the impact ratio, Katz's log method",
        },
        "breakdowns": [breakdown_doc(b, rates.threshold) for b in rates.breakdowns],
    }
