"""The golden-set loader on the bundled example set, on every bad input it refuses,
and the YAML writer's round trip. Every person, rater and employer here is invented."""

from __future__ import annotations

import dataclasses
import datetime
import re
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_screeneval.boundary.text import nfc
from pytest_screeneval.errors import GoldenSetError
from pytest_screeneval.golden.load import (
    find_pii,
    load_case_file,
    load_golden_set,
    load_rubric,
    load_variants,
)
from pytest_screeneval.golden.model import (
    Case,
    Criterion,
    Expectation,
    GapPlacement,
    GoldenSet,
    Rubric,
    Scale,
    VariantAttribute,
    Variants,
    VariantValue,
)
from pytest_screeneval.golden.write import (
    case_relative_path,
    dump_case,
    dump_rubric,
    dump_variants,
    write_golden_set,
)

BUNDLED = Path(__file__).resolve().parents[2] / "cases"


@pytest.fixture(scope="module")
def bundled() -> GoldenSet:
    return load_golden_set(BUNDLED)


# --------------------------------------------------------------------------------------------
# The bundled example set
# --------------------------------------------------------------------------------------------


def test_bundled_set_is_big_and_varied_enough(bundled: GoldenSet) -> None:
    labels = {case.label for case in bundled.cases}
    assert bundled.rubric.id == "backend-engineer-payments"
    assert len(bundled.cases) >= 48
    assert len(labels) >= 8
    assert {"obvious-yes", "obvious-no", "career-changer", "two-column-pdf"} <= labels
    assert len({case.id for case in bundled.cases}) == len(bundled.cases)
    for case in bundled.cases:
        assert case.path == f"cases/{case.label}/{case.id}.yaml"
        assert case.rubric == bundled.rubric.id
        assert case.demographics.keys() >= {"sex", "race"}
        assert case.source.startswith("synthetic: scripts/generate_cases.py")
        assert 15 <= len(case.input_text.splitlines()) <= 40, case.id


def test_bundled_expectations_are_the_raters_median(bundled: GoldenSet) -> None:
    for case in bundled.cases:
        assert set(case.expected) == set(bundled.rubric.criterion_names)
        for criterion, expectation in case.expected.items():
            ratings = case.ratings[criterion]
            assert 2 <= len(ratings) <= 3
            assert expectation.set_by in ratings, (case.id, criterion)
            assert expectation.set_at.startswith("2026-")
            assert expectation.score == statistics.median(ratings.values()), (case.id, criterion)
    contested = [
        (case.id, criterion)
        for case in bundled.cases
        for criterion in case.expected
        if case.is_contested(criterion)
    ]
    assert len(contested) >= 5


def test_bundled_attributes_appear_in_the_text(bundled: GoldenSet) -> None:
    with_attributes = [case for case in bundled.cases if case.attributes]
    assert len(with_attributes) >= 24
    kinds = {name: attribute.kind for name, attribute in bundled.variants.attributes.items()}
    assert kinds == {"name": "replace", "college": "replace", "gap": "insert", "age": "insert"}
    returners = 0
    for case in with_attributes:
        for name, value in case.attributes.items():
            assert name in kinds, (case.id, name)
            if isinstance(value, GapPlacement):
                assert value.after in case.input_text.splitlines(), case.id
                if value.value is not None:
                    returners += 1
                    lines = case.input_text.splitlines()
                    assert lines[lines.index(value.value) - 1] == value.after, case.id
            else:
                assert value in case.input_text, (case.id, name)
    assert returners >= 5


def test_bundled_set_has_no_personal_contact_details(bundled: GoldenSet) -> None:
    for case in bundled.cases:
        assert find_pii(case.input_text) is None, case.id


def test_bundled_set_is_written_in_the_writers_own_form(bundled: GoldenSet, tmp_path: Path) -> None:
    """The generator writes through golden.write: exporting the set reproduces every file."""
    written = write_golden_set(bundled, tmp_path / "cases")
    assert len(written) == len(bundled.cases) + 2
    for path in written:
        relative = path.relative_to(tmp_path / "cases")
        assert path.read_bytes() == (BUNDLED / relative).read_bytes(), relative


def test_exported_set_loads_back_equal(bundled: GoldenSet, tmp_path: Path) -> None:
    write_golden_set(bundled, tmp_path / "cases")
    again = load_golden_set(tmp_path / "cases")
    assert again.rubric == bundled.rubric
    assert again.variants == bundled.variants
    assert again.cases == bundled.cases
    assert again.sha == bundled.sha


# --------------------------------------------------------------------------------------------
# A small valid set to break in every way the loader must refuse
# --------------------------------------------------------------------------------------------

RUBRIC = Rubric(
    id="support-engineer",
    version="3",
    scale=Scale(1, 5),
    advance_at=60.0,
    criteria=(
        Criterion("python", "Writes Python.", 2.0, {3: ("django",), 4: ("asyncio",)}),
        Criterion("communication", "Communicates clearly.", 1.0, {2: ("documentation",)}),
    ),
)
VARIANTS = Variants(
    {
        "name": VariantAttribute(
            "name",
            "replace",
            (VariantValue("Tove Ashgrove", {"sex": "female"}), VariantValue("Piet Lorimer")),
        ),
        "gap": VariantAttribute(
            "gap", "insert", (VariantValue(None), VariantValue("2020 – 2021  Career break"))
        ),
    }
)
TEXT = (
    "Wren Castellane\n"
    "Glasgow, UK\n"
    "\n"
    "Support Engineer, Brindle Parcels\n"
    "Mar 2021 – Present\n"
    "- Built Django admin tools for the support team\n"
    "- Wrote the documentation for the refunds runbook\n"
)


def small_case(case_id: str = "se-001", label: str = "steady", text: str = TEXT) -> Case:
    return Case(
        id=case_id,
        label=label,
        rubric=RUBRIC.id,
        input_text=text,
        expected={
            "python": Expectation("python", 3, "rater-qx", "2026-02-03"),
            "communication": Expectation("communication", 2, "rater-qx", "2026-02-03"),
        },
        slices=("django",),
        ratings={"python": {"rater-qx": 3, "rater-zv": 3}},
        attributes={
            "name": "Wren Castellane",
            "gap": GapPlacement(None, "Mar 2021 – Present"),
        },
        demographics={"sex": "female", "race": "unknown"},
        source="hand-written for tests",
    )


def write_small_set(tmp_path: Path, *cases: Case) -> Path:
    root = tmp_path / "cases"
    write_golden_set(GoldenSet(RUBRIC, VARIANTS, cases or (small_case(),)), root)
    return root


def edit(path: Path, change: Callable[[list[str]], None]) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    change(lines)
    path.write_text("\n".join(lines), encoding="utf-8")


def line_of(path: Path, starts: str) -> int:
    """1-based number of the first line of ``path`` that starts with ``starts``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line.startswith(starts):
            return number
    raise AssertionError(f"no line starting {starts!r}")


def refusal(root: Path) -> str:
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(root)
    return str(caught.value)


def assert_one_sentence(message: str, shown: str, line: int) -> None:
    assert "\n" not in message
    assert message.endswith(".") and not message.endswith("..")
    assert not re.search(r"[.!?]\s+[A-Z]", message), message
    assert message.startswith(f"{shown}, line {line}: "), message


def test_small_set_is_valid(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    golden = load_golden_set(root)
    assert [dataclasses.replace(c, path="") for c in golden.cases] == [small_case()]
    assert golden.cases[0].path == "cases/steady/se-001.yaml"


CASE_FILE = "cases/steady/se-001.yaml"


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "label:")
    edit(path, lambda lines: lines.__setitem__(line - 1, "label: steady: again"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line)
    assert "malformed YAML" in message


def test_missing_field(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    edit(path, lambda lines: lines.remove("label: steady"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, 1)
    assert "missing field 'label'" in message


def test_unknown_field(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    edit(path, lambda lines: lines.insert(2, "nickname: Wren"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, 3)
    assert "unknown field 'nickname'" in message


def test_duplicate_key(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "label:")
    edit(path, lambda lines: lines.insert(line, "label: other"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line + 1)
    assert "duplicate key 'label'" in message


def test_duplicate_case_id_across_files(tmp_path: Path) -> None:
    root = write_small_set(tmp_path, small_case(label="steady"), small_case(label="zz-later"))
    message = refusal(root)
    assert_one_sentence(message, "cases/zz-later/se-001.yaml", 1)
    assert "duplicate case id 'se-001'" in message
    assert CASE_FILE in message


def test_unknown_criterion(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "  communication:")
    edit(path, lambda lines: lines.__setitem__(line - 1, "  golang:"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line)
    assert "unknown criterion 'golang'" in message


def test_score_off_the_scale(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "    score: 3")
    edit(path, lambda lines: lines.__setitem__(line - 1, "    score: 7"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line)
    assert "7 is off the scale 1..5" in message


def test_rating_off_the_scale(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "  python: {rater-qx: 3")
    edit(path, lambda lines: lines.__setitem__(line - 1, "  python: {rater-qx: 0, rater-zv: 3}"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line)
    assert "rating by rater-qx" in message and "off the scale" in message


@pytest.mark.parametrize(
    ("contact", "kind"),
    [
        ("wren.castellane@brindle-parcels.example", "an e-mail address"),
        ("(555) 014-2298", "a phone number"),
        ("+44 7700 900 431", "a phone number"),
    ],
)
def test_contact_details_in_the_text(tmp_path: Path, contact: str, kind: str) -> None:
    root = write_small_set(tmp_path, small_case(text=TEXT.replace("Glasgow, UK", contact)))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line_of(root / "steady/se-001.yaml", "input_text:"))
    assert f"still contains {kind}" in message


def test_wrong_rubric_id(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "rubric:")
    edit(path, lambda lines: lines.__setitem__(line - 1, "rubric: data-engineer"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line)
    assert "names rubric 'data-engineer', but the rubric is 'support-engineer'" in message


def test_attribute_value_not_in_the_text(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "  name: Wren Castellane")
    edit(path, lambda lines: lines.__setitem__(line - 1, "  name: Wren Castellan-Oduya"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line)
    assert "'Wren Castellan-Oduya' is not in input_text" in message


def test_gap_placement_not_in_the_text(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "steady" / "se-001.yaml"
    line = line_of(path, "    after:")
    edit(path, lambda lines: lines.__setitem__(line - 1, "    after: Jan 1999 – Present"))
    message = refusal(root)
    assert_one_sentence(message, CASE_FILE, line)
    assert "'Jan 1999 – Present'" in message and "is not in input_text" in message


@pytest.mark.parametrize(
    ("broken", "found"),
    [
        ("    kind: swap", "kind of 'name' must be 'replace' or 'insert'"),
        ("    colour: blue", "unknown field 'colour'"),
    ],
)
def test_bad_variants_file(tmp_path: Path, broken: str, found: str) -> None:
    root = write_small_set(tmp_path)
    path = root / "variants.yaml"
    line = line_of(path, "    kind: replace")
    edit(path, lambda lines: lines.__setitem__(line - 1, broken))
    message = refusal(root)
    assert_one_sentence(message, "cases/variants.yaml", line)
    assert found in message


def test_variants_with_a_single_value(tmp_path: Path) -> None:
    path = tmp_path / "variants.yaml"
    path.write_text("attributes:\n  college:\n    values: [Fenwood College]\n", encoding="utf-8")
    with pytest.raises(GoldenSetError) as caught:
        load_variants(path, "cases/variants.yaml")
    assert_one_sentence(str(caught.value), "cases/variants.yaml", 3)
    assert "at least two values" in str(caught.value)


def test_bad_rubric_file(tmp_path: Path) -> None:
    root = write_small_set(tmp_path)
    path = root / "rubric.yaml"
    line = line_of(path, "    weight: 2")
    edit(path, lambda lines: lines.__setitem__(line - 1, "    weight: -1"))
    message = refusal(root)
    assert_one_sentence(message, "cases/rubric.yaml", line)
    assert "weight of 'python' must be positive" in message


# --------------------------------------------------------------------------------------------
# The writer: round trips
# --------------------------------------------------------------------------------------------


def test_rubric_and_variants_round_trip(tmp_path: Path) -> None:
    (tmp_path / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (tmp_path / "variants.yaml").write_text(dump_variants(VARIANTS), encoding="utf-8")
    assert load_rubric(tmp_path / "rubric.yaml") == RUBRIC
    assert load_variants(tmp_path / "variants.yaml") == VARIANTS


def test_resume_text_is_a_literal_block_when_it_can_be(tmp_path: Path) -> None:
    written = dump_case(small_case())
    assert "input_text: |\n  Wren Castellane\n  Glasgow, UK\n\n" in written
    assert "set_at: 2026-02-03\n" in written
    assert written.index("id:") < written.index("label:") < written.index("slices:")
    assert written.index("slices:") < written.index("rubric:") < written.index("source:")
    assert written.index("source:") < written.index("input_text:") < written.index("expected:")


@pytest.mark.parametrize(
    "text",
    [
        "no newline at the end",
        "trailing spaces   \nand a\ttab\n",
        "  leading spaces\n\n\nblank lines, then none",
        "unicode: Zoë Ødegård – 東京 – ☕\u2028line separator\x85next line\r\nwindows\n",
        "ends with two newlines\n\n",
        "\ufeffa byte-order mark first",
    ],
)
def test_awkward_text_is_kept_byte_for_byte(tmp_path: Path, text: str) -> None:
    case = small_case(text=text + "\nWren Castellane\nMar 2021 – Present")
    path = tmp_path / "case.yaml"
    path.write_text(dump_case(case), encoding="utf-8")
    loaded = load_case_file(path, RUBRIC)
    assert loaded.input_text.encode("utf-8") == case.input_text.encode("utf-8")
    assert dataclasses.replace(loaded, path="") == case


def test_write_refuses_a_label_that_is_not_a_folder_name() -> None:
    with pytest.raises(GoldenSetError, match=r"cannot be used as a file or folder name\.$"):
        case_relative_path(small_case(label="a/b"))


_ID = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,15}", fullmatch=True)
# what a case file may hold: no control character or lone surrogate (the loader refuses them)
_CHARS = st.characters(blacklist_categories=("Cc", "Cs"))
_TEXT = st.text(_CHARS, max_size=40)
_NONBLANK = st.text(_CHARS, min_size=1, max_size=40).filter(lambda s: s.strip() != "")
# names (raters, demographics, slices, attribute values) are loaded in NFC
_NAME = _NONBLANK.map(nfc)
# a retirement date is an ISO date, today or before
_DATE = st.dates(max_value=datetime.date(2026, 1, 1)).map(lambda d: d.isoformat())
# set_at must be an ISO date
_SET_AT = st.one_of(
    st.dates().map(lambda d: d.isoformat()), st.datetimes().map(lambda d: d.isoformat())
)
# a label names a folder and is a pytest keyword: path-safe characters only
_LABEL = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,30}", fullmatch=True)
_SCORE = st.integers(RUBRIC.scale.min, RUBRIC.scale.max)
_CRITERIA = RUBRIC.criterion_names


@st.composite
def cases(draw: st.DrawFn) -> Case:
    lines = draw(st.lists(_TEXT, min_size=1, max_size=6))
    needle = draw(_NAME)
    anchor = draw(_NONBLANK)
    position = draw(st.integers(0, len(lines)))
    lines[position:position] = [needle, anchor]
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n", " "]))
    assume(find_pii(text) is None)
    set_by = draw(_NONBLANK)
    expected = {name: Expectation(name, draw(_SCORE), set_by, draw(_SET_AT)) for name in _CRITERIA}
    rated = draw(st.lists(st.sampled_from(_CRITERIA), unique=True))
    # rater names: not blank, and one rater once (without regard to case)
    raters = st.dictionaries(_NAME, _SCORE, min_size=1, max_size=3).filter(
        lambda found: len({name.casefold() for name in found}) == len(found)
    )
    ratings = {name: draw(raters) for name in rated}
    gap_value = draw(st.sampled_from([None, needle]))
    xfail_keys = draw(st.lists(st.sampled_from([*_CRITERIA, "all", "decision"]), unique=True))
    return Case(
        id=draw(_ID),
        label=draw(_LABEL),
        rubric=RUBRIC.id,
        input_text=text,
        expected=expected,
        slices=tuple(draw(st.lists(st.text(_CHARS, min_size=1, max_size=12).map(nfc), max_size=3))),
        ratings=ratings,
        attributes={"name": needle, "gap": GapPlacement(gap_value, anchor)},
        demographics=draw(st.dictionaries(_NAME, _TEXT.map(nfc), max_size=3)),
        xfail={key: draw(_NONBLANK) for key in xfail_keys},
        retired_at=draw(st.one_of(st.none(), _DATE)),
        source=draw(_TEXT),
    )


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=cases())
def test_any_case_round_trips(tmp_path: Path, case: Case) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(dump_case(case), encoding="utf-8")
    loaded = load_case_file(path, RUBRIC)
    assert loaded.input_text == case.input_text
    assert dataclasses.replace(loaded, path="") == case
