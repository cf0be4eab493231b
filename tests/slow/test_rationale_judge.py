"""The optional LLM judge of the rationales (``screeneval_rationale_judge = openai``), end to end.

The scorer is the plugin project's table scorer (offline, its rationales scripted per case); the
judge is the project's own ChatServer on loopback, answering as a judge by its ``JudgeRules``:
the real ``openai`` client, real HTTP, nothing mocked. Every person and employer is invented.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from support.plugin_project import make_case, set_scores, write_project

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.evidence.rationale.corpus import HELD_OUT, load_corpus
from pytest_screeneval.evidence.rationale.flags import ALL_FLAGS
from pytest_screeneval.scoring.openai.judge import RationaleJudgeClient
from pytest_screeneval.store.database import Store
from pytest_screeneval.store.judgements import judgements
from pytest_screeneval.testing import ChatServer, JudgeRules, Reply, is_judge_request
from pytest_screeneval.testing.store_faults import FaultPlan, injected

# kept loaded across pytester's in-process runs (see test_openai_plugin.py)
PRELOADED = tuple(
    importlib.import_module(name)
    for name in (
        "openai",
        "hypothesis",
        "sqlalchemy.dialects.sqlite",
        "pytest_screeneval.session.core",
        "pytest_screeneval.scoring.openai.judge",
        "pytest_screeneval.session.rationale_judging",
    )
)

JUDGE_MODEL = "acme-judge-2025-01-15"
KEY = "sk-judge-test-key-0123456789"
CORPUS = Path(__file__).resolve().parents[1] / "data" / "rationale_corpus"
QUOTE = '"Built weekly sales reports in SQL and Python"'
# the rules find nothing in it; the test judge finds "lively sort" a reference to age
JUDGE_ONLY_PROTECTED = (
    f"The skills criterion scores 4 because the resume says {QUOTE}, and she is a lively sort."
)
# the rules find a protected reference and a number the resume does not give; the judge neither
RULES_ONLY = (
    f"The skills criterion scores 4 because the resume says {QUOTE}; at 52 she is past her prime."
)
# the rules find nothing in it; the test judge finds "for the CFO" an unsupported claim
JUDGE_ONLY_UNGROUNDED = (
    f"The communication criterion scores 3 because the resume says {QUOTE} for the CFO."
)
RULES = JudgeRules({"lively sort": "age"}, ("for the CFO",))


def a_judge(chat: ChatServer, *, api_key_env: str, timeout_s: float) -> RationaleJudgeClient:
    """The openai judge client of JUDGE_MODEL at this chat server."""
    from pytest_screeneval.scoring.openai.judge import make_judge

    return make_judge(
        model=JUDGE_MODEL,
        base_url=chat.base_url,
        api_key_env=api_key_env,
        temperature=0.0,
        timeout_s=timeout_s,
        max_tokens=100,
    )


@pytest.fixture(scope="module", autouse=True)
def warm_imports() -> None:
    """Make one judge call before any pytester run, so what the client imports lazily stays."""
    import asyncio

    from pytest_screeneval.scoring.openai.judge import JudgeQuestion

    with ChatServer() as chat:
        judge = a_judge(chat, api_key_env="SCREENEVAL_NO_SUCH_VARIABLE", timeout_s=5)

        async def once() -> None:
            await judge.judge(JudgeQuestion("resume", "skills", 3, "A rationale."))
            await judge.aclose()

        asyncio.run(once())


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    # the judge's own key, in the variable its settings name (the default one)
    monkeypatch.setenv("SCREENEVAL_RATIONALE_JUDGE_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ChatServer(api_key=KEY, models=(JUDGE_MODEL,), judge=RULES) as chat:
        yield chat


def project(pytester: pytest.Pytester, server: ChatServer, **ini: str) -> Path:
    root = write_project(pytester, [make_case("al-001"), make_case("be-001")])
    lines = {
        "screeneval_db": f"sqlite:///{(root / 'store.db').as_posix()}",
        "screeneval_perturbation_examples": "0",
        "screeneval_rationale_judge": "openai",
        "screeneval_rationale_judge_model": JUDGE_MODEL,
        "screeneval_rationale_judge_base_url": server.base_url,
        "screeneval_rationale_judge_timeout": "5",
        **ini,
    }
    pytester.makeini("[pytest]\n" + "".join(f"{k} = {v}\n" for k, v in lines.items()))
    return root


def scripted(pytester: pytest.Pytester, rationales: dict[str, dict[str, str]]) -> None:
    scores = {
        "al-001": {"skills": 4, "experience": 3, "communication": 3},
        "be-001": {"skills": 3, "experience": 3, "communication": 3},
    }
    set_scores(pytester, scores, rationales=rationales)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # the criterion items only: the judge reads their answers
    return pytester.runpytest(
        "--screeneval", "-k", "skills or experience or communication", "-rA", *args
    )


def judge_requests(server: ChatServer) -> list[dict[str, object]]:
    """The judgements asked (not the one-token probe of the response format before them)."""
    return [
        r.body
        for r in server.chat_requests
        if is_judge_request(r.body) and "Probe: no rationale." not in json.dumps(r.body)
    ]


def failed_nodeids(result: pytest.RunResult) -> set[str]:
    reports = result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
    return {r.nodeid for r in reports if r.failed}


def item(case_id: str, criterion: str) -> str:
    label = "beta" if case_id.startswith("be-") else "alpha"
    return f"cases/{label}/{case_id}.yaml::{case_id}::{criterion}"


def test_a_judge_only_protected_finding_fails_its_item_naming_the_judge_and_is_stored_in_the_chain(
    pytester: pytest.Pytester, server: ChatServer
) -> None:
    root = project(pytester, server)
    scripted(pytester, {"al-001": {"skills": JUDGE_ONLY_PROTECTED}})
    result = run(pytester)
    out = result.stdout.str()

    assert failed_nodeids(result) == {item("al-001", "skills")}, out
    assert (
        f"FAILED     the LLM judge {JUDGE_MODEL} says the rationale refers to a protected "
        'attribute (age: "lively sort"); the rules did not flag it'
    ) in out
    # the session gate counts the judge's protected finding as it counts the rules'
    assert re.search(r"protected-attribute-flags\s+1\.0\s+<= 0\s+\d+\s+FAIL", out), out
    served = f"the LLM judge {JUDGE_MODEL}, served {JUDGE_MODEL}"
    assert f'judge      {served}: protected-attribute (age: "lively sort")' in out
    # the plan named the judge's calls before the first one: one per criterion answer
    assert re.search(
        rf"screeneval plan: rationale judge {JUDGE_MODEL} \(scope unflagged\): at most 6 calls, "
        r"one per criterion answer .*about \d+ prompt \+ 360 completion tokens",
        out,
    ), out
    # one request per criterion answer, with the judge's own key, which is never printed
    requests = judge_requests(server)
    assert len(requests) == 6
    assert all(r["model"] == JUDGE_MODEL for r in requests)
    assert KEY not in out
    # every verdict stored with the judge's identity, and chained
    with Store.open(f"sqlite:///{(root / 'store.db').as_posix()}") as store:
        stored = judgements(store)
        with store.engine.connect() as conn:
            kinds = [row.kind for row in conn.execute(sa.text("SELECT kind FROM eval_chain"))]
    assert len(stored) == 6 and kinds.count("judgement") == 6
    assert {(j.judge_model, j.served_model, j.temperature) for j in stored} == {
        (JUDGE_MODEL, JUDGE_MODEL, 0.0)
    }
    assert len({j.prompt_sha for j in stored}) == 1 and all(j.error is None for j in stored)
    [found] = [j for j in stored if j.protected]
    assert (found.case_id, found.criterion, found.protected_category, found.protected_phrase) == (
        "al-001",
        "skills",
        "age",
        "lively sort",
    )
    db = f"sqlite:///{(root / 'store.db').as_posix()}"
    assert screeneval(["verify", "--db", db]) == 0
    # a verdict edited afterwards breaks the chain, and verify names it
    with Store.open(db) as store, store.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE eval_rationale_judgements SET protected = 0 WHERE id = :id"),
            {"id": found.id},
        )
    assert screeneval(["verify", "--db", db]) == 1


def test_a_stored_verdict_is_not_asked_again(pytester: pytest.Pytester, server: ChatServer) -> None:
    root = project(pytester, server)
    scripted(pytester, {"al-001": {"skills": JUDGE_ONLY_PROTECTED}})
    first = run(pytester)
    assert failed_nodeids(first) == {item("al-001", "skills")}
    asked = len(judge_requests(server))
    assert asked == 6
    assert re.search(
        r"rationale judge: .* 6 verdicts asked, 0 reused from the store, 0 failed",
        first.stdout.str(),
    ), first.stdout.str()

    second = run(pytester)
    out = second.stdout.str()
    assert failed_nodeids(second) == {item("al-001", "skills")}, out
    assert len(judge_requests(server)) == asked  # nothing asked again
    assert "a stored verdict" in out
    assert "0 verdicts asked, 6 reused from the store, 0 failed" in out
    with Store.open(f"sqlite:///{(root / 'store.db').as_posix()}") as store:
        assert len(judgements(store)) == 6

    # a changed rationale is a new question
    scripted(
        pytester, {"al-001": {"skills": JUDGE_ONLY_PROTECTED.replace("lively sort", "steady hand")}}
    )
    third = run(pytester)
    assert failed_nodeids(third) == set(), third.stdout.str()
    assert len(judge_requests(server)) == asked + 1


def test_a_disagreement_is_noted_naming_both_and_an_ungrounded_one_follows_the_flag_policy(
    pytester: pytest.Pytester, server: ChatServer
) -> None:
    project(pytester, server, screeneval_rationale_judge_scope="all")
    scripted(
        pytester,
        {"al-001": {"skills": RULES_ONLY}, "be-001": {"communication": JUDGE_ONLY_UNGROUNDED}},
    )
    result = run(pytester)
    out = result.stdout.str()
    # the rules fail al-001 skills on their own; the judge's disagreement is one note line
    assert item("al-001", "skills") in failed_nodeids(result)
    assert (
        'note       the rules flag protected-attribute (age: "at 52"; age: "past her prime"); '
        f"the LLM judge {JUDGE_MODEL} found no protected attribute"
    ) in out
    assert (
        f"note       the rules flag ungrounded; the LLM judge {JUDGE_MODEL} found every claim "
        "supported by the resume"
    ) in out
    # with scope all, flagged rationales are judged too: every answer
    assert len(judge_requests(server)) == 6
    # a judge-only ungrounded finding fails the item (screeneval_rationale_flags = fail) ...
    assert item("be-001", "communication") in failed_nodeids(result)
    line = (
        f"the LLM judge {JUDGE_MODEL} says the rationale makes a claim the resume does not "
        "support ('for the CFO'); the rules did not flag it"
    )
    assert f"FAILED     {line}" in out

    # ... and only warns with screeneval_rationale_flags = warn
    warned = run(pytester, "-o", "screeneval_rationale_flags=warn")
    assert item("be-001", "communication") not in failed_nodeids(warned)
    assert f"{line} (warn only)" in warned.stdout.str()


def test_a_judge_call_that_fails_is_recorded_and_shown_never_read_as_no_finding(
    pytester: pytest.Pytester, server: ChatServer
) -> None:
    root = project(pytester, server)
    scripted(pytester, {"al-001": {"skills": JUDGE_ONLY_PROTECTED}})
    broken = {"protected_attribute": True, "category": "age", "phrase": "not in it"}

    def responder(body: object) -> Reply:
        assert isinstance(body, dict)
        if is_judge_request(body) and "lively sort" in json.dumps(body):
            return Reply(content=json.dumps(broken))
        return Reply()

    server.responder = responder
    result = run(pytester)
    out = result.stdout.str()
    # not judged, and said so: the rules found nothing, so the item passes with the note
    assert failed_nodeids(result) == set(), out
    assert (
        f"rationale not judged: the LLM judge {JUDGE_MODEL} failed (the judge's answer is "
        "invalid: it has no ungrounded, claim; the phrase 'not in it' it names is not in the "
        "rationale)"
    ) in out
    with Store.open(f"sqlite:///{(root / 'store.db').as_posix()}") as store:
        [failed] = [j for j in judgements(store) if j.error is not None]
    assert failed.protected is None and failed.ungrounded is None
    assert json.loads(failed.raw) == broken

    # a failed judgement is asked again next time (only a verdict is reused)
    server.responder = None
    again = run(pytester)
    assert failed_nodeids(again) == {item("al-001", "skills")}, again.stdout.str()


def test_judge_check_prints_precision_and_recall_on_the_held_out_part(
    server: ChatServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = JudgeRules({"years old": "age", "married": "marital status"}, ("million",))
    server.judge = rules
    monkeypatch.chdir(CORPUS.parent)  # no ini there: the flags say everything
    code = screeneval(
        [
            "judge-check",
            str(CORPUS),
            "--model",
            JUDGE_MODEL,
            "--base-url",
            server.base_url,
            "--limit",
            "60",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(judge_requests(server)) == 60
    held_out = [e for e in load_corpus(CORPUS, ALL_FLAGS) if e.split == HELD_OUT][:60]
    assert all(int(e.resume_id[1:]) % 2 == 0 for e in held_out)
    assert "60 judged, 0 failed" in out
    # the printed counts are the server's rules counted against the corpus labels
    for flag, found in (
        ("protected-attribute", lambda text: any(p in text.lower() for p in rules.protected)),
        ("ungrounded", lambda text: any(c.lower() in text.lower() for c in rules.ungrounded)),
    ):
        tp = sum(1 for e in held_out if found(e.rationale) and flag in e.expected)
        fp = sum(1 for e in held_out if found(e.rationale) and flag not in e.expected)
        fn = sum(1 for e in held_out if not found(e.rationale) and flag in e.expected)
        row = re.search(rf"^judge\s+{flag}\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(.*)$", out, re.M)
        assert row, out
        assert tuple(int(x) for x in row.groups()[:4]) == (tp + fn, tp, fp, fn)
        assert re.fullmatch(
            r"\d\.\d\d \(\d\.\d\d-\d\.\d\d\)\s+\d\.\d\d \(\d\.\d\d-\d\.\d\d\)", row[5]
        )
    assert re.search(r"^rules\s+protected-attribute\s+\d+", out, re.M)


def test_judge_check_without_the_corpus_says_so_in_one_sentence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = screeneval(
        ["judge-check", "--model", JUDGE_MODEL, "--base-url", "http://127.0.0.1:9/v1"]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        "screeneval: There is no labelled rationale corpus at tests/data/rationale_corpus (no "
        "corpus.yaml): pass the corpus folder, e.g. screeneval judge-check "
        "path/to/tests/data/rationale_corpus.\n"
    )


def test_verdicts_the_store_refuses_still_decide_their_items_and_the_run_says_it_lacks_them(
    pytester: pytest.Pytester, server: ChatServer
) -> None:
    root = project(pytester, server)
    scripted(pytester, {"al-001": {"skills": JUDGE_ONLY_PROTECTED}})
    plan = FaultPlan(kind="fail-nth", table="eval_rationale_judgements", at=1, times=None)
    with injected(root / "store_fault.json", plan) as path:
        result = run(pytester)
    out = result.stdout.str()
    refused = path.with_name(path.name + ".log").read_text().splitlines()

    # every judgement write failed (six answers), and nothing else did
    assert len(refused) == 6 and all("eval_rationale_judgements" in r for r in refused), refused
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    # the judge's finding still decides its item; no item errors on the store
    assert failed_nodeids(result) == {item("al-001", "skills")}, out
    assert result.parseoutcomes().get("errors", 0) == 0, out
    assert (
        "rationale judge: 6 verdicts could not be stored and are not in the audit record; they "
        "still decided their items (The store "
    ) in out
    # the run is not complete, and says what it lacks; every score row is stored
    with Store.open(f"sqlite:///{(root / 'store.db').as_posix()}") as store:
        assert judgements(store) == []
        assert store.get_run(1).status == "partial"
        assert len([r for r in store.scores(1) if r.repeat_index == 0]) == 6
    assert "6 rationale judge verdicts are not in the store, which refused them" in out


def test_the_judge_keeps_its_own_concurrency_limit_whatever_the_scorers(
    pytester: pytest.Pytester, server: ChatServer
) -> None:
    # the scorer may have 8 calls in flight; the judge, another endpoint, one at a time
    project(
        pytester,
        server,
        screeneval_concurrency="8",
        screeneval_rationale_judge_concurrency="1",
    )
    scripted(pytester, {})
    server.responder = lambda body: Reply(delay_s=0.3)
    result = run(pytester)
    assert result.ret == 0, result.stdout.str()
    assert len(judge_requests(server)) == 6
    # the table scorer is offline: every chat request in flight was the judge's
    assert server.max_in_flight == 1


@pytest.mark.parametrize("limit", [1, 3])
def test_answers_sent_ahead_together_reach_the_judges_limit_and_never_pass_it(
    server: ChatServer, tmp_path: Path, limit: int
) -> None:
    from pytest_screeneval.session.rationale_judging import JudgeAsk, RationaleJudging

    server.responder = lambda body: Reply(delay_s=1.0)  # every judgement overlaps the others
    client = a_judge(server, api_key_env="SCREENEVAL_RATIONALE_JUDGE_API_KEY", timeout_s=30)
    asks = [
        JudgeAsk(f"c-{n}", "Built weekly sales reports in SQL.", "skills", 3, f"Reason {n}.")
        for n in range(6)
    ]
    with Store.open(f"sqlite:///{(tmp_path / 'store.db').as_posix()}") as store:
        judging = RationaleJudging(client, store, "all", concurrency=limit, run_id=lambda: None)
        try:
            judging.ahead(asks)  # six at once, as a batch of stored answers is sent
            verdicts = [judging.evidence(ask) for ask in asks]
        finally:
            judging.close()
    assert all(v.error is None for v in verdicts), verdicts
    assert server.max_in_flight == limit


def test_under_xdist_the_summary_counts_every_workers_verdicts(
    pytester: pytest.Pytester, server: ChatServer
) -> None:
    root = project(pytester, server)
    scripted(pytester, {"al-001": {"skills": JUDGE_ONLY_PROTECTED}})
    first = run(pytester, "-n", "2", "--screeneval-json", "first.json")
    out = first.stdout.str()
    assert first.ret == 1, out  # the judge-only finding fails its item, on its worker
    assert "FAILED" in out and "lively sort" in out, out
    # the controller's gate reads the verdict the worker stored, and counts it
    assert re.search(r"protected-attribute-flags\s+1\.0\s+<= 0\s+\d+\s+FAIL", out), out
    judged = json.loads((root / "first.json").read_text())["rationale_judge"]
    assert (judged["asked"], judged["reused"], judged["failed"], judged["not_stored"]) == (
        6,
        0,
        0,
        0,
    ), judged
    assert len(judge_requests(server)) == 6
    with Store.open(f"sqlite:///{(root / 'store.db').as_posix()}") as store:
        assert len(judgements(store)) == 6

    # the second run asks nothing: every verdict comes from the store, on whichever worker
    again = run(pytester, "-n", "2", "--screeneval-json", "again.json")
    judged = json.loads((root / "again.json").read_text())["rationale_judge"]
    assert (judged["asked"], judged["reused"]) == (0, 6), judged
    assert len(judge_requests(server)) == 6
    assert "rationale judge: the LLM judge" in again.stdout.str()
