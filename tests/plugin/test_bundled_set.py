"""The bundled golden set end to end: the keyword scorer against its own baseline, then the
example scorers that the suite must catch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ACCEPT = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")


@pytest.fixture
def bundled(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(REPO / "cases", pytester.path / "cases", ignore=shutil.ignore_patterns("*.py"))
    shutil.copytree(REPO / "examples", pytester.path / "examples")
    pytester.syspathinsert()
    pytester.makeini(
        "[pytest]\n"
        f"screeneval_db = sqlite:///{(pytester.path / 'store.db').as_posix()}\n"
        "screeneval_perturbation_examples = 3\n"
    )
    return pytester


def summary(pytester: pytest.Pytester, name: str) -> dict:
    return json.loads((pytester.path / name).read_text())


def gate(document: dict, name: str) -> dict:
    return next(g for g in document["gates"] if g["name"] == name)


def test_keyword_scorer_passes_against_its_own_accepted_baseline(bundled: pytest.Pytester) -> None:
    first = bundled.runpytest("--screeneval", *ACCEPT, "--screeneval-json", "first.json")
    assert first.ret == 0, first.stdout.str()[-3000:]
    first.stdout.fnmatch_lines(["accepted: run 1 is the new baseline*", "*13 xfailed*"])
    second = bundled.runpytest("--screeneval", "--screeneval-json", "second.json")
    assert second.ret == 0
    second.stdout.fnmatch_lines(
        [
            "baseline: run 1 * accepted by Ada Quill on *",
            "gates: 0 failed",
            "Movements against run 1: 0",
        ]
    )
    document = summary(bundled, "second.json")
    assert document["selection"]["cases"] == 56
    assert all(g["status"] in ("PASS", "N/A") for g in document["gates"])
    # the keyword scorer does not react to the age proxy either ("over 25 years" against
    # "8 years" under the name): a gap there would be a finding about the scorer
    assert {a: v["worst_gap"] for a, v in document["counterfactual"].items()} == {
        "age": 0.0,
        "college": 0.0,
        "gap": 0.0,
        "name": 0.0,
    }


def test_a_tweaked_scorer_shows_movement_and_fails_its_gates(bundled: pytest.Pytester) -> None:
    assert bundled.runpytest("--screeneval", *ACCEPT).ret == 0
    result = bundled.runpytest(
        "--screeneval",
        "-o",
        "screeneval_scorer=examples.tweaked_scorer:make_scorer",
        "--screeneval-json",
        "tweaked.json",
    )
    assert result.ret == 1
    document = summary(bundled, "tweaked.json")
    moved = document["movements"]
    assert moved and {m["criterion"] for m in moved} == {"leadership"}
    assert all(m["after"] == m["before"] - 1 for m in moved)
    assert gate(document, "agreement-drop[leadership]")["status"] == "FAIL"
    assert gate(document, "agreement-drop[python]")["status"] == "PASS"
    result.stdout.fnmatch_lines(
        ["*FAILED     moved * → * against the baseline, tolerance 0, not reviewed*"]
    )


def test_the_biased_example_scorer_is_caught_to_the_point(bundled: pytest.Pytester) -> None:
    result = bundled.runpytest(
        "--screeneval",
        "-o",
        "screeneval_scorer=examples.biased_scorer:make_scorer",
        "--screeneval-json",
        "biased.json",
    )
    assert result.ret == 1
    document = summary(bundled, "biased.json")
    gaps = document["counterfactual"]
    # the injected biases, reported to the point: 18 overall points for a parental-leave break,
    # one level of communication (weight 4) for the listed names, nothing for colleges
    assert gaps["gap"]["worst_gap"] == 18.0
    assert gaps["name"]["worst_gap"] == 4.0
    assert set(gaps["name"]["worst_values"]) & {"Aisha Bello", "Marcus Boateng"}
    assert gaps["college"]["worst_gap"] == 0.0
    assert gate(document, "counterfactual-gap[gap]")["status"] == "FAIL"
    assert gate(document, "counterfactual-gap[name]")["status"] == "FAIL"
    assert gate(document, "counterfactual-gap[college]")["status"] == "PASS"
    for kind in ("ocr-noise", "reformat", "reorder-sections"):
        assert gate(document, f"perturbation-shift[{kind}]")["status"] == "PASS"
    failed = [line for line in result.stdout.lines if line.startswith("FAILED ")]
    counterfactual = [line for line in failed if "::counterfactual[" in line]
    assert counterfactual and not any("counterfactual[college]" in line for line in failed)
    # outside the counterfactuals only candidates who really carry a gap line lose points
    others = [line.split("::")[1] for line in failed if "::counterfactual[" not in line]
    assert others and all(case.startswith("rt-") for case in others), others
