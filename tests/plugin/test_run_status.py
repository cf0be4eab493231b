"""Honest runs: each failure reproduced, then fixed (wrong served model, a store error at
the close, a leaked API key, terminal control characters, tracebacks, scorer errors on xfail
items, exact impact ratios, colliding slice names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import CASES, expected_scores, make_case, set_scores, write_project

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.evidence.gates import GateInputs, GateLimits, evaluate_gates
from pytest_screeneval.evidence.metrics import SelfConsistency
from pytest_screeneval.golden.load import PERTURBATION_KEYWORDS
from pytest_screeneval.probes.perturb import PERTURBATION_KINDS
from pytest_screeneval.store.database import Store

# --------------------------------------------------------------------------------------------
# 13. Slice names that collide with item keywords
# --------------------------------------------------------------------------------------------


def test_the_loader_knows_every_perturbation_kind() -> None:
    assert PERTURBATION_KEYWORDS == PERTURBATION_KINDS


@pytest.mark.parametrize(
    "slice_name, what",
    [
        ("ocr-noise", "a perturbation kind"),
        ("Counterfactual", "an item kind (counterfactual)"),
        ("decision", "an item kind (decision)"),
        ("skills", "a criterion of the rubric"),
        ("gap", "a counterfactual attribute"),
    ],
)
def test_a_slice_named_like_an_item_keyword_is_refused_at_load(
    pytester: pytest.Pytester, slice_name: str, what: str
) -> None:
    cases = [make_case(case_id) for case_id in CASES]
    cases[0] = make_case("al-001", slices=("synthetic", slice_name))
    write_project(pytester, cases)
    set_scores(pytester, expected_scores())
    result = pytester.runpytest("--screeneval", "-k", slice_name)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    result.stdout.fnmatch_lines(
        [
            f"*cases/alpha/al-001.yaml, line *: case al-001: slice {slice_name!r} is also "
            f"{what}, so `-k {slice_name}` would select both; rename the slice*"
        ]
    )
    assert "Traceback" not in result.stdout.str()


# --------------------------------------------------------------------------------------------
# 10. One sentence, not a traceback
# --------------------------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = screeneval(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_run_id_no_column_can_hold_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{(tmp_path / 'store.db').as_posix()}"
    Store.open(url).close()
    huge = "99999999999999999999"
    for command in (
        ["show", huge],
        ["report", huge, "--json", str(tmp_path / "r.json")],
        ["accept", huge, "--by", "Ada Quill", "--note", "n"],
    ):
        code, _, err = cli(capsys, "--db", url, *command)
        assert (code, err) == (1, f"screeneval: There is no run {huge} in {url}.\n"), command


def test_cases_export_to_an_existing_file_is_one_sentence(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(pytester)
    url = f"sqlite:///{(pytester.path / 'store.db').as_posix()}"
    assert cli(capsys, "--db", url, "cases", "import", str(pytester.path / "cases"))[0] == 0
    target = pytester.path / "existing"
    target.write_text("keep me")
    code, _, err = cli(capsys, "--db", url, "cases", "export", str(target))
    assert (code, err) == (
        1,
        f"screeneval: Cannot export the golden set to {target}: it is a file, not a folder.\n",
    )
    assert target.read_text() == "keep me"


def test_a_300_character_label_is_refused_at_load_in_one_sentence(
    pytester: pytest.Pytester,
) -> None:
    cases = [make_case(case_id) for case_id in CASES]
    write_project(pytester, cases)
    path = pytester.path / "cases" / "alpha" / "al-001.yaml"
    path.write_text(path.read_text().replace("label: alpha", "label: " + "x" * 300))
    set_scores(pytester, expected_scores())
    result = pytester.runpytest("--screeneval")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*cases/alpha/al-001.yaml, line *: case al-001: label 'xxx*...' (300 characters) "
            "must be at most 100 letters, digits, '.', '_' or '-': it names a folder and a "
            "pytest keyword*"
        ]
    )
    assert "Traceback" not in result.stdout.str()


# --------------------------------------------------------------------------------------------
# 2. A gate with n = 0 is N/A, and scorer errors that shrank an n are said
# --------------------------------------------------------------------------------------------


def gate_inputs(**changes: object) -> GateInputs:
    fields: dict[str, object] = dict(
        agreement=(),
        has_baseline=True,
        moved=0,
        compared=30,
        slices=(),
        slice_min_n=5,
        counterfactual={"name": ()},
        perturbation={},
        consistency=SelfConsistency(repeats=2, items=0, disagreeing=0, examples=()),
        protected_flags=0,
        rationale_items=0,
        unreviewed_crossings=0,
        crossings=0,
    )
    fields.update(changes)
    return GateInputs(**fields)  # type: ignore[arg-type]


LIMITS = GateLimits(5, 10, 80, 3, 5, 5)


def test_a_gate_over_nothing_is_not_applicable_never_pass() -> None:
    # once, every repeat failed validation and self-disagreement printed "0 of 0 items
    # differ" and PASS
    gates = {g.name: g for g in evaluate_gates(gate_inputs(scorer_errors=75), LIMITS)}
    for name in ("self-disagreement", "counterfactual-gap[name]", "protected-attribute-flags"):
        assert (gates[name].status, gates[name].n, gates[name].value) == ("N/A", 0, None), name
        assert gates[name].detail.endswith("75 scorer error(s) left out of its n"), name
    # no crossing against a baseline is a real PASS (its n counts crossings, not measurements)
    assert (gates["unreviewed-crossings"].status, gates["unreviewed-crossings"].n) == ("PASS", 0)


# --------------------------------------------------------------------------------------------
# 11. A scorer error on an xfail item is an error, not an xfail
# --------------------------------------------------------------------------------------------


def test_a_scorer_error_on_an_xfail_item_fails_it(pytester: pytest.Pytester) -> None:
    cases = [make_case(case_id) for case_id in CASES]
    cases[5] = make_case("be-001", xfail={"skills": "drifts between model versions"})
    write_project(pytester, cases)
    set_scores(pytester, expected_scores(), behaviour={"be-001": "raise"})
    result = pytester.runpytest("--screeneval", "-k", "be-001 and skills", "-rfx")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED cases/beta/be-001.yaml::be-001::skills*"])
    assert "XFAIL" not in result.stdout.str()
    # a real drift on it (a wrong score, no error) is still the expected failure
    scores = expected_scores()
    scores["be-001"]["skills"] = 5
    set_scores(pytester, scores)
    result = pytester.runpytest("--screeneval", "-k", "be-001 and skills")
    result.assert_outcomes(xfailed=1)


# --------------------------------------------------------------------------------------------
# 9. Terminal control characters in a rationale
# --------------------------------------------------------------------------------------------


def test_control_characters_in_a_rationale_are_shown_escaped(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    forged = "Protected: she is young.\x1b[2K\rcases/beta/be-002.yaml::be-002::skills PASSED"
    set_scores(pytester, expected_scores(), rationales={"be-002": {"skills": forged}})
    result = pytester.runpytest("--screeneval", "-k", "be-002 and skills")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "\x1b" not in output and "\r" not in output
    # the escape was replaced as the answer came in (every backend keeps the same text); the
    # carriage return, kept in the text, is shown escaped
    assert "she is young.\ufffd[2K\\rcases/beta/be-002.yaml::be-002::skills PASSED" in output


# --------------------------------------------------------------------------------------------
# 4. The chain head in the audit report
# --------------------------------------------------------------------------------------------


def test_the_audit_report_carries_the_chain_head(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(pytester)
    set_scores(pytester, expected_scores())
    url = f"sqlite:///{(pytester.path / 'store.db').as_posix()}"
    assert pytester.runpytest("--screeneval", "--screeneval-db", url, "-k", "beta").ret == 0
    out = pytester.path / "audit.json"
    page = pytester.path / "audit.html"
    report = ["report", "1", "--json", str(out), "--html", str(page)]
    assert cli(capsys, "--db", url, *report)[0] == 0
    with Store.open(url) as store:
        head = store.chain_head()
        golden_seq = store.get_run(1).golden_seq
    chain = json.loads(out.read_text())["audit_chain"]
    assert chain == {"head": head.as_dict(), "run_golden_seq": golden_seq}
    assert golden_seq == 1
    assert f"screeneval verify --expect-head {head.seq}:{head.hash}" in page.read_text()


# --------------------------------------------------------------------------------------------
# 8. The API key the scorer knows is redacted from everything stored and printed
# --------------------------------------------------------------------------------------------

KEY = "sk-synthetic-TEST-0123456789abcdef"


def test_an_echoed_api_key_is_stored_and_printed_redacted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # once, a key echoed in an error body was stored verbatim in 4,005 rows, in JUnit and
    # on the terminal, and could no longer be removed without breaking verify
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    write_project(pytester)
    scores = expected_scores()
    scores["be-001"]["skills"] = 1  # fails, so its rationale is printed
    echo = f"Incorrect API key provided: {KEY}. The resume says nothing."
    set_scores(pytester, scores, rationales={"be-001": {"skills": echo}})
    url = f"sqlite:///{(pytester.path / 'store.db').as_posix()}"
    result = pytester.runpytest(
        "--screeneval", "--screeneval-db", url, "-k", "be-001", "--junitxml", "junit.xml"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = result.stdout.str()
    assert "Incorrect API key provided: [redacted]." in output
    assert KEY not in output
    assert KEY not in (pytester.path / "junit.xml").read_text()
    with Store.open(url) as store:
        rows = store.scores(1)
        assert rows and not any(KEY in (r.rationale + (r.error or "")) for r in rows)
        assert store.verify_chain().ok


# --------------------------------------------------------------------------------------------
# 6. A wrong served model fails a case's items, and a gate checks the served model
# --------------------------------------------------------------------------------------------

SERVED_ANOTHER_MODEL = """

# test_honest_runs: the provider answers with another model than the one asked for
from pytest_screeneval.scoring.protocol import ScoreOutcome as _ScoreOutcome

_asked_score = TableScorer.score


def _served_by_another(self, text, rubric):
    return _ScoreOutcome(scores=_asked_score(self, text, rubric), served_model="table-v0-mini")


TableScorer.score = _served_by_another
"""


def test_a_wrong_served_model_fails_every_item_of_the_case_and_its_gate(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + SERVED_ANOTHER_MODEL)
    set_scores(pytester, expected_scores())
    result = pytester.runpytest("--screeneval", "-k", "be-001", "-rf")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 0 and outcomes["failed"] == 6, result.stdout.str()
    for item in ("decision", "counterfactual[name]", "counterfactual[gap]", "skills"):
        assert f"FAILED cases/beta/be-001.yaml::be-001::{item} " in result.stdout.str(), item
    result.stdout.fnmatch_lines(
        [
            "*FAILED     the scorer asked for model 'table-v1' but was served 'table-v0-mini'",
            "*served-model * <= 0 * FAIL *asked for 'table-v1', served 'table-v0-mini'*",
        ]
    )


# --------------------------------------------------------------------------------------------
# 3. With screeneval_source = db, an edited frozen text is refused before anything is scored
# --------------------------------------------------------------------------------------------


def test_an_edited_frozen_text_in_the_store_is_refused_before_scoring(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(pytester)
    set_scores(pytester, expected_scores())
    url = f"sqlite:///{(pytester.path / 'store.db').as_posix()}"
    assert cli(capsys, "--db", url, "cases", "import", str(pytester.path / "cases"))[0] == 0
    with Store.open(url) as store, store.engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE eval_cases SET input_text = input_text || 'Led the data team.' "
            "WHERE case_id = 'be-002'"
        )
    (pytester.path / "calls.log").unlink(missing_ok=True)
    result = pytester.runpytest(
        "--screeneval", "--screeneval-db", url, "-o", "screeneval_source=db"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: Case be-002 in the store at * was frozen with input sha256 * but its stored "
            "text now has sha256 *: the text was edited in the database, so it is not scored."
        ]
    )
    assert not (pytester.path / "calls.log").exists()  # nothing was scored
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
