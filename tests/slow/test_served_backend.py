"""What the provider served, end to end: the chat server's system fingerprint (changed mid-run,
then changed against the baseline) is stored on every score row and shown, flagged, in the
terminal summary, the JSON, ``screeneval show`` and the audit document. The real openai client
against ChatServer; the plugin through pytester. Also the pure rule (evidence/served.py)."""

from __future__ import annotations

import json

import pytest
from test_openai_plugin import CASE_IDS, CRITERIA, project, rows_of, script, server, store_of  # noqa: F401

from pytest_screeneval.cli.main import main
from pytest_screeneval.evidence.served import served_backend
from pytest_screeneval.report.audit import build_audit
from pytest_screeneval.testing import ChatServer


def test_one_fingerprint_throughout_raises_no_flag() -> None:
    served = served_backend([("a", "fp_1"), ("b", "fp_1")], ["fp_1"], 3)
    assert (served.changed_within, served.differs_from_baseline, served.flags()) == (
        False,
        False,
        [],
    )
    assert served.describe() == "fp_1 (2 answers)"


def test_a_change_within_the_run_names_where_it_first_changed() -> None:
    served = served_backend([("a", "fp_1"), ("b", None), ("c", "fp_2"), ("d", "fp_1")])
    assert served.fingerprints == (("fp_1", 2), ("fp_2", 1))
    assert served.first_change == ("c", "fp_1", "fp_2")
    assert served.unsaid == 1
    [flag] = served.flags()
    assert "changed within the run (fp_1 to fp_2, first at case c)" in flag
    assert served.describe() == "fp_1 (2 answers), fp_2 (1 answers); 1 without one"


def test_a_baseline_that_said_nothing_cannot_differ() -> None:
    assert not served_backend([("a", "fp_1")], [None, None], 1).differs_from_baseline
    assert not served_backend([("a", None)], ["fp_1"], 1).differs_from_baseline
    assert served_backend([("a", "fp_2")], ["fp_1"], 1).differs_from_baseline


def test_fingerprints_are_stored_shown_and_flagged_within_a_run_and_against_the_baseline(
    project: pytest.Pytester,  # noqa: F811
    server: ChatServer,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.system_fingerprint = "fp_alpha"
    server.fingerprint_change = (2, "fp_beta")  # the third answer on comes from another backend
    # one call at a time: the answers come in case order, so "the first two" are al-001's and
    # al-002's (at 8 at once, the server's first two answers could be any two cases')
    first = project.runpytest(
        "--screeneval",
        "-o",
        "screeneval_concurrency=1",
        "--screeneval-json",
        "run1.json",
        "--screeneval-accept",
        "--screeneval-accepted-by",
        "Dana Quist",
    )
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    rows = rows_of(project, 1)
    # every row says what served it; the first two answers came from fp_alpha
    assert {r.system_fingerprint for r in rows} == {"fp_alpha", "fp_beta"}
    assert all(r.served_model for r in rows)
    per_answer = {(r.case_id, r.repeat_index): r.system_fingerprint for r in rows}
    assert sum(1 for f in per_answer.values() if f == "fp_alpha") == 2
    out = first.stdout.str()
    assert "served by (system fingerprint): fp_alpha (2 answers), fp_beta (" in out
    assert "FLAG the system fingerprint changed within the run (fp_alpha to fp_beta" in out
    document = json.loads((project.path / "run1.json").read_text())
    assert document["served_backend"]["changed_within_run"] is True
    assert document["pacing"]["adaptive"] is True
    assert "concurrency: adaptive, at most 1; rate limits: none met" in out

    # the next run is served by yet another backend: flagged against the baseline
    server.fingerprint_change = None
    server.system_fingerprint = "fp_gamma"
    second = project.runpytest("--screeneval")
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()
    assert "served by (system fingerprint): fp_gamma (" in second.stdout.str()
    assert (
        "FLAG the system fingerprints differ from the baseline run 1's (fp_alpha, fp_beta)"
        in second.stdout.str()
    )

    db = f"sqlite:///{(project.path / 'store.db').as_posix()}"
    capsys.readouterr()
    assert main(["--db", db, "show", "2"]) == 0
    shown = capsys.readouterr().out
    assert "  served by    fp_gamma (" in shown
    assert "differ from the baseline run 1's (fp_alpha, fp_beta)" in shown
    assert main(["--db", db, "show", "1"]) == 0
    assert "changed within the run (fp_alpha to fp_beta" in capsys.readouterr().out

    with store_of(project) as store:
        audit = build_audit(store, 2, final_decision_by="the hiring team's recruiter")
    served = audit["served_backend"]
    assert served["differs_from_baseline"] is True
    assert served["baseline_fingerprints"] == ["fp_alpha", "fp_beta"]
    assert len(CASE_IDS) * len(CRITERIA) <= len(rows_of(project, 2))
    html = project.path / "audit.html"
    assert main(["--db", db, "report", "2", "--html", str(html)]) == 0
    page = html.read_text()
    assert "Served by (system fingerprint)" in page
    assert "differ from the baseline run 1" in page
