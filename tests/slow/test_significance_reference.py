"""The tests beside every impact ratio, against an independent implementation (SciPy) and
against values published with the methods.

SciPy is a development dependency (the ``dev`` extra), never a runtime one: the package computes
Fisher's exact test and Katz's interval itself (``evidence/significance.py``), and these tests
hold it to SciPy's ``fisher_exact``, ``contingency.relative_risk`` (whose interval is Katz's log
method) and ``chi2_contingency`` (whose uncorrected statistic is the square of the pooled z).
"""

from __future__ import annotations

import math
import random

import pytest
from scipy.stats import chi2_contingency
from scipy.stats import fisher_exact as scipy_fisher
from scipy.stats.contingency import relative_risk

from pytest_screeneval.evidence.rates import Candidate, group_rates
from pytest_screeneval.evidence.significance import (
    fisher_exact,
    katz_interval,
    two_proportion_z,
)

SIX_DIGITS = 5e-7  # relative: agreement to 6 significant digits


def close(mine: float, reference: float) -> bool:
    return math.isclose(mine, reference, rel_tol=SIX_DIGITS, abs_tol=1e-300)


def random_tables(seed: int, count: int, most: int) -> list[tuple[int, int, int, int]]:
    rng = random.Random(seed)
    tables = []
    for _ in range(count):
        n1, n2 = rng.randint(1, most), rng.randint(1, most)
        a, c = rng.randint(0, n1), rng.randint(0, n2)
        tables.append((a, n1 - a, c, n2 - c))
    return tables


def test_fisher_matches_scipy_on_small_tables() -> None:
    for a, b, c, d in random_tables(seed=26, count=2000, most=40):
        reference = float(scipy_fisher([[a, b], [c, d]]).pvalue)
        assert close(fisher_exact(a, b, c, d), reference), (a, b, c, d)


@pytest.mark.parametrize(
    "table",
    [
        (667, 1390 - 667, 555, 1181 - 555),  # the DCWP selection example's sex table
        (7, 10, 215, 197),  # its smallest intersectional cell against the reference
        (5000, 5000, 5200, 4800),
        (300_000, 200_000, 301_000, 199_000),  # a million applicants
        (3, 40_000, 30, 40_000),  # rare selection, far tail
        (0, 500, 12, 488),
    ],
)
def test_fisher_matches_scipy_on_large_and_lopsided_tables(
    table: tuple[int, int, int, int],
) -> None:
    a, b, c, d = table
    assert close(fisher_exact(a, b, c, d), float(scipy_fisher([[a, b], [c, d]]).pvalue))
    # the orientation of the table does not matter
    assert close(fisher_exact(c, d, a, b), fisher_exact(a, b, c, d))
    assert close(fisher_exact(b, a, d, c), fisher_exact(a, b, c, d))


def test_z_squared_is_scipys_uncorrected_chi_square() -> None:
    for a, b, c, d in random_tables(seed=7, count=300, most=200):
        z = two_proportion_z(a, a + b, c, c + d)
        if z is None:
            assert a + c in (0, a + b + c + d)  # no one, or everyone, selected
            continue
        statistic = float(chi2_contingency([[a, b], [c, d]], correction=False).statistic)
        assert close(z * z, statistic) or abs(z) < 1e-12, (a, b, c, d)
        assert (z < 0) == (a / (a + b) < c / (c + d)) or abs(z) < 1e-12
    assert two_proportion_z(0, 0, 3, 5) is None


def test_katz_interval_matches_scipy() -> None:
    for a, b, c, d in random_tables(seed=5, count=300, most=300):
        n1, n2 = a + b, c + d
        mine = katz_interval(a, n1, c, n2)
        if a == 0 or c == 0:
            assert mine is None
            continue
        assert mine is not None
        reference = relative_risk(a, n1, c, n2).confidence_interval(0.95)
        assert close(mine[0], float(reference.low)) and close(mine[1], float(reference.high))
        assert mine[0] < (a / n1) / (c / n2) < mine[1]


def test_every_ratio_in_a_breakdown_carries_its_test_against_the_reference() -> None:
    candidates = [
        Candidate(f"f{i}", 80.0 if i < 7 else 20.0, {"sex": "Female"}) for i in range(17)
    ] + [Candidate(f"m{i}", 80.0 if i < 215 else 20.0, {"sex": "Male"}) for i in range(412)]
    sex = group_rates(candidates, advance_at=60.0).breakdown("sex")
    assert sex.selection_reference == "Male"
    female, male = sex.category("Female"), sex.category("Male")
    assert male.selection_test is None  # the reference is not tested against itself
    test = female.selection_test
    assert test is not None and (test.hits, test.n, test.reference_hits) == (7, 17, 215)
    assert close(test.p_value, float(scipy_fisher([[7, 10], [215, 197]]).pvalue))
    assert female.flag("selection").startswith("below 0.8, not significant at n = 17 and 412")
    assert male.flag("selection") == ""
