"""The audit document of a stored run, its HTML page, and ``screeneval report``.

The store holds a synthetic golden set and three runs (tests/support/audit_scenario.py); the
expected figures are worked out here from the scenario's own tables, not from the report's code.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.audit_scenario import (
    CASE_SCORES,
    DEMOGRAPHICS,
    GAP_VARIANTS,
    NAME_VARIANTS,
    Scenario,
    build_scenario,
    overall_of,
)
from support.golden_factory import make_identity

from pytest_screeneval.cli.main import main
from pytest_screeneval.report.audit import build_audit
from pytest_screeneval.report.html.page import SECTIONS, render_html

CRITERIA = ("experience", "skills", "communication")
DECIDER = "Morgan Ellery, recruiter"


@pytest.fixture
def scenario(store_url: str) -> Iterator[Scenario]:
    built = build_scenario(store_url)
    try:
        yield built
    finally:
        built.store.close()


def audit(scenario: Scenario, run: str = "third", **limits: float) -> dict:
    return build_audit(scenario.store, scenario.runs[run], final_decision_by=DECIDER, **limits)


def expected_score(scenario: Scenario, case_id: str, criterion: str) -> float:
    case = scenario.cases[case_id]
    rated = case.ratings.get(criterion)
    return statistics.median(rated.values()) if rated else case.expected[criterion].score


def contested(scenario: Scenario, case_id: str, criterion: str) -> bool:
    rated = scenario.cases[case_id].ratings.get(criterion)
    return bool(rated) and max(rated.values()) - min(rated.values()) >= 2


def test_identity_and_acceptance_chain(scenario: Scenario) -> None:
    doc = audit(scenario)
    run = doc["run"]
    assert run["run_id"] == scenario.runs["third"]
    assert (run["model_requested"], run["model_served"]) == (
        "keyword-third",
        "keyword-third-served",
    )
    assert (run["vcs_commit"], run["notes"], run["status"]) == (
        "c0ffeethird",
        "the third run",
        "complete",
    )
    assert run["config"] == {"max_gap": 2.0, "python": "3.11"}
    acceptance = doc["acceptance"]
    assert acceptance["this_run"] is None
    assert acceptance["compared_with"]["run_id"] == scenario.runs["second"]
    chain = [
        (e["run_id"], e["accepted_by"], e["forced"], e["replaced_run_id"])
        for e in acceptance["chain"]
    ]
    assert chain == [
        (scenario.runs["second"], "Bo Marchetti", True, scenario.runs["first"]),
        (scenario.runs["first"], "Avery Lindqvist", False, None),
    ]
    scenario.store.accept(scenario.runs["third"], by="Cleo Ashdown", note="crossings read")
    after = audit(scenario)["acceptance"]
    assert after["this_run"]["accepted_by"] == "Cleo Ashdown"
    assert [e["run_id"] for e in after["chain"]] == [
        scenario.runs["third"],
        scenario.runs["second"],
        scenario.runs["first"],
    ]
    assert after["chain"][0]["replaced_run_id"] == scenario.runs["second"]
    assert after["current_baseline_run_id"] == scenario.runs["third"]
    assert json.loads(json.dumps(after)) == after  # plain JSON values only


def test_agreement_by_criterion_and_slice(scenario: Scenario) -> None:
    doc = audit(scenario)
    third, second = CASE_SCORES["third"], CASE_SCORES["second"]
    rows = {r["criterion"]: r for r in doc["agreement"]["criteria"]}
    for i, criterion in enumerate(CRITERIA):
        plain = [c for c in third if not contested(scenario, c, criterion)]
        exact = sum(third[c][i] == expected_score(scenario, c, criterion) for c in plain)
        before = sum(second[c][i] == expected_score(scenario, c, criterion) for c in plain)
        row = rows[criterion]
        assert (row["cases"], row["exact"]) == (len(plain), exact), criterion
        assert row["exact_pct"] == pytest.approx(100 * exact / len(plain))
        assert row["change"] == pytest.approx(100 * (exact - before) / len(plain))
        assert row["contested"] == sum(contested(scenario, c, criterion) for c in third)
    # worst exact agreement first
    pcts = [r["exact_pct"] for r in doc["agreement"]["criteria"]]
    assert pcts == sorted(pcts)
    slices = {s["slice"]: s for s in doc["agreement"]["slices"]}
    gap_cases = [c for c in third if scenario.cases[c].label == "career-gap"]
    within = sum(
        abs(third[c][i] - expected_score(scenario, c, k)) <= 1
        for c in gap_cases
        for i, k in enumerate(CRITERIA)
    )
    assert (slices["career-gap"]["items"], slices["career-gap"]["within"]) == (9, within)
    assert slices["career-gap"]["gated"] is False  # 3 cases < slice_min_n 5
    assert slices["synthetic"]["gated"] is True
    low, high = slices["synthetic"]["ci_low"], slices["synthetic"]["ci_high"]
    assert low < slices["synthetic"]["pct"] <= high


def test_movements_crossings_and_reviews(scenario: Scenario) -> None:
    doc = audit(scenario)
    third, second = CASE_SCORES["third"], CASE_SCORES["second"]
    expected = sorted(
        (c, k, second[c][i], third[c][i])
        for c in third
        for i, k in enumerate(CRITERIA)
        if second[c][i] != third[c][i]
    )
    moved = doc["movement"]["movements"]
    assert (
        sorted((m["case_id"], m["criterion"], m["before"], m["after"]) for m in moved) == expected
    )
    assert abs(moved[0]["delta"]) == max(abs(m["delta"]) for m in moved)  # biggest first
    reviewed = {(m["case_id"], m["criterion"]): m["review"] for m in moved}
    assert reviewed[("cc-002", "communication")]["by"] == "Cleo Ashdown"
    assert reviewed[("cc-003", "skills")] is None
    flips = {c["case_id"]: c for c in doc["movement"]["crossings"]}
    rubric = scenario.rubric
    for case_id, flip in flips.items():
        before, after = overall_of(rubric, second[case_id]), overall_of(rubric, third[case_id])
        assert (before >= 60) != (after >= 60)
        assert flip["before_overall"] == pytest.approx(before)
        assert flip["after_overall"] == pytest.approx(after)
    assert set(flips) == {"cc-003", "ret-001"}
    assert flips["cc-003"]["after"] == "hold" and flips["cc-003"]["review"] is None
    scenario.store.add_review(
        run_id=scenario.runs["third"],
        case_id="cc-003",
        target="decision",
        baseline_run_id=scenario.runs["second"],
        before="advance",
        after="hold",
        by="Dev Okonkwo",
        note="the experience line is vague; hold is defensible",
    )
    again = {c["case_id"]: c for c in audit(scenario)["movement"]["crossings"]}
    assert again["cc-003"]["review"]["by"] == "Dev Okonkwo"


def test_counterfactual_gaps_and_perturbations(scenario: Scenario) -> None:
    doc = audit(scenario, max_gap=3.0)
    rubric = scenario.rubric
    attributes = {a["attribute"]: a for a in doc["counterfactual"]["attributes"]}
    gaps = {
        c: abs(overall_of(rubric, f) - overall_of(rubric, m)) for c, (f, m) in NAME_VARIANTS.items()
    }
    name = attributes["name"]
    assert name["n_cases"] == len(gaps)
    assert name["mean_gap"] == pytest.approx(statistics.fmean(gaps.values()))
    assert name["worst_gap"] == pytest.approx(max(gaps.values()))
    assert name["worst_case"] == max(gaps, key=gaps.__getitem__)
    assert name["over_limit"] == sum(g > 3.0 for g in gaps.values())
    assert [c["case_id"] for c in name["worst_cases"]] == sorted(gaps, key=lambda c: -gaps[c])
    (without, with_gap) = GAP_VARIANTS["cc-001"]
    gap = attributes["career_gap"]
    assert gap["worst_gap"] == pytest.approx(
        abs(overall_of(rubric, without) - overall_of(rubric, with_gap))
    )
    assert gap["worst_values"][0] == "none"  # the text without the gap line scored higher
    kinds = {k["kind"]: k for k in doc["perturbation"]["kinds"]}
    third = CASE_SCORES["third"]
    shift = abs(overall_of(rubric, (4, 3, 4)) - overall_of(rubric, third["gap-001"]))
    assert (kinds["reformat"]["texts"], kinds["reformat"]["cases"]) == (2, 2)
    assert kinds["reformat"]["worst_shift"] == pytest.approx(shift)
    assert kinds["reformat"]["worst_case"] == "gap-001"
    assert kinds["ocr-noise"]["worst_shift"] == pytest.approx(
        abs(overall_of(rubric, (3, 3, 4)) - overall_of(rubric, third["cc-001"]))
    )
    assert doc["scope"]["variant_texts"] == 4 + 2 + 3


def test_rates_by_group_from_demographics(scenario: Scenario) -> None:
    doc = audit(scenario)
    rubric = scenario.rubric
    overall = {c: overall_of(rubric, s) for c, s in CASE_SCORES["third"].items()}
    median = statistics.median(overall.values())
    rates = doc["rates"]["cases"]
    assert rates["median"] == pytest.approx(median)
    sex = next(b for b in rates["breakdowns"] if b["dimension"] == "sex")
    by_sex: dict[str, list[float]] = {}
    for case_id, value in overall.items():
        label = DEMOGRAPHICS[case_id].get("sex")
        if label:
            by_sex.setdefault(label, []).append(value)
    selection = {k: sum(v >= 60 for v in vs) / len(vs) for k, vs in by_sex.items()}
    scoring = {k: sum(v > median for v in vs) / len(vs) for k, vs in by_sex.items()}
    for row in sex["categories"]:
        group = row["category"]
        assert row["n"] == len(by_sex[group])
        assert row["selection_rate"] == pytest.approx(selection[group])
        assert row["selection_impact_ratio"] == pytest.approx(
            selection[group] / max(selection.values())
        )
        assert row["scoring_rate"] == pytest.approx(scoring[group])
        below = selection[group] / max(selection.values()) < 0.8
        assert ("selection" in row["below_threshold"]) == below
        # every ratio but the reference's carries its test against the reference
        test = row["selection_test"]
        if group == sex["selection_reference"]:
            assert test is None
        else:
            assert test["reference"] == sex["selection_reference"]
            assert 0 < test["fisher_p"] <= 1
            assert row["selection_flag"].startswith("below 0.8, ") == below
            if below:
                words = "significant (p" if test["significant"] else "not significant at n = "
                assert words in row["selection_flag"]
    assert sex["unknown"] == 1  # ret-002 has no demographics
    race = next(b for b in rates["breakdowns"] if b["dimension"] == "race")
    assert race["unknown"] == 2  # 'unknown' and missing
    assert any(b["dimension"] == "sex × race" for b in rates["breakdowns"])
    # age bands, where the cases carry them, are a category of the golden-set rates too
    age = next(b for b in rates["breakdowns"] if b["dimension"] == "age")
    scored_ages = [DEMOGRAPHICS[c].get("age") for c in overall]
    assert {r["category"]: r["n"] for r in age["categories"]} == {
        band: scored_ages.count(band) for band in ("40 and over", "under 40")
    }
    assert age["unknown"] == scored_ages.count(None)
    assert "equal to the median does not count" in rates["tie_rule"]
    variants = doc["rates"]["variants"]["name"]
    female = next(r for r in variants["breakdowns"][0]["categories"] if r["category"] == "female")
    assert female["n"] == len(NAME_VARIANTS)
    assert female["selected"] == sum(overall_of(rubric, f) >= 60 for f, _ in NAME_VARIANTS.values())
    assert "career_gap" not in doc["rates"]["variants"]  # its values carry no groups


def test_raters_and_provenance(scenario: Scenario) -> None:
    doc = audit(scenario)
    communication = next(r for r in doc["raters"]["criteria"] if r["criterion"] == "communication")
    # cc-001: 4, 4, 3 (1 of 3 pairs equal); cc-002: 4, 2 (0 of 1); pooled 1 of 4
    assert communication["exact_pairwise_share"] == pytest.approx(0.25)
    assert (communication["cases_rated"], communication["contested"]) == (2, 1)
    assert doc["raters"]["raters"] == ["rater-ab", "rater-kt", "rater-mo"]
    prov = doc["provenance"]
    assert (prov["cases"], prov["active"], prov["retired"]) == (8, 7, 1)
    assert prov["retired_cases"] == [
        {
            "case_id": "ret-002",
            "retired_at": "2024-09-30T12:00:00+00:00",
            "retired_by": "Curator Vale",
            "label": "returner",
        }
    ]
    setters = {e["set_by"]: e for e in prov["expectations_by"]}
    assert (setters["Rater Ferro"]["cases"], setters["Rater Ferro"]["expectations"]) == (5, 15)
    assert (setters["Rater Ferro"]["first"], setters["Rater Ferro"]["last"]) == (
        "2024-02-20",
        "2024-04-12",
    )
    assert setters["Rater Quill"]["cases"] == 3
    assert {s["source"]: s["cases"] for s in prov["by_source"]} == {
        "generator v2": 2,
        "synthetic; written by hand": 6,
    }
    assert {s["slice"]: (s["active"], s["retired"]) for s in prov["by_slice"]}["returner"] == (1, 1)
    assert prov["frozen_first"] == "2024-06-01T09:00:00+00:00"
    assert doc["scope"]["golden_changed_since_run"] is True  # ret-002 retired after the runs
    assert doc["final_decision"]["by"] == DECIDER


def test_html_is_self_contained_escaped_and_complete(scenario: Scenario) -> None:
    doc = audit(scenario)
    doc["final_decision"]["by"] = '<script>alert("x")</script> & Jo'
    page = render_html(doc)
    assert "http://" not in page and "https://" not in page
    assert re.search(r"\bsrc\s*=", page) is None
    assert set(re.findall(r'href="([^"]*)"', page)) == {f"#{ident}" for ident, _ in SECTIONS}
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    for ident, title in SECTIONS:
        assert f'<section id="{ident}"' in page and title in page
    assert page.count('<svg role="img"') == 4
    assert "below 0.8, " in page  # a marked impact ratio, with its significance in words
    assert "Fisher p = " in page and "95% CI " in page
    # golden-set rates are labelled test data with the 5-302(b) statement, never a bias audit
    rates = page.split('<section id="rates"', 1)[1].split("</section>", 1)[0]
    assert "Why historical data was not used (6 RCNY §5-302(b))" in rates
    assert "How the test data was generated and obtained" in rates
    assert "By sex — test data (the golden set)" in rates
    assert "bias audit" not in rates.replace("not a bias audit", "")
    historical = page.split('<section id="historical"', 1)[1].split("</section>", 1)[0]
    assert "No historical data was given to this report" in historical
    assert "Curator Vale" in page and "Bo Marchetti" in page


def test_report_command_writes_html_and_json(
    scenario: Scenario, store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html_path, json_path = tmp_path / "out" / "audit.html", tmp_path / "audit.json"
    run_id = str(scenario.runs["third"])
    status = main(
        [
            "--db",
            store_url,
            "report",
            run_id,
            "--html",
            str(html_path),
            "--json",
            str(json_path),
            "--final-decision-by",
            DECIDER,
        ]
    )
    assert status == 0, capsys.readouterr().err
    written = json.loads(json_path.read_text(encoding="utf-8"))
    fresh = audit(scenario, max_gap=2.0)  # the limit the run itself was configured with
    assert written["limits"]["max_gap"] == 2.0
    written.pop("generated_at"), fresh.pop("generated_at")
    assert written == json.loads(json.dumps(fresh))
    assert DECIDER in html_path.read_text(encoding="utf-8")
    assert str(html_path) in capsys.readouterr().out


def test_report_command_refusals(
    scenario: Scenario,
    store_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert main(["--db", store_url, "report", "999", "--html", str(tmp_path / "a.html")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("screeneval: ") and "no run 999" in err and "Traceback" not in err
    assert main(["--db", store_url, "report", str(scenario.runs["third"])]) == 2
    assert "--html" in capsys.readouterr().err
    monkeypatch.setenv("SCREENEVAL_FINAL_DECISION_BY", "Rae Osei, hiring manager")
    out = tmp_path / "b.json"
    assert main(["--db", store_url, "report", str(scenario.runs["first"]), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["final_decision"]["by"] == "Rae Osei, hiring manager"


def test_runs_without_baseline_variants_or_scores_still_render(scenario: Scenario) -> None:
    first = audit(scenario, "first")
    assert first["movement"] == {
        "baseline_run_id": None,
        "compared": 0,
        "movements": [],
        "crossings": [],
    }
    assert first["counterfactual"]["attributes"] == [] and first["rates"]["variants"] == {}
    assert first["acceptance"]["chain"][0]["accepted_by"] == "Avery Lindqvist"
    empty = scenario.store.start_run(
        identity=make_identity(),
        rubric_id=scenario.rubric.id,
        golden_sha="g" * 64,
        plugin_version="0.1.0",
        vcs_commit=None,
    )
    scenario.store.finish_run(empty, status="interrupted")
    doc = build_audit(scenario.store, empty, final_decision_by=DECIDER)
    assert doc["scope"]["cases_scored"] == 0 and doc["rates"]["cases"]["median"] is None
    assert len(doc["scope"]["active_cases_not_scored"]) == 7
    for document in (first, doc):
        page = render_html(document)
        assert all(f'<section id="{ident}"' in page for ident, _ in SECTIONS)
    assert "not compared with a baseline" in render_html(doc)
