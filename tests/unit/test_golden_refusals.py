"""The golden set refuses what it cannot mean, in one sentence naming the file and the line:
anchors and aliases (an alias bomb in the demographics hung the load), nesting past a bound,
non-scalar demographics and group labels, non-finite numbers (a rubric weight of ``.nan`` made
every overall score NaN), control characters written as escapes, a malformed or future
``retired_at``, raters without a name, and case ids or criteria that differ only by case. Names
are loaded in NFC."""

from __future__ import annotations

import re
import time
import unicodedata
from pathlib import Path

import pytest
from support.golden_factory import make_golden

from pytest_screeneval.errors import GoldenSetError
from pytest_screeneval.golden.load import MAX_DEPTH, load_golden_set, today_utc
from pytest_screeneval.golden.write import write_golden_set


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "cases"
    write_golden_set(make_golden(), root)
    return root


def refusal(folder: Path) -> str:
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(folder)
    message = str(caught.value)
    assert "\n" not in message and message.endswith(".")
    return message


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def case_file(folder: Path) -> Path:
    return folder / "career-changer" / "cc-001.yaml"


def line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


@pytest.mark.parametrize("weight", [".nan", ".inf", "-.inf", ".NaN"])
def test_a_rubric_weight_that_is_not_finite_is_refused_with_its_line(
    folder: Path, weight: str
) -> None:
    rubric = folder / "rubric.yaml"
    edit(rubric, "weight: 2", f"weight: {weight}")
    message = refusal(folder)
    assert re.match(rf"cases/rubric\.yaml, line {line_of(rubric, 'weight: ' + weight)}: ", message)
    assert "'weight' must be a finite number" in message


def test_an_advance_at_that_is_not_finite_is_refused(folder: Path) -> None:
    edit(folder / "rubric.yaml", "advance_at: 60", "advance_at: .nan")
    assert "advance_at" in refusal(folder)


def test_an_alias_bomb_in_the_demographics_is_refused_at_once(folder: Path) -> None:
    path = case_file(folder)
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join(f'*a{i - 1}' for _ in range(10))}]" for i in range(1, 9)]
    bomb = "\n".join(f"  {level}" for level in levels)
    edit(path, "demographics:\n  sex: female", f"demographics:\n  sex: female\n{bomb}")
    assert len(path.read_bytes()) < 2_000
    started = time.monotonic()
    message = refusal(folder)
    assert time.monotonic() - started < 5  # 10**9 strings if the aliases were expanded
    assert "anchors and aliases" in message
    assert f"line {line_of(path, 'a0: &a0')}:" in message


def test_a_merge_key_alias_is_refused_too(folder: Path) -> None:
    path = case_file(folder)
    edit(path, "demographics:\n  sex: female", "demographics: &d\n  sex: female\nsource2: *d")
    assert "anchors and aliases" in refusal(folder)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_nesting_past_the_bound_is_refused_not_a_recursion_error(folder: Path, depth: int) -> None:
    path = case_file(folder)
    edit(path, "  sex: female", f"  sex: {'[' * depth}{']' * depth}")
    message = refusal(folder)
    assert f"line {line_of(path, '  sex: ')}:" in message
    assert "nest" in message


@pytest.mark.parametrize(
    ("value", "got"),
    [("[female, male]", "a list"), ("{a: b}", "a mapping"), ("~", "nothing")],
)
def test_a_demographic_that_is_not_a_single_value_is_refused(
    folder: Path, value: str, got: str
) -> None:
    path = case_file(folder)
    edit(path, "  sex: female", f"  sex: {value}")
    message = refusal(folder)
    assert f"line {line_of(path, '  sex: ')}:" in message
    assert f"'sex' must be a single value, got {got}" in message


def test_a_group_label_that_is_not_a_single_value_is_refused(folder: Path) -> None:
    variants = folder / "variants.yaml"
    text = variants.read_text(encoding="utf-8")
    assert "sex: female" in text
    variants.write_text(text.replace("sex: female", "sex: [female, x]", 1), encoding="utf-8")
    message = refusal(folder)
    assert message.startswith("cases/variants.yaml, line ")
    assert "must be a single value, got a list" in message


@pytest.mark.parametrize(
    ("escape", "what"),
    [
        (r"\0", "NUL (U+0000)"),
        (r"\e[2K", "a control character (U+001B)"),
        (r"\x7f", "a control character (U+007F)"),
        (r"\ud83d", "invalid Unicode character escape"),  # libyaml refuses a lone surrogate
    ],
)
def test_a_control_character_written_as_an_escape_is_refused_with_its_line(
    folder: Path, escape: str, what: str
) -> None:
    path = case_file(folder)
    edit(path, "source: written by hand", f'source: "written {escape} by hand')
    edit(path, "for the store tests\n", 'for the store tests"\n')
    message = refusal(folder)
    assert f"line {line_of(path, 'source:')}:" in message
    assert what in message


@pytest.mark.parametrize("retired", ["soon-ish", "2999", "2999-01-01", "'2024-13-45'"])
def test_a_malformed_or_future_retired_at_is_refused(folder: Path, retired: str) -> None:
    path = case_file(folder)
    edit(path, "demographics:", f"retired_at: {retired}\ndemographics:")
    message = refusal(folder)
    assert f"line {line_of(path, 'retired_at')}:" in message
    assert "retired_at" in message
    assert ("in the future" in message) == retired.startswith("2999-")


def test_a_past_or_todays_retired_at_is_kept(folder: Path) -> None:
    path = case_file(folder)
    edit(path, "demographics:", f"retired_at: {today_utc().isoformat()}\ndemographics:")
    golden = load_golden_set(folder)
    assert "cc-001" not in {case.id for case in golden.active_cases}


@pytest.mark.parametrize("rater", ["''", "'  '", "~"])
def test_a_rater_without_a_name_is_refused(folder: Path, rater: str) -> None:
    path = case_file(folder)
    edit(path, "demographics:", f"ratings:\n  skills:\n    {rater}: 3\ndemographics:")
    message = refusal(folder)
    assert f"line {line_of(path, f'    {rater}: 3')}:" in message
    assert "has no name" in message


def test_a_rater_twice_without_regard_to_case_is_refused(folder: Path) -> None:
    path = case_file(folder)
    edit(path, "demographics:", "ratings:\n  skills:\n    Ana: 3\n    ANA: 4\ndemographics:")
    assert "rater 'ANA' rated 'skills' twice" in refusal(folder)


def test_case_ids_that_differ_only_by_case_are_refused(folder: Path) -> None:
    edit(folder / "career-changer" / "cc-002.yaml", "id: cc-002", "id: CC-001")
    message = refusal(folder)
    assert "'CC-001' differs from 'cc-001'" in message and "only by case" in message


def test_criteria_that_differ_only_by_case_are_refused(folder: Path) -> None:
    edit(folder / "rubric.yaml", "  - name: skills", "  - name: Experience")
    assert "duplicate criterion 'Experience'" in refusal(folder)


def test_names_are_loaded_in_nfc(folder: Path) -> None:
    decomposed = unicodedata.normalize("NFD", "José")
    assert decomposed != "José"
    path = case_file(folder)
    edit(path, "  sex: female", f"  sex: female\n  {decomposed}: {decomposed}")
    case = next(c for c in load_golden_set(folder).cases if c.id == "cc-001")
    assert case.demographics["José"] == "José"
