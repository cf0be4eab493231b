"""A blank accepted-by refused before the run, a created report folder said
out loud, another application's SQLite database refused unless told."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.golden_factory import make_golden, make_rubric
from support.plugin_project import write_project
from test_commands import all_three, run_cli, scored_run

from pytest_screeneval.errors import StoreError
from pytest_screeneval.scoring.protocol import CriterionScore
from pytest_screeneval.scoring.results import validate_scores
from pytest_screeneval.store.database import ALLOW_FOREIGN_ENV, Store

pytest_plugins = ["pytester"]


def test_a_blank_accepted_by_is_refused_before_anything_is_scored(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    result = pytester.runpytest(
        "--screeneval", "--screeneval-accept", "--screeneval-accepted-by", "   "
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--screeneval-accept needs --screeneval-accepted-by NAME*"])
    assert not (pytester.path / "store.db").exists()  # refused before the store was opened
    assert not (pytester.path / "calls.log").exists()


def test_report_into_a_missing_folder_says_it_created_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{(tmp_path / 'store.db').as_posix()}"
    with Store.open(url) as store:
        store.sync_golden_set(make_golden())
        run_id = scored_run(store, {"cc-001": all_three(3)})
    target = tmp_path / "reports" / "2026" / "audit.html"
    code, out, err = run_cli(capsys, "--db", url, "report", str(run_id), "--html", str(target))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"created the folder {target.parent}",
        f"wrote the audit report of run {run_id} to {target}",
    ]
    code, out, _ = run_cli(capsys, "--db", url, "report", str(run_id), "--html", str(target))
    assert out.splitlines() == [f"wrote the audit report of run {run_id} to {target}"]


def test_another_applications_database_is_refused_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "crm.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE contacts (id INTEGER PRIMARY KEY, note TEXT)")
    monkeypatch.delenv(ALLOW_FOREIGN_ENV, raising=False)
    with pytest.raises(StoreError) as caught:
        Store.open(f"sqlite:///{path}")
    message = str(caught.value)
    assert "already holds another application's tables (contacts)" in message
    assert ALLOW_FOREIGN_ENV in message and "\n" not in message
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert tables == {"contacts"}  # nothing was added
    monkeypatch.setenv(ALLOW_FOREIGN_ENV, "1")
    with Store.open(f"sqlite:///{path}") as store:
        assert store.schema_revision() is not None


def test_an_empty_database_file_is_not_foreign(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    with Store.open(f"sqlite:///{path}") as store:
        assert store.schema_revision() is not None


@pytest.mark.parametrize("confidence", [float("nan"), float("inf"), -0.1, 1.5, True, "high"])
def test_a_confidence_that_is_not_from_0_to_1_is_refused(confidence: object) -> None:
    rubric = make_rubric()
    answer = [
        CriterionScore(name, 3, "fine", confidence=0.5 if i else confidence)  # type: ignore[arg-type]
        for i, name in enumerate(rubric.criterion_names)
    ]
    usable, errors = validate_scores(answer, rubric)
    first = rubric.criterion_names[0]
    assert first not in usable and len(usable) == len(rubric.criterion_names) - 1
    assert errors[first] == (
        f"the scorer returned a confidence of {confidence!r} for {first!r}, "
        "not a number from 0 to 1"
    )


def test_no_confidence_or_one_from_0_to_1_is_fine() -> None:
    rubric = make_rubric()
    for confidence in (None, 0, 0.0, 1, 0.75):
        answer = [CriterionScore(n, 3, "ok", confidence=confidence) for n in rubric.criterion_names]
        assert validate_scores(answer, rubric)[1] == {}
