"""Every line printed by pytest or the ``screeneval`` command passes the one terminal-safe function:
stored text (a server's error, an accepted-by name, a note, a scorer's name) cannot drive the
terminal, even from a run stored before the text gate existed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.golden_factory import make_identity, make_rows
from support.plugin_project import write_project

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.store.database import Store

pytest_plugins = ["pytester"]

ESCAPES = ("\x1b", "\x07", "\r", "\x08", "\u202e")


def old_run_with_escapes(url: str) -> int:
    """A run written straight through the store, as one stored before the gate would be."""
    with Store.open(url) as store:
        run_id = store.start_run(
            identity=make_identity(name="evil\x1b[2J\x1b[Hscorer", model_id="m\u202eodel"),
            rubric_id="support-engineer",
            golden_sha="g" * 64,
            plugin_version="0",
            vcs_commit=None,
            notes="notes\x1b]0;owned\x07 here",
        )
        rows = make_rows(run_id, ("cc-001",))
        rows = [
            row.__class__(**{**row.__dict__, "score": None, "error": "HTTP 500 (\x1b[31mred\r)"})
            for row in rows
        ]
        store.write_scores(rows)
        store.finish_run(run_id, status="complete")
        store.accept(run_id, by="Rev\x1b[2Kiewer", note="ok\x08\x08 fine", forced=True)
    return run_id


def test_show_and_runs_print_stored_escapes_as_visible_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{(tmp_path / 'store.db').as_posix()}"
    run_id = old_run_with_escapes(url)
    capsys.readouterr()
    assert screeneval(["show", str(run_id), "--db", url]) == 0
    assert screeneval(["runs", "--db", url]) == 0
    output = capsys.readouterr().out
    assert not any(char in output for char in ESCAPES), repr(output)
    for shown in ("evil\\x1b[2J\\x1b[Hscorer", "Rev\\x1b[2Kiewer", "\\x1b[31mred\\r", "\\u202e"):
        assert shown in output


def test_a_scorer_name_with_escapes_does_not_drive_pytests_terminal(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(
        conftest.read_text(encoding="utf-8")
        + """

import dataclasses


def pytest_screeneval_scorer(config, rubric):
    scorer = TableScorer(rubric)
    scorer.identity = dataclasses.replace(
        scorer.identity, name="table\\x1b[2K\\rFAKE PASSED", model_id="v1\\u202e"
    )
    return scorer
""",
        encoding="utf-8",
    )
    result = pytester.runpytest("--screeneval", "-k", "be-001")
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert not any(char in output for char in ESCAPES), repr(output)
    assert "table\\x1b[2K\\rFAKE PASSED" in output
