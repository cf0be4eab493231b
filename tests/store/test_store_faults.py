"""An answer is kept until it is stored, whatever the store does (the fault harness).

Each test runs `pytest --screeneval` as a real process on the small project, with the store fault
injector (``pytest_screeneval.testing.store_faults``) in its conftest, on SQLite and PostgreSQL.
Whatever the fault, the invariants are the same:

- the run ends with sentences and no traceback, within a bound;
- the exit status and the run's status agree (complete and 0, or not complete and not 0);
- every answered row is stored, or counted as waiting in the spool, and `screeneval db recover`
  brings the store to exactly the rows of a run without the fault (one row per item, however
  often it runs), with the audit chain intact.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.plugin_project import expected_scores, set_scores, write_project

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.store.database import Store
from pytest_screeneval.testing.store_faults import FAULT_KINDS, FaultPlan, write_plan

# 7 cases x 5 inputs x 3 criteria, the items' own answers (repeat 0)
JUDGED_ROWS = 7 * 5 * 3
RUN_BOUND_S = 120.0  # no run may take longer, whatever the fault (they take a few seconds)
INSTALL = """

# test_store_faults: the store breaks as store_fault.json says
from pytest_screeneval.testing.store_faults import install as _install_faults

_install_faults(HERE / "store_fault.json")
"""
WAITING = re.compile(r"(\d+) score rows wait in the spool (\S+) ")


@pytest.fixture
def project(pytester: pytest.Pytester, store_url: str) -> pytest.Pytester:
    write_project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + INSTALL)
    set_scores(pytester, expected_scores())
    return pytester


def run(project: pytest.Pytester, store_url: str, *args: str) -> tuple[int, str]:
    """One `pytest --screeneval` process, bounded; its exit status and output."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--screeneval"]
    command += ["--screeneval-db", store_url, *args]
    env_drop = ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST")
    import os

    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    try:
        done = subprocess.run(
            command,
            cwd=project.path,
            capture_output=True,
            text=True,
            timeout=RUN_BOUND_S,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the run did not end within {RUN_BOUND_S:g} s: {exc.stdout!r}")
    return done.returncode, done.stdout + done.stderr


def judged_rows(url: str, run_id: int) -> list[tuple[str, str, int, str]]:
    with Store.open(url) as store:
        return sorted(
            (r.case_id, r.variant_key, r.repeat_index, r.criterion)
            for r in store.scores(run_id)
            if r.repeat_index == 0
        )


def status_of(url: str, run_id: int) -> str:
    with Store.open(url) as store:
        return store.get_run(run_id).status


def assert_honest(code: int, output: str, url: str) -> None:
    """A sentence and no traceback; the exit status and the run's status agree."""
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    status = status_of(url, 1)
    if code == 0:
        assert status == "complete", output
    else:
        assert status != "complete" or "FAILED" in output, output


def faulted(project: pytest.Pytester, plan: FaultPlan) -> Path:
    path = project.path / "store_fault.json"
    write_plan(path, plan)
    return path


def faults_logged(path: Path) -> int:
    log = path.with_name(path.name + ".log")
    return len(log.read_text().splitlines()) if log.exists() else 0


def recover(url: str, capsys: pytest.CaptureFixture[str], project: pytest.Pytester) -> str:
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project.path)
        code = screeneval(["--db", url, "db", "recover"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def assert_whole_after_recovery(
    url: str, capsys: pytest.CaptureFixture[str], project: pytest.Pytester
) -> None:
    """`db recover` makes the store whole, and running it again changes nothing."""
    recover(url, capsys, project)
    rows = judged_rows(url, 1)
    assert len(rows) == len(set(rows)) == JUDGED_ROWS
    assert "nothing to recover" in recover(url, capsys, project)
    assert judged_rows(url, 1) == rows
    capsys.readouterr()
    assert screeneval(["--db", url, "verify"]) == 0, capsys.readouterr().err
    assert status_of(url, 1) != "running"


# --------------------------------------------------------------------------------------------
# a fault that passes: retried with back-off, nothing spooled, the run is complete
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan",
    [
        # the first score write: every run has one, however its answers batch
        FaultPlan("fail-nth", at=1, times=2),
        FaultPlan("disk-full", at=1, seconds=3.0),
        FaultPlan("drop", at=1, seconds=3.0),
        # the run's close (its chain entry is written with it): retried like the rows
        FaultPlan("fail-nth", at=2, times=2, table="eval_chain"),
    ],
    ids=["1st-write-fails-twice", "disk-full-3s", "connection-dropped-3s", "close-fails-twice"],
)
def test_a_fault_that_passes_is_retried_and_loses_nothing(
    project: pytest.Pytester, store_url: str, plan: FaultPlan
) -> None:
    path = faulted(project, plan)
    code, output = run(project, store_url)
    assert faults_logged(path) >= 1, "the fault never happened: nothing was tested"
    assert code == 0, output
    assert_honest(code, output, store_url)
    assert len(judged_rows(store_url, 1)) == JUDGED_ROWS
    assert "spool" not in output


@pytest.mark.parametrize(
    "backend", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
@pytest.mark.parametrize(
    "plan",
    [
        FaultPlan("lost-ack", at=1, times=1),
        # the run's close: its retry meets the close it already committed
        FaultPlan("lost-ack", at=2, times=1, table="eval_chain"),
    ],
    ids=["rows-committed-unheard", "close-committed-unheard"],
)
def test_a_write_committed_but_unheard_is_retried_without_a_second_effect(
    project: pytest.Pytester, store_url: str, plan: FaultPlan, capsys: pytest.CaptureFixture[str]
) -> None:
    """A network store can commit a write and lose the connection before the answer comes: the
    writer retries a write that already happened. Done twice, it must still be done once."""
    path = faulted(project, plan)
    code, output = run(project, store_url)
    assert faults_logged(path) >= 1, "the fault never happened: nothing was tested"
    assert code == 0, output
    assert_honest(code, output, store_url)
    rows = judged_rows(store_url, 1)
    assert len(rows) == len(set(rows)) == JUDGED_ROWS
    capsys.readouterr()
    assert screeneval(["--db", store_url, "verify"]) == 0, capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# a fault that stays: the rows wait in the spool, the run is not complete, recover imports them
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan",
    [FaultPlan("disk-full", at=3, seconds=None), FaultPlan("drop", at=3, seconds=None)],
    ids=["disk-full-for-good", "connection-lost-for-good"],
)
def test_a_store_that_stays_down_spools_every_row_and_recover_imports_them(
    project: pytest.Pytester,
    store_url: str,
    plan: FaultPlan,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = faulted(project, plan)
    # one call at a time, slow enough that each case's rows are a write of their own: the 3rd
    # write is the 3rd case's, read by its items
    set_scores(project, expected_scores(), sleep={"*": 0.05})
    started = time.monotonic()
    code, output = run(
        project, store_url, "-o", "screeneval_store_retry_seconds=1", "--screeneval-concurrency=1"
    )
    assert time.monotonic() - started < RUN_BOUND_S
    assert faults_logged(path) >= 1
    assert code != 0, output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    assert "are not stored: " in output  # the items of a case whose rows wait fail, saying so
    assert "import them with `screeneval db recover`" in output
    waiting = WAITING.search(output)
    assert waiting, output
    path.unlink()  # the store is back
    stored = len(judged_rows(store_url, 1))
    assert stored < JUDGED_ROWS
    # every answered row is stored or counted as waiting
    assert stored + int(waiting.group(1)) >= JUDGED_ROWS, output
    assert_whole_after_recovery(store_url, capsys, project)


def test_an_outage_past_the_retries_that_ends_before_the_close_stores_the_spool_itself(
    project: pytest.Pytester, store_url: str
) -> None:
    # the 2nd write fails for 2 s with 1 s of retries: its rows are spooled, and a later
    # write, which succeeds, stores them after all. A case's rows are one write, about every
    # 0.9 s (3 texts of 0.6 s, 2 at a time), so three cases' writes come after the outage ends
    # (with 0.3 s a text, the last write could fall inside the outage on a loaded machine)
    path = faulted(project, FaultPlan("disk-full", at=2, seconds=2.0))
    set_scores(project, expected_scores(), sleep={"*": 0.6})
    code, output = run(
        project, store_url, "-o", "screeneval_store_retry_seconds=1", "--screeneval-concurrency=2"
    )
    assert faults_logged(path) >= 1
    assert "Traceback" not in output, output
    assert len(judged_rows(store_url, 1)) == JUDGED_ROWS, output
    spool = [p for p in project.path.rglob("*.jsonl") if "spool" in str(p)]
    assert spool == [], spool
    # the items of the case whose rows waited failed, saying so; the run says it is partial
    assert code != 0 and status_of(store_url, 1) == "partial", output


# --------------------------------------------------------------------------------------------
# a SQLite lock held longer than the busy timeout
# --------------------------------------------------------------------------------------------

HOLD_LOCK = """
import sqlite3, sys, time, pathlib
start = pathlib.Path(sys.argv[2])
while not start.exists():
    time.sleep(0.02)
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[3]))
conn.execute("ROLLBACK")
print("released", flush=True)
"""

LOCK_AFTER_FIRST_WRITE = """

# test_store_faults: after the first score batch, another process takes the lock
from sqlalchemy import event as _event
from sqlalchemy.engine import Engine as _Engine

@_event.listens_for(_Engine, "after_cursor_execute")
def _signal_lock(conn, cursor, statement, params, context, many):
    if statement.lstrip().lower().startswith("insert into eval_scores"):
        (HERE / "take_lock").touch()
"""


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_sqlite_lock_held_over_the_busy_timeout_loses_no_row(
    project: pytest.Pytester, store_url: str
) -> None:
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + LOCK_AFTER_FIRST_WRITE)
    set_scores(project, expected_scores(), sleep={"*": 0.05})
    db = store_url.removeprefix("sqlite:///")
    Store.open(store_url).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, db, str(project.path / "take_lock"), "7"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        code, output = run(project, store_url)
        assert holder.wait(timeout=RUN_BOUND_S) == 0
        assert holder.stdout is not None and holder.stdout.read() == "locked\nreleased\n"
    finally:
        holder.kill()
        holder.wait()
    assert code == 0, output
    assert_honest(code, output, store_url)
    assert len(judged_rows(store_url, 1)) == JUDGED_ROWS


# --------------------------------------------------------------------------------------------
# any fault, any write: the invariants hold
# --------------------------------------------------------------------------------------------


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    kind=st.sampled_from(FAULT_KINDS),
    at=st.integers(min_value=1, max_value=8),
    lasting=st.sampled_from([0.5, None]),
)
def test_whatever_the_fault_and_the_write_every_row_is_stored_or_waiting(
    pytester: pytest.Pytester,
    make_store_url: object,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    at: int,
    lasting: float | None,
) -> None:
    url = make_store_url()  # type: ignore[operator]
    root = pytester.mkdir(f"p-{kind}-{at}-{lasting}-{time.monotonic_ns()}")
    project = _Sub(pytester, root)
    write_project(project)  # type: ignore[arg-type]
    conftest = root / "conftest.py"
    conftest.write_text(conftest.read_text() + INSTALL)
    set_scores(project, expected_scores())  # type: ignore[arg-type]
    plan = FaultPlan(kind, at=at, times=None if lasting is None else 1, seconds=lasting)
    path = root / "store_fault.json"
    write_plan(path, plan)
    code, output = run(project, url, "-o", "screeneval_store_retry_seconds=1")  # type: ignore[arg-type]
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    path.unlink()
    with Store.open(url) as store:
        runs = store.list_runs()
    if not runs:  # the fault came before the run row: nothing answered, a sentence
        assert code != 0, output
        return
    status = runs[0].status
    assert (code == 0) == (status == "complete") or "FAILED" in output, output
    stored = len(judged_rows(url, 1))
    waiting = WAITING.search(output)
    if stored < JUDGED_ROWS:
        assert code != 0, output
        assert waiting and stored + int(waiting.group(1)) >= JUDGED_ROWS, output
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        capsys.readouterr()
        assert screeneval(["--db", url, "db", "recover"]) == 0, capsys.readouterr().err
    assert len(judged_rows(url, 1)) == JUDGED_ROWS
    capsys.readouterr()
    assert screeneval(["--db", url, "verify"]) == 0, capsys.readouterr().err


class _Sub:
    """A pytester-like view of a sub-folder (one project per Hypothesis example)."""

    def __init__(self, pytester: pytest.Pytester, root: Path) -> None:
        self.path = root
        self._pytester = pytester

    def makeconftest(self, source: str) -> None:
        (self.path / "conftest.py").write_text(source)

    def makeini(self, source: str) -> None:
        (self.path / "pytest.ini").write_text(source)


def test_the_spool_file_is_json_lines_beside_the_sqlite_store(tmp_path: Path) -> None:
    from pytest_screeneval.store.spool import Spool, spool_dir
    from pytest_screeneval.store.values import ScoreRow

    url = f"sqlite:///{(tmp_path / 'db' / 'screeneval.db').as_posix()}"
    directory = spool_dir(url, tmp_path)
    assert directory == tmp_path / "db" / "screeneval.db.spool"
    row = ScoreRow(
        1,
        "al-001",
        "",
        0,
        "skills",
        4,
        "half \ud83d an emoji",
        ("q",),
        None,
        1.0,
        1,
        None,
        "0" * 64,
    )
    spool = Spool(directory)
    path = spool.append([row, row])
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["case_id"] == "al-001" for line in lines)
    assert spool.waiting(1) == 1  # one row per item, however often it was spooled
    [spooled] = list(spool.read())
    assert spooled.rows == (row,)
