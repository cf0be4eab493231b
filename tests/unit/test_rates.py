"""Rates by group against the worked examples of the NYC bias-audit rule, and the edge cases.

Source of the examples: NYC Department of Consumer and Worker Protection, final rule on automated
employment decision tools, 6 RCNY §5-301 "Bias Audit" (Notice of Adoption, 2023), as published in
the Rules of the City of New York:
https://codelibrary.amlegal.com/codes/newyorkcity/latest/NYCrules/0-0-0-138530
The §5-301(b) example (a resume screener, selection rates by sex, by race/ethnicity and by
intersectional category) and the §5-301(c) example (a "culture fit" score, scoring rates).
The candidates below are invented; only their counts come from the rule's tables.

Provenance, stated plainly: the §5-301(c) scoring-rate table was read from the rule's text. The
stored copies of the rule that could be reached while writing these tests cut off before the
§5-301(b) tables, so their counts were entered from memory of the rule and could not be checked
against its text; they are internally consistent (the fourteen intersectional cells add up to the
sex table, and every ratio matches the decimals the rule prints). Check them against the rule
before citing these tests as a reproduction of §5-301(b).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from pytest_screeneval.evidence.rates import TIE_RULE, Candidate, breakdown, group_rates

ADVANCE_AT = 60.0
IN, OUT = 80.0, 20.0  # an overall score that is selected / not selected (and above / below)
SEX_X_RACE = "sex × race"


def people(counts: dict[tuple[str | None, str | None], tuple[int, int]]) -> list[Candidate]:
    """Candidates per (sex, race) cell: n of them, the first ``hits`` scoring IN, the rest OUT."""
    result = []
    for (sex, race), (n, hits) in counts.items():
        labels = {k: v for k, v in (("sex", sex), ("race", race)) if v is not None}
        for i in range(n):
            overall = IN if i < hits else OUT
            result.append(Candidate(f"{sex}-{race}-{i}", overall, labels))
    return result


# 6 RCNY §5-301(b) example, intersectional table: (# of applicants, # selected) per sex × race.
# Its row sums are the rule's sex table (Male 1390 / 667, Female 1181 / 555).
HISPANIC = "Hispanic or Latino"
WHITE = "White"
BLACK = "Black or African American"
NHPI = "Native Hawaiian or Pacific Islander"
ASIAN = "Asian"
NATIVE = "Native American or Alaska Native"
TWO = "Two or More Races"
INTERSECTIONAL = {
    ("Male", HISPANIC): (205, 90),
    ("Male", WHITE): (412, 215),
    ("Male", BLACK): (226, 95),
    ("Male", NHPI): (87, 37),
    ("Male", ASIAN): (321, 167),
    ("Male", NATIVE): (24, 11),
    ("Male", TWO): (115, 52),
    ("Female", HISPANIC): (190, 82),
    ("Female", WHITE): (385, 197),
    ("Female", BLACK): (164, 75),
    ("Female", NHPI): (32, 15),
    ("Female", ASIAN): (295, 135),
    ("Female", NATIVE): (17, 7),
    ("Female", TWO): (98, 44),
}
# The rule's intersectional impact ratios, to the three decimals it prints.
INTERSECTIONAL_RATIOS = {
    ("Male", HISPANIC): 0.841,
    ("Male", WHITE): 1.000,
    ("Male", BLACK): 0.806,
    ("Male", NHPI): 0.815,
    ("Male", ASIAN): 0.997,
    ("Male", NATIVE): 0.878,
    ("Male", TWO): 0.866,
    ("Female", HISPANIC): 0.827,
    ("Female", WHITE): 0.981,
    ("Female", BLACK): 0.876,
    ("Female", NHPI): 0.898,
    ("Female", ASIAN): 0.877,
    ("Female", NATIVE): 0.789,
    ("Female", TWO): 0.860,
}
# The rule's race/ethnicity table (its own counts; its Hispanic row is not the sum of the
# intersectional rows, so it is checked on its own): (applicants, selected, rate %, ratio).
RACE_TABLE = {
    HISPANIC: (408, 204, 50, 0.97),
    WHITE: (797, 412, 52, 1.00),
    BLACK: (390, 170, 44, 0.84),
    NHPI: (119, 52, 44, 0.85),
    ASIAN: (616, 302, 49, 0.95),
    NATIVE: (41, 18, 44, 0.85),
    TWO: (213, 96, 45, 0.87),
}


def test_selection_rates_by_sex_reproduce_the_rule() -> None:
    rates = group_rates(people(INTERSECTIONAL), ADVANCE_AT, min_share=0.0)
    sex = rates.breakdown("sex")
    male, female = sex.category("Male"), sex.category("Female")
    assert (male.n, male.selected, female.n, female.selected) == (1390, 667, 1181, 555)
    assert round(100 * male.selection_rate) == 48
    assert round(100 * female.selection_rate) == 47
    assert male.selection_impact_ratio == 1.0
    assert round(female.selection_impact_ratio, 2) == 0.98
    assert sex.unknown == 0 and female.below() == ()


def test_intersectional_selection_rates_reproduce_the_rule() -> None:
    rates = group_rates(people(INTERSECTIONAL), ADVANCE_AT, min_share=0.0)
    table = rates.breakdown(SEX_X_RACE)
    assert len(table.categories) == 14
    for (sex, race), expected in INTERSECTIONAL_RATIOS.items():
        row = table.category(f"{sex} × {race}")
        assert row.n == INTERSECTIONAL[(sex, race)][0]
        assert round(row.selection_impact_ratio, 3) == expected, (sex, race)
    # the only cell under four fifths in the rule's table
    marked = [row.category for row in table.categories if "selection" in row.below()]
    assert marked == [f"Female × {NATIVE}"]


def test_race_selection_rates_reproduce_the_rule() -> None:
    candidates = people({(None, race): (n, hit) for race, (n, hit, _, _) in RACE_TABLE.items()})
    race = group_rates(candidates, ADVANCE_AT, min_share=0.0).breakdown("race")
    for name, (n, selected, pct, ratio) in RACE_TABLE.items():
        row = race.category(name)
        assert (row.n, row.selected) == (n, selected)
        assert round(100 * row.selection_rate) == pct, name
        assert round(row.selection_impact_ratio, 2) == ratio, name
    # sex unknown for all of them: reported, not guessed
    assert group_rates(candidates, ADVANCE_AT).breakdown("sex").unknown == len(candidates)


def test_categories_under_two_percent_are_shown_but_left_out_of_the_ratios() -> None:
    candidates = people({(None, race): (n, hit) for race, (n, hit, _, _) in RACE_TABLE.items()})
    race = group_rates(candidates, ADVANCE_AT).breakdown("race")  # default: 2%
    native = race.category(NATIVE)  # 41 of 2584 = 1.6%
    assert native.excluded == "under 2% of the data (41 of 2584)"
    assert native.selection_impact_ratio is None and native.scoring_impact_ratio is None
    assert round(native.selection_rate, 3) == round(18 / 41, 3)  # its rate is still shown
    assert round(race.category(BLACK).selection_impact_ratio, 2) == 0.84  # others unchanged
    cells = group_rates(people(INTERSECTIONAL), ADVANCE_AT).breakdown(SEX_X_RACE)
    excluded = sorted(row.category for row in cells.categories if row.excluded)
    # under 2% of 2571: 24 and 17 Native American, 32 NHPI women (87 NHPI men is 3.4%)
    assert excluded == [f"Female × {NATIVE}", f"Female × {NHPI}", f"Male × {NATIVE}"]


def test_scoring_rates_reproduce_the_rule() -> None:
    # 6 RCNY §5-301(c) example: share scoring above the full sample's median "culture fit" score.
    sex = group_rates(
        people({("Male", None): (92, 50), ("Female", None): (76, 34)}), ADVANCE_AT
    ).breakdown("sex")
    male, female = sex.category("Male"), sex.category("Female")
    assert round(100 * male.scoring_rate, 1) == 54.3
    assert round(100 * female.scoring_rate, 1) == 44.7
    assert male.scoring_impact_ratio == 1.0
    assert round(female.scoring_impact_ratio, 2) == 0.82
    # race/ethnicity rows of the same example: (applicants, above the median, rate %, ratio)
    table = {
        HISPANIC: (28, 18, 64.3, 1.00),  # the rule prints 64.2% for 18/28 = 64.29%
        WHITE: (40, 15, 37.5, 0.58),
        BLACK: (32, 16, 50.0, 0.78),
        NHPI: (8, 5, 62.5, 0.97),
        ASIAN: (24, 10, 41.7, 0.65),
    }
    race = group_rates(
        people({(None, r): (n, above) for r, (n, above, _, _) in table.items()}), ADVANCE_AT
    ).breakdown("race")
    for name, (n, above, pct, ratio) in table.items():
        row = race.category(name)
        assert (row.n, row.scored_above) == (n, above)
        assert round(100 * row.scoring_rate, 1) == pct, name
        assert round(row.scoring_impact_ratio, 2) == ratio, name
    assert "scoring" in race.category(WHITE).below()
    assert race.category(BLACK).scoring_impact_ratio < 0.8  # 0.78: marked too


def test_a_score_equal_to_the_median_is_not_above_it() -> None:
    candidates = [
        Candidate("a1", 50.0, {"sex": "female"}),
        Candidate("a2", 50.0, {"sex": "female"}),
        Candidate("b1", 50.0, {"sex": "male"}),
        Candidate("b2", 70.0, {"sex": "male"}),
    ]
    rates = group_rates(candidates, advance_at=50.0)
    assert rates.median == 50.0
    sex = rates.breakdown("sex")
    assert sex.category("female").scored_above == 0
    assert sex.category("male").scored_above == 1
    assert sex.category("female").scoring_impact_ratio == 0.0
    # selection is "at or above" the advance threshold: everyone here is selected
    assert sex.category("female").selection_rate == 1.0
    assert "equal to the median does not count" in TIE_RULE


def test_all_unknown_reports_the_count_and_no_category() -> None:
    candidates = [
        Candidate("x", 70.0, {"sex": "unknown", "race": "Unknown"}),
        Candidate("y", 40.0, {}),
        Candidate("z", 55.0, {"sex": "", "race": "unknown"}),
    ]
    rates = group_rates(candidates, ADVANCE_AT)
    for item in rates.breakdowns:
        assert item.categories == () and item.unknown == 3 and item.total == 3
    assert rates.median == 55.0


def test_a_single_category_is_its_own_reference() -> None:
    candidates = [Candidate(f"c{i}", 30.0 + 10 * i, {"sex": "female"}) for i in range(5)]
    sex = group_rates(candidates, ADVANCE_AT).breakdown("sex")
    (only,) = sex.categories
    assert only.n == 5 and only.selected == 2  # 60 and 70 reach 60
    assert only.selection_impact_ratio == 1.0 and only.scoring_impact_ratio == 1.0
    assert group_rates(candidates, ADVANCE_AT).breakdown("race").unknown == 5


def test_intersection_is_unknown_when_either_part_is() -> None:
    candidates = [
        Candidate("p", 70.0, {"sex": "female", "race": "asian"}),
        Candidate("q", 70.0, {"sex": "female"}),
    ]
    cells = group_rates(candidates, ADVANCE_AT).breakdown(SEX_X_RACE)
    assert [row.category for row in cells.categories] == ["female × asian"]
    assert cells.unknown == 1


def test_no_one_selected_leaves_the_selection_ratio_undefined() -> None:
    candidates = [
        Candidate(f"c{i}", 10.0 * i, {"sex": "male" if i % 2 else "female"}) for i in range(6)
    ]
    sex = breakdown("sex", candidates, median=25.0, advance_at=90.0)
    assert all(row.selection_impact_ratio is None for row in sex.categories)
    assert "no included category has anyone selected" in sex.note
    assert group_rates([], ADVANCE_AT).median is None


@pytest.mark.parametrize("min_share", [0.0, 0.02, 0.5])
def test_shares_refer_to_the_full_sample(min_share: float) -> None:
    candidates = people({("f", "a"): (3, 1), ("m", None): (1, 1)})
    sex = group_rates(candidates, ADVANCE_AT, min_share=min_share).breakdown("sex")
    assert [round(row.share, 2) for row in sex.categories] == [0.75, 0.25]
    excluded = [row.category for row in sex.categories if row.excluded]
    assert excluded == (["m"] if min_share > 0.25 else [])


def test_an_impact_ratio_of_exactly_four_fifths_is_not_adverse_impact() -> None:
    # Female 4 of 6 selected against Male 5 of 6 is exactly 4/5; float division
    # gave 0.7999999999999999, shown as "0.80 ▼ under 0.8"; 29 CFR 1607.4(D) does not flag 0.80
    candidates = [
        Candidate(f"f-{i}", 80.0 if i < 4 else 20.0, {"sex": "Female"}) for i in range(6)
    ] + [Candidate(f"m-{i}", 80.0 if i < 5 else 20.0, {"sex": "Male"}) for i in range(6)]
    female = breakdown("sex", candidates, median=50.0, advance_at=50.0).category("Female")
    assert female.selection_impact_exact == Fraction(4, 5)
    assert female.selection_impact_ratio == 0.8  # the float nearest 4/5, not a hair under
    assert "selection" not in female.below(0.8)
    # one fewer selected is under four fifths, and is flagged
    fewer = [c if c.id != "f-3" else Candidate("f-3", 20.0, {"sex": "Female"}) for c in candidates]
    assert "selection" in breakdown("sex", fewer, median=50.0, advance_at=50.0).category(
        "Female"
    ).below(0.8)
