"""Every way a run ends is honest (the run-ending harness).

A scorer or a scorer factory that raises SystemExit, SIGTERM, SIGINT and a killed xdist worker:
each ends the run within a bound, with a sentence and no traceback, a non-zero exit status, a run
status that is not ``complete``, the summary and the JUnit file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from support.plugin_project import expected_scores, set_scores, write_project

from pytest_screeneval.store.database import Store

BOUND_S = 90.0  # no run may take longer to end, whatever ends it (they take seconds)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester)
    set_scores(pytester, expected_scores())
    return pytester


def add_conftest(project: pytest.Pytester, source: str) -> None:
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + source)


def start(project: pytest.Pytester, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--screeneval", *args],
        cwd=project.path,
        stdout=(project.path / "run.out").open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def finish(project: pytest.Pytester, process: subprocess.Popen[bytes]) -> tuple[int, str]:
    try:
        code = process.wait(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        pytest.fail(f"the run did not end within {BOUND_S:g} s:\n{output_of(project)}")
    return code, output_of(project)


def output_of(project: pytest.Pytester) -> str:
    return (project.path / "run.out").read_text(errors="replace")


def run(project: pytest.Pytester, *args: str) -> tuple[int, str]:
    return finish(project, start(project, *args))


def statuses(project: pytest.Pytester) -> list[str]:
    with Store.open(f"sqlite:///{(project.path / 'store.db').as_posix()}") as store:
        return [run.status for run in store.list_runs()]


def assert_honest_end(project: pytest.Pytester, code: int, output: str, sentence: str) -> None:
    """One sentence, no traceback, a non-zero exit, not complete, the summary, the JUnit file."""
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    assert code != 0, output
    assert sentence in output, output
    assert statuses(project) and "complete" not in statuses(project), output
    assert "=== screeneval ===" in output.replace("=" * 10, "==="), output
    junit = project.path / "junit.xml"
    assert junit.exists(), output
    assert 'name="screeneval.status" value="' in junit.read_text(), output


JUNIT = ("--junitxml", "junit.xml")

SCORER_EXITS = """

# test_run_ends: the scorer calls sys.exit for one case
import sys as _sys

_plain_score = TableScorer.score


def _exiting_score(self, text, rubric):
    if "Ref: al-003" in text:
        _sys.exit(0)
    return _plain_score(self, text, rubric)


TableScorer.score = _exiting_score
"""


def test_a_scorer_calling_sys_exit_ends_the_run_honestly(project: pytest.Pytester) -> None:
    add_conftest(project, SCORER_EXITS)
    code, output = run(project, *JUNIT)
    assert_honest_end(
        project, code, output, "The scorer raised SystemExit(0) while scoring case al-003"
    )


FACTORY_EXITS = """

# test_run_ends: the scorer factory calls sys.exit
import sys as _sys


def pytest_screeneval_scorer(config, rubric):
    _sys.exit(3)
"""


def test_a_scorer_factory_calling_sys_exit_is_one_sentence(project: pytest.Pytester) -> None:
    add_conftest(project, FACTORY_EXITS)
    code, output = run(project, *JUNIT)
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    assert code == pytest.ExitCode.USAGE_ERROR, output
    assert "The scorer factory raised SystemExit(3); no run was started." in output, output
    assert statuses(project) == []  # no run row was opened: nothing claims to be complete


SLOW = {"*": 0.4}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_run_ends_it_interrupted_with_the_summary(
    project: pytest.Pytester, sig: signal.Signals
) -> None:
    set_scores(project, expected_scores(), sleep=SLOW)
    process = start(project, "--screeneval-concurrency", "1", *JUNIT)
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline and not (project.path / "calls.log").exists():
        time.sleep(0.05)
    time.sleep(1.0)
    os.killpg(process.pid, sig)
    code, output = finish(project, process)
    assert code == pytest.ExitCode.INTERRUPTED, output
    assert_honest_end(project, code, output, f"the run was stopped by {sig.name}")
    assert statuses(project) == ["interrupted"]


WORKER_DIES = """

# test_run_ends: the xdist worker scoring be-001 dies in the middle of an item
import os as _os
import signal as _signal

_plain_score = TableScorer.score


def _dying_score(self, text, rubric):
    if "Ref: be-001" in text and not (HERE / "died").exists():
        (HERE / "died").write_text("x")
        if (HERE / "how").read_text() == "os._exit":
            _os._exit(1)
        _os.kill(_os.getpid(), _signal.SIGKILL)
    return _plain_score(self, text, rubric)


TableScorer.score = _dying_score
"""


@pytest.mark.parametrize("how", ["os._exit", "SIGKILL"])
def test_a_killed_xdist_worker_never_hangs_the_run(project: pytest.Pytester, how: str) -> None:
    add_conftest(project, WORKER_DIES)
    (project.path / "how").write_text(how)
    set_scores(project, expected_scores(), sleep={"*": 0.05})
    code, output = run(project, "-n", "2", *JUNIT)
    assert (project.path / "died").exists(), output
    assert_honest_end(project, code, output, "a worker crashed while running ")
    assert statuses(project) == ["partial"]


def test_output_paths_are_checked_before_any_call(project: pytest.Pytester) -> None:
    blocked = project.path / "blocked"
    blocked.write_text("a file, so nothing can be written under it")
    code, output = run(project, "--screeneval-json", str(blocked / "run.json"))
    assert code == pytest.ExitCode.USAGE_ERROR, output
    assert "Traceback" not in output, output
    assert f"Cannot write --screeneval-json to {blocked / 'run.json'}" in output, output
    assert not (project.path / "calls.log").exists()  # nothing was scored
    assert statuses(project) == []


def test_a_run_whose_every_gate_had_nothing_to_judge_is_never_shown_as_pass() -> None:
    from pytest_screeneval.report.run_verdict import gate_status_cell

    nothing = {"gates": [{"name": "agreement", "status": "N/A"}, {"name": "gap", "status": "N/A"}]}
    assert gate_status_cell(nothing) == "N/A"
    judged = {"gates": [{"name": "agreement", "status": "PASS"}, {"name": "gap", "status": "N/A"}]}
    assert gate_status_cell(judged) == "PASS"
