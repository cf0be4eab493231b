"""End-to-end behaviour of `pytest --screeneval`, run with pytester on a small golden set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import (
    CASES,
    RUBRIC,
    expected_scores,
    extra_calls,
    make_case,
    scorer_calls,
    set_scores,
    write_project,
)

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.store.database import Store

ACCEPT = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")

# The integration tests that matter most run three ways: no xdist, -n 0 and -n 2 (two workers,
# one run row, the controller decides the gates).
DIST_MODES = [
    pytest.param((), id="no-xdist"),
    pytest.param(("-n", "0"), id="n0"),
    pytest.param(("-n", "2"), id="n2"),
]


@pytest.fixture(params=DIST_MODES)
def dist(request: pytest.FixtureRequest) -> tuple[str, ...]:
    return tuple(request.param)


def run(pytester: pytest.Pytester, dist: tuple[str, ...], *args: str) -> pytest.RunResult:
    return pytester.runpytest("--screeneval", *dist, *args)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester)
    return pytester


def store_of(pytester: pytest.Pytester) -> Store:
    return Store.open(f"sqlite:///{(pytester.path / 'store.db').as_posix()}")


def db_args(pytester: pytest.Pytester) -> list[str]:
    return ["--db", f"sqlite:///{(pytester.path / 'store.db').as_posix()}"]


def accept_baseline(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--screeneval", *ACCEPT)
    assert result.ret == 0, result.stdout.str()


def test_first_run_passes_records_a_run_and_prints_the_summary(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    result = run(project, dist)
    assert result.ret == 0
    # 7 cases x (3 criteria + decision + 2 counterfactuals)
    result.assert_outcomes(passed=42)
    result.stdout.fnmatch_lines(
        [
            "*screeneval*",
            "run 1 (complete) * scorer table * model table-v1*",
            "baseline: none accepted yet*",
            "Gates",
            "*protected-attribute-flags*PASS*",
            "gates: 0 failed",
            "Agreement by criterion*",
            "Agreement by slice*",
        ]
    )
    with store_of(project) as store:
        record = store.get_run(1)
        assert record.status == "complete"
        assert record.model_id == "table-v1"
        rows = store.scores(1)
    originals = [r for r in rows if r.variant_key == "" and r.repeat_index == 0]
    assert len(originals) == 7 * 3
    assert {r.case_id for r in rows if r.variant_key.startswith("gap=")} == set(expected_scores())


def test_node_ids_read_as_file_case_criterion(project: pytest.Pytester) -> None:
    result = project.runpytest("--screeneval", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "cases/alpha/al-001.yaml::al-001::skills",
            "cases/alpha/al-001.yaml::al-001::decision",
            "cases/alpha/al-001.yaml::al-001::counterfactual?name?",
        ]
    )
    assert scorer_calls(project) == 0  # collecting scores nothing


def test_select_a_slice_and_a_criterion_with_k(project: pytest.Pytester) -> None:
    result = project.runpytest("--screeneval", "-k", "beta and skills", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*be-001::skills PASSED*", "*be-002::skills PASSED*"])
    result.stdout.fnmatch_lines(["selection: 2 of 7 cases*"])
    # only the selected inputs were scored, plus the noise probe's re-scores of them
    assert scorer_calls(project) == 2 + extra_calls(result.stdout.str())


def test_same_scores_against_accepted_baseline_exit_zero(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    accept_baseline(project)
    result = run(project, dist)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "baseline: run 1 * accepted by Ada Quill on *",
            "*moved-share*0.0*<= 10*PASS*",
            "Movements against run 1: 0",
        ]
    )


def test_moved_score_fails_with_before_after_and_who_accepted(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    accept_baseline(project)
    scores = expected_scores()
    scores["al-001"]["skills"] = 3  # still within tolerance 1 of the expectation, but it moved
    set_scores(project, scores)
    result = run(project, dist)
    result.assert_outcomes(passed=41, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*al-001 · skills*",
            "*score      3*",
            "*baseline   4 → 3   (run 1, accepted by Ada Quill on *)*",
            "*FAILED     moved 4 → 3 against the baseline, tolerance 0, not reviewed*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_reviewed_movement_passes_and_names_the_reviewer(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    accept_baseline(project)
    scores = expected_scores()
    scores["al-001"]["skills"] = 3
    set_scores(project, scores)
    assert run(project, dist).ret == 1  # run 2: the movement fails
    code = screeneval(
        [
            *db_args(project),
            "review",
            "2",
            "al-001",
            "skills",
            "--by",
            "Bo Lindqvist",
            "--note",
            "the new prompt reads SQL as intermediate; agreed",
        ]
    )
    assert code == 0
    result = run(project, dist, "-rA", "-k", "al-001 and skills")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*moved 4 → 3, reviewed by Bo Lindqvist on *"])


def test_movement_within_movement_tolerance_passes(project: pytest.Pytester) -> None:
    accept_baseline(project)
    scores = expected_scores()
    scores["al-001"]["skills"] = 3
    set_scores(project, scores)
    result = project.runpytest(
        "--screeneval",
        "-o",
        "screeneval_movement_tolerance=1",
        "-o",
        "screeneval_max_agreement_drop=20",
    )
    assert result.ret == 0


def test_xfail_and_xpass_from_the_case_file(pytester: pytest.Pytester) -> None:
    cases = [make_case(c) for c in ("al-001", "al-002")]
    cases[0] = make_case("al-001", xfail={"skills": "reads dbt as a SQL tool"})
    cases[1] = make_case("al-002", xfail={"skills": "known drift on skills"})
    write_project(pytester, cases)
    scores = expected_scores()
    scores["al-001"]["skills"] = 1  # 3 away from the expectation: the known drift shows
    set_scores(pytester, scores)
    result = pytester.runpytest("--screeneval", "-k", "skills", "-rxX")
    result.assert_outcomes(xfailed=1, xpassed=1)
    result.stdout.fnmatch_lines(
        [
            "*XFAIL*al-001::skills*reads dbt as a SQL tool*",
            "*XPASS*al-002::skills*known drift on skills*",
        ]
    )


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("raise", "scorer error: the scorer raised RuntimeError: the scoring service crashed"),
        ("refuse", "scorer error: the model refused: I cannot assess this candidate*"),
        ("unknown-criterion", "scorer error: the scorer returned an unknown criterion 'charisma'"),
    ],
)
def test_a_failing_scorer_fails_only_its_case_with_the_reason(
    project: pytest.Pytester, dist: tuple[str, ...], behaviour: str, reason: str
) -> None:
    set_scores(project, expected_scores(), behaviour={"al-002": behaviour})
    result = run(project, dist, "-k", "not counterfactual")
    # al-002: 3 criteria + its decision fail; every other case passes
    result.assert_outcomes(passed=24, failed=4)
    result.stdout.fnmatch_lines([f"*FAILED     {reason}"])
    failed = [line for line in result.stdout.lines if line.startswith("FAILED ")]
    assert all("al-002" in line for line in failed), failed
    with store_of(project) as store:
        rows = [r for r in store.scores(1) if r.case_id == "al-002" and r.variant_key == ""]
    assert rows and all(r.score is None and r.error for r in rows)


def test_a_score_off_the_scale_fails_only_that_criterion(project: pytest.Pytester) -> None:
    set_scores(project, expected_scores(), behaviour={"be-001": "off-scale"})
    result = project.runpytest("--screeneval", "-k", "be-001 and not counterfactual")
    result.assert_outcomes(passed=2, failed=2)  # skills and the decision (no overall score)
    result.stdout.fnmatch_lines(
        ["*FAILED     scorer error: the scorer returned 9, off the scale 1..5"]
    )


def test_distance_to_expected_score_above_tolerance_fails(project: pytest.Pytester) -> None:
    scores = expected_scores()
    scores["al-003"]["experience"] = 3  # expected 5, tolerance 1
    set_scores(project, scores)
    result = project.runpytest("--screeneval", "-k", "al-003 and experience")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*FAILED     2 from the expected score, tolerance 1"])
    result = project.runpytest(
        "--screeneval", "-k", "al-003 and experience", "-o", "screeneval_expected_tolerance=2"
    )
    result.assert_outcomes(passed=1)


def test_contested_item_passes_within_raters_range_and_fails_outside(
    pytester: pytest.Pytester,
) -> None:
    ratings = {"communication": {"rater-ql": 2, "rater-mv": 4, "rater-jo": 3}}
    write_project(pytester, [make_case("al-001", ratings=ratings), make_case("al-002")])
    scores = expected_scores()
    scores["al-001"]["communication"] = 4
    set_scores(pytester, scores)
    result = pytester.runpytest("--screeneval", "-k", "communication and contested", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["Rater agreement on the golden set*", "  communication  *1  *"])
    set_scores(pytester, scores, confidence={"al-001": 0.95})
    result = pytester.runpytest("--screeneval", "-k", "communication and contested")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*confidence 0.95 on a contested item is above 0.70"])
    scores["al-001"]["communication"] = 5
    set_scores(pytester, scores)
    result = pytester.runpytest("--screeneval", "-k", "communication and contested")
    result.stdout.fnmatch_lines(["*contested item scored 5, outside the raters' range 2..4"])


def test_protected_term_in_rationale_fails_even_when_score_is_right(
    project: pytest.Pytester,
    dist: tuple[str, ...],
) -> None:
    rationale = (
        'The experience criterion scores 3 because the resume says "Built weekly sales reports'
        ' in SQL and Python", though she is a young mother.'
    )
    set_scores(project, expected_scores(), rationales={"al-001": {"experience": rationale}})
    result = run(project, dist, "-k", "al-001 and experience")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*flags      *protected-attribute*",
            '*FAILED     the rationale refers to a protected attribute (age: "young mother";'
            ' marital or family status: "mother")',
        ]
    )
    result.stdout.fnmatch_lines(["*protected-attribute-flags*1.0*<= 0*FAIL*"])
    # even when other flags only warn, a protected attribute stays a hard failure
    result = run(
        project, dist, "-k", "al-001 and experience", "-o", "screeneval_rationale_flags=warn"
    )
    result.assert_outcomes(failed=1)


def test_soft_rationale_flag_fails_or_warns_as_configured(project: pytest.Pytester) -> None:
    set_scores(project, expected_scores(), rationales={"al-001": {"skills": "Good."}})
    result = project.runpytest("--screeneval", "-k", "al-001 and skills")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*FAILED     rationale flags: *too-short*"])
    result = project.runpytest(
        "--screeneval", "-k", "al-001 and skills", "-rA", "-o", "screeneval_rationale_flags=warn"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*rationale flags (warn only): *too-short*"])


def test_repeat_runs_report_self_disagreement(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    set_scores(project, expected_scores(), behaviour={"al-004": "repeat-drift"})
    result = run(
        project,
        dist,
        "--screeneval-repeat",
        "2",
        "--screeneval-concurrency",
        "1",
        "-o",
        "screeneval_max_self_disagreement=0",
        "-k",
        "not counterfactual",
    )
    # the gates table comes first, the self-consistency block after it
    result.stdout.fnmatch_lines(
        [
            "*self-disagreement*4.8*<= 0*FAIL*",
            "Self-consistency over 2 repeats: 1 of 21 items differ (4.8%)",
            "*al-004 · skills: 2, 1*",
        ]
    )
    assert result.ret == 1
    # the same drift is within the default limit (5%)
    result = run(
        project,
        dist,
        "--screeneval-repeat",
        "2",
        "--screeneval-concurrency",
        "1",
        "-k",
        "not counterfactual",
    )
    result.stdout.fnmatch_lines(["*self-disagreement*4.8*<= 5*PASS*"])


def test_consistent_repeats_pass_the_gate(project: pytest.Pytester) -> None:
    result = project.runpytest("--screeneval", "--screeneval-repeat", "3", "-k", "alpha")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["Self-consistency over 3 repeats: 0 of 15 items differ (0.0%)"])
    # originals 3 times each; per attribute one variant differs from the original text (the
    # case's own name and "no gap" are the original text, scored once and shared)
    assert scorer_calls(project) == 5 * 3 + 5 * 2


def test_crossing_fails_the_decision_until_reviewed(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    accept_baseline(project)
    scores = expected_scores()
    scores["be-001"] = {"skills": 2, "experience": 2, "communication": 2}  # 50 -> 25: hold
    set_scores(project, scores)
    result = run(project, dist, "-o", "screeneval_expected_tolerance=2")
    result.stdout.fnmatch_lines(
        [
            "*be-001 · decision (advance at 50)*",
            "*FAILED     the decision crossed advance → hold against the baseline*",
            "*unreviewed-crossings*1.0*<= 0*FAIL*",
            "Crossings (decision flips): 1",
        ]
    )
    assert result.ret == 1
    assert (
        screeneval(
            [
                *db_args(project),
                "review",
                "2",
                "be-001",
                "--by",
                "Bo Lindqvist",
                "--note",
                "read it: weaker match",
            ]
        )
        == 0
    )
    result = run(
        project,
        dist,
        "-o",
        "screeneval_expected_tolerance=2",
        "-o",
        "screeneval_movement_tolerance=2",
        "-k",
        "be-001 and decision",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*unreviewed-crossings*0.0*<= 0*PASS*"])


def test_agreement_drop_and_moved_share_gates(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    accept_baseline(project)
    scores = expected_scores()
    for case_id in ("al-001", "al-002", "al-005"):
        scores[case_id]["communication"] -= 1  # exact agreement on communication: 100% -> 57%
    set_scores(project, scores)
    result = run(project, dist, "-o", "screeneval_movement_tolerance=1")
    result.stdout.fnmatch_lines(
        [
            "*agreement-drop?communication?*42.9*<= 5*FAIL*",
            "*agreement-drop?skills?*0.0*<= 5*PASS*",
            "*moved-share*14.3*<= 10*FAIL*3 of 21 items moved unreviewed*",
        ]
    )
    assert result.ret == 1  # every item passed: the gates alone fail the session
    result.assert_outcomes(passed=42)


def test_worst_slice_gate(project: pytest.Pytester) -> None:
    scores = expected_scores()
    for case_id in ("al-001", "al-002"):
        scores[case_id] = {c: 1 for c in scores[case_id]}
    set_scores(
        project,
        scores,
    )
    result = project.runpytest("--screeneval", "-k", "not counterfactual")
    result.stdout.fnmatch_lines(["*worst-slice*60.0*>= 80*FAIL*alpha: 9/15 items, 5 cases*"])
    result = project.runpytest(
        "--screeneval", "-k", "not counterfactual", "-o", "screeneval_min_worst_slice=50"
    )
    result.stdout.fnmatch_lines(["*worst-slice*60.0*>= 50*PASS*"])


def test_counterfactual_gap_fails_item_and_gate(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    set_scores(project, expected_scores(), gap_penalty=1)
    result = run(project, dist, "-k", "counterfactual")
    result.assert_outcomes(passed=7, failed=7)  # name passes, gap fails for every case
    result.stdout.fnmatch_lines(
        [
            "*al-001 · counterfactual?gap? (max gap 3 points)*",
            "*FAILED     the overall score moves 25.0 points across gap values, above the limit 3",
            "*counterfactual-gap?gap?*25.0*<= 3*FAIL*",
            "*counterfactual-gap?name?*0.0*<= 3*PASS*",
        ]
    )


def test_a_bias_that_trades_one_criterion_for_another_fails_the_per_criterion_gate(
    project: pytest.Pytester,
) -> None:
    # one name costs a level of experience and gains one of communication: the overall score,
    # and so the overall gap, does not move, but a recruiter reading the criteria sees it
    trade = {"name": "Kwame Asante", "down": "experience", "up": "communication"}
    set_scores(project, expected_scores(), trade=trade)
    result = project.runpytest("--screeneval")
    # the originals' criteria and decisions and the gap pass; name fails for every case (the
    # originals measured the scorer's noise as none, so a one-level difference is exact)
    result.assert_outcomes(passed=35, failed=7)
    result.stdout.fnmatch_lines(
        [
            "*al-001 · counterfactual?name? (max gap 3 points)*",
            "*per criterion: communication 1, experience 1",
            "*FAILED     communication moves 1 level(s) across name values (Kwame Asante vs "
            "Mirela Dobos), above the per-criterion limit 0.5",
        ]
    )
    result.stdout.fnmatch_lines(["*counterfactual-gap?name?*0.0*<= 3*PASS*"])
    result.stdout.fnmatch_lines(
        ["*counterfactual-criterion-gap?name?*1.0*<= 0.5*FAIL*communication: *"]
    )
    result.stdout.fnmatch_lines(["*counterfactual-criterion-gap?gap?*0.0*<= 0.5*PASS*"])


def test_perturbation_shift_shrinks_to_the_smallest_change(project: pytest.Pytester) -> None:
    set_scores(project, expected_scores(), format_penalty=1)
    result = project.runpytest(
        "--screeneval", "-k", "al-001 and perturbation", "-o", "screeneval_perturbation_examples=20"
    )
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "al-001 · perturbation[reformat]" in out
    assert "smallest perturbation found:" in out
    assert "+- Built weekly" not in out  # the diff shows the bullet change, not noise
    result.stdout.fnmatch_lines(["*perturbation-shift?reformat?*25.0*<= 5*FAIL*"])


def test_json_report_has_every_figure(project: pytest.Pytester, dist: tuple[str, ...]) -> None:
    accept_baseline(project)
    result = run(project, dist, "--screeneval-json", "out/run.json")
    assert result.ret == 0
    document = json.loads((project.path / "out" / "run.json").read_text())
    assert document["run_id"] == 2
    assert document["baseline"]["accepted_by"] == "Ada Quill"
    assert {g["name"] for g in document["gates"]} >= {
        "moved-share",
        "worst-slice",
        "unreviewed-crossings",
    }
    assert [a["criterion"] for a in document["agreement"]] == [
        "communication",
        "experience",
        "skills",
    ]
    assert document["counterfactual"]["name"]["worst_gap"] == 0.0
    assert document["selection"]["cases"] == 7


def test_accept_is_refused_while_a_gate_fails_unless_forced(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    set_scores(project, expected_scores(), gap_penalty=1)
    result = run(project, dist, *ACCEPT)
    result.stdout.fnmatch_lines(
        [
            "not accepted: Run 1 was not accepted: failed gate counterfactual-gap?gap?; "
            "failed gate counterfactual-criterion-gap?gap?; review or fix them, or force it "
            "with --screeneval-force-accept and --screeneval-accept-note."
        ]
    )
    with store_of(project) as store:
        assert store.baseline() is None
    result = run(
        project,
        dist,
        *ACCEPT,
        "--screeneval-force-accept",
        "--screeneval-accept-note",
        "gap penalty known, fix scheduled",
    )
    result.stdout.fnmatch_lines(["accepted: run 2 is the new baseline (forced)*"])
    with store_of(project) as store:
        baseline = store.baseline()
        assert baseline is not None and baseline.run_id == 2
        assert baseline.accepted is not None and baseline.accepted.forced


def test_interrupt_mid_run_keeps_scored_rows_and_marks_the_run(project: pytest.Pytester) -> None:
    set_scores(project, expected_scores(), behaviour={"be-002": "interrupt"})
    # in a subprocess: an in-process run would hand the Ctrl-C on to this test session
    result = project.runpytest_subprocess(
        "--screeneval", "--screeneval-concurrency", "1", "-k", "not counterfactual"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    with store_of(project) as store:
        record = store.get_run(1)
        rows = store.scores(1)
    assert record.status == "interrupted"
    assert {r.case_id for r in rows} == {"al-001", "al-002", "al-003", "al-004", "al-005", "be-001"}
    # after the Ctrl-C no call more: the noise probe's re-scores (later repeats) were not sent
    assert all(r.repeat_index == 0 for r in rows)
    # an interrupted run can never be the baseline; the next complete one can
    set_scores(project, expected_scores())
    assert screeneval([*db_args(project), "accept", "1", "--by", "Ada Quill", "--note", "try"]) == 1
    result = project.runpytest("--screeneval", *ACCEPT, "-k", "not counterfactual")
    assert result.ret == 0
    with store_of(project) as store:
        baseline = store.baseline()
        assert baseline is not None and baseline.run_id == 2


def test_changed_frozen_case_is_a_collection_error(project: pytest.Pytester) -> None:
    assert project.runpytest("--screeneval").ret == 0
    path = project.path / "cases" / "alpha" / "al-001.yaml"
    path.write_text(path.read_text().replace("14 regional managers", "15 regional managers"))
    result = project.runpytest("--screeneval")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*cases/alpha/al-001.yaml: case al-001 changed its frozen input_text (frozen on * as "
            "sha256 *, now *); retire it*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_malformed_case_file_names_file_and_line(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "beta" / "be-002.yaml"
    path.write_text(path.read_text().replace("label: beta", "label: [beta"))
    result = project.runpytest("--screeneval")
    result.stdout.fnmatch_lines(["*cases/beta/be-002.yaml, line *: malformed YAML*"])
    assert "Traceback" not in result.stdout.str()


def test_bad_ini_value_is_one_sentence(project: pytest.Pytester) -> None:
    result = project.runpytest("--screeneval", "-o", "screeneval_max_gap=lots")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: Invalid value for ini screeneval_max_gap: expected a number, got 'lots'."]
    )


def test_unreachable_database_is_one_sentence(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--screeneval", "--screeneval-db", "postgresql+psycopg://nobody@127.0.0.1:1/none"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "127.0.0.1:1" in err and "Traceback" not in err


def test_reuse_and_repeat_together_are_refused(project: pytest.Pytester) -> None:
    result = project.runpytest("--screeneval", "--screeneval-reuse", "--screeneval-repeat", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --screeneval-reuse cannot be combined with*"])


def test_reuse_takes_scores_of_the_latest_complete_run(project: pytest.Pytester) -> None:
    assert project.runpytest("--screeneval", "-k", "not counterfactual").ret == 0
    calls = scorer_calls(project)
    result = project.runpytest("--screeneval", "--screeneval-reuse", "-k", "not counterfactual")
    assert result.ret == 0
    # nothing scored again but the noise probe's re-scores (the noise is measured every run)
    assert scorer_calls(project) == calls + extra_calls(result.stdout.str())
    with store_of(project) as store:
        rows = store.scores(2)
    # every answer of the run is run 1's; the noise probe's re-scores (later repeats) are new
    originals = [r for r in rows if r.repeat_index == 0]
    assert originals and all(r.reused_from_run == 1 for r in originals)
    assert all(r.reused_from_run is None for r in rows if r.repeat_index > 0)


def test_golden_set_from_the_store(project: pytest.Pytester) -> None:
    assert screeneval([*db_args(project), "cases", "import", str(project.path / "cases")]) == 0
    assert screeneval([*db_args(project), "cases", "retire", "be-002", "--by", "Ada Quill"]) == 0
    result = project.runpytest(
        "--screeneval",
        "-o",
        "screeneval_source=db",
        "-k",
        "not counterfactual",
        "--collect-only",
        "-q",
    )
    result.stdout.fnmatch_lines(["screeneval-db::al-001::skills"])
    assert "be-002" not in result.stdout.str()
    result = project.runpytest("--screeneval", "-o", "screeneval_source=db")
    assert result.ret == 0
    result.assert_outcomes(passed=36)


def test_plain_pytest_collects_no_golden_items(project: pytest.Pytester) -> None:
    project.makepyfile(test_unit="def test_unit():\n    assert True\n")
    result = project.runpytest()
    result.assert_outcomes(passed=1)
    assert not (Path(project.path) / "store.db").exists()


def test_diff_prints_movement_and_agreement_between_two_runs(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    accept_baseline(project)
    scores = expected_scores()
    scores["al-003"]["experience"] = 4
    set_scores(project, scores)
    project.runpytest("--screeneval")
    capsys.readouterr()
    assert screeneval([*db_args(project), "diff", "1", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "Movements: 1 of 21 items" in out
    assert any(line.split() == ["al-003", "experience", "5", "4", "-1"] for line in out)
    experience = next(line for line in out if line.strip().startswith("experience"))
    assert experience.split()[1:4] == ["7", "6", "85.7"] and experience.split()[6] == "-14.3"
    assert "Crossings (decision flips): 0" in out


def test_junit_xml_has_item_properties_and_the_gate_table(project: pytest.Pytester) -> None:
    import xml.etree.ElementTree as ET

    scores = expected_scores()
    scores["al-003"]["experience"] = 3
    set_scores(project, scores)
    project.runpytest("--screeneval", "--junitxml", "junit.xml", "-k", "al-003 or counterfactual")
    root = ET.parse(project.path / "junit.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    suite_props = {p.get("name"): p.get("value") for p in suite.find("properties") or []}
    assert suite_props["screeneval.run_id"] == "1"
    assert suite_props["screeneval.gate.protected-attribute-flags"].startswith("PASS value=0.0")
    assert suite_props["screeneval.gate.moved-share"].startswith("N/A")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    experience_case = cases["cases.alpha.al-003.yaml.al-003", "experience"]
    experience = {p.get("name"): p.get("value") for p in experience_case.iter("property")}
    assert experience == {
        "screeneval.score": "3",
        "screeneval.expected": "5",
        "screeneval.baseline": "none",
        "screeneval.flags": "",
    }
    assert experience_case.find("failure") is not None
    gap_case = cases["cases.alpha.al-001.yaml.al-001", "counterfactual[gap]"]
    gap = {p.get("name"): p.get("value") for p in gap_case.iter("property")}
    assert gap == {"screeneval.gap": "0.0"}


def test_audit_report_states_who_decides_as_the_run_was_configured(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    decider = "Noor Haddad, head of talent, reads every shortlist"
    result = project.runpytest(
        "--screeneval", "-k", "beta", "-o", f"screeneval_final_decision_by={decider}"
    )
    assert result.ret == 0
    out = project.path / "audit.json"
    assert screeneval([*db_args(project), "report", "1", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["final_decision"]["by"] == decider


def test_a_progress_line_counts_the_distinct_texts_scored(project: pytest.Pytester) -> None:
    result = project.runpytest("--screeneval")
    # 7 originals + 7 other names + 7 gap lines; "no gap" and the own name are the originals
    result.stdout.fnmatch_lines(
        [
            "screeneval: scored 21/21 inputs, 0 in flight, * items done (*)",
            "screeneval: run 1, scorer table (table-v1), 21 inputs scored in * s",
        ]
    )
    assert scorer_calls(project) == 21 + extra_calls(result.stdout.str())


def test_run_finished_hook_sees_the_summary(project: pytest.Pytester) -> None:
    project.makeconftest(
        (project.path / "conftest.py").read_text()
        + "\n\ndef pytest_screeneval_run_finished(config, summary):\n"
        "    failed = [g.name for g in summary.gates if g.failed]\n"
        "    (HERE / 'finished.json').write_text(json.dumps(\n"
        "        {'run': summary.run_id, 'cases': summary.selection['cases'], 'failed': failed}))\n"
    )
    set_scores(project, expected_scores(), gap_penalty=1)
    project.runpytest("--screeneval", "-k", "alpha")
    finished = json.loads((project.path / "finished.json").read_text())
    # a gap penalty of one level on every criterion fails the overall and per-criterion gates
    assert finished == {
        "run": 1,
        "cases": 5,
        "failed": ["counterfactual-gap[gap]", "counterfactual-criterion-gap[gap]"],
    }


@pytest.mark.parametrize(
    ("spec", "sentence"),
    [
        ("no_such_module_xyz:make", "The scorer module 'no_such_module_xyz' cannot be imported*"),
        (
            "json:no_such_factory",
            "The scorer factory 'no_such_factory' is not a callable in 'json'.",
        ),
        ("justaword", "The scorer 'justaword' is neither a built-in (keyword, openai) nor*"),
    ],
)
def test_an_unusable_scorer_setting_is_one_sentence(
    pytester: pytest.Pytester, spec: str, sentence: str
) -> None:
    write_project(pytester)
    (pytester.path / "conftest.py").unlink()  # no hook: the ini names the scorer
    result = pytester.runpytest("--screeneval", "-o", f"screeneval_scorer={spec}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {sentence}"])
    assert "Traceback" not in result.stderr.str()


ROWS_BEFORE_PASS_CONFTEST = '''

import sqlite3
from pathlib import Path as _Path


def pytest_runtest_logreport(report):
    """Every item that passes finds its case's rows in the store already."""
    if report.when != "call" or not report.passed or "::" not in report.nodeid:
        return
    case_id = _Path(report.nodeid.split("::")[0]).stem
    store = _Path(__file__).with_name("store.db")
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        (rows,) = db.execute(
            "SELECT count(*) FROM eval_scores WHERE case_id = ? AND variant_key = ''"
            " AND run_id = (SELECT max(run_id) FROM eval_runs)",
            (case_id,),
        ).fetchone()
    with _Path(__file__).with_name("passed_rows.log").open("a") as log:
        log.write(f"{case_id} {rows}\\n")
'''


def test_an_item_passes_only_after_its_cases_rows_are_stored(
    project: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    """Rows of later cases are stored ahead in batches, and an item writes only when its own
    case's rows are still queued; either way none passes before its rows are in the store."""
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + ROWS_BEFORE_PASS_CONFTEST)
    result = run(project, dist)
    assert result.ret == 0, result.stdout.str()
    seen = [line.split() for line in (project.path / "passed_rows.log").read_text().splitlines()]
    assert {case_id for case_id, _ in seen} == set(CASES)
    per_case = len(RUBRIC.criteria)  # a row per criterion of the original text
    assert all(int(rows) == per_case for _, rows in seen), seen


def test_the_golden_set_run_never_loads_the_test_suites_conftest(project: pytest.Pytester) -> None:
    # A project's tests/conftest.py may import a test-only extra; `pytest --screeneval` with no
    # paths runs the golden set only, so it must not load that conftest at all.
    project.makeini(
        "[pytest]\n"
        "testpaths = tests\n"
        f"screeneval_db = sqlite:///{(project.path / 'store.db').as_posix()}\n"
        "screeneval_perturbation_examples = 0\n"
    )
    tests = project.mkdir("tests")
    (tests / "conftest.py").write_text("import a_test_only_extra_that_is_not_installed\n")
    (tests / "test_unit.py").write_text("def test_unit():\n    pass\n")
    result = project.runpytest("--screeneval")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=42)
    with store_of(project) as store:
        assert store.get_run(1).status == "complete"
    # plain pytest still loads it: the suite's own conftest is untouched
    plain = project.runpytest()
    assert plain.ret == pytest.ExitCode.USAGE_ERROR
    assert "a_test_only_extra_that_is_not_installed" in plain.stderr.str()
