"""The Markdown summary of a stored run: :class:`MarkdownRun` filled from the store.

The plugin (``--screeneval-markdown``, the GitHub step summary) and ``screeneval show RUN
--format markdown`` both call :func:`markdown_of_run` on the finished run, so what CI shows and
what a person asks for later come from the same rows. The gates are the documents the run
recorded when it finished (not recomputed); movements and crossings are the audit document's,
with the reviews recorded so far; the chain head is the store's as the summary is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_screeneval.report.audit import run_movement
from pytest_screeneval.report.markdown import (
    FairnessFailure,
    MarkdownRun,
    MovedItem,
    ReviewableCrossing,
    render_markdown,
)

if TYPE_CHECKING:
    from pytest_screeneval.store.database import Store
__all__ = ["markdown_of_run", "summary_of_run"]


def _reviewer(entry: Mapping[str, Any]) -> str | None:
    review = entry.get("review")
    return str(review["by"]) if isinstance(review, Mapping) else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def summary_of_run(store: Store, run_id: int) -> MarkdownRun:
    """What the Markdown summary of run ``run_id`` shows, read from the store."""
    run = store.get_run(run_id)
    verdict: Mapping[str, Any] = run.verdict or {}
    movement = run_movement(store, run)
    baseline = store.get_run(run.baseline_run_id) if run.baseline_run_id is not None else None
    items = verdict.get("items")
    counts = items.get("counts") if isinstance(items, Mapping) else None
    failures = items.get("failed_fairness") if isinstance(items, Mapping) else None
    notes = [] if run.verdict is not None else [f"Run {run_id} recorded no gate verdict."]
    head = store.chain_head()
    return MarkdownRun(
        run_id=run.run_id,
        status=run.status,
        scorer=run.scorer,
        model_id=run.model_id,
        gates=[g for g in verdict.get("gates") or () if isinstance(g, Mapping)],
        baseline_run_id=run.baseline_run_id,
        baseline_accepted_by=baseline.accepted.accepted_by
        if baseline is not None and baseline.accepted is not None
        else None,
        items={str(k): int(v) for k, v in counts.items()} if isinstance(counts, Mapping) else None,
        movements=[
            MovedItem(m["case_id"], m["criterion"], m["before"], m["after"], _reviewer(m))
            for m in movement["movements"]
        ],
        crossings=[
            ReviewableCrossing(
                c["case_id"],
                f"{c['before_overall']:.1f} {c['before']}",
                f"{c['after_overall']:.1f} {c['after']}",
                _reviewer(c),
            )
            for c in movement["crossings"]
        ],
        fairness_failures=None
        if failures is None
        else [
            FairnessFailure(
                str(f.get("case_id")),
                str(f.get("item")),
                _number(f.get("value")),
                _number(f.get("limit")),
            )
            for f in failures
            if isinstance(f, Mapping)
        ],
        chain_head=f"{head.seq}:{head.hash}" if head.seq else None,
        missing=verdict.get("missing"),
        inconclusive_fails=run.config.get("inconclusive") == "fail",
        notes=notes,
    )


def markdown_of_run(store: Store, run_id: int) -> str:
    """The Markdown summary of run ``run_id``."""
    return render_markdown(summary_of_run(store, run_id))
