"""Real faults against real processes: one plain sentence, no traceback, no stored row lost.

Each test starts `pytest --screeneval` as a real subprocess on the small pytester project, breaks
something for real (a signal, a kill -9, a second writer, a lock, a full file, a hanging scorer)
and asserts one plain outcome and that no score row already in the store is lost.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path

import pytest
from support.plugin_project import expected_scores, set_scores, write_project

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.errors import StoreError
from pytest_screeneval.store.database import Store

# a score row as (case, variant, repeat, criterion, score, error)
RowKey = tuple[str, str, int, str, int | None, str | None]
# an upper bound on every wait, wide for a loaded machine; the tests finish long before
WAIT_S = 60.0

# 7 cases x 5 inputs (the original, two names, with and without a career gap; two of them are the
# original text again, scored once) x 3 criteria; 21 distinct texts, so 21 scorer calls
FULL_RUN_ROWS = 7 * 5 * 3
SLOW_CALL_S = 0.4
CALLS_LINE = re.compile(r"scorer calls: (\d+) scored, (\d+) reused, (\d+) identical texts shared")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester)
    return pytester


def db_file(pytester: pytest.Pytester) -> Path:
    return pytester.path / "store.db"


def db_url(pytester: pytest.Pytester) -> str:
    return f"sqlite:///{db_file(pytester).as_posix()}"


def stored_rows(path: Path, run_id: int) -> set[RowKey]:
    """A run's score rows, read straight from the SQLite file (read-only; WAL lets us)."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            rows = conn.execute(
                "SELECT case_id, variant_key, repeat_index, criterion, score, error "
                "FROM eval_scores WHERE run_id = ?",
                (run_id,),
            ).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return set()
    return {tuple(row) for row in rows}  # type: ignore[misc]


def run_status(path: Path, run_id: int) -> str | None:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        row = conn.execute("SELECT status FROM eval_runs WHERE run_id = ?", (run_id,)).fetchone()
    return None if row is None else str(row[0])


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Child:
    """A `pytest --screeneval` subprocess in the project, its output kept in a file."""

    def __init__(self, pytester: pytest.Pytester, *args: str, name: str = "run") -> None:
        self.output_path = pytester.path / f"{name}.out"
        self._output = self.output_path.open("wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        # a run that does not end in time is aborted: faulthandler then prints where every
        # thread of every process of the group was waiting, which the failure shows
        env["PYTHONFAULTHANDLER"] = "1"
        self.started = time.monotonic()
        # its own session and process group: a Ctrl-C in a terminal reaches the whole group
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--screeneval", *args],
            cwd=pytester.path,
            stdout=self._output,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            # a Ctrl-C must reach it even when this test runs under a shell that started it in
            # the background, which ignores SIGINT for everything it starts (Python keeps an
            # inherited SIG_IGN and never raises KeyboardInterrupt)
            preexec_fn=_default_sigint,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait(self, timeout: float = WAIT_S) -> int:
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGABRT)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=WAIT_S)
            self._output.close()
            pytest.fail(f"the run did not end within {timeout:g} s; it waited here:\n{self.output}")
        self._output.close()
        return code

    @property
    def output(self) -> str:
        return self.output_path.read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        """Kill the whole group (workers too) if anything is still running."""
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=WAIT_S)
        self._output.close()


@contextmanager
def child(pytester: pytest.Pytester, *args: str, name: str = "run") -> Iterator[Child]:
    started = Child(pytester, *args, name=name)
    try:
        yield started
    finally:
        started.kill()


def wait_for_rows(path: Path, run_id: int, proc: Child, minimum: int = 1) -> set[RowKey]:
    """Poll the store until the run has at least ``minimum`` rows (and is still running)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        rows = stored_rows(path, run_id)
        if len(rows) >= minimum:
            return rows
        if proc.process.poll() is not None:
            pytest.fail(f"the run ended before writing {minimum} rows:\n{proc.output}")
        time.sleep(0.05)
    pytest.fail(f"no {minimum} rows within {WAIT_S} s:\n{proc.output}")


def results_reported(output: str) -> int:
    """The inputs the summary says were scored or shared (an identical text's twin)."""
    found = CALLS_LINE.search(output)
    assert found, output
    return int(found.group(1)) + int(found.group(2)) + int(found.group(3))


def assert_no_traceback(output: str) -> None:
    assert "Traceback" not in output, output
    assert "INTERNALERROR" not in output, output


def slow_scores(pytester: pytest.Pytester) -> None:
    set_scores(pytester, expected_scores(), sleep={"*": SLOW_CALL_S})


# --------------------------------------------------------------------------------------------
# 1. Ctrl-C mid-run
# --------------------------------------------------------------------------------------------


def test_sigint_mid_run_marks_the_run_interrupted_and_keeps_its_rows(
    project: pytest.Pytester,
) -> None:
    slow_scores(project)
    with child(project, "--screeneval-concurrency", "1") as run:
        before = wait_for_rows(db_file(project), 1, run)
        os.killpg(run.pid, signal.SIGINT)
        code = run.wait()
    assert code == pytest.ExitCode.INTERRUPTED, run.output
    assert run_status(db_file(project), 1) == "interrupted"
    after = stored_rows(db_file(project), 1)
    assert before <= after
    assert len(after) < FULL_RUN_ROWS, "the run finished before the signal; nothing was tested"
    # every input the summary reports as scored before the signal is in the store, three
    # criteria each (the noise probe's re-scores are stored as later repeats of the same texts)
    assert len(after) >= 3 * results_reported(run.output) > 0
    assert_no_traceback(run.output)


# --------------------------------------------------------------------------------------------
# 2. kill -9 mid-run
# --------------------------------------------------------------------------------------------


def test_sigkill_mid_run_is_marked_interrupted_by_the_next_start_with_its_rows(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    slow_scores(project)
    with child(project, "--screeneval-concurrency", "1") as run:
        before = wait_for_rows(db_file(project), 1, run)
        os.killpg(run.pid, signal.SIGKILL)
        assert run.wait() == -signal.SIGKILL
    killed = stored_rows(db_file(project), 1)
    assert before <= killed
    assert len(killed) < FULL_RUN_ROWS, "the run finished before the kill; nothing was tested"
    assert run_status(db_file(project), 1) == "running"  # nobody could say otherwise yet

    set_scores(project, expected_scores())
    result = project.runpytest("--screeneval", "-k", "beta")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["warning: run 1 was left running by a process that is gone; it is now marked interrupted"]
    )
    assert run_status(db_file(project), 1) == "interrupted"
    assert stored_rows(db_file(project), 1) == killed

    capsys.readouterr()
    db = ["--db", db_url(project)]
    assert screeneval([*db, "accept", "1", "--by", "Ada Quill", "--note", "after a crash"]) == 1
    assert capsys.readouterr().err == (
        "screeneval: run 1 was interrupted and can never become a baseline.\n"
    )
    forced = [*db, "accept", "1", "--by", "Ada Quill", "--note", "after a crash", "--force"]
    assert screeneval(forced) == 1
    assert "run 1 was interrupted and can never become a baseline." in capsys.readouterr().err
    assert screeneval([*db, "verify"]) == 0  # the chain hashed exactly the rows it kept


# --------------------------------------------------------------------------------------------
# 3. two runs writing to one PostgreSQL database at once
# --------------------------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_two_runs_at_once_on_postgresql_keep_their_rows_apart(
    project: pytest.Pytester, store_url: str
) -> None:
    # store_url: a fresh schema of the server named by SCREENEVAL_TEST_PG_URL (else skipped)
    set_scores(project, expected_scores(), sleep={"*": 0.1})
    flags = ("--screeneval-db", store_url, "--screeneval-concurrency", "2")
    with (
        child(project, *flags, name="all") as everything,
        child(project, *flags, "-k", "beta", name="beta") as beta,
    ):
        codes = (everything.wait(), beta.wait())
    assert codes == (0, 0), everything.output + beta.output
    for output in (everything.output, beta.output):
        assert_no_traceback(output)
    with Store.open(store_url) as store:
        runs = {run.run_id: run for run in store.list_runs()}
        rows = {run_id: store.scores(run_id) for run_id in runs}
    assert len(runs) == 2 and all(run.status == "complete" for run in runs.values())
    # they really ran at the same time
    first, second = runs.values()
    assert first.started_at < str(second.finished_at) and second.started_at < str(first.finished_at)
    by_selection = {runs[run_id].selection: run_rows for run_id, run_rows in rows.items()}
    assert set(by_selection) == {"all", "-k beta"}
    assert {r.case_id for r in by_selection["all"]} == set(expected_scores())
    assert {r.case_id for r in by_selection["-k beta"]} == {"be-001", "be-002"}
    # repeat 0: the answers the items are judged on (the noise probe's re-scores come after)
    judged = {
        key: [r for r in run_rows if r.repeat_index == 0] for key, run_rows in by_selection.items()
    }
    assert len(judged["all"]) == FULL_RUN_ROWS
    assert len(judged["-k beta"]) == 2 * 5 * 3
    assert screeneval(["--db", store_url, "verify"]) == 0


# --------------------------------------------------------------------------------------------
# 4. a locked and a full SQLite store
# --------------------------------------------------------------------------------------------

HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(60)
"""


def test_locked_sqlite_store_is_one_sentence_and_keeps_earlier_rows(
    project: pytest.Pytester,
) -> None:
    assert project.runpytest("--screeneval", "-k", "beta").ret == 0
    earlier = stored_rows(db_file(project), 1)
    assert earlier
    locker = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db_file(project))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        with child(project) as run:
            code = run.wait()
    finally:
        locker.kill()
        locker.wait(timeout=WAIT_S)
    assert code == pytest.ExitCode.USAGE_ERROR, run.output
    assert (
        f"ERROR: The SQLite store {db_file(project)} is locked by another process; waited 5 s "
        "for it, try again when the other run has finished.\n"
    ) in run.output
    assert_no_traceback(run.output)
    assert stored_rows(db_file(project), 1) == earlier
    assert run_status(db_file(project), 2) is None  # no run was opened


CAP_PAGES = """

# test_faults: SQLite's own page cap gives the same SQLITE_FULL error as a full disk. The cap is
# read at the start of every transaction, so the test can fill the disk at a moment it chooses.
from sqlalchemy import event as _event
from sqlalchemy.engine import Engine as _Engine


@_event.listens_for(_Engine, "begin")
def _cap_pages(connection):
    cap = HERE / "max_page_count"
    if connection.dialect.name == "sqlite" and cap.exists():
        raw = connection.connection.dbapi_connection
        raw.execute(f"PRAGMA max_page_count={int(cap.read_text())}")
"""


def test_sqlite_store_filling_up_mid_run_is_one_sentence_and_keeps_every_row(
    project: pytest.Pytester,
) -> None:
    assert project.runpytest("--screeneval", "-k", "beta").ret == 0
    earlier = stored_rows(db_file(project), 1)
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + CAP_PAGES)
    cap = project.path / "max_page_count"
    # long rationales, so every batch needs new pages
    long = 'The resume says "Built weekly sales reports in SQL and Python". ' * 20
    criteria = ("skills", "experience", "communication")
    rationales = {case: dict.fromkeys(criteria, long) for case in expected_scores()}
    set_scores(project, expected_scores(), rationales=rationales, sleep={"*": 0.2})
    retry = ("-o", "screeneval_store_retry_seconds=1")
    with child(project, "--screeneval-concurrency", "1", *retry) as run:
        before = wait_for_rows(db_file(project), 2, run)
        cap.write_text("1")  # the file may not grow any more (SQLite keeps at least its size)
        code = run.wait()
    # the rows the store would not take wait in the spool; the run closes as partial, saying
    # why, or, when closing it needs a page the full file cannot give, stays running with the
    # close's sentence (the next session marks it interrupted): never exit 0
    assert code in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.USAGE_ERROR), run.output
    assert_no_traceback(run.output)
    assert (
        f"The store {db_file(project)} is out of space (database or disk is full); free "
        "some space and run again, nothing already committed is lost."
    ) in run.output
    assert stored_rows(db_file(project), 1) == earlier
    kept = stored_rows(db_file(project), 2)
    assert before <= kept
    assert len(kept) < FULL_RUN_ROWS

    assert "score rows wait in the spool" in run.output
    # space is freed: the next run works, and the full run ends up interrupted with its rows
    cap.unlink()
    set_scores(project, expected_scores())
    assert project.runpytest("--screeneval", "-k", "beta").ret == 0
    assert run_status(db_file(project), 2) in ("partial", "interrupted")
    assert stored_rows(db_file(project), 2) == kept
    assert screeneval(["--db", db_url(project), "verify"]) == 0
    # and `db recover` brings in every row the run answered: none was lost
    assert screeneval(["--db", db_url(project), "db", "recover"]) == 0
    recovered = stored_rows(db_file(project), 2)
    assert kept < recovered and len({r for r in recovered if r[2] == 0}) == FULL_RUN_ROWS
    assert screeneval(["--db", db_url(project), "verify"]) == 0


# --------------------------------------------------------------------------------------------
# 5. a scorer that hangs
# --------------------------------------------------------------------------------------------

HANG_S = 30.0
HANG_BOUND_S = 15.0  # a correctness bound (the run must not wait for the hung call), not a timing


def test_hanging_scorer_is_bounded_by_the_timeout_and_recorded(project: pytest.Pytester) -> None:
    set_scores(project, expected_scores(), sleep={"be-002": HANG_S})
    with child(project, "-o", "screeneval_timeout=1", "-v") as run:
        # a run still going then (the scorer timeout is 1 s) fails here, showing where it waited
        code = run.wait(timeout=HANG_BOUND_S)
        elapsed = time.monotonic() - run.started
    assert elapsed < HANG_BOUND_S
    assert code == pytest.ExitCode.TESTS_FAILED, run.output
    output = run.output
    assert_no_traceback(output)
    hung = "cases/beta/be-002.yaml::be-002::"
    items = ("skills", "experience", "communication", "decision")
    items += ("counterfactual[name]", "counterfactual[gap]")
    assert set(re.findall(r"^FAILED (\S+)", output, re.M)) == {hung + item for item in items}
    assert "6 failed, 36 passed" in output
    assert "the scorer took longer than 1 s" in output
    rows = stored_rows(db_file(project), 1)
    timed_out = {row for row in rows if row[0] == "be-002"}
    assert len(timed_out) == 5 * 3
    assert {(row[4], row[5]) for row in timed_out} == {(None, "the scorer took longer than 1 s")}
    assert all(row[5] is None for row in rows - timed_out)
    assert run_status(db_file(project), 1) == "complete"


# --------------------------------------------------------------------------------------------
# 6. Ctrl-C under pytest-xdist
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reaches", ["the group", "the controller"])
def test_sigint_under_xdist_marks_the_run_interrupted_and_keeps_its_rows(
    project: pytest.Pytester, reaches: str
) -> None:
    slow_scores(project)
    with child(project, "-n", "2", "--screeneval-concurrency", "1") as run:
        before = wait_for_rows(db_file(project), 1, run)
        if reaches == "the group":
            os.killpg(run.pid, signal.SIGINT)  # Ctrl-C in a terminal: controller and workers
        else:
            os.kill(run.pid, signal.SIGINT)  # the controller alone; it stops its workers
        code = run.wait()
    assert code == pytest.ExitCode.INTERRUPTED, run.output
    assert run_status(db_file(project), 1) == "interrupted"
    after = stored_rows(db_file(project), 1)
    assert before <= after
    assert len(after) < FULL_RUN_ROWS, "the run finished before the signal; nothing was tested"
    assert_no_traceback(run.output)
    # the stopped workers sent nothing back: the summary still covers the cases whose rows
    # were stored when it was written (a worker may store its last batch just after)
    scored_cases = len({row[0] for row in after if row[1] == "" and row[2] == 0})
    found = re.search(r"selection: (\d+) of ", run.output)
    assert found, run.output
    assert 1 <= int(found.group(1)) <= scored_cases, run.output


# --------------------------------------------------------------------------------------------
# 7. Honest status: -x, a crashed xdist worker, a store that fails as the run closes
# --------------------------------------------------------------------------------------------


def run_statuses(url: str) -> dict[int, str]:
    with Store.open(url) as store:
        return {run.run_id: run.status for run in store.list_runs()}


def test_a_run_stopped_by_x_is_partial_says_what_is_missing_and_is_not_accepted(
    project: pytest.Pytester, store_url: str
) -> None:
    # once, -x after the first failure ran 1 of 659 items, yet the run was "complete"
    # and became the baseline
    scores = expected_scores()
    scores["al-001"]["skills"] = 1  # the first item fails
    set_scores(project, scores)
    accept = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")
    artefacts = ("--screeneval-json", "run.json", "--junitxml", "junit.xml")
    result = project.runpytest(
        "--screeneval", "--screeneval-db", store_url, "-x", *accept, *artefacts
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "not accepted: Run 1 was not accepted: run 1 is partial (41 of 42 selected items did "
            "not run; stopped by -x/--maxfail after 1 failure(s)); review or fix them, or force "
            "it with --screeneval-force-accept and --screeneval-accept-note.",
            "partial: run 1 is not complete: 41 of 42 selected items did not run; stopped by "
            "-x/--maxfail after 1 failure(s)",
            "chain head: 2:* (keep it: screeneval verify --expect-head SEQ:HASH)",
        ]
    )
    assert_no_traceback(result.stdout.str())
    assert run_statuses(store_url) == {1: "partial"}
    with Store.open(store_url) as store:
        assert store.baseline() is None
        assert "did not run" in store.get_run(1).verdict["missing"]
        assert store.verify_chain().ok
        head = store.chain_head()
    # the chain head in every artefact, to keep outside the database
    document = json.loads((project.path / "run.json").read_text())
    assert document["status"] == "partial" and "did not run" in document["missing"]
    assert document["chain_head"] == {"seq": head.seq, "hash": head.hash, "key_id": None}
    junit = (project.path / "junit.xml").read_text()
    assert f'name="screeneval.chain_head" value="{head.seq}:{head.hash}"' in junit
    assert 'name="screeneval.status" value="partial"' in junit


NOTE_SCORING_PID = """

# test_faults: each call notes the pid of the process scoring, so the test kills a busy worker
import os as _os

_original_score = TableScorer.score


def _noting_score(self, text, rubric):
    (HERE / "scoring.pid").write_text(str(_os.getpid()))
    return _original_score(self, text, rubric)


TableScorer.score = _noting_score
"""


def children_of(pid: int) -> list[int]:
    """The live child processes of ``pid`` (xdist's workers of a controller), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return sorted(found)


def rows_by_case(url: str, run_id: int) -> dict[str, int]:
    """Per case, its first-scoring rows (repeat 0; noise re-scores come as later repeats)."""
    with Store.open(url) as store:
        counts: dict[str, int] = {}
        for row in store.scores(run_id):
            if row.repeat_index == 0:
                counts[row.case_id] = counts.get(row.case_id, 0) + 1
        return counts


def test_a_killed_xdist_worker_leaves_a_partial_run_with_every_case_whole(
    project: pytest.Pytester, store_url: str
) -> None:
    # once, the crashed case was re-run on the surviving worker, its rows collided with
    # the dead worker's, the whole batch (another case's rows too) was refused, and the run was
    # "complete" and accepted with a case at 45 of 150 rows
    slow_scores(project)
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + NOTE_SCORING_PID)
    scoring = project.path / "scoring.pid"
    accept = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")
    flags = ("--screeneval-db", store_url, "-n", "2", "--screeneval-concurrency", "1", *accept)
    with child(project, *flags, name="killed") as run:
        deadline = time.monotonic() + 3 * WAIT_S  # workers on a busy PostgreSQL start slowly
        noted = ""
        while time.monotonic() < deadline and (
            sum(rows_by_case_safe(store_url).values()) < 3 or not noted.isdigit()
        ):
            time.sleep(0.05)
            noted = scoring.read_text() if scoring.exists() else ""  # may be half written
        # the worker scoring right now: it is inside an item, which is what crashes
        assert noted.isdigit(), run.output
        victim = int(noted)
        assert victim in children_of(run.pid), run.output
        os.kill(victim, signal.SIGKILL)
        code = run.wait(timeout=3 * WAIT_S)
    output = run.output
    assert code == pytest.ExitCode.TESTS_FAILED, output
    assert_no_traceback(output)
    assert "partial: run 1 is not complete: " in output, output
    assert "a worker crashed while running cases/" in output
    assert "not accepted: Run 1 was not accepted: run 1 is partial" in output
    assert run_statuses(store_url) == {1: "partial"}
    # every case that has rows has all of them (5 inputs x 3 criteria), none twice
    counts = rows_by_case(store_url, 1)
    assert counts and set(counts.values()) == {15}, counts
    with Store.open(store_url) as store:
        assert store.baseline() is None
        assert store.verify_chain().ok


def rows_by_case_safe(url: str) -> dict[str, int]:
    try:
        return rows_by_case(url, 1)
    except StoreError:  # the store is not created yet
        return {}


STORE_FAILS_AT_CLOSE = """

# test_faults: the store fails (its disk fills, or turns read-only) just as the run closes
import pytest as _pytest
from sqlalchemy import event as _event
from sqlalchemy.engine import Engine as _Engine


@_event.listens_for(_Engine, "begin")
def _failing_store(connection):
    fault = HERE / "store_fault"
    if connection.dialect.name != "sqlite" or not fault.exists():
        return
    raw = connection.connection.dbapi_connection
    if fault.read_text() == "read-only":
        raw.execute("PRAGMA query_only=ON")
    else:  # full: the file may not grow by one page
        pages = raw.execute("PRAGMA page_count").fetchone()[0]
        raw.execute(f"PRAGMA max_page_count={pages}")


@_pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    (HERE / "store_fault").write_text((HERE / "fault_kind").read_text())
"""
FAULT_SENTENCES = {
    "read-only": "is read-only (attempt to write a readonly database); it cannot record runs.",
    "full": "is out of space (database or disk is full); free some space and run again, "
    "nothing already committed is lost.",
}


@pytest.mark.parametrize("fault", sorted(FAULT_SENTENCES))
def test_a_store_that_fails_as_the_run_closes_is_one_sentence_after_the_summary(
    project: pytest.Pytester, fault: str
) -> None:
    # once, a store error while the run closed (disk full, read-only) was a raw
    # traceback with no summary
    conftest = project.path / "conftest.py"
    plain = conftest.read_text()
    conftest.write_text(plain + STORE_FAILS_AT_CLOSE)
    (project.path / "fault_kind").write_text(fault)
    set_scores(project, expected_scores())
    # a long note: the run's chain entry, written at the close, needs new pages
    note = ("Screening model upgrade, see ticket. " * 3000).strip()
    retry = ("-o", "screeneval_store_retry_seconds=1")
    with child(project, "--screeneval-notes", note, *retry, name="closing") as run:
        code = run.wait()
    output = run.output
    assert code == pytest.ExitCode.USAGE_ERROR, output
    assert_no_traceback(output)
    assert "=== screeneval ===" in output.replace("=" * 10, "===")
    assert "gates: 0 failed" in output
    assert f"ERROR: The store {db_file(project)} {FAULT_SENTENCES[fault]}" in output
    # every item that passed had its rows stored before it passed; the run stays 'running'
    # until the next session marks it interrupted, nothing lost
    assert run_status(db_file(project), 1) == "running"
    assert len({row for row in stored_rows(db_file(project), 1) if row[2] == 0}) == FULL_RUN_ROWS
    (project.path / "store_fault").unlink()
    conftest.write_text(plain)  # the disk is usable again
    assert project.runpytest("--screeneval", "-k", "beta").ret == 0
    assert run_status(db_file(project), 1) == "interrupted"
    assert screeneval(["--db", db_url(project), "verify"]) == 0


def test_concurrent_accepts_replace_only_the_baseline_they_were_judged_against(
    project: pytest.Pytester, store_url: str
) -> None:
    # once, three concurrent --screeneval-accept runs each replaced a baseline they were
    # never compared against
    set_scores(project, expected_scores(), sleep={"*": 0.1})
    accept = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")
    flags = ("--screeneval-db", store_url, "-k", "beta", *accept)
    # the store exists first: this is about concurrent accepts; three processes creating one
    # schema at once is tested on its own (tests/store/test_store.py)
    with Store.open(store_url):
        pass
    with (
        child(project, *flags, name="first") as first,
        child(project, *flags, name="second") as second,
        child(project, *flags, name="third") as third,
    ):
        runs = (first, second, third)
        codes = [run.wait(timeout=3 * WAIT_S) for run in runs]
    outputs = [run.output for run in runs]
    for output in outputs:
        assert_no_traceback(output)
    with Store.open(store_url) as store:
        records = store.list_runs()
        assert len(records) == 3 and {r.status for r in records} == {"complete"}
        accepted = [r for r in records if r.accepted is not None]
        assert accepted, outputs
        for record in accepted:  # the compare-and-swap: each replaced what it was judged against
            assert record.accepted.previous_baseline_run_id == record.baseline_run_id
        # runs judged against the same baseline: at most one of them became the baseline
        judged: dict[int | None, int] = {}
        for record in accepted:
            judged[record.baseline_run_id] = judged.get(record.baseline_run_id, 0) + 1
        assert set(judged.values()) == {1}, judged
        assert store.verify_chain().ok
    refused = [o for o in outputs if "not accepted: " in o]
    assert len(refused) == 3 - len(accepted)
    assert all("it was judged against" in o for o in refused), refused
    assert codes.count(pytest.ExitCode.OK) == len(accepted)


WORKER_STORE_READ_ONLY = """

# test_faults: xdist worker gw1's store connections turn read-only once it has collected
from sqlalchemy import event as _event
from sqlalchemy.engine import Engine as _Engine

_read_only = []


def pytest_collection_finish(session):
    # the worker's own id, not the environment (an outer xdist run sets PYTEST_XDIST_WORKER too)
    if getattr(session.config, "workerinput", {}).get("workerid") == "gw1":
        _read_only.append(True)  # the worker has opened the store; from now on it cannot write


@_event.listens_for(_Engine, "begin")
def _read_only_worker(connection):
    if _read_only and connection.dialect.name == "sqlite":
        connection.connection.dbapi_connection.execute("PRAGMA query_only=ON")
"""


def test_a_write_that_fails_on_an_xdist_worker_makes_the_run_partial(
    project: pytest.Pytester,
) -> None:
    # a failed write makes the run partial, on a worker too (only the controller owns the run)
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + WORKER_STORE_READ_ONLY)
    set_scores(project, expected_scores())
    accept = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")
    result = project.runpytest_subprocess("--screeneval", "-n", "2", *accept)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    assert_no_traceback(output)
    assert "partial: run 1 is not complete: " in output, output
    assert "score rows could not be stored (The store " in output
    assert "not accepted: Run 1 was not accepted: run 1 is partial" in output
    assert run_status(db_file(project), 1) == "partial"
    # the other worker's rows are whole: each case with rows has all of them, none twice
    rows = stored_rows(db_file(project), 1)
    per_case: dict[str, int] = {}
    for case_id, _variant, repeat, *_ in rows:
        if repeat == 0:
            per_case[case_id] = per_case.get(case_id, 0) + 1
    assert per_case and set(per_case.values()) == {15}, per_case
    assert screeneval(["--db", db_url(project), "verify"]) == 0
