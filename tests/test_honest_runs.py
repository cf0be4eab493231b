"""Issue 14, items 6-13: each failure reproduced, then fixed (wrong served model, a store error at
the close, a leaked API key, terminal control characters, tracebacks, scorer errors on xfail
items, exact impact ratios, colliding slice names)."""

from __future__ import annotations

import pytest
from plugin_project import CASES, expected_scores, make_case, set_scores, write_project

from pytest_screeneval.golden.load import PERTURBATION_KEYWORDS
from pytest_screeneval.probes.perturb import PERTURBATION_KINDS

# --------------------------------------------------------------------------------------------
# 13. Slice names that collide with item keywords
# --------------------------------------------------------------------------------------------


def test_the_loader_knows_every_perturbation_kind() -> None:
    assert PERTURBATION_KEYWORDS == PERTURBATION_KINDS


@pytest.mark.parametrize(
    "slice_name, what",
    [
        ("ocr-noise", "a perturbation kind"),
        ("Counterfactual", "an item kind (counterfactual)"),
        ("decision", "an item kind (decision)"),
        ("skills", "a criterion of the rubric"),
        ("gap", "a counterfactual attribute"),
    ],
)
def test_a_slice_named_like_an_item_keyword_is_refused_at_load(
    pytester: pytest.Pytester, slice_name: str, what: str
) -> None:
    cases = [make_case(case_id) for case_id in CASES]
    cases[0] = make_case("al-001", slices=("synthetic", slice_name))
    write_project(pytester, cases)
    set_scores(pytester, expected_scores())
    result = pytester.runpytest("--screeneval", "-k", slice_name)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    result.stdout.fnmatch_lines(
        [
            f"*cases/alpha/al-001.yaml, line *: case al-001: slice {slice_name!r} is also "
            f"{what}, so `-k {slice_name}` would select both; rename the slice*"
        ]
    )
    assert "Traceback" not in result.stdout.str()
