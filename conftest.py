"""This repository's own conftest, written the way a user's would be.

It wires the bundled example golden set (``cases/``, see ``[tool.pytest.ini_options]``) to the
offline keyword scorer, so ``pytest --screeneval`` runs it on a fresh clone with no key and no
network. In your project, return your own scorer here (see ``pytest_screeneval.plugin.hookspecs``).
"""

from __future__ import annotations

import pytest

from pytest_screeneval import Rubric, Scorer


def pytest_screeneval_scorer(config: pytest.Config, rubric: Rubric) -> Scorer | None:
    # A scorer named on the command line or in the ini (e.g. the examples/ scorers) wins;
    # otherwise the example set is scored by the offline reference scorer.
    chosen = config.getoption("screeneval_scorer") or config.getini("screeneval_scorer")
    if chosen not in ("", "keyword"):
        return None
    from pytest_screeneval.scoring.keyword import KeywordScorer

    return KeywordScorer(rubric)
