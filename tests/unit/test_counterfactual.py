"""with_attribute rewrites exactly one attribute; gaps are summarised per attribute.

Every person, employer and college here is invented.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.fairness_summary import (
    AttributeGaps,
    CounterfactualCase,
    gap_summary,
    spread,
)
from pytest_screeneval.golden.model import (
    Case,
    Expectation,
    GapPlacement,
    VariantAttribute,
    Variants,
    VariantValue,
)
from pytest_screeneval.probes.counterfactual import (
    CounterfactualError,
    case_variants,
    variant_key,
    with_attribute,
)

RESUME = """ANN LEE
Data analyst, Riverton

SUMMARY
Ann Lee has six years of analytics at Quillmoor Freight. Ms. Lee's dashboards cut reporting time.
Annabel Leeds (manager) and Tom Lee-Smith can speak to Ann's work.

EXPERIENCE
2019-2024 Senior Analyst, Quillmoor Freight
  - Built SQL pipelines
2016-2019 Analyst, Brightwater Mills

EDUCATION
BSc Statistics, Northfield Institute of Technology
"""

GAP_LINE = "2024-2025: career break (parental leave)"


def make_case(text: str = RESUME, **attributes: object) -> Case:
    return Case(
        id="cc-001",
        label="career-changer",
        rubric="analyst",
        input_text=text,
        expected={"sql": Expectation("sql", 4, "Rae Holm", "2025-01-10")},
        attributes=attributes or {"name": "Ann Lee"},  # type: ignore[arg-type]
    )


VARIANTS = Variants(
    {
        "name": VariantAttribute(
            "name",
            "replace",
            (
                VariantValue("Ann Lee", {"sex": "female"}),
                VariantValue("Dana Okafor", {"sex": "female"}),
                VariantValue("Milo Brandt", {"sex": "male"}),
            ),
        ),
        "college": VariantAttribute(
            "college",
            "replace",
            (VariantValue("Northfield Institute of Technology"), VariantValue("a tier-3 college")),
        ),
        "gap": VariantAttribute("gap", "insert", (VariantValue(None), VariantValue(GAP_LINE))),
    }
)


# --------------------------------------------------------------------------------------------
# Replace-type: examples
# --------------------------------------------------------------------------------------------


def test_name_is_rewritten_in_every_form_and_nothing_else() -> None:
    case = make_case()
    rewritten = with_attribute(case, "name", "Dana Okafor")
    expected = (
        RESUME.replace("ANN LEE", "DANA OKAFOR")
        .replace("Ann Lee has", "Dana Okafor has")
        .replace("Ms. Lee's", "Ms. Okafor's")
        .replace("Ann's work", "Dana's work")
    )
    assert rewritten.input_text == expected
    # Words that merely contain the name are untouched.
    assert "Annabel Leeds" in rewritten.input_text
    assert "Tom Lee-Smith" in rewritten.input_text
    assert rewritten.attributes["name"] == "Dana Okafor"
    # Nothing else about the case changes, and the original is not modified.
    assert rewritten.id == case.id and rewritten.expected == case.expected
    assert case.input_text == RESUME and case.attributes["name"] == "Ann Lee"


def test_other_replace_attributes_rewrite_the_whole_phrase_only() -> None:
    case = make_case(name="Ann Lee", college="Northfield Institute of Technology")
    rewritten = with_attribute(case, "college", "Harbor Valley College", VARIANTS)
    assert rewritten.input_text == RESUME.replace(
        "Northfield Institute of Technology", "Harbor Valley College"
    )
    assert rewritten.attributes == {"name": "Ann Lee", "college": "Harbor Valley College"}


def test_possessive_of_the_full_name_keeps_its_s() -> None:
    case = make_case("Ann Lee's portfolio; Ann Lee’s talk.\n")
    assert with_attribute(case, "name", "Milo Brandt").input_text == (
        "Milo Brandt's portfolio; Milo Brandt’s talk.\n"
    )


def test_first_and_last_name_follow_even_when_parts_swap() -> None:
    # Replacement happens in one pass, so a new first name equal to the old last name is not
    # rewritten a second time.
    case = make_case("Ann Lee. Ann. Lee.\n")
    assert with_attribute(case, "name", "Lee Ann").input_text == "Lee Ann. Lee. Ann.\n"


def test_a_longer_name_is_matched_whole_before_its_parts() -> None:
    case = make_case("Mary Jo Quill (Mary, Ms. Quill) and Jo.\n", name="Mary Jo Quill")
    rewritten = with_attribute(case, "name", "Dana Okafor")
    # The middle name alone is not an occurrence of the name: it stays.
    assert rewritten.input_text == "Dana Okafor (Dana, Ms. Okafor) and Jo.\n"


def test_refuses_an_attribute_the_case_does_not_carry() -> None:
    with pytest.raises(CounterfactualError) as info:
        with_attribute(make_case(), "college", "Harbor Valley College")
    message = str(info.value)
    assert isinstance(info.value, ScreenevalError)
    assert "cc-001" in message and "'college'" in message and "Harbor Valley College" in message
    assert message.count(".") >= 1 and "\n" not in message


def test_refuses_a_current_value_not_in_the_text() -> None:
    case = make_case(name="Zed Quill")
    with pytest.raises(CounterfactualError, match=r"cc-001.*'name'.*'Dana Okafor'.*Zed Quill"):
        with_attribute(case, "name", "Dana Okafor")


def test_refuses_a_value_only_found_inside_longer_words() -> None:
    case = make_case("Annabel Leeds wrote this.\n", name="Ann Lee")
    with pytest.raises(CounterfactualError, match="whole phrase"):
        with_attribute(case, "name", "Dana Okafor")


def test_refuses_a_null_value_for_a_replace_attribute() -> None:
    with pytest.raises(CounterfactualError, match="needs a text value"):
        with_attribute(make_case(), "name", None)


def test_kind_from_variants_must_match_what_the_case_stores() -> None:
    case = make_case(name="Ann Lee", gap="2016-2019 Analyst, Brightwater Mills")
    with pytest.raises(CounterfactualError, match="insert-type"):
        with_attribute(case, "gap", GAP_LINE, VARIANTS)


# --------------------------------------------------------------------------------------------
# Insert-type: a career-gap line
# --------------------------------------------------------------------------------------------

AFTER = "2019-2024 Senior Analyst, Quillmoor Freight"


def test_gap_is_inserted_after_its_line_with_the_same_indent() -> None:
    case = make_case(gap=GapPlacement(None, AFTER))
    rewritten = with_attribute(case, "gap", GAP_LINE, VARIANTS)
    assert rewritten.input_text == RESUME.replace(AFTER + "\n", f"{AFTER}\n{GAP_LINE}\n")
    assert rewritten.attributes["gap"] == GapPlacement(GAP_LINE, AFTER)


def test_gap_is_removed_with_its_whole_line() -> None:
    text = RESUME.replace(AFTER + "\n", f"{AFTER}\n{GAP_LINE}\n")
    case = make_case(text, gap=GapPlacement(GAP_LINE, AFTER))
    rewritten = with_attribute(case, "gap", None, VARIANTS)
    assert rewritten.input_text == RESUME
    assert rewritten.attributes["gap"] == GapPlacement(None, AFTER)
    # Removing what is not there is no change.
    assert with_attribute(rewritten, "gap", None, VARIANTS).input_text == RESUME


def test_gap_line_is_rewritten_in_place_keeping_its_bullet() -> None:
    text = "Jo Park\nEXPERIENCE\n  - 2020 Clerk, Elmstead Co-op\n  - 2021-2022: career break\n"
    case = make_case(text, gap=GapPlacement("2021-2022: career break", "2020 Clerk"))
    rewritten = with_attribute(case, "gap", "2021-2022: career break (caring)")
    assert rewritten.input_text == text.replace("break\n", "break (caring)\n")


def test_gap_on_the_last_line_without_newline_round_trips() -> None:
    text = "Jo Park\nEXPERIENCE\n2020 Clerk, Elmstead Co-op"
    case = make_case(text, gap=GapPlacement(None, "2020 Clerk, Elmstead Co-op"))
    added = with_attribute(case, "gap", GAP_LINE)
    assert added.input_text == text + "\n" + GAP_LINE
    assert with_attribute(added, "gap", None).input_text == text


def test_refuses_a_gap_anchor_not_in_the_text() -> None:
    case = make_case(gap=GapPlacement(None, "2001 Clerk, Nowhere Ltd"))
    with pytest.raises(CounterfactualError, match=r"cc-001.*'gap'.*2001 Clerk"):
        with_attribute(case, "gap", GAP_LINE)


def test_refuses_a_gap_line_that_shares_its_line() -> None:
    case = make_case(
        "Jo Park\n2020 Clerk; 2021: career break\n", gap=GapPlacement("2021: career break", "Jo")
    )
    with pytest.raises(CounterfactualError, match="shares its line"):
        with_attribute(case, "gap", None)


def test_refuses_a_multi_line_gap_value() -> None:
    case = make_case(gap=GapPlacement(None, AFTER))
    with pytest.raises(CounterfactualError, match="one non-empty line"):
        with_attribute(case, "gap", "2024: break\nEXPERIENCE")


# --------------------------------------------------------------------------------------------
# Properties (Hypothesis)
# --------------------------------------------------------------------------------------------

NAMES = ["Ann Lee", "Dana Okafor", "Milo Brandt", "Ines Varga", "Kofi Mensah", "Rae Holm"]
COLLEGES = ["Northfield Institute of Technology", "Harbor Valley College", "Elmstead Polytechnic"]
# Filler around the attribute: ordinary words, plus decoys made from the values (below).
FILLER = ["analyst", "led", "SQL", "Quillmoor", "Freight", "2019", "team", "reports", "budget"]
SEPARATORS = [" ", "\n", ", ", ". ", " (", ") ", ": ", "\n  - "]
# How a value's slot is written: the full value, a name part, capitals, possessives.
FORMS = ["full", "full_upper", "full_possessive", "first", "last", "last_possessive", "first_upper"]


def render(value: str, form: str, is_name: bool) -> str:
    parts = value.split()
    if not is_name:
        form = {"full_upper": "full_upper", "full_possessive": "full_possessive"}.get(form, "full")
    return {
        "full": value,
        "full_upper": value.upper(),
        "full_possessive": value + "'s",
        "first": parts[0],
        "last": parts[-1],
        "last_possessive": parts[-1] + "’s",
        "first_upper": parts[0].upper(),
    }[form]


Template = list[tuple[str, str, str]]


@st.composite
def templates(draw: st.DrawFn, filler: list[str]) -> Template:
    """A text as (kind, item, separator) segments: kind "word" holds a filler word, kind "slot"
    a form of the attribute's value; at least one slot holds the full value."""
    segment = st.one_of(
        st.tuples(st.just("word"), st.sampled_from(filler)),
        st.tuples(st.just("slot"), st.sampled_from(FORMS)),
    )
    body = draw(st.lists(segment, max_size=20))
    body.insert(draw(st.integers(0, len(body))), ("slot", "full"))
    separators = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(body), max_size=len(body)))
    return [(kind, item, sep) for (kind, item), sep in zip(body, separators, strict=True)]


def fill(template: Template, value: str, is_name: bool) -> str:
    return "".join(
        (item if kind == "word" else render(value, item, is_name)) + sep
        for kind, item, sep in template
    )


def decoys(value: str) -> list[str]:
    """Words that contain a value's words without being them: none may ever be rewritten."""
    return [
        decoy
        for part in value.split()
        for decoy in (part + "s", part + "bel", part + "-Smith", "O'" + part, "Mc" + part,
                      "Ann-" + part, part.lower(), part + "'t")
    ]  # fmt: skip


Scenario = tuple[str, str, str, Template]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """An attribute, its old and new value, and a text template around the old one."""
    attribute = draw(st.sampled_from(["name", "college"]))
    old, new = draw(st.permutations(NAMES if attribute == "name" else COLLEGES))[:2]
    template = draw(templates(FILLER + decoys(old) + decoys(new)))
    return attribute, old, new, template


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_only_the_attribute_changes(scenario: Scenario) -> None:
    # The text is built from a template whose slots hold the old value in some written form;
    # the rewrite must equal the same template with the new value in the same forms, so every
    # byte outside the attribute's occurrences (decoys included) is unchanged.
    attribute, old, new, template = scenario
    is_name = attribute == "name"
    case = make_case(fill(template, old, is_name), **{attribute: old})
    rewritten = with_attribute(case, attribute, new)
    assert rewritten.input_text == fill(template, new, is_name)
    assert rewritten.attributes[attribute] == new


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_setting_the_same_value_twice_is_setting_it_once(scenario: Scenario) -> None:
    attribute, old, new, template = scenario
    case = make_case(fill(template, old, attribute == "name"), **{attribute: old})
    once = with_attribute(case, attribute, new)
    twice = with_attribute(once, attribute, new)
    assert twice == once
    # Setting the current value is no change at all.
    assert with_attribute(case, attribute, old) == case


def _mentions(text: str, value: str, is_name: bool) -> bool:
    words = set(text.replace("’", "'").replace("'s", " ").split())
    parts = value.split() if is_name else [value]
    return any(p in words or p.upper() in words for p in parts) or value in text


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_a_to_b_to_a_is_the_original(scenario: Scenario) -> None:
    attribute, old, new, template = scenario
    is_name = attribute == "name"
    case = make_case(fill(template, old, is_name), **{attribute: old})
    # The way back is unambiguous only where the new value does not occur in the original:
    # filler never spells a value's words alone, but two decoys side by side can spell the
    # value across them ("O'Dana Okafors" holds "Dana Okafor"); such texts have no way back.
    assume(not _mentions(case.input_text.replace(old, ""), new, is_name))
    there = with_attribute(case, attribute, new)
    back = with_attribute(there, attribute, old)
    assert back == case


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([None, GAP_LINE, "2023: sabbatical (travel)"]), st.data())
def test_gap_round_trips_and_is_idempotent(first: str | None, data: st.DataObject) -> None:
    case = make_case(gap=GapPlacement(None, AFTER))
    second = data.draw(st.sampled_from([None, GAP_LINE, "2022-2023: caring for a parent"]))
    there = with_attribute(case, "gap", first, VARIANTS)
    assert with_attribute(there, "gap", first, VARIANTS) == there
    elsewhere = with_attribute(there, "gap", second, VARIANTS)
    # Whatever path was taken, removing the gap gives back the original text exactly.
    assert with_attribute(elsewhere, "gap", None, VARIANTS) == case
    # Only the gap line differs from the original.
    added = [line for line in elsewhere.input_text.splitlines() if line not in RESUME]
    assert added == ([] if second is None else [second])


# --------------------------------------------------------------------------------------------
# Variants and keys
# --------------------------------------------------------------------------------------------


def test_case_variants_cover_every_value_of_every_carried_attribute() -> None:
    case = make_case(name="Ann Lee", gap=GapPlacement(None, AFTER))
    result = case_variants(case, VARIANTS)
    assert list(result) == ["name", "gap"]  # college is not on the case
    names = [(v.value, c.attributes["name"]) for v, c in result["name"]]
    assert names == [("Ann Lee", "Ann Lee"), ("Dana Okafor", "Dana Okafor"), ("Milo Brandt",) * 2]
    # The case's own value gives its own text back.
    assert result["name"][0][1].input_text == case.input_text
    assert "Milo Brandt has six years" in result["name"][2][1].input_text
    assert result["name"][2][0].groups == {"sex": "male"}
    gaps = [c.input_text for _, c in result["gap"]]
    assert gaps[0] == RESUME and GAP_LINE in gaps[1]


def test_variant_keys_are_short_stable_and_distinct() -> None:
    assert variant_key("name", "Dana Okafor") == "name=Dana Okafor"
    assert variant_key("gap", None) == "gap=none"
    assert variant_key("gap", " 2021-2023:\tcareer  break ") == "gap=2021-2023: career break"
    long_a = "2019-2023: career break for caring for a family member and further study abroad A"
    long_b = long_a[:-1] + "B"
    key_a, key_b = variant_key("gap", long_a), variant_key("gap", long_b)
    assert key_a != key_b and len(key_a) <= len("gap=") + 60
    assert key_a == variant_key("gap", long_a)


# --------------------------------------------------------------------------------------------
# Gaps
# --------------------------------------------------------------------------------------------


def test_spread_names_the_highest_and_lowest_values() -> None:
    gap, high, low = spread({"gap=none": 72.5, "gap=2021: break": 54.5, "gap=x": 60.0})
    assert (gap, high, low) == (18.0, "gap=none", "gap=2021: break")
    assert spread({"a": 50.0, "b": 50.0}) == (0.0, "a", "b")
    with pytest.raises(ValueError):
        spread({})


def test_gap_summary_mean_worst_and_per_criterion() -> None:
    def case(case_id: str, **values: tuple[float, int, int]) -> CounterfactualCase:
        return CounterfactualCase(
            case_id,
            {v: (overall,) for v, (overall, _s, _c) in values.items()},
            {v: {"sql": sql, "communication": comms} for v, (_o, sql, comms) in values.items()},
        )

    data = {
        "name": (
            case("cc-002", A=(70, 4, 3), B=(70, 4, 3)),
            case("cc-001", A=(75, 4, 4), B=(62.5, 3, 4)),
            case("cc-003", A=(50, 3, 2)),  # one value: no gap, not counted
        ),
        "gap": (case("cc-001", none=(75, 4, 4), x=(50, 4, 2)),),
        "college": (case("cc-001", A=(75, 4, 4)),),
    }
    summary = gap_summary(data)
    assert set(summary) == {"name", "gap"}  # nothing comparable for college
    assert summary["name"] == AttributeGaps(
        attribute="name",
        n_cases=2,
        mean_gap=6.25,
        worst_gap=12.5,
        worst_case="cc-001",
        worst_values=("A", "B"),
        per_criterion={"communication": 0.0, "sql": 1.0},
        case_gaps={"cc-001": 12.5, "cc-002": 0.0},
    )
    assert summary["gap"].per_criterion == {"communication": 2.0, "sql": 0.0}
    assert summary["gap"].worst_values == ("none", "x")
