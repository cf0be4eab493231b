"""`pytest --screeneval` with the built-in openai scorer, end to end.

Each test runs the plugin through pytester on a project whose ini names the ``openai`` scorer and
points it at a real ChatServer on loopback in this process: the real ``openai`` client, real HTTP,
nothing mocked. The server answers every request for a case by the replies scripted for that
case (found by the resume's ``Ref:`` line), else with its default valid answer (score 3 on every
criterion). Every person and employer in these resumes is invented.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import shutil
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from support.plugin_project import RUBRIC, extra_calls, make_case

from pytest_screeneval.golden.write import dump_case, dump_rubric
from pytest_screeneval.store.database import Store
from pytest_screeneval.store.values import ScoreRow
from pytest_screeneval.testing import ChatServer, ReceivedRequest, Reply

# pytester's in-process runs drop every module a run imported. Imported here first, these stay
# loaded, so a run does not import (and assertion-rewrite) openai, hypothesis and the plugin
# again: that took seconds per run, most of this file's time. See also warm_imports below.
PRELOADED = tuple(
    importlib.import_module(name)
    for name in (
        "openai",
        "hypothesis",
        "sqlalchemy.dialects.sqlite",
        "pytest_screeneval.session.core",
        "pytest_screeneval.scoring.openai.scorer",
        "pytest_screeneval.report.terminal",
        "pytest_screeneval.report.json",
    )
)

MODEL = "acme-screener-2025-03-01"
OTHER_MODEL = "acme-screener-2025-09-15"
KEY = "sk-test-screeneval-plugin-0000"
USAGE = (101, 17)  # tokens the server reports for every answer: totals are easy to check
BUNDLED_CASES = Path(__file__).resolve().parents[2] / "cases"
# Expected scores within 1 of the server's default 3 on every criterion, so these cases pass.
CASE_IDS = ("al-001", "al-002", "al-005", "be-001")
CRITERIA = RUBRIC.criterion_names
_REF = re.compile(r"^Ref: (\S+)$", re.MULTILINE)


def failures_section(result: pytest.RunResult) -> str:
    """The FAILURES section only: with CI set, pytest repeats whole messages in its summary."""
    return result.stdout.str().split("short test summary info")[0]


def case_of(body: Any) -> str | None:
    """The case a chat request is about: the ``Ref:`` line of the resume it carries (None for
    a request the client cut off while sending it, as a stop cancels the call out)."""
    if not isinstance(body, dict):
        return None
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            found = _REF.search(str(message.get("content")))
            if found:
                return found.group(1)
    return None


class Script:
    """The server's responder: each request for a case takes the next reply queued for it."""

    def __init__(self) -> None:
        self.default = Reply(usage=USAGE)
        self._queued: dict[str | None, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()

    def queue(self, case_id: str, *replies: Reply) -> None:
        with self._lock:
            self._queued[case_id].extend(replies)

    def __call__(self, body: Any) -> Reply:
        case_id = case_of(body)
        with self._lock:
            queued = self._queued.get(case_id)
            if queued:
                return queued.popleft()
        return self.default


@pytest.fixture(scope="module", autouse=True)
def warm_imports(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Import what the scorer and the store import lazily, on first use, before any run.

    Otherwise a run would import it, pytester would drop it afterwards while the preloaded
    modules keep using the dropped classes, and a later test in this process would see, e.g.,
    a transport exception the client no longer recognises.
    """
    from pytest_screeneval.scoring.openai.options import OpenAISettings
    from pytest_screeneval.scoring.openai.scorer import make_scorer

    with ChatServer() as chat:
        settings = OpenAISettings(model=MODEL, base_url=chat.base_url)
        scorer = make_scorer(RUBRIC, settings, environ={})
        asyncio.run(scorer.score("Analyst at Harbourline Foods, March 2019 - June 2024", RUBRIC))
    url = f"sqlite:///{(tmp_path_factory.mktemp('warm') / 'store.db').as_posix()}"
    with Store.open(url):
        pass


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def server(script: Script, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    # The key reaches the scorer through the environment only, as a user's would.
    monkeypatch.setenv("SCREENEVAL_OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ChatServer(script, api_key=KEY, models=(MODEL,)) as chat:
        yield chat


def write_ini(
    pytester: pytest.Pytester, server: ChatServer, model: str = MODEL, **extra: str
) -> None:
    lines = {
        "screeneval_scorer": "openai",
        "screeneval_openai_base_url": server.base_url,
        "screeneval_openai_model": model,
        "screeneval_openai_timeout": "5",
        # One request per text; the dialect probe of ``auto`` has tests of its own.
        "screeneval_openai_response_format": "json_schema",
        "screeneval_db": f"sqlite:///{(pytester.path / 'store.db').as_posix()}",
        "screeneval_perturbation_examples": "0",
        # The server's canned rationale quotes the resume's first sentence, whatever the
        # criterion; its grounding is not what these tests are about.
        "screeneval_rationale_flags": "warn",
        **extra,
    }
    pytester.makeini("[pytest]\n" + "".join(f"{k} = {v}\n" for k, v in lines.items()))


@pytest.fixture
def project(pytester: pytest.Pytester, server: ChatServer) -> pytest.Pytester:
    """Four cases of the data-analyst rubric, no counterfactual variants: one request per case."""
    cases_dir = pytester.path / "cases"
    cases_dir.mkdir()
    (cases_dir / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (cases_dir / "variants.yaml").write_text("attributes: {}\n", encoding="utf-8")
    for case_id in CASE_IDS:
        case = make_case(case_id, attributes={})
        folder = cases_dir / case.label
        folder.mkdir(exist_ok=True)
        (folder / f"{case.id}.yaml").write_text(dump_case(case), encoding="utf-8")
    write_ini(pytester, server)
    return pytester


def store_of(pytester: pytest.Pytester) -> Store:
    return Store.open(f"sqlite:///{(pytester.path / 'store.db').as_posix()}")


def rows_of(pytester: pytest.Pytester, run_id: int) -> list[ScoreRow]:
    with store_of(pytester) as store:
        return store.scores(run_id)


def requests_for(server: ChatServer, case_id: str) -> list[ReceivedRequest]:
    return [r for r in server.chat_requests if case_of(r.body) == case_id]


def failed_nodeids(result: pytest.RunResult) -> set[str]:
    reports = result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
    return {r.nodeid for r in reports if r.failed}


def item_ids(case_id: str, *names: str) -> set[str]:
    label = "beta" if case_id.startswith("be-") else "alpha"
    return {f"cases/{label}/{case_id}.yaml::{case_id}::{name}" for name in names}


def calls_line(result: pytest.RunResult) -> str:
    [line] = [ln for ln in result.outlines if ln.startswith("scorer calls: ")]
    return line


# ---------------------------------------------------------------------------------------------
# The bundled golden set
# ---------------------------------------------------------------------------------------------


def test_the_bundled_golden_set_runs_through_the_openai_scorer(
    pytester: pytest.Pytester, server: ChatServer
) -> None:
    shutil.copytree(BUNDLED_CASES, pytester.path / "cases")
    write_ini(pytester, server)
    result = pytester.runpytest(
        "--screeneval",
        # The server gives every criterion 3, so only a wide tolerance agrees with the raters.
        "-o",
        "screeneval_expected_tolerance=4",
        "-o",
        "screeneval_min_worst_slice=0",
    )

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and "error" not in outcomes
    assert outcomes["passed"] > 56 * 6  # five criteria and a decision per case, and variants
    requests = server.chat_requests
    assert requests and all(r.body["model"] == MODEL for r in requests)
    # every request the server saw is counted: the run's own and the re-scores spent on noise
    extra = extra_calls(result.stdout.str())
    assert extra > 0
    n = len(requests)
    line = calls_line(result)
    assert line.startswith(f"scorer calls: {n} scored, 0 reused, ")
    assert f"0 needed retries ({n} attempts)" in line
    assert f"tokens {USAGE[0] * n} prompt + {USAGE[1] * n} completion" in line
    assert "; 0 scorer errors;" in line
    result.stdout.fnmatch_lines(
        [
            f"run 1 (complete) · scorer openai[[]json_schema[]] · model {MODEL} "
            f"(served: {MODEL}) · *",
            "gates: 0 failed",
        ]
    )
    with store_of(pytester) as store:
        run = store.get_run(1)
        stored = store.scores(1)
    assert run.status == "complete"
    assert (run.scorer, run.model_id, run.served_model) == ("openai[json_schema]", MODEL, MODEL)
    # repeat 0: the answers the items are judged on (the noise probe's re-scores come after)
    rows = [r for r in stored if r.repeat_index == 0]
    assert all(r.score == 3 and r.error is None for r in stored)
    originals = [r for r in rows if r.variant_key == ""]
    assert len(originals) == 56 * 5
    assert all(r.score == 3 and r.error is None and r.attempts == 1 for r in rows)
    # one request per distinct text: a variant equal to another text shares its answer
    assert len({r.input_sha256 for r in rows}) == n - extra
    tokens = {r.input_sha256: r.prompt_tokens for r in rows if r.prompt_tokens}
    assert sum(tokens.values()) == USAGE[0] * (n - extra)


# ---------------------------------------------------------------------------------------------
# Pinning
# ---------------------------------------------------------------------------------------------


def test_a_served_model_that_differs_fails_every_item_with_both_names(
    project: pytest.Pytester, script: Script
) -> None:
    script.default = Reply(usage=USAGE, model=OTHER_MODEL)
    result = project.runpytest("--screeneval")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    criterion_items = {i for c in CASE_IDS for i in item_ids(c, *CRITERIA, "decision")}
    assert failed_nodeids(result) == criterion_items
    message = f"the scorer asked for model '{MODEL}' but was served '{OTHER_MODEL}'"
    assert failures_section(result).count(message) == len(criterion_items)
    with store_of(project) as store:
        run = store.get_run(1)
    assert (run.model_id, run.served_model) == (MODEL, OTHER_MODEL)


@pytest.mark.parametrize("alias", ["gpt-4o", "acme-screener-latest"])
def test_a_floating_alias_is_refused_at_start_unless_allowed(
    project: pytest.Pytester, server: ChatServer, alias: str
) -> None:
    write_ini(project, server, model=alias)
    result = project.runpytest("--screeneval")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [ln for ln in result.errlines if ln.startswith("ERROR:")]
    assert errors == [
        f"ERROR: The model id '{alias}' is a floating alias that its provider can point at a "
        "new snapshot at any time, so pin a dated snapshot in screeneval_openai_model or set "
        "screeneval_openai_allow_floating_model to accept unpinned runs."
    ]
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert server.chat_requests == []
    if (project.path / "store.db").exists():
        with store_of(project) as store:
            assert store.list_runs() == []  # refused before a run was opened

    result = project.runpytest("--screeneval", "--screeneval-openai-allow-floating-model")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines([f"warning: model '{alias}' is a floating alias*"])
    assert {r.body["model"] for r in server.chat_requests} == {alias}


def test_a_retired_model_is_refused_and_one_retiring_soon_is_warned_about(
    project: pytest.Pytester, server: ChatServer
) -> None:
    yesterday = date.today() - timedelta(days=1)
    result = project.runpytest(
        "--screeneval", "-o", f"screeneval_openai_model_retires={yesterday.isoformat()}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: The model '{MODEL}' retired on {yesterday.isoformat()} according to *"]
    )
    assert server.chat_requests == []

    soon = date.today() + timedelta(days=20)
    result = project.runpytest(
        "--screeneval", "-o", f"screeneval_openai_model_retires={soon.isoformat()}"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"warning: model '{MODEL}' retires on {soon.isoformat()} (in 20 day(s)): plan *"]
    )

    later = date.today() + timedelta(days=31)
    result = project.runpytest(
        "--screeneval", "-o", f"screeneval_openai_model_retires={later.isoformat()}"
    )
    assert result.ret == pytest.ExitCode.OK
    assert "retires on" not in result.stdout.str()


# ---------------------------------------------------------------------------------------------
# Retries, refusals, hangs
# ---------------------------------------------------------------------------------------------


def test_a_429_is_waited_out_not_counted_and_a_500_retried_and_counted_one_row_each(
    project: pytest.Pytester, server: ChatServer, script: Script
) -> None:
    limited, failed_once = ("al-002", "be-001"), ("al-001",)
    for case_id in limited:
        script.queue(case_id, Reply.rate_limited("1"))
    for case_id in failed_once:
        script.queue(case_id, Reply.server_error(500))
    result = project.runpytest("--screeneval")

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=len(CASE_IDS) * (len(CRITERIA) + 1))
    # a wait on a rate limit is not an attempt; the 500 and its retry are two
    attempts = len(CASE_IDS) + extra_calls(result.stdout.str()) + len(failed_once)
    assert f"; 1 needed retries ({attempts} attempts); " in calls_line(result)
    for case_id in limited:
        # the 429 and the call sent again; any later request is the noise probe re-scoring it
        first, second = requests_for(server, case_id)[:2]
        assert second.received_at - first.received_at >= 0.95  # Retry-After: 1 was honoured
    rows = rows_of(project, 1)
    # one stored row per (case, variant, repeat, criterion), whatever was sent again
    keys = [(r.case_id, r.variant_key, r.repeat_index, r.criterion) for r in rows]
    assert len(keys) == len(set(keys))
    originals = [r for r in rows if r.repeat_index == 0]
    assert len(originals) == len(CASE_IDS) * len(CRITERIA)
    assert {(r.case_id, r.attempts) for r in originals} == {
        (c, 2 if c in failed_once else 1) for c in CASE_IDS
    }
    assert all(r.error is None for r in rows)
    tokens = sum(r.prompt_tokens for r in originals)
    assert tokens == USAGE[0] * len(CASE_IDS)  # neither a 429 nor a 500 used tokens
    assert "rate limits: 2 calls answered 429 and sent again" in result.stdout.str()


REFUSAL = "I will not rate this person."
CUT_OFF = '{"skills": {"score": 4, "rationale": "cut'


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply.refused(REFUSAL), (f"the model refused: {REFUSAL}", REFUSAL)),
        (
            Reply.invalid_json(CUT_OFF),
            (
                "the answer is not valid JSON (Unterminated string starting at: line 1 column "
                "38 (char 37))",
                CUT_OFF,
            ),
        ),
    ],
    ids=["refusal", "invalid-json"],
)
def test_an_unusable_answer_fails_only_its_case_with_the_raw_reason_and_is_not_retried(
    project: pytest.Pytester,
    server: ChatServer,
    script: Script,
    reply: Reply,
    reason: tuple[str, str],
) -> None:
    script.queue("al-002", reply)
    result = project.runpytest("--screeneval")

    because, raw = reason
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert failed_nodeids(result) == item_ids("al-002", *CRITERIA, "decision")
    assert failures_section(result).count(f"FAILED     scorer error: {because}") == len(CRITERIA)
    # not retried: one attempt (later requests for al-002 are the noise probe's re-scores)
    assert requests_for(server, "al-002")
    assert "; 0 needed retries" in calls_line(result)
    rows = {
        r.criterion: r
        for r in rows_of(project, 1)
        if r.case_id == "al-002" and r.repeat_index == 0 and r.variant_key == ""
    }
    assert sorted(rows) == sorted(CRITERIA)
    assert all(r.score is None and r.attempts == 1 for r in rows.values())
    # the raw answer is stored once, on the first criterion's row; the others point to it
    first, *others = CRITERIA
    assert rows[first].error == f"{because} (raw answer: {raw!r})"
    for name in others:
        assert rows[name].error == f"{because} (the raw answer is on the row of {first})"
    with store_of(project) as store:
        assert store.get_run(1).status == "complete"


def test_a_hang_longer_than_the_timeout_is_that_cases_error_and_the_run_completes(
    project: pytest.Pytester, server: ChatServer, script: Script
) -> None:
    script.queue("al-005", Reply.hang(30), Reply.hang(30))
    result = project.runpytest(
        "--screeneval",
        "--screeneval-openai-timeout",
        "0.5",
        "--screeneval-openai-max-retries",
        "1",
    )

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert failed_nodeids(result) == item_ids("al-005", *CRITERIA, "decision")
    result.stdout.fnmatch_lines(["*FAILED*failed after 2 attempts: no answer within 0.5 s*"])
    assert len(requests_for(server, "al-005")) >= 2  # later ones: the noise probe's re-scores
    rows = [r for r in rows_of(project, 1) if r.repeat_index == 0]
    hung = [r for r in rows if r.case_id == "al-005"]
    assert hung and all("no answer within 0.5 s" in (r.error or "") for r in hung)
    assert all(r.attempts == 2 for r in hung)
    assert all(r.error is None for r in rows if r.case_id != "al-005")
    with store_of(project) as store:
        assert store.get_run(1).status == "complete"


# ---------------------------------------------------------------------------------------------
# Reuse
# ---------------------------------------------------------------------------------------------


def test_reuse_after_a_complete_run_scores_no_original_again_and_records_where_from(
    project: pytest.Pytester, server: ChatServer
) -> None:
    assert project.runpytest("--screeneval").ret == pytest.ExitCode.OK
    calls = len(server.chat_requests)
    assert calls >= len(CASE_IDS)  # one per case, and the noise probe's re-scores

    result = project.runpytest("--screeneval", "--screeneval-reuse")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    # no original scored again: at most the noise probe's re-scores, as in the first run
    assert len(server.chat_requests) - calls <= calls - len(CASE_IDS)
    # what it scored is the noise probe's re-scores alone, which the summary states apart
    probe = extra_calls(result.stdout.str())
    assert len(server.chat_requests) - calls == probe
    assert calls_line(result).startswith(f"scorer calls: {probe} scored, {len(CASE_IDS)} reused, ")
    first = [r for r in rows_of(project, 1) if r.repeat_index == 0]
    second = [r for r in rows_of(project, 2) if r.repeat_index == 0]
    assert len(second) == len(first) == len(CASE_IDS) * len(CRITERIA)
    assert all(r.reused_from_run == 1 for r in second)
    assert {(r.case_id, r.criterion, r.score) for r in second} == {
        (r.case_id, r.criterion, r.score) for r in first
    }
    with store_of(project) as store:
        assert store.get_run(2).served_model == MODEL


def test_reuse_is_refused_together_with_repeat(
    project: pytest.Pytester, server: ChatServer
) -> None:
    result = project.runpytest("--screeneval", "--screeneval-reuse", "--screeneval-repeat", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --screeneval-reuse cannot be combined with*"])
    assert server.chat_requests == []


@pytest.mark.parametrize("concurrency", [1, 3])
def test_calls_in_flight_never_exceed_the_concurrency_setting(
    project: pytest.Pytester, server: ChatServer, script: Script, concurrency: int
) -> None:
    script.default = Reply(usage=USAGE, delay_s=0.2)
    result = project.runpytest("--screeneval", "--screeneval-concurrency", str(concurrency))
    assert result.ret == pytest.ExitCode.OK
    # four cases, one request each: the limit is reached and never passed
    assert server.max_in_flight == concurrency


# ---------------------------------------------------------------------------------------------
# Dialects: auto probes before the run is recorded; a server that rejects every call stops it
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def llama_like(script: Script, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    """A server that rejects json_schema as llama.cpp does (HTTP 500, a validation error)."""
    monkeypatch.setenv("SCREENEVAL_OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ChatServer(script, api_key=KEY, models=(MODEL,), dialect="llama.cpp") as chat:
        yield chat


def test_auto_falls_back_to_json_object_and_the_run_records_it(
    project: pytest.Pytester, llama_like: ChatServer, script: Script
) -> None:
    write_ini(project, llama_like, screeneval_openai_response_format="auto")
    script.queue("al-002", Reply.off_scale("skills", 10))
    json_path = project.path / "summary.json"

    result = project.runpytest("--screeneval", "--screeneval-json", str(json_path))

    # only the item of the bad field fails: al-002's other criteria keep their scores
    assert failed_nodeids(result) == item_ids("al-002", "skills", "decision")
    sent = [r.body.get("response_format", {}).get("type") for r in llama_like.chat_requests]
    # the probe: json_schema rejected, json_object accepted; then every call in json_object
    assert sent[:2] == ["json_schema", "json_object"]
    assert len(sent) >= 2 + len(CASE_IDS) and set(sent[2:]) == {"json_object"}
    result.stdout.fnmatch_lines(["run 1 (complete) · scorer openai[[]json_object[]] · *"])
    with store_of(project) as store:
        run = store.get_run(1)
    assert run.scorer == "openai[json_object]" and run.status == "complete"
    rows = {
        (r.case_id, r.criterion): r
        for r in rows_of(project, 1)
        if r.variant_key == "" and r.repeat_index == 0
    }
    bad = rows[("al-002", "skills")]
    assert bad.score is None and "off the scale 1..5 (raw answer: '{" in (bad.error or "")
    assert rows[("al-002", "experience")].score == 3
    import json

    summary = json.loads(json_path.read_text(encoding="utf-8"))
    assert summary["identity"]["response_format"] == "json_object"


def test_a_server_that_rejects_every_call_stops_the_run_with_one_sentence(
    project: pytest.Pytester, llama_like: ChatServer
) -> None:
    write_ini(
        project,
        llama_like,
        screeneval_concurrency="1",
        screeneval_openai_stop_after_failures="2",
        screeneval_openai_max_retries="3",
    )

    result = project.runpytest("--screeneval")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # not retried (3 retries allowed): the second request is already another case's call
    first, second = (case_of(r.body) for r in llama_like.chat_requests[:2])
    assert first != second
    [line] = [ln for ln in result.stderr.lines if ln.startswith("ERROR: ")]
    assert line.startswith("ERROR: The openai scorer stopped the run after 2 requests in a row to ")
    assert llama_like.base_url in line and "HTTP 500" in line
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    with store_of(project) as store:
        assert store.get_run(1).status == "interrupted"


CONTEXT_TOO_LONG = Reply(
    status=400,
    error_message="This model's maximum context length is 8192 tokens, however you requested "
    "9120 tokens (context_length_exceeded).",
)


def test_a_resume_over_the_context_fails_its_case_and_the_run_goes_on(
    project: pytest.Pytester, server: ChatServer, script: Script
) -> None:
    # one resume over the model's context stopped the whole run as "2 failures in a row": its
    # five texts (the original and its variants) are rejected the same way, one after another
    write_ini(
        project, server, screeneval_concurrency="1", screeneval_openai_stop_after_failures="2"
    )
    script.queue("al-002", *([CONTEXT_TOO_LONG] * 20))
    result = project.runpytest("--screeneval")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    assert "stopped the run" not in output
    assert {case_of(r.body) for r in server.chat_requests} >= set(CASE_IDS)
    failed = failed_nodeids(result)
    assert failed and all("al-002" in nodeid for nodeid in failed), failed
    assert "maximum context length is 8192 tokens" in failures_section(result)
    with store_of(project) as store:
        assert store.get_run(1).status == "complete"


def test_an_html_page_answered_with_200_stops_the_run_with_one_sentence(
    project: pytest.Pytester, server: ChatServer, script: Script
) -> None:
    # a login page in front of the endpoint answers 200 to everything: the same for every case
    write_ini(
        project, server, screeneval_concurrency="1", screeneval_openai_stop_after_failures="2"
    )
    script.default = Reply(raw_body=b"<html><body>Sign in to continue</body></html>")
    result = project.runpytest("--screeneval", "--junitxml", "junit.xml")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    [line] = [ln for ln in result.stderr.lines if ln.startswith("ERROR: ")]
    assert line.startswith("ERROR: The openai scorer stopped the run after 2 requests in a row ")
    assert "HTTP 200 with an answer that is not a chat completion" in line
    assert "Traceback" not in output
    assert len(server.chat_requests) <= 4  # stopped, not sent for every case
    with store_of(project) as store:
        assert store.get_run(1).status == "interrupted"
    # the stopped run still has its summary and its JUnit file
    assert "=== screeneval ===" in output.replace("=" * 10, "===")
    assert (
        'name="screeneval.status" value="interrupted"' in (project.path / "junit.xml").read_text()
    )
