"""Rationale checks worked out ahead of their items (session.rationale_checks): in a worker
process or inline, the same flags as the checks themselves give; nothing waits on the worker and
nothing is lost without it."""

from __future__ import annotations

import concurrent.futures
import sys
from pathlib import Path

import pytest
from support.plugin_project import expected_scores, set_scores, write_project

from pytest_screeneval.evidence.rationale.flags import rationale_flags
from pytest_screeneval.evidence.rationale.protected import (
    ProtectedLexicon,
    builtin_protected_terms,
    load_protected_terms,
)
from pytest_screeneval.session import rationale_checks, worker_process
from pytest_screeneval.session.rationale_checks import Answer, RationaleChecks

RESUME = (
    "Analyst at Harbourline Foods, March 2019 - June 2024\n"
    "- Built weekly sales reports in SQL and Python for 14 regional managers\n"
    "- Presented churn findings to the board\n"
)
RATIONALES = (
    'The skills criterion scores 4 because the resume says "Built weekly sales reports".',
    "Good.",  # too short, and names no criterion
    "The skills criterion scores 4: she led a Kubernetes migration for 40 teams.",  # ungrounded
    "The skills criterion scores 3, though she is a young mother.",  # protected attribute
    "The skills criterion scores 4: a 4 for SQL and Python reports to 14 managers.",
)


def _answers() -> list[tuple[str, str, list[Answer]]]:
    return [
        (f"rc-{i:03d}", RESUME, [("skills", 3 + i % 2, r, ()) for r in RATIONALES])
        for i in range(6)
    ]


def _direct(text: str, answer: Answer, terms: ProtectedLexicon | None = None) -> tuple[str, ...]:
    criterion, score, rationale, evidence = answer
    return tuple(
        rationale_flags(text, criterion, score, rationale, evidence, protected_terms=terms)
    )


def _wait_for_the_worker(checks: RationaleChecks) -> None:
    sent = {future for future, _task, _position in checks._ahead.values()}
    concurrent.futures.wait(sent, timeout=120)


def test_the_worker_gives_the_flags_the_checks_give(monkeypatch: pytest.MonkeyPatch) -> None:
    terms = builtin_protected_terms()
    checks = RationaleChecks(terms)
    checks.expect(1, process_from=1)
    try:
        assert not checks.in_process
        answers = _answers()
        checks.ahead(answers)
        _wait_for_the_worker(checks)

        def not_here(*args: object, **kwargs: object) -> list[str]:
            raise AssertionError("checked again in the session's process")

        # every answer's flags now come from the worker: none is checked again here
        monkeypatch.setattr(rationale_checks, "rationale_flags", not_here)
        got = {
            (case_id, answer): checks.flags(case_id, text, answer)
            for case_id, text, batch in answers
            for answer in batch
        }
    finally:
        checks.close()
    expected = {
        (case_id, answer): _direct(text, answer, terms)
        for case_id, text, batch in answers
        for answer in batch
    }
    assert got == expected
    assert {flag for flags in got.values() for flag in flags} >= {
        "too-short",
        "ungrounded",
        "protected-attribute",
    }


def test_the_worker_checks_with_the_runs_own_protected_terms(tmp_path: Path) -> None:
    terms_file = tmp_path / "terms.yaml"
    terms_file.write_text(
        "terms:\n  - {category: age, pattern: 'seasoned'}\n",
        encoding="utf-8",
    )
    terms = load_protected_terms(terms_file)
    answer: Answer = ("skills", 3, "The skills criterion scores 3 for a seasoned SQL analyst.", ())
    assert "protected-attribute" in _direct(RESUME, answer, terms)
    assert "protected-attribute" not in _direct(RESUME, answer, builtin_protected_terms())
    checks = RationaleChecks(terms)
    checks.expect(1, process_from=1)
    try:
        checks.ahead([("rc-terms", RESUME, [answer])])
        _wait_for_the_worker(checks)
        assert checks.flags("rc-terms", RESUME, answer) == _direct(RESUME, answer, terms)
    finally:
        checks.close()


def test_an_answers_score_is_part_of_what_its_flags_are_kept_by() -> None:
    """The same rationale under another score is checked again: "a 4" is the score at 4 and
    a figure the resume must hold at 3."""
    checks = RationaleChecks(builtin_protected_terms())
    rationale = "The skills criterion scores well: a 4 for SQL and Python reports to 14 managers."
    at_four = checks.flags("rc-001", RESUME, ("skills", 4, rationale, ()))
    at_three = checks.flags("rc-001", RESUME, ("skills", 3, rationale, ()))
    assert "ungrounded" not in at_four
    assert "ungrounded" in at_three


def test_without_worker_processes_it_checks_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox that cannot start processes (no semaphores) still gets every flag."""

    def refuse(method: str) -> None:
        raise OSError("[Errno 38] Function not implemented")

    monkeypatch.setattr(worker_process.multiprocessing, "get_context", refuse)
    checks = RationaleChecks(builtin_protected_terms())
    checks.expect(10**6, process_from=1)
    assert checks.in_process
    answers = _answers()
    checks.ahead(answers)  # nothing to send to
    for case_id, text, batch in answers:
        for answer in batch:
            assert checks.flags(case_id, text, answer) == _direct(text, answer)


def test_answers_the_worker_has_not_checked_are_checked_inline() -> None:
    """An item never waits on the worker: what is not back yet (or never will be, the worker
    gone) is checked in the session's process, with the same result."""
    checks = RationaleChecks(builtin_protected_terms())
    checks.expect(1, process_from=1)
    answers = _answers()
    checks.ahead(answers)
    checks.close()  # the worker stops: what it did not finish is cancelled
    for case_id, text, batch in answers:
        for answer in batch:
            assert checks.flags(case_id, text, answer) == _direct(text, answer)
    checks.ahead(answers)  # after close: nothing is sent, nothing fails


def test_a_run_that_checks_in_a_worker_fails_the_same_items(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: with the worker on for every run (the threshold at one check), a protected
    attribute in a rationale still fails its item, and the answers went to the worker."""
    write_project(pytester)
    rationale = (
        'The experience criterion scores 3 because the resume says "Built weekly sales reports'
        ' in SQL and Python", though she is a young mother.'
    )
    set_scores(pytester, expected_scores(), rationales={"al-001": {"experience": rationale}})
    baseline = pytester.runpytest("--screeneval")
    sent: list[int] = []
    send = RationaleChecks.ahead

    def counted(self: RationaleChecks, answers: list[tuple[str, str, list[Answer]]]) -> None:
        if not self.in_process:
            sent.append(sum(len(batch) for _, _, batch in answers))
        send(self, answers)

    monkeypatch.setattr(RationaleChecks, "ahead", counted)
    monkeypatch.setitem(RationaleChecks.expect.__kwdefaults__, "process_from", 1)
    result = pytester.runpytest("--screeneval")
    assert sum(sent) > 0
    assert result.parseoutcomes() == baseline.parseoutcomes()
    assert result.ret == baseline.ret != 0
    result.stdout.fnmatch_lines(
        [
            '*FAILED     the rationale refers to a protected attribute (age: "young mother";'
            ' marital or family status: "mother")'
        ]
    )


def test_the_worker_does_not_run_an_unguarded_main_script_again(
    pytester: pytest.Pytester,
) -> None:
    """A script that calls pytest.main() without an ``if __name__ == "__main__"`` guard must not
    run its session a second time in the spawned worker (a second run in the store)."""
    script = pytester.path / "unguarded.py"
    script.write_text(
        "import pathlib\n"
        "from pytest_screeneval.session.worker_process import spawn_worker\n"
        "with pathlib.Path('ran.log').open('a') as log:\n"
        "    log.write('ran\\n')\n"
        "pool = spawn_worker()\n"
        "assert pool is not None\n"
        "print('ANSWER', pool.submit(pow, 2, 10).result(timeout=120))\n"
        "pool.shutdown()\n",
        encoding="utf-8",
    )
    result = pytester.run(sys.executable, str(script))
    assert result.ret == 0, result.stderr.str()
    result.stdout.fnmatch_lines(["ANSWER 1024"])
    assert (pytester.path / "ran.log").read_text(encoding="utf-8").splitlines() == ["ran"]
