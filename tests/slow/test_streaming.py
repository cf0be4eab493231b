"""The session's one runner, end to end: items as their case completes, -x stops the
scoring, one loop and one client per session, perturbation verdicts identical run to run.

pytester runs the plugin with the real ``openai`` client against a ChatServer on loopback in
this process; every test also runs under ``-n 2``. Every person and employer here is invented.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.plugin_project import RUBRIC, make_case
from test_openai_plugin import KEY, MODEL, PRELOADED, case_of

from pytest_screeneval.golden.write import dump_case, dump_rubric
from pytest_screeneval.testing import ChatServer, Reply

CASE_IDS = ("al-001", "al-002", "al-003", "al-004", "al-005", "be-001", "be-002")
LATENCY_S = 0.5
_ = PRELOADED  # openai, hypothesis and the plugin stay imported across pytester runs

ITEM_LOG_CONFTEST = """
import json, time
from pathlib import Path

def pytest_runtest_logfinish(nodeid, location):
    with Path(__file__).with_name("items.log").open("a") as log:
        log.write(json.dumps([nodeid, time.monotonic()]) + "\\n")
"""


def _slow(body: Any) -> Reply:
    return Reply(delay_s=LATENCY_S, usage=(100, 20))


def _text_dependent(body: Any) -> Reply:
    """Scores that depend on the text: some perturbations move the score, deterministically."""
    text = json.dumps(body.get("messages"), sort_keys=True)
    level = 1 + hashlib.sha256(text.encode()).digest()[0] % 5
    return Reply(scores={"skills": level}, usage=(100, 20))


@pytest.fixture(params=[(), ("-n", "2")], ids=["no-xdist", "n2"])
def dist(request: pytest.FixtureRequest) -> tuple[str, ...]:
    return tuple(request.param)


def _project(pytester: pytest.Pytester, server: ChatServer, **ini: str) -> pytest.Pytester:
    cases_dir = pytester.path / "cases"
    cases_dir.mkdir()
    (cases_dir / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (cases_dir / "variants.yaml").write_text("attributes: {}\n", encoding="utf-8")
    for case_id in CASE_IDS:
        case = make_case(case_id, attributes={})
        folder = cases_dir / case.label
        folder.mkdir(exist_ok=True)
        (folder / f"{case.id}.yaml").write_text(dump_case(case), encoding="utf-8")
    lines = {
        "screeneval_scorer": "openai",
        "screeneval_openai_base_url": server.base_url,
        "screeneval_openai_model": MODEL,
        "screeneval_openai_timeout": "10",
        "screeneval_openai_response_format": "json_schema",
        "screeneval_db": f"sqlite:///{(pytester.path / 'store.db').as_posix()}",
        "screeneval_perturbation_examples": "0",
        "screeneval_concurrency": "2",
        "screeneval_rationale_flags": "warn",
        "screeneval_expected_tolerance": "2",  # the server's 3 is within 2 of every expectation
        **ini,
    }
    body = "\n".join(f"{k} = {v}" for k, v in lines.items())
    pytester.makeini(f"[pytest]\n{body}\n")
    pytester.makeconftest(ITEM_LOG_CONFTEST)
    return pytester


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCREENEVAL_OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def slow_server(env: None) -> Iterator[ChatServer]:
    with ChatServer(_slow, api_key=KEY, models=(MODEL,)) as chat:
        yield chat


def _items(pytester: pytest.Pytester) -> list[tuple[str, float]]:
    log = Path(pytester.path / "items.log")
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()]  # type: ignore[misc]


def test_items_of_the_first_case_run_before_the_last_case_is_scored(
    pytester: pytest.Pytester, slow_server: ChatServer, dist: tuple[str, ...]
) -> None:
    project = _project(pytester, slow_server)
    result = project.runpytest("--screeneval", *dist)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    requests = slow_server.chat_requests
    assert {case_of(r.body) for r in requests} == set(CASE_IDS)
    first_item_done = min(at for _nodeid, at in _items(project))
    last_case_sent = min(r.received_at for r in requests if case_of(r.body) == CASE_IDS[-1])
    # the scoring ran ahead in the background: an item finished before the last case was sent
    # (the noise probe's re-scores come after every item; they are not counted here)
    assert first_item_done < last_case_sent, (first_item_done, last_case_sent)


def test_x_stops_the_scoring(pytester: pytest.Pytester, env: None, dist: tuple[str, ...]) -> None:
    def first_case_fails(body: Any) -> Reply:
        if case_of(body) == CASE_IDS[0]:
            return Reply(scores={"skills": 1}, delay_s=LATENCY_S, usage=(100, 20))
        return _slow(body)

    with ChatServer(first_case_fails, api_key=KEY, models=(MODEL,)) as server:
        project = _project(pytester, server, screeneval_concurrency="1")
        result = project.runpytest("--screeneval", "-x", *dist)
        time.sleep(LATENCY_S * 2)  # a call the stop cancelled would have arrived by now
        sent = {case_of(r.body) for r in server.chat_requests}
    # xdist reports a -x stop as interrupted
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    # the cases after the failure were never scored: their calls were cancelled
    assert CASE_IDS[0] in sent and len(sent) < len(CASE_IDS) - 2, sent


def test_one_client_per_session_however_many_texts(
    pytester: pytest.Pytester, slow_server: ChatServer, dist: tuple[str, ...]
) -> None:
    project = _project(pytester, slow_server, screeneval_perturbation_examples="3")
    result = project.runpytest("--screeneval", *dist)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    stats = slow_server.stats()
    processes = 3 if dist else 1  # under -n 2 the controller re-scores too (the noise probe)
    # originals and every perturbation example went through one pooled client per process:
    # at most one connection per concurrent call, not one per text
    assert stats["chat_requests"] > len(CASE_IDS)
    assert stats["connections"] <= 2 * processes, stats


def test_perturbation_verdicts_are_identical_run_to_run(
    pytester: pytest.Pytester, env: None, dist: tuple[str, ...]
) -> None:
    with ChatServer(_text_dependent, api_key=KEY, models=(MODEL,)) as server:
        project = _project(
            pytester, server, screeneval_perturbation_examples="4", screeneval_concurrency="4"
        )
        verdicts = []
        for run in range(2):
            xml = project.path / f"run{run}.xml"
            # in a process of its own, as users run it: in process, inside the full suite under
            # xdist, these runs twice met a store lock that nothing of theirs held (never when
            # run alone, never in a process of its own; the cause was not found)
            project.runpytest_subprocess(
                "--screeneval", "-k", "perturbation", f"--junitxml={xml}", *dist
            )
            verdicts.append(_perturbation_outcomes(xml))
    assert verdicts[0] and verdicts[0] == verdicts[1]
    assert any("FAILED" in message for message in verdicts[0].values())  # something to compare


def _perturbation_outcomes(xml: Path) -> dict[str, str]:
    import xml.etree.ElementTree as ET

    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        failure = case.find("failure")
        message = "passed" if failure is None else (failure.text or "")
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = message
    return outcomes


def test_the_plan_of_the_bundled_set_counts_the_calls_a_real_run_makes(tmp_path: Path) -> None:
    """--screeneval-plan calls nothing and opens no run; the real run then calls every planned
    original and variant and at most the planned calls: perturbation examples are drawn as the
    calls go, so the plan counts those asked for, which identical draws only lower
    (confirmation re-scores, which depend on the answers, are counted apart)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    db = f"sqlite:///{(tmp_path / 'store.db').as_posix()}"
    base = [sys.executable, "-m", "pytest", "--screeneval", "--screeneval-db", db, "-q"]
    base += ["-p", "no:cacheprovider", "-o", "screeneval_openai_price=2.5,10"]
    planned = subprocess.run(
        [*base, "--screeneval-plan"], cwd=root, capture_output=True, text=True, timeout=900
    )
    assert planned.returncode == 0, planned.stdout + planned.stderr
    [line] = [ln for ln in planned.stdout.splitlines() if ln.endswith(" calls")]
    counts = re.search(
        r"(\d+) originals, (\d+) variants, up to (\d+) perturbation examples, 0 repeats: "
        r"at most (\d+) calls$",
        line,
    )
    assert counts is not None, line
    originals, variants, examples, calls = (int(x) for x in counts.groups())
    assert originals == 56 and examples == 56 * 3 * 10 and calls == originals + variants + examples
    assert "cost about" in planned.stdout and "confirmation re-scores at most" in planned.stdout
    from pytest_screeneval.store.database import Store

    with Store.open(db) as store:
        assert store.list_runs() == []  # the plan opened no run

    report = tmp_path / "run.json"
    real = subprocess.run(
        [*base, "--screeneval-json", str(report)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert real.returncode == 0, real.stdout[-3000:] + real.stderr
    summary = json.loads(report.read_text())
    made = summary["calls"]["scored"] - summary["confirmation"]["extra_calls"]
    assert originals + variants < made <= calls, (made, calls)
    assert line in real.stdout  # the real run printed the same plan before its first call


BLOCKING_SCORER = """
import time
from pytest_screeneval.scoring.protocol import CriterionScore, ScorerIdentity

class Blocking:
    identity = ScorerIdentity("blocking", "blocking-v1", "0" * 12, "0" * 12)

    async def score(self, text, rubric):
        time.sleep(6)  # blocks the event loop: no await, so no timeout can fire on the loop
        return [CriterionScore(name, 3, "r", (), None) for name in rubric.criterion_names]

def make(rubric):
    return Blocking()
"""


def test_an_async_scorer_that_blocks_the_loop_stops_the_run_in_one_sentence(
    pytester: pytest.Pytester, slow_server: ChatServer
) -> None:
    project = _project(
        pytester, slow_server, screeneval_scorer="blocking_scorer:make", screeneval_timeout="1"
    )
    project.makepyfile(blocking_scorer=BLOCKING_SCORER)
    project.syspathinsert()
    result = project.runpytest("--screeneval")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    [line] = [ln for ln in result.stderr.lines if ln.startswith("ERROR: ")]
    assert line.startswith("ERROR: The scorer Blocking's async score() held the event loop")
    assert "screeneval_timeout = 1 s" in line and "Traceback" not in result.stderr.str()
