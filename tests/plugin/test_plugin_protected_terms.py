"""``screeneval_protected_terms = path.yaml`` end to end: a project's own protected terms fail the
items whose rationale uses them, ``replace: true`` drops the built-in list, and a bad file stops
the run with one sentence naming it (the loader's details: tests/unit/test_protected_terms.py)."""

from __future__ import annotations

import pytest
from support.plugin_project import expected_scores, set_scores, write_project

# A term some jurisdictions protect and the built-in list does not have.
CASTE_TERMS = """\
categories:
  caste: caste or descent
terms:
  - category: caste
    gate: dalit caste
    pattern: '\\bdalit\\b|\\bcaste\\b'
"""
CASTE_RATIONALE = (
    "The experience criterion scores 3: she built weekly sales reports in SQL and Python, "
    "and her caste should not matter."
)
AGE_RATIONALE = (
    "The experience criterion scores 3: she built weekly sales reports in SQL and Python, "
    "though her age may slow her down."
)
ITEM = ("-k", "al-001 and experience")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester)
    return pytester


def _rationale(pytester: pytest.Pytester, text: str) -> None:
    set_scores(pytester, expected_scores(), rationales={"al-001": {"experience": text}})


def test_a_project_term_fails_its_item_and_the_builtin_terms_still_apply(
    project: pytest.Pytester,
) -> None:
    (project.path / "terms.yaml").write_text(CASTE_TERMS, encoding="utf-8")
    _rationale(project, CASTE_RATIONALE)
    # without the project's file the rationale passes: the term is not built in
    project.runpytest("--screeneval", *ITEM).assert_outcomes(passed=1)
    with_terms = ("-o", "screeneval_protected_terms=terms.yaml")
    result = project.runpytest("--screeneval", *ITEM, *with_terms)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*flags      protected-attribute",
            "*FAILED     the rationale refers to a protected attribute*",
        ]
    )
    _rationale(project, AGE_RATIONALE)
    project.runpytest("--screeneval", *ITEM, *with_terms).assert_outcomes(failed=1)


def test_replace_true_drops_the_builtin_terms(project: pytest.Pytester) -> None:
    (project.path / "terms.yaml").write_text("replace: true\n" + CASTE_TERMS, encoding="utf-8")
    _rationale(project, AGE_RATIONALE)
    project.runpytest("--screeneval", *ITEM).assert_outcomes(failed=1)
    result = project.runpytest("--screeneval", *ITEM, "-o", "screeneval_protected_terms=terms.yaml")
    result.assert_outcomes(passed=1)


def test_a_bad_file_stops_the_run_with_one_sentence(project: pytest.Pytester) -> None:
    (project.path / "terms.yaml").write_text("terms:\n  - category: age\n    pattern: x: y\n")
    result = project.runpytest("--screeneval", "-o", "screeneval_protected_terms=terms.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: Cannot use the protected terms in terms.yaml, line 3: invalid YAML (*)."]
    )
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    result = project.runpytest("--screeneval", "-o", "screeneval_protected_terms=missing.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: Cannot read the protected terms file missing.yaml (No such file or directory)."]
    )
