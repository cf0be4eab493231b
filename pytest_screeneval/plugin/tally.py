"""Counts the golden-set items' outcomes and keeps the failed fairness items, from the reports.

Reports reach the controller of an ``-n`` run too, so the process that owns the run records
them with its verdict (``items`` in the verdict document): the Markdown summary of a stored run
reads them there, whichever process made the run.
"""

from __future__ import annotations

from collections import Counter

import pytest

__all__ = ["ItemTally"]

FAIRNESS_KINDS = {"counterfactual": "gap", "perturbation": "shift"}


class ItemTally:
    def __init__(self, max_gap: float, max_shift: float) -> None:
        self.counts: Counter[str] = Counter()
        self.failed_fairness: list[dict[str, object]] = []
        self._limits = {"counterfactual": max_gap, "perturbation": max_shift}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "screeneval" not in report.keywords:
            return
        outcome = self._outcome(report)
        if outcome is None:
            return
        self.counts[outcome] += 1
        if outcome == "failed":
            self._keep_fairness_failure(report)

    @staticmethod
    def _outcome(report: pytest.TestReport) -> str | None:
        """One outcome per item: its call's, or its setup's when the setup did not pass."""
        xfail = hasattr(report, "wasxfail")
        if report.when == "setup" and not report.passed:
            return "skipped" if report.skipped and not xfail else ("xfailed" if xfail else "error")
        if report.when != "call":
            return None
        if xfail:
            return "xfailed" if report.skipped else "xpassed"
        return report.outcome

    def _keep_fairness_failure(self, report: pytest.TestReport) -> None:
        parts = report.nodeid.split("::")
        if len(parts) < 3:
            return
        kind = parts[-1].split("[", 1)[0]
        if kind not in FAIRNESS_KINDS:
            return
        properties = dict(report.user_properties)
        measured = str(properties.get(f"screeneval.{FAIRNESS_KINDS[kind]}", ""))
        try:
            value: float | None = float(measured)
        except ValueError:
            value = None
        self.failed_fairness.append(
            {"case_id": parts[-2], "item": parts[-1], "value": value, "limit": self._limits[kind]}
        )

    def document(self) -> dict[str, object]:
        """What the verdict records of the items: their outcomes, the failed fairness items."""
        return {
            "counts": dict(sorted(self.counts.items())),
            "failed_fairness": self.failed_fairness,
        }
