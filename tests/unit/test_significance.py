"""The tests beside every impact ratio, against values published with the methods and worked
by hand; tests/slow/test_significance_reference.py holds them to an independent implementation
(SciPy, a development dependency only)."""

from __future__ import annotations

import math

import pytest

from pytest_screeneval.evidence.significance import (
    compare,
    fisher_exact,
    flag_text,
)

SIX_DIGITS = 5e-7  # relative: agreement to 6 significant digits


def close(mine: float, reference: float) -> bool:
    return math.isclose(mine, reference, rel_tol=SIX_DIGITS, abs_tol=1e-300)


def test_fisher_reproduces_the_published_tea_tasting_value() -> None:
    # Fisher (1935), The Design of Experiments: 3 of 4 cups right each way; the two-sided
    # p-value is (1 + 16 + 16 + 1) / 70 = 17/35, tables x = 1 and x = 3 tied with the observed
    assert fisher_exact(3, 1, 1, 3) == pytest.approx(17 / 35, rel=1e-12)
    # the one-table margins: nothing else is possible
    assert fisher_exact(0, 5, 0, 7) == 1.0
    assert fisher_exact(4, 0, 6, 0) == 1.0


def test_fisher_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="counts"):
        fisher_exact(-1, 2, 3, 4)


def test_flags_say_significant_or_not_and_at_what_n() -> None:
    small = compare("Male", 2, 6, 5, 6)
    assert not small.significant
    text = flag_text(True, 0.8, small)
    assert text.startswith("below 0.8, not significant at n = 6 and 6 (p = ")
    large = compare("Male", 200, 1000, 400, 1000)
    assert large.significant
    assert flag_text(True, 0.8, large) == "below 0.8, significant (p < 0.0001)"
    assert flag_text(False, 0.8, large) == ""
    assert flag_text(True, 0.8, None) == "below 0.8"
