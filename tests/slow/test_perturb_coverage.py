"""The perturbation search covers its strategy: every kind of edit within its first examples.

A scorer sensitive to one kind of edit (a ligature glyph, a 4-space indent, the skills section
first) meets that kind at the default example count on every case of the bundled golden set
where the kind applies, and a failing spread-out OCR example is narrowed to the smallest
failing set of edits. The bundled cases are synthetic people.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_screeneval.golden.load import load_golden_set
from pytest_screeneval.probes.draw import draw_texts, search
from pytest_screeneval.probes.perturb import (
    OCR_EDIT_KINDS,
    PERTURBATION_KINDS,
    OcrNoise,
    Perturbation,
    Reformat,
    ReorderSections,
    coverage,
    edit_kinds,
    find_sections,
    stratified,
)
from pytest_screeneval.settings.options import OPTIONS

BUNDLED = Path(__file__).resolve().parents[2] / "cases"
DEFAULT_EXAMPLES = int(next(o.default for o in OPTIONS if o.name.endswith("perturbation_examples")))
LIGATURES = "\ufb00\ufb01\ufb02\ufb03\ufb04"


def bundled_texts() -> list[tuple[str, str]]:
    golden = load_golden_set(BUNDLED)
    return [(case.id, case.input_text) for case in golden.cases]


class Sensitive(Exception):
    """The test scorer reacted to the perturbed text."""


def caught(case_id: str, kind: str, text: str, reacts: Callable[[str], bool]) -> bool:
    def judge(perturbation: Perturbation) -> None:
        if reacts(perturbation.apply(text)):
            raise Sensitive

    try:
        search(case_id, kind, text, DEFAULT_EXAMPLES, judge, shrink=False)
    except Sensitive:
        return True
    return False


def count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


# A detector per OCR kind of edit: true when the text shows that kind and only that kind
# could have made it (counted against the original text).
OCR_DETECTORS: dict[str, Callable[[str, str], bool]] = {
    "digit-letter": lambda t, o: count(r"\d", t) != count(r"\d", o),
    "letter-shape": lambda t, o: (count("I", t), count("m", t)) != (count("I", o), count("m", o)),
    "ligature": lambda t, o: any(c in t for c in LIGATURES),
    "spacing": lambda t, o: (
        (count(r"\w  \w", t), count(r",\S", t)) != (count(r"\w  \w", o), count(r",\S", o))
    ),
}


@pytest.mark.parametrize("edit_kind", OCR_EDIT_KINDS)
def test_each_ocr_kind_is_met_at_the_default_count_on_every_bundled_case(edit_kind: str) -> None:
    detector = OCR_DETECTORS[edit_kind]
    applicable = [(c, t) for c, t in bundled_texts() if edit_kind in edit_kinds("ocr-noise", t)]
    assert applicable, f"no bundled case admits {edit_kind}"
    missed = [
        c for c, t in applicable if not caught(c, "ocr-noise", t, lambda x, t=t: detector(x, t))
    ]
    assert missed == []


def blank_runs(text: str) -> set[int]:
    """The lengths of the runs of blank lines between lines of text."""
    return {run.count("\n") - 1 for run in re.findall(r"(?<=\S)\n(?:[ \t]*\n)*(?=[ \t]*\S)", text)}


REFORMAT_VALUES = [
    ("indentation", Reformat(indent=4)),
    ("indentation", Reformat(indent=2)),
    ("indentation", Reformat(indent=0)),
    ("bullets", Reformat(bullet="•")),
    ("bullets", Reformat(bullet="-")),
    ("bullets", Reformat(bullet="*")),
    ("spacing", Reformat(blank_lines=0)),
    ("spacing", Reformat(blank_lines=2)),
    ("case", Reformat(heading_case="upper")),
    ("case", Reformat(heading_case="title")),
]


@pytest.mark.parametrize(
    "one_value", [v for _, v in REFORMAT_VALUES], ids=[v.summary() for _, v in REFORMAT_VALUES]
)
def test_each_reformat_value_is_met_at_the_default_count_on_every_bundled_case(
    one_value: Reformat,
) -> None:
    # A scorer that reacts to one formatting value, wherever a search makes it appear: the
    # lines it sets are in the text only when that value was applied (or the text had it).
    missed = []
    for case_id, text in bundled_texts():
        target = one_value.apply(text)
        if target == text:
            continue  # the value changes nothing here: there is nothing to be sensitive to
        changed = set(target.split("\n")) - set(text.split("\n"))
        runs = blank_runs(target)

        def reacts(perturbed: str, changed: set[str] = changed, runs: set[int] = runs) -> bool:
            if one_value.blank_lines is not None:
                return blank_runs(perturbed) == runs
            return bool(changed & set(perturbed.split("\n")))

        if not caught(case_id, "reformat", text, reacts):
            missed.append(case_id)
    assert missed == []


def test_each_section_first_is_met_at_the_default_count_on_every_bundled_case() -> None:
    missed = []
    for case_id, text in bundled_texts():
        headings = find_sections(text)
        for heading in headings[1:]:

            def reacts(perturbed: str, heading: str = heading) -> bool:
                return find_sections(perturbed)[:1] == (heading,)

            if not caught(case_id, "reorder-sections", text, reacts):
                missed.append((case_id, heading))
    assert missed == []


def test_the_search_reports_every_kind_tried_at_the_default_count() -> None:
    for _, text in bundled_texts():
        for kind in PERTURBATION_KINDS:
            tried, kinds = coverage(kind, text, DEFAULT_EXAMPLES)
            assert tried == kinds == len(edit_kinds(kind, text))
    text = bundled_texts()[0][1]
    assert coverage("ocr-noise", text, 1) == (1, len(edit_kinds("ocr-noise", text)))


def test_each_stratified_ocr_example_holds_one_kind_of_edit_spread_over_the_text() -> None:
    for _, text in bundled_texts():
        examples = [e for e in stratified("ocr-noise", text) if isinstance(e, OcrNoise)]
        kinds = [{edit.kind for edit in example.edits} for example in examples]
        assert all(len(k) == 1 for k in kinds)
        assert [k.pop() for k in kinds] == list(edit_kinds("ocr-noise", text))
        for example in examples:
            positions = [e.position for e in example.edits]
            assert positions == sorted(set(positions))
            assert len(positions) <= max(1, -(-2 * len(text) // 100))  # the 2% rate's bound
            assert example.apply(text) != text


def test_the_first_examples_drawn_are_the_stratified_ones_then_hypothesis() -> None:
    case_id, text = bundled_texts()[0]
    for kind in PERTURBATION_KINDS:
        first = [p.apply(text) for p in stratified(kind, text)]
        drawn = draw_texts(case_id, kind, text, DEFAULT_EXAMPLES + 3)
        assert drawn[: len(first)] == first
        assert len(drawn) <= DEFAULT_EXAMPLES + 3
        assert draw_texts(case_id, kind, text, DEFAULT_EXAMPLES + 3) == drawn  # seeded


def test_a_failing_spread_ocr_example_is_narrowed_to_the_one_edit_that_fails() -> None:
    case_id, text = bundled_texts()[0]
    example = stratified("ocr-noise", text)[0]
    assert isinstance(example, OcrNoise) and len(example.edits) > 3
    culprit = example.edits[len(example.edits) // 2]
    judged: list[Perturbation] = []

    class Failed(Exception):
        pass

    def judge(perturbation: Perturbation) -> None:
        judged.append(perturbation)
        if isinstance(perturbation, OcrNoise) and culprit in perturbation.edits:
            raise Failed(perturbation)

    with pytest.raises(Failed) as failed:
        search(case_id, "ocr-noise", text, DEFAULT_EXAMPLES, judge, shrink=True)
    assert failed.value.args[0] == OcrNoise((culprit,))
    assert len(judged) <= 1 + 40 + 1


def test_reorder_strata_move_each_section_to_the_front() -> None:
    text = "Rae Holm\n\nSKILLS\nTableau\n\nEDUCATION\nBSc\n\nPROJECTS\nDashboards\n"
    assert stratified("reorder-sections", text) == (
        ReorderSections((1, 0, 2)),
        ReorderSections((2, 0, 1)),
        ReorderSections((1, 2, 0)),
        ReorderSections((2, 1, 0)),
    )
