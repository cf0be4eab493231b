"""``--screeneval-json PATH``: every figure of the terminal summary, as one JSON document."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_screeneval.session.core import ScreenevalSession
    from pytest_screeneval.session.summary import RunSummary

__all__ = ["summary_document", "write_json"]


def summary_document(
    summary: RunSummary, session: ScreenevalSession | None = None
) -> dict[str, Any]:
    base = summary.baseline
    return {
        "run_id": summary.run_id,
        "status": summary.status,
        "identity": summary.identity,
        "served_models": list(summary.served_models),
        "baseline": None
        if base is None
        else {
            "run_id": base.run_id,
            "scorer": base.scorer,
            "model_id": base.model_id,
            "accepted_by": base.accepted.accepted_by if base.accepted else None,
            "accepted_at": base.accepted.accepted_at if base.accepted else None,
            "note": base.accepted.note if base.accepted else None,
        },
        "selection": summary.selection,
        "calls": summary.calls,
        "errors": summary.errors,
        "duration_s": round(summary.duration_s, 3),
        "agreement": [
            asdict(r) | {"exact_pct": r.exact_pct, "within_pct": r.within_pct, "change": r.change}
            for r in summary.agreement
        ],
        "slices": [
            asdict(s) | {"pct": s.pct, "gated": s.cases >= summary.slice_min_n}
            for s in summary.slices
        ],
        "movements": [asdict(m) | {"delta": m.delta} for m in summary.movements],
        "crossings": [
            asdict(c) | {"reviewed_by": summary.reviewed_crossings.get(c.case_id)}
            for c in summary.crossings
        ],
        "counterfactual": summary.counterfactual,
        "perturbation": summary.perturbation,
        "self_consistency": None
        if summary.consistency is None
        else asdict(summary.consistency) | {"pct": summary.consistency.pct},
        "rater_agreement": {
            name: asdict(agreement) for name, agreement in summary.rater_agreement.items()
        },
        "gates": [g.as_dict() for g in summary.gates],
        "noise": summary.noise,
        "confirmation": summary.confirmation,
        "served_backend": summary.served_backend,
        "pacing": summary.pacing,
        "rationale_judge": summary.rationale_judge,
        "accepted": summary.accepted,
        "acceptance_error": session.acceptance_error if session is not None else None,
        "warnings": summary.warnings,
    }


def write_json(
    summary: RunSummary,
    path: Path,
    session: ScreenevalSession | None = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Write the summary document; ``extra`` adds what only the run's close knows (what a
    partial run is missing, the audit chain's head after the run)."""
    document = summary_document(summary, session) | dict(extra or {})
    from pytest_screeneval.boundary.documents import safe_document

    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(safe_document(document), indent=2, default=str)
    path.write_text(text + "\n", encoding="utf-8")
