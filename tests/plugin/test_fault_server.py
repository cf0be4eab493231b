"""`pytest --screeneval` against the chat server sending every fault it can, end to end, on SQLite
and PostgreSQL: the real ``openai`` client, real HTTP on loopback, nothing mocked.

The invariants, whatever the fault: one sentence and no traceback; every answered row stored
(NUL, lone surrogates and escape sequences in answers are made safe the same way on both
backends, a huge rationale is cut with its flag); and no secret in any sink. The secrets are an
API key shorter than 8 characters that a 401 echoes back, and the PostgreSQL password given in
the store URL (inline and as ``?password=``); the sinks are the terminal, the JUnit XML, the
``--screeneval-json`` file, the HTML and JSON audit reports, ``screeneval show`` and ``runs``,
every stored row and the run's config. Every person and employer here is invented.
"""

from __future__ import annotations

import base64
import importlib
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import make_url
from support.plugin_project import RUBRIC, make_case

from pytest_screeneval.boundary.text import unsafe_character, was_cut
from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.golden.write import dump_case, dump_rubric
from pytest_screeneval.store.database import Store
from pytest_screeneval.testing import ChatServer, Reply
from pytest_screeneval.testing.chat_server import FAULTS

PRELOADED = tuple(
    importlib.import_module(name)
    for name in (
        "openai",
        "hypothesis",
        "sqlalchemy.dialects.sqlite",
        "sqlalchemy.dialects.postgresql",
        "pytest_screeneval.session.core",
        "pytest_screeneval.scoring.openai.scorer",
        "pytest_screeneval.report.terminal",
        "pytest_screeneval.report.json",
    )
)

MODEL = "acme-screener-2025-03-01"
SERVER_KEY = "sk-test-screeneval-fault-server-0000"
SHORT_KEY = "k3y9z"  # under 8 characters: it used to be left in 100 stored rows
PG_PASSWORD = "pg-Pa55-word-7"
ENDPOINT_PASSWORD = "hunter-22"  # trust auth: PostgreSQL ignores it, the store must hide it
CASE_IDS = ("al-001", "al-002", "al-005", "be-001")
_REF = re.compile(r"^Ref: (\S+)$", re.MULTILINE)


def case_of(body: Any) -> str | None:
    for message in (body or {}).get("messages") or [] if isinstance(body, dict) else []:
        if message.get("role") == "user":
            found = _REF.search(str(message.get("content")))
            if found:
                return found.group(1)
    return None


class ByCase:
    """Answers each request for a case with that case's reply, else the default answer."""

    def __init__(self, replies: dict[str, Reply]) -> None:
        self.replies = replies

    def __call__(self, body: Any) -> Reply:
        return self.replies.get(case_of(body) or "", Reply())


@pytest.fixture
def store_with_password(store_url: str, backend: str) -> str:
    """The test's store, with a password in its URL on PostgreSQL (inline and as a query
    parameter: each must be hidden)."""
    if backend == "sqlite":
        return store_url
    url = make_url(store_url).set(password=PG_PASSWORD)
    return url.update_query_dict({"password": PG_PASSWORD}).render_as_string(hide_password=False)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    cases_dir = pytester.path / "cases"
    cases_dir.mkdir()
    (cases_dir / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (cases_dir / "variants.yaml").write_text("attributes: {}\n", encoding="utf-8")
    for case_id in CASE_IDS:
        case = make_case(case_id, attributes={})
        folder = cases_dir / case.label
        folder.mkdir(exist_ok=True)
        (folder / f"{case.id}.yaml").write_text(dump_case(case), encoding="utf-8")
    return pytester


def write_ini(
    pytester: pytest.Pytester, server: ChatServer, db_url: str, base_url: str | None = None
) -> None:
    lines = {
        "screeneval_scorer": "openai",
        "screeneval_openai_base_url": base_url or server.base_url,
        "screeneval_openai_model": MODEL,
        "screeneval_openai_timeout": "30",  # a 10 MB answer takes a while on a loaded machine
        "screeneval_openai_max_retries": "0",
        "screeneval_openai_stop_after_failures": "0",
        "screeneval_openai_response_format": "json_schema",
        "screeneval_db": db_url,
        "screeneval_perturbation_examples": "0",
        "screeneval_rationale_flags": "warn",
    }
    pytester.makeini("[pytest]\n" + "".join(f"{k} = {v}\n" for k, v in lines.items()))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    monkeypatch.setenv("SCREENEVAL_OPENAI_API_KEY", SERVER_KEY)
    with ChatServer(models=(MODEL,), api_key=SERVER_KEY) as chat:
        yield chat


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, str]:
    result = pytester.runpytest(
        "--screeneval",
        "-p",
        "no:cacheprovider",
        f"--junitxml={pytester.path / 'junit.xml'}",
        f"--screeneval-json={pytester.path / 'run.json'}",
        *args,
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output, output
    assert "INTERNALERROR" not in output, output
    return result, output


def only_run(db_url: str) -> int:
    with Store.open(db_url) as store:
        [record] = store.list_runs(limit=5)
        return record.run_id


def rows_text(db_url: str, run_id: int) -> str:
    """Every stored row of the run and its record (config, notes, verdict), as one text."""
    with Store.open(db_url) as store:
        record = store.get_run(run_id)
        rows = store.scores(run_id)
    parts = [json.dumps(record.config), record.notes, json.dumps(record.verdict), record.scorer]
    for row in rows:
        parts += [row.rationale, row.error or "", *row.evidence, row.case_id, row.criterion]
    return "\n".join(parts)


def every_sink(
    pytester: pytest.Pytester, output: str, db_url: str, run_id: int, capsys: Any
) -> dict[str, str]:
    """What each sink holds after the run: the terminal, the files, the commands, the store."""
    html, audit = pytester.path / "audit.html", pytester.path / "audit.json"
    capsys.readouterr()
    report = screeneval(
        ["report", str(run_id), "--db", db_url, "--html", str(html), "--json", str(audit)]
    )
    assert report == 0
    screeneval(["show", str(run_id), "--db", db_url])
    screeneval(["runs", "--db", db_url])
    commands = capsys.readouterr()
    sinks = {
        "terminal": output,
        "commands": commands.out + commands.err,
        "store rows and run config": rows_text(db_url, run_id),
        "html report": html.read_text(encoding="utf-8"),
        "json audit": audit.read_text(encoding="utf-8"),
    }
    for name in ("junit.xml", "run.json"):
        path = pytester.path / name
        if path.exists():
            sinks[name] = path.read_text(encoding="utf-8")
    return sinks


def test_a_401_echoing_a_short_key_and_the_store_password_reach_no_sink(
    project: pytest.Pytester,
    server: ChatServer,
    store_with_password: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    # the scorer sends the short key; the server, expecting another, echoes it in its 401
    monkeypatch.setenv("SCREENEVAL_OPENAI_API_KEY", SHORT_KEY)
    server.echo_key = True
    write_ini(project, server, store_with_password)
    result, output = run(
        project,
        "--screeneval-notes",
        f"db at {store_with_password}",
        # every log line of the clients and the store, shown live: a sink like the others
        "-o",
        "log_cli=true",
        "--log-cli-level=DEBUG",
    )

    assert result.ret != 0
    assert "Incorrect API key provided" in output  # the reason is shown, the key is not
    run_id = only_run(store_with_password)
    sinks = every_sink(project, output, store_with_password, run_id, capsys)
    assert {"junit.xml", "run.json"} <= set(sinks)
    with Store.open(store_with_password) as store:
        assert all(row.error for row in store.scores(run_id))
    for sink, text in sinks.items():
        assert not re.search(rf"(?<![A-Za-z0-9]){SHORT_KEY}(?![A-Za-z0-9])", text), sink
        assert PG_PASSWORD not in text, sink
    assert "[redacted]" in sinks["store rows and run config"]


def test_a_password_in_the_endpoint_url_reaches_no_sink(
    project: pytest.Pytester, server: ChatServer, capsys: Any
) -> None:
    # httpx sends the URL's userinfo as basic auth; the server echoes it back in its 401
    server.echo_key = True
    db_url = f"sqlite:///{(project.path / 'store.db').as_posix()}"
    with_password = server.base_url.replace("http://", f"http://svc:{ENDPOINT_PASSWORD}@")
    write_ini(project, server, db_url, base_url=with_password)
    result, output = run(project)

    assert result.ret != 0
    assert "Incorrect API key provided: Basic [redacted]" in output
    run_id = only_run(db_url)
    basic = base64.b64encode(f"svc:{ENDPOINT_PASSWORD}".encode()).decode()
    for sink, text in every_sink(project, output, db_url, run_id, capsys).items():
        assert ENDPOINT_PASSWORD not in text and basic not in text, sink


@pytest.mark.parametrize(
    "fault",
    [
        "nul-in-rationale",
        "lone-surrogate-in-rationale",
        "escapes-in-rationale",
        "huge-rationale",
    ],
)
def test_unsafe_text_in_an_answer_keeps_every_row_on_both_backends(
    project: pytest.Pytester, server: ChatServer, store_url: str, fault: str, capsys: Any
) -> None:
    server.responder = ByCase({"al-002": FAULTS[fault](), "be-001": FAULTS[fault]()})
    write_ini(project, server, store_url)
    _result, output = run(project)

    assert "\x1b" not in output and "\x00" not in output
    run_id = only_run(store_url)
    with Store.open(store_url) as store:
        record = store.get_run(run_id)
        rows = store.scores(run_id)
    assert record.status == "complete", output
    # every answer stored (a row per criterion of every call, the noise probe's re-scores
    # too), none lost to the text it carried
    assert len(rows) == len(RUBRIC.criteria) * len(server.chat_requests)
    assert {(row.case_id, row.criterion) for row in rows} == {
        (case_id, name) for case_id in CASE_IDS for name in RUBRIC.criterion_names
    }
    assert all(row.score == 3 for row in rows)
    faulty = [row for row in rows if row.case_id in ("al-002", "be-001")]
    for row in rows:
        assert unsafe_character(row.rationale) is None
    if fault == "huge-rationale":  # 10 MB in the first criterion's rationale
        huge = [row for row in faulty if row.criterion == RUBRIC.criterion_names[0]]
        assert huge and all(was_cut(row.rationale) for row in huge)
        assert all(len(row.rationale) < 20_100 for row in huge)
    else:
        assert all("\ufffd" in row.rationale for row in faulty)
    sinks = every_sink(project, output, store_url, run_id, capsys)
    for sink, text in sinks.items():
        assert "\x1b" not in text and "\x00" not in text and "\ud83d" not in text, sink


@pytest.mark.parametrize(
    "fault", ["cut-off-json-200", "html-login-page-200", "nul-content", "429", "500"]
)
def test_a_broken_body_fails_its_case_in_one_sentence_and_keeps_the_other_rows(
    project: pytest.Pytester, server: ChatServer, store_url: str, fault: str
) -> None:
    server.responder = ByCase({"al-002": FAULTS[fault]()})
    write_ini(project, server, store_url)
    result, _output = run(project)

    assert result.ret != 0
    run_id = only_run(store_url)
    with Store.open(store_url) as store:
        rows = store.scores(run_id)
    others = [r for r in server.chat_requests if case_of(r.body) != "al-002"]
    assert len([r for r in rows if r.case_id != "al-002"]) == len(RUBRIC.criteria) * len(others)
    if fault == "429":
        # a rate-limited call is sent again, not answered: one row per criterion of each text,
        # however often the limit refused it (never an endless loop of refusals)
        refused = len(server.chat_requests) - len(others)
        assert 0 < refused <= 60 * len(RUBRIC.criteria) * 10
    else:
        assert len(rows) == len(RUBRIC.criteria) * len(server.chat_requests)
    broken = [row for row in rows if row.case_id == "al-002"]
    assert all(row.score is None and row.error for row in broken)
    for row in broken:
        assert "\n" not in row.error and len(row.error) < 2_000, row.error
    assert all(row.score == 3 for row in rows if row.case_id != "al-002")
