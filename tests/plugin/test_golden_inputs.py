"""Bad golden-set input is refused in one sentence, before
anything is stored: a missing variants.yaml, attributes defined on one side only, PII in the
variants and in national phone formats, ids and texts over the size limits, a set_at that is
not a date."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.golden_factory import make_case, make_golden
from support.plugin_project import write_project

from pytest_screeneval.cli.main import main
from pytest_screeneval.errors import GoldenSetError
from pytest_screeneval.golden import pii
from pytest_screeneval.golden.load import SizeLimits, load_golden_set
from pytest_screeneval.golden.write import write_golden_set

pytest_plugins = ["pytester"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "cases"
    write_golden_set(make_golden(), root)
    return root


def refusal(folder: Path, **kwargs: object) -> str:
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(folder, **kwargs)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message and message.endswith(".")
    return message


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_fixture_folder_loads(folder: Path) -> None:
    assert len(load_golden_set(folder).cases) == 3


# ---- item 10: variants.yaml ----------------------------------------------------------------


def test_a_missing_variants_file_is_refused(folder: Path) -> None:
    (folder / "variants.yaml").unlink()
    message = refusal(folder)
    assert message.startswith("cases/variants.yaml: the golden set has no variants file")
    assert "attributes: {}" in message


def test_no_counterfactuals_on_purpose_is_an_empty_attributes_mapping(folder: Path) -> None:
    (folder / "variants.yaml").write_text("attributes: {}\n", encoding="utf-8")
    for case_file in folder.glob("*/*.yaml"):
        text = case_file.read_text(encoding="utf-8")
        case_file.write_text(re.sub(r"(?ms)^attributes:.*?(?=^\S)", "", text), encoding="utf-8")
    assert load_golden_set(folder).variants.attributes == {}


def test_a_case_attribute_variants_does_not_define_is_refused(folder: Path) -> None:
    edit(folder / "career-changer" / "cc-001.yaml", "  name: Ilona Varga", "  nmae: Ilona Varga")
    message = refusal(folder)
    assert message.startswith("cases/career-changer/cc-001.yaml, line ")
    assert "attribute 'nmae' is not defined in variants.yaml" in message


def test_an_attribute_no_case_places_is_refused(folder: Path) -> None:
    edit(folder / "variants.yaml", "attributes:\n", "attributes:\n  college:\n    values: [A, B]\n")
    message = refusal(folder)
    assert message.startswith("cases/variants.yaml: attribute 'college' is defined but no case")


def _define_an_unused_attribute(pytester: pytest.Pytester) -> None:
    variants = pytester.path / "cases" / "variants.yaml"
    edit(variants, "attributes:\n", "attributes:\n  college:\n    values: [A, B]\n")


@pytest.mark.parametrize("dist", [(), ("-n", "2")], ids=["no-xdist", "n2"])
def test_pytest_refuses_an_attribute_no_case_places(
    pytester: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    write_project(pytester)
    _define_an_unused_attribute(pytester)
    result = pytester.runpytest_subprocess("--screeneval", *dist)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "cases/variants.yaml: attribute 'college' is defined but no case places it" in out
    assert "Traceback" not in out
    assert not list(pytester.path.glob("calls.log"))  # refused before any scorer call


def test_a_run_over_one_case_file_does_not_judge_the_others(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    _define_an_unused_attribute(pytester)
    one = sorted((pytester.path / "cases").glob("*/*.yaml"))[0]
    result = pytester.runpytest("--screeneval", str(one))
    assert "is defined but no case places it" not in result.stdout.str() + result.stderr.str()
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


# ---- item 11: PII -------------------------------------------------------------------------

PHONES = [
    "07700 900123",  # UK mobile
    "(020) 7946 0958",  # UK London
    "0161 496 0000",  # UK Manchester
    "+44 20 7946 0958",
    "(555) 010-0199",  # North America
    "555.010.0199",
    "+1 555 010 0199",
    "01 23 45 67 89",  # France
    "030 1234567",  # Germany
    "02 9876 5432",  # Australia
    "+91 98765 43210",  # India
]
NOT_PHONES = [
    "2016-2019 Senior Analyst",
    "ISO 9001:2015",
    "from 05.2019 to 06.2021",
    "01/2020 - 12/2022",
    "budget of 1 200 000 EUR",
    "handled 10,000,000 records",
]


@pytest.fixture(params=["phonenumbers", "regex only"])
def screen(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "regex only":
        monkeypatch.setattr(pii, "_LIBRARY", None)
    elif not pii.has_phone_library():
        pytest.skip("phonenumbers is not installed (pip install pytest-screeneval[pii])")
    return str(request.param)


@pytest.mark.parametrize("phone", PHONES)
def test_common_phone_formats_are_found(screen: str, phone: str) -> None:
    assert pii.find_pii(f"Jo Quill\nCall {phone} after six.\n") == ("a phone number", phone)


@pytest.mark.parametrize("text", NOT_PHONES)
def test_dates_and_figures_are_not_phone_numbers(screen: str, text: str) -> None:
    assert pii.find_pii(text) is None


def test_a_uk_number_in_a_case_is_refused(folder: Path) -> None:
    edit(folder / "career-gap" / "gap-001.yaml", "Noor Haddad", "Noor Haddad, 07700 900123")
    message = refusal(folder)
    assert "case gap-001 still contains a phone number ('07700 900123')" in message


@pytest.mark.parametrize("value", ["ilona.varga@example.org", "(020) 7946 0958"])
def test_pii_in_a_variants_value_is_refused(folder: Path, value: str) -> None:
    edit(folder / "variants.yaml", "- value: Tomasz Brenner", f"- value: '{value}'")
    message = refusal(folder)
    assert message.startswith("cases/variants.yaml, line ")
    assert "a value of attribute 'name' is" in message and repr(value) in message


# ---- item 12: size limits -----------------------------------------------------------------


def test_a_case_id_over_the_limit_is_refused_before_anything_is_stored(folder: Path) -> None:
    edit(folder / "career-changer" / "cc-001.yaml", "id: cc-001", "id: " + "c" * 10_000)
    message = refusal(folder)
    assert "has 10,000 characters, more than the 100 allowed" in message
    assert "screeneval_max_case_id_chars" in message and len(message) < 300
    assert len(load_golden_set(folder, limits=SizeLimits(max_case_id_chars=10_000)).cases) == 3


def test_an_input_text_over_the_limit_is_refused(tmp_path: Path) -> None:
    job = "Support engineer at Brightwater Logistics, 2020-2024.\n"
    text = "Ilona Varga\n" + job + "Ran the help desk.\n" * 4_000
    root = tmp_path / "cases"
    write_golden_set(make_golden([make_case("big-001", text=text)]), root)
    message = refusal(root, limits=SizeLimits(max_input_chars=50_000))
    assert "case big-001: input_text has 76,066 characters, more than the 50,000" in message
    assert len(load_golden_set(root).cases) == 1  # the default allows 100,000


# ---- item 15: set_at ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["yesterday", "03/01/2024", "2024-13-01"])
def test_set_at_must_be_an_iso_date(folder: Path, bad: str) -> None:
    edit(folder / "career-changer" / "cc-001.yaml", "set_at: 2024-03-01", f"set_at: '{bad}'")
    message = refusal(folder)
    assert "must be an ISO date such as 2024-03-01" in message and repr(bad) in message


# ---- item 12: the limits are ini options, for pytest and for `screeneval cases import` -------


def test_pytest_applies_the_ini_size_limit(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    ini = pytester.path / "tox.ini"
    ini.write_text(ini.read_text().rstrip("\n") + "\nscreeneval_max_input_chars = 60\n")
    result = pytester.runpytest("--screeneval")
    assert result.ret != 0
    assert "more than the 60 allowed (ini screeneval_max_input_chars)" in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


def test_cases_import_applies_the_ini_size_limit(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = folder.parent
    (root / "pytest.ini").write_text("[pytest]\nscreeneval_max_case_id_chars = 5\n")
    monkeypatch.chdir(root)
    code = main(["--db", f"sqlite:///{root / 'store.db'}", "cases", "import", "cases"])
    err = capsys.readouterr().err
    assert code == 1
    assert "case id 'cc-001'... has 6 characters, more than the 5 allowed" in err
    assert not (root / "store.db").exists()  # refused before the store was opened


# The library runs only on texts that could hold a number it reports (pii._could_hold_a_phone):
# a number of any type of every region, formatted as people write it, must still reach it.
def _example_numbers() -> list[str]:
    phonenumbers = pytest.importorskip("phonenumbers")
    formats = (
        phonenumbers.PhoneNumberFormat.NATIONAL,
        phonenumbers.PhoneNumberFormat.INTERNATIONAL,
        phonenumbers.PhoneNumberFormat.E164,
    )
    numbers = []
    for region in pii.PHONE_REGIONS:
        for kind in vars(phonenumbers.PhoneNumberType).values():
            if not isinstance(kind, int):
                continue
            example = phonenumbers.example_number_for_type(region, kind)
            if example is not None:
                numbers.extend(phonenumbers.format_number(example, f) for f in formats)
    return sorted(set(numbers))


@given(
    number=st.sampled_from(_example_numbers() if pii.has_phone_library() else ["0"]),
    separator=st.sampled_from([" ", "-", ".", " - ", "\u00a0", "\u2013", "", "/ "]),
    extension=st.sampled_from(["", " ext. 12", " x 7", "#", " ext 1234567"]),
    before=st.text(st.characters(codec="utf-8"), max_size=20),
    after=st.text(st.characters(codec="utf-8"), max_size=20),
)
@settings(max_examples=300, deadline=None, derandomize=True)
def test_the_cheap_filter_never_hides_a_number_the_library_finds(
    number: str, separator: str, extension: str, before: str, after: str
) -> None:
    if not pii.has_phone_library():
        pytest.skip("phonenumbers is not installed (pip install pytest-screeneval[pii])")
    text = f"{before}\nCall {number.replace(' ', separator)}{extension} today.\n{after}"
    if pii._library_matches(text) is not None:
        assert pii._could_hold_a_phone(text), text


def test_a_resume_without_long_digit_runs_skips_the_library() -> None:
    """The point of the filter: a typical case (dates, figures) never pays for 13 passes."""
    text = "Payments engineer, 2016-2019.\nCut p99 latency by 40% for 1,200 merchants.\n"
    assert not pii._could_hold_a_phone(text)
    assert pii._could_hold_a_phone("Call 020 7946 0958.")
