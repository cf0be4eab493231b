"""The plugin's own hooks. Implement them in a ``conftest.py`` (or a plugin) of your project."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Rubric
    from pytest_screeneval.scoring.protocol import Scorer
    from pytest_screeneval.session.summary import RunSummary

__all__ = ["pytest_screeneval_run_finished", "pytest_screeneval_scorer"]


@pytest.hookspec(firstresult=True)
def pytest_screeneval_scorer(config: pytest.Config, rubric: Rubric) -> Scorer | None:
    """Return the scorer that the session should evaluate, or None to fall back to the ini
    option ``screeneval_scorer`` (default: the offline ``keyword`` scorer).

    Called once per session, after the rubric is loaded and before collection. The first
    non-None result wins.

    Example ``conftest.py``::

        from pytest_screeneval import CriterionScore, ScorerIdentity

        class MyScreener:
            def __init__(self, rubric):
                self.identity = ScorerIdentity(
                    name="my-screener", model_id="acme-screener-2026-11-01",
                    prompt_sha="<sha256 of the prompt>", rubric_sha=rubric.sha,
                    temperature=0.0,
                )

            async def score(self, text, rubric):
                return [CriterionScore(c.name, 3, f"{c.name}: ...") for c in rubric.criteria]

        def pytest_screeneval_scorer(config, rubric):
            return MyScreener(rubric)
    """


def pytest_screeneval_run_finished(config: pytest.Config, summary: RunSummary) -> None:
    """Called once when a run is recorded and its gates are decided, before the terminal
    summary is printed. Use it to publish the figures elsewhere (a dashboard, a chat message).

    Example ``conftest.py``::

        import json, pathlib

        def pytest_screeneval_run_finished(config, summary):
            failed = [g.name for g in summary.gates if g.failed]
            pathlib.Path("screeneval-status.json").write_text(
                json.dumps({"run": summary.run_id, "failed_gates": failed})
            )
    """
