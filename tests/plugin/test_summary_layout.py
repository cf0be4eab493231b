"""The terminal summary leads with the verdict (gates, then movements and
crossings, then the detail), folds small slices into one line unless -v, shows only the
criteria -k selected, and the review hint names the real run id."""

from __future__ import annotations

import pytest
from support.plugin_project import expected_scores, set_scores, write_project

pytest_plugins = ["pytester"]

ACCEPT = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester)
    return pytester


def summary_of(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if " screeneval " in line and "===" in line)
    return lines[start:]


def index_of(lines: list[str], prefix: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(prefix))


def test_the_gate_table_comes_first_and_small_slices_fold(project: pytest.Pytester) -> None:
    lines = summary_of(project.runpytest("--screeneval", "-o", "screeneval_slice_min_n=6"))
    gates = index_of(lines, "Gates")
    assert gates < index_of(lines, "Agreement by criterion") < index_of(lines, "Agreement by slice")
    assert lines[gates + 1].split()[:6] == ["gate", "value", "limit", "n", "status", "detail"]
    assert any(line.startswith("gates: ") for line in lines[gates : gates + 20])
    # alpha and beta have 5 cases each, under n=6: one line, not two table rows
    folded = [line for line in lines if "slices under n=6 not gated and not shown" in line]
    assert folded == ["  2 slices under n=6 not gated and not shown (alpha, beta); -v shows them"]
    assert not any(line.startswith("  alpha ") for line in lines)


def test_verbose_shows_every_slice(project: pytest.Pytester) -> None:
    lines = summary_of(project.runpytest("--screeneval", "-v", "-o", "screeneval_slice_min_n=6"))
    assert any(line.startswith("  alpha ") and line.rstrip().endswith("no") for line in lines)
    assert not any("not gated and not shown" in line for line in lines)


def test_only_the_selected_criteria_are_shown(project: pytest.Pytester) -> None:
    lines = summary_of(project.runpytest("--screeneval", "-k", "communication and criterion"))
    start = index_of(lines, "Agreement by criterion")
    assert "2 criteria not selected" in lines[start]
    rows = lines[start + 2 : index_of(lines, "Agreement by slice") - 1]
    assert [row.split()[0] for row in rows] == ["communication"]


def test_the_review_hint_names_the_run(project: pytest.Pytester) -> None:
    assert project.runpytest("--screeneval", *ACCEPT).ret == 0
    scores = expected_scores()
    scores["be-001"] = {"skills": 2, "experience": 2, "communication": 2}  # a decision crossing
    set_scores(project, scores)
    result = project.runpytest("--screeneval", "-o", "screeneval_expected_tolerance=2")
    lines = summary_of(result)
    assert index_of(lines, "Gates") < index_of(lines, "Movements against run 1")
    assert index_of(lines, "Crossings (decision flips): 1") < index_of(lines, "Agreement by")
    assert "  review one: screeneval review 2 CASE --by NAME --note TEXT" in lines
    assert "screeneval review 2 be-001 --by NAME --note TEXT" in result.stdout.str()
