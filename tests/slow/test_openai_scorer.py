"""The openai scorer through the real openai client against a real local HTTP server.

Nothing is mocked: every test goes over loopback HTTP to ChatServer, which scripts the answers.
Every person and employer in the resumes here is invented.
"""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Criterion, Rubric, Scale
from pytest_screeneval.scoring.openai.answer import parse_answer
from pytest_screeneval.scoring.openai.model_pin import check_model_pin, is_floating
from pytest_screeneval.scoring.openai.options import OpenAISettings
from pytest_screeneval.scoring.openai.prompt import BUILTIN_PROMPT, load_prompt_template
from pytest_screeneval.scoring.openai.scorer import OpenAIScorer, make_scorer, parse_retry_after
from pytest_screeneval.scoring.protocol import ScoreOutcome, ScorerError
from pytest_screeneval.testing import ChatServer, Reply

MODEL = "acme-screener-2025-03-01"
KEY = "sk-test-screeneval-0000"
RESUME = (
    "Morgan Vale\n"
    "Support engineer at Bramblewick Logistics, 2019-2024.\n"
    "Resolved 40 tickets a week across Linux and SQL systems for retail clients.\n"
    "Wrote the customer-facing runbook for the returns portal.\n"
)


def make_rubric(description: str = "Years of relevant support work.") -> Rubric:
    return Rubric(
        id="support-engineer",
        version="3",
        scale=Scale(1, 5),
        advance_at=60.0,
        criteria=(
            Criterion("experience", description, 2.0),
            Criterion("skills", "Tools and troubleshooting.", 1.0),
            Criterion("communication", "Clear writing with customers.", 1.0),
        ),
    )


RUBRIC = make_rubric()


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer(api_key=KEY) as chat:
        yield chat


@pytest.fixture
def scorer_for(server: ChatServer) -> Callable[..., OpenAIScorer]:
    def build(**changes: Any) -> OpenAIScorer:
        # One dialect unless a test says otherwise: ``auto`` would add its probe requests.
        settings = OpenAISettings(
            **{
                "model": MODEL,
                "base_url": server.base_url,
                "timeout_s": 5.0,
                "response_format": "json_schema",
                **changes,
            }
        )
        return make_scorer(RUBRIC, settings, environ={"SCREENEVAL_OPENAI_API_KEY": KEY})

    return build


def score(scorer: OpenAIScorer, text: str = RESUME, rubric: Rubric = RUBRIC) -> ScoreOutcome:
    return asyncio.run(scorer.score(text, rubric))


def score_error(scorer: OpenAIScorer, text: str = RESUME) -> ScorerError:
    with pytest.raises(ScorerError) as caught:
        score(scorer, text)
    return caught.value


# ---------------------------------------------------------------------------------------------
# A valid answer, and what was asked for
# ---------------------------------------------------------------------------------------------


def test_a_valid_answer_is_parsed_in_rubric_order(server, scorer_for):
    outcome = score(scorer_for())

    assert [s.criterion for s in outcome.scores] == ["experience", "skills", "communication"]
    assert {s.score for s in outcome.scores} == {3}
    for item in outcome.scores:
        assert item.criterion in item.rationale
        assert item.evidence and all(quote in RESUME for quote in item.evidence)
        assert item.confidence == 0.5
    assert outcome.attempts == 1
    assert outcome.served_model == MODEL
    assert '"experience"' in outcome.raw


def test_the_request_carries_a_strict_schema_the_prompt_and_the_sampling(server, scorer_for):
    score(scorer_for(seed=7, temperature=0.0))

    (request,) = server.chat_requests
    body = request.body
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == MODEL
    assert body["temperature"] == 0.0
    assert body["seed"] == 7
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True
    schema = response_format["json_schema"]["schema"]
    assert schema["required"] == ["experience", "skills", "communication"]
    assert schema["additionalProperties"] is False
    entry = schema["properties"]["skills"]
    # enums, because grammar-constrained decoders ignore minimum and maximum
    assert entry["properties"]["score"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    confidence = entry["properties"]["confidence"]["anyOf"]
    assert confidence == [
        {"type": "number", "enum": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]},
        {"type": "null"},
    ]
    assert entry["required"] == ["score", "rationale", "evidence", "confidence"]
    assert entry["additionalProperties"] is False
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert "- experience: Years of relevant support work." in system["content"]
    assert "from 1 (no evidence) to 5" in system["content"]
    assert RESUME.strip() in user["content"]
    assert RESUME.strip() not in system["content"]


def test_no_seed_is_sent_unless_one_is_set(server, scorer_for):
    score(scorer_for())
    assert "seed" not in server.chat_requests[0].body


def test_the_screeneval_key_takes_precedence_over_openai_api_key(server):
    settings = OpenAISettings(model=MODEL, base_url=server.base_url)
    environ = {"OPENAI_API_KEY": "sk-wrong-one", "SCREENEVAL_OPENAI_API_KEY": KEY}
    outcome = score(make_scorer(RUBRIC, settings, environ=environ))
    assert outcome.attempts == 1
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_wrong_key_is_refused_once_and_the_key_never_shows(server):
    settings = OpenAISettings(
        model=MODEL, base_url=server.base_url, max_retries=3, response_format="json_schema"
    )
    scorer = make_scorer(RUBRIC, settings, environ={"OPENAI_API_KEY": "sk-secret-wrong"})

    error = score_error(scorer)

    assert "HTTP 401" in error.reason and "Incorrect API key" in error.reason
    assert error.attempts == 1
    assert len(server.chat_requests) == 1
    assert "sk-secret-wrong" not in repr(scorer) + error.reason + error.raw


def test_without_a_key_or_a_base_url_the_scorer_is_refused():
    with pytest.raises(ScreenevalError, match="OPENAI_API_KEY"):
        make_scorer(RUBRIC, OpenAISettings(model=MODEL), environ={})


def test_a_local_base_url_works_without_a_key():
    with ChatServer() as open_server:
        settings = OpenAISettings(model=MODEL, base_url=open_server.base_url)
        outcome = score(make_scorer(RUBRIC, settings, environ={}))
    assert len(outcome.scores) == 3


# ---------------------------------------------------------------------------------------------
# Identity
# ---------------------------------------------------------------------------------------------


def test_identity_pins_model_prompt_file_rubric_and_temperature(tmp_path, scorer_for):
    scorer = scorer_for(temperature=0.3)
    identity = scorer.identity
    assert identity.name == "openai[json_schema]"  # the dialect is part of the identity
    assert identity.as_dict()["response_format"] == "json_schema"
    assert identity.model_id == MODEL
    assert identity.temperature == 0.3
    assert identity.rubric_sha == RUBRIC.sha
    assert identity.prompt_sha == hashlib.sha256(BUILTIN_PROMPT.read_bytes()).hexdigest()

    edited = tmp_path / "prompt.txt"
    edited.write_bytes(BUILTIN_PROMPT.read_bytes() + b"\n")
    with_edit = scorer_for(prompt_template=str(edited))
    assert with_edit.identity.prompt_sha == hashlib.sha256(edited.read_bytes()).hexdigest()
    assert with_edit.identity.prompt_sha != identity.prompt_sha

    reworded = make_rubric("Years of relevant customer support work.")
    settings = OpenAISettings(model=MODEL, base_url="http://127.0.0.1:9/v1")
    other = make_scorer(reworded, settings, environ={"OPENAI_API_KEY": KEY})
    assert other.identity.rubric_sha == reworded.sha != RUBRIC.sha


def test_a_relative_template_path_is_read_from_the_root(tmp_path, server, scorer_for):
    (tmp_path / "prompts").mkdir()
    text = "=== system ===\nScore $criterion_names on $scale_min..$scale_max.\n"
    text += "=== user ===\n<resume>\n$resume\n</resume>\n"
    (tmp_path / "prompts" / "mine.txt").write_text(text, encoding="utf-8")
    settings = OpenAISettings(
        model=MODEL, base_url=server.base_url, prompt_template="prompts/mine.txt"
    )
    scorer = make_scorer(RUBRIC, settings, root=tmp_path, environ={"OPENAI_API_KEY": KEY})

    score(scorer)

    system = server.chat_requests[0].body["messages"][0]["content"]
    assert system == "Score experience, skills, communication on 1..5."


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("=== user ===\n$resume\n", "exactly one '=== system ==='"),
        ("=== system ===\nHi $name\n=== user ===\n$resume\n", "unknown placeholder(s) $name"),
        ("=== system ===\nScore.\n=== user ===\nNo resume here.\n", "no $resume placeholder"),
        ("=== system ===\nCosts $5\n=== user ===\n$resume\n", "malformed placeholder"),
        ("=== system ===\n$resume\n=== user ===\n$resume\n", "system section"),
    ],
)
def test_a_broken_template_is_one_sentence_naming_the_file(tmp_path, text, complaint):
    path = tmp_path / "broken.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScreenevalError) as caught:
        load_prompt_template(path)
    assert complaint in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_missing_template_names_the_path(tmp_path):
    with pytest.raises(ScreenevalError, match=r"nope\.txt cannot be read"):
        load_prompt_template(tmp_path / "nope.txt")


def test_braces_and_dollars_in_a_resume_are_sent_verbatim(server, scorer_for):
    resume = "Priced support plans at $40 {per seat} for {{enterprise}} clients in 2023."
    score(scorer_for(), resume)
    assert resume in server.chat_requests[0].body["messages"][1]["content"]


# ---------------------------------------------------------------------------------------------
# Answers that cannot be used: raised with the raw text, never retried
# ---------------------------------------------------------------------------------------------


def test_a_refusal_is_an_error_after_one_attempt(server, scorer_for):
    server.enqueue(Reply.refused("I can't assess this candidate."))

    error = score_error(scorer_for(max_retries=3))

    assert error.reason == "the model refused: I can't assess this candidate."
    assert error.raw == "I can't assess this candidate."
    assert error.attempts == 1
    assert len(server.chat_requests) == 1


def test_invalid_json_is_an_error_with_the_raw_text_and_is_not_retried(server, scorer_for):
    garbage = '{"experience": {"score": 4, "rationale": "Strong'
    server.enqueue(Reply.invalid_json(garbage))

    error = score_error(scorer_for(max_retries=3))

    assert error.reason.startswith("the answer is not valid JSON")
    assert error.raw == garbage
    assert error.attempts == 1
    assert len(server.chat_requests) == 1


@pytest.mark.parametrize(
    ("reply", "complaint"),
    [
        (Reply.missing_criterion("skills"), "no entry for criterion skills"),
        (Reply.bad_field("confidence", 1.5, "skills"), "confidence for skills is 1.5, not a"),
        (Reply.bad_field("rationale", "", "skills"), "rationale for skills is empty"),
        (Reply.off_scale("communication", 9), "score for communication is 9, off the scale 1..5"),
        (Reply.off_scale("experience", 0), "score for experience is 0, off the scale 1..5"),
        (Reply.off_scale("skills", 4.5), "score for skills is 4.5, not a whole number"),
        (Reply.off_scale("skills", "4"), 'score for skills is "4", not a whole number'),
    ],
)
def test_a_wrong_field_fails_its_criterion_only_and_is_not_retried(
    server, scorer_for, reply, complaint
):
    server.enqueue(reply)

    outcome = score(scorer_for(max_retries=3))

    bad = complaint.split(" is ")[0].split()[-1]
    (reason,) = outcome.errors.values()
    assert list(outcome.errors) == [bad]
    assert complaint in reason
    assert "(raw answer: '{" in reason  # the raw answer is kept with the error
    assert [s.criterion for s in outcome.scores] == [n for n in RUBRIC.criterion_names if n != bad]
    assert outcome.attempts == 1
    assert len(server.chat_requests) == 1


def test_an_answer_for_another_rubric_fails_whole(server, scorer_for):
    server.enqueue(Reply.extra_criterion("charisma"))
    error = score_error(scorer_for(max_retries=3))
    assert "criteria the rubric does not have: charisma" in error.reason
    assert error.attempts == 1 and error.raw.startswith("{")
    assert len(server.chat_requests) == 1


def test_an_answer_cut_off_at_the_token_limit_is_an_error(server, scorer_for):
    server.enqueue(Reply(content='{"experience": {"sco', finish_reason="length"))
    error = score_error(scorer_for())
    assert error.reason == "the answer was cut off at the token limit"
    assert error.raw == '{"experience": {"sco'


def test_criteria_written_out_before_the_token_limit_keep_their_scores(server, scorer_for):
    whole = '{"experience": {"score": 4, "rationale": "Five years.", "evidence": [], '
    whole += '"confidence": 0.8}, "skills": {"score": 9, "rationale": "x", "evidence": [], '
    whole += '"confidence": null}, "communication": {"score": 3, "rati'
    server.enqueue(Reply(content=whole, finish_reason="length"))

    outcome = score(scorer_for())

    assert [(s.criterion, s.score, s.confidence) for s in outcome.scores] == [
        ("experience", 4, 0.8)
    ]
    assert "score for skills is 9, off the scale" in outcome.errors["skills"]
    assert f"(raw answer: {whole!r})" in outcome.errors["skills"]  # the first failed criterion
    assert outcome.errors["communication"].startswith(
        "the answer was cut off at the token limit before criterion communication was complete"
    )
    assert outcome.errors["communication"].endswith("(the raw answer is on the row of skills)")


def test_a_200_that_is_not_a_chat_completion_is_an_error_with_the_page(server, scorer_for):
    server.enqueue(Reply(raw_body=b"<html>Sign in to the proxy</html>"))
    error = score_error(scorer_for(max_retries=2))
    assert error.reason == "the endpoint's answer is not a chat completion"
    assert "Sign in to the proxy" in error.raw
    assert error.attempts == 1


def test_a_completion_without_choices_is_an_error(server, scorer_for):
    server.enqueue(Reply(raw_body=b'{"id": "x", "object": "chat.completion", "choices": []}'))
    error = score_error(scorer_for())
    assert error.reason == "the endpoint answered with no choices"


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ({"score": True, "rationale": "x", "evidence": [], "confidence": None}, "not a whole"),
        ({"score": 4.0, "rationale": "x", "evidence": [], "confidence": None}, "not a whole"),
        ({"score": 4, "rationale": "  ", "evidence": [], "confidence": None}, "rationale"),
        ({"score": 4, "rationale": "x", "evidence": "quote", "confidence": None}, "evidence"),
        ({"score": 4, "rationale": "x", "evidence": [], "confidence": 1.5}, "confidence"),
        ("four", "is not an object"),
    ],
)
def test_parse_answer_checks_every_field(entry, complaint):
    import json

    good = {"score": 3, "rationale": "Fine.", "evidence": [], "confidence": None}
    answer = {"experience": entry, "skills": good, "communication": good}
    parsed = parse_answer(json.dumps(answer), RUBRIC)
    assert list(parsed.problems) == ["experience"]
    assert complaint in parsed.problems["experience"]
    assert [s.criterion for s in parsed.scores] == ["skills", "communication"]


def test_parse_answer_accepts_a_missing_evidence_and_null_confidence():
    import json

    entry = {"score": 5, "rationale": "Runs the on-call rota.", "confidence": None}
    answer = {name: entry for name in RUBRIC.criterion_names}
    parsed = parse_answer(json.dumps(answer), RUBRIC)
    assert not parsed.problems
    assert [(s.score, s.evidence, s.confidence) for s in parsed.scores] == [(5, (), None)] * 3


# ---------------------------------------------------------------------------------------------
# Transport failures: retried, counted, bounded
# ---------------------------------------------------------------------------------------------


def test_a_429_with_retry_after_is_waited_out_then_sent_again_and_is_not_an_attempt(
    server, scorer_for
):
    server.enqueue(Reply.rate_limited(retry_after="1"))

    outcome = score(scorer_for(max_retries=3))

    assert outcome.attempts == 1  # a wait on a rate limit is not an attempt
    first, second = server.chat_requests
    assert second.received_at - first.received_at >= 0.95


def test_a_500_every_time_fails_after_every_attempt_is_spent(server, scorer_for):
    server.enqueue(*[Reply.server_error(500)] * 3)

    error = score_error(scorer_for(max_retries=2))

    assert error.attempts == 3
    assert "after 3 attempts: HTTP 500 (The server had an error.)" in error.reason
    assert server.base_url in error.reason
    assert len(server.chat_requests) == 3
    assert score(scorer_for()).attempts == 1  # the queue is spent: the server is healthy again


def test_a_gateway_error_page_is_retried_like_any_5xx(server, scorer_for):
    server.enqueue(Reply(status=502, raw_body=b"<html>Bad gateway</html>"))
    outcome = score(scorer_for(max_retries=1))
    assert outcome.attempts == 2
    assert len(server.chat_requests) == 2


def test_back_off_grows_between_5xx_retries(server, scorer_for):
    server.enqueue(Reply.server_error(503), Reply.server_error(502))

    outcome = score(scorer_for(max_retries=2))

    assert outcome.attempts == 3
    first, second, third = (r.received_at for r in server.chat_requests)
    # the waits are lower bounds on the gaps the server sees (0.25 s, then 0.5 s, before jitter);
    # upper bounds would measure the machine's load, not the back-off
    assert second - first >= 0.25
    assert third - second >= 0.5


def test_a_hang_is_bounded_by_the_timeout_and_retried_a_bounded_number_of_times(server, scorer_for):
    server.enqueue(Reply.hang(30), Reply.hang(30))
    started = time.perf_counter()

    error = score_error(scorer_for(timeout_s=0.5, max_retries=1))

    elapsed = time.perf_counter() - started
    assert error.attempts == 2
    assert "after 2 attempts: no answer within 0.5 s" in error.reason
    assert len(server.chat_requests) == 2
    assert 1.0 <= elapsed < 20  # bounded: two 0.5 s attempts, never the 30 s hang


def test_a_closed_port_is_a_connection_error_after_the_retries():
    with ChatServer() as gone:
        base_url = gone.base_url
    settings = OpenAISettings(
        model=MODEL, base_url=base_url, max_retries=1, timeout_s=2, response_format="json_schema"
    )
    error = score_error(make_scorer(RUBRIC, settings, environ={}))
    assert error.attempts == 2
    assert "after 2 attempts: connection error" in error.reason


def test_retry_after_reads_seconds_milliseconds_and_http_dates():
    now = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)
    in_ten = format_datetime(now + timedelta(seconds=10), usegmt=True)
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": in_ten}, now=now) == 10.0
    assert parse_retry_after({"Retry-After": "3600"}) == 60.0  # capped
    assert parse_retry_after({"Retry-After": "-4"}) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


# ---------------------------------------------------------------------------------------------
# What the server says it served, and what it cost
# ---------------------------------------------------------------------------------------------


def test_the_served_model_is_reported_when_it_differs(server, scorer_for):
    server.enqueue(Reply(model="acme-screener-2025-06-15"))
    scorer = scorer_for()

    outcome = score(scorer)

    assert outcome.served_model == "acme-screener-2025-06-15"
    assert scorer.identity.model_id == MODEL


def test_token_usage_is_recorded_on_answers_and_on_errors(server, scorer_for):
    server.enqueue(Reply(usage=(1234, 56)), Reply(refusal="No.", usage=(900, 2), model="other-1"))
    scorer = scorer_for()

    outcome = score(scorer)
    error = score_error(scorer)

    assert (outcome.prompt_tokens, outcome.completion_tokens) == (1234, 56)
    assert (error.prompt_tokens, error.completion_tokens) == (900, 2)
    assert error.served_model == "other-1"


# ---------------------------------------------------------------------------------------------
# Pinning
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o",
        "GPT-4o-mini",
        "gpt-4.1",
        "o3",
        "claude-3-5-sonnet",
        "latest",
        "gpt-5-chat-latest",
        "llama3.1:latest",
        "openai/gpt-4o",
    ],
)
def test_a_floating_alias_is_refused(model):
    with pytest.raises(ScreenevalError) as caught:
        check_model_pin(OpenAISettings(model=model), date(2026, 1, 5))
    assert f"'{model}' is a floating alias" in str(caught.value)
    assert "screeneval_openai_allow_floating_model" in str(caught.value)


@pytest.mark.parametrize(
    "model", ["gpt-4o-2024-08-06", "gpt-4.1-mini-2025-04-14", "o3-2025-04-16", MODEL]
)
def test_a_dated_snapshot_is_accepted_without_warnings(model):
    assert check_model_pin(OpenAISettings(model=model), date(2026, 1, 5)) == []


def test_a_floating_alias_is_allowed_with_the_flag_and_warned_about():
    settings = OpenAISettings(model="gpt-4o", allow_floating_model=True)
    (warning,) = check_model_pin(settings, date(2026, 1, 5))
    assert "'gpt-4o' is a floating alias" in warning


def test_user_patterns_add_floating_aliases():
    assert is_floating("acme-large", ("acme-*",))
    assert not is_floating("acme-large")
    with pytest.raises(ScreenevalError):
        check_model_pin(
            OpenAISettings(model="acme-large", floating_aliases=("acme-*",)), date.today()
        )


def test_make_scorer_refuses_a_floating_alias_before_any_request(server):
    settings = OpenAISettings(model="gpt-4o", base_url=server.base_url)
    with pytest.raises(ScreenevalError, match="floating alias"):
        make_scorer(RUBRIC, settings, environ={"OPENAI_API_KEY": KEY})
    assert server.requests == []


def test_retirement_is_refused_after_the_date_and_warned_within_30_days():
    settings = OpenAISettings(model=MODEL, model_retires=date(2026, 3, 1))
    assert check_model_pin(settings, date(2026, 1, 1)) == []
    (soon,) = check_model_pin(settings, date(2026, 2, 14))
    assert "retires on 2026-03-01 (in 15 day(s))" in soon
    (today,) = check_model_pin(settings, date(2026, 3, 1))
    assert "(today)" in today
    with pytest.raises(ScreenevalError, match="retired on 2026-03-01"):
        check_model_pin(settings, date(2026, 3, 2))


def test_make_scorer_keeps_the_retirement_warning(server):
    settings = OpenAISettings(model=MODEL, base_url=server.base_url, model_retires=date(2026, 3, 1))
    scorer = make_scorer(RUBRIC, settings, today=date(2026, 2, 20), environ={})
    assert len(scorer.warnings) == 1 and "retires on 2026-03-01" in scorer.warnings[0]


# ---------------------------------------------------------------------------------------------
# Concurrency and event loops
# ---------------------------------------------------------------------------------------------


def test_32_concurrent_scores_overlap_on_one_pooled_client(server, scorer_for):
    server.responder = lambda body: Reply.slow(0.2)
    scorer = scorer_for()
    texts = [f"{RESUME}Ticket queue {n} handled with care and documented daily." for n in range(32)]

    async def score_all() -> list[ScoreOutcome]:
        return await asyncio.gather(*(scorer.score(t, RUBRIC) for t in texts))

    outcomes = asyncio.run(score_all())

    assert len(outcomes) == 32 and all(o.attempts == 1 for o in outcomes)
    # overlap is shown by what the server saw at once, not by a wall-clock bound (that is the
    # throughput benchmark's job)
    assert server.max_in_flight >= 16


def test_the_scorer_survives_a_new_event_loop_between_calls(server, scorer_for):
    scorer = scorer_for()
    first = score(scorer)
    second = score(scorer)  # a second asyncio.run: a new loop, so a new client
    assert first.scores == second.scores
    assert len(server.chat_requests) == 2


def test_aclose_closes_the_pool_and_the_next_call_reopens_it(server, scorer_for):
    scorer = scorer_for()

    async def twice() -> int:
        await scorer.score(RESUME, RUBRIC)
        await scorer.aclose()
        outcome = await scorer.score(RESUME, RUBRIC)
        await scorer.aclose()
        return outcome.attempts

    assert asyncio.run(twice()) == 1


# ---------------------------------------------------------------------------------------------
# The server's own contract
# ---------------------------------------------------------------------------------------------


def test_the_server_lists_models_and_clamps_its_default_score_to_the_scale():
    from openai import AsyncOpenAI

    narrow = Rubric("narrow", "1", Scale(4, 5), 50.0, (Criterion("depth", "Depth."),))
    with ChatServer(models=("m-2025-01-01", "n-2025-01-01")) as chat:
        settings = OpenAISettings(model=MODEL, base_url=chat.base_url)
        outcome = asyncio.run(make_scorer(narrow, settings, environ={}).score(RESUME, narrow))

        async def listed() -> list[str]:
            async with AsyncOpenAI(base_url=chat.base_url, api_key="x", max_retries=0) as client:
                return [m.id for m in (await client.models.list()).data]

        assert asyncio.run(listed()) == ["m-2025-01-01", "n-2025-01-01"]
    assert [s.score for s in outcome.scores] == [4]


def test_the_server_runs_as_its_own_process_for_benchmarks():
    command = [sys.executable, "-m", "pytest_screeneval.testing.chat_server", "--score", "4"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().strip()
            settings = OpenAISettings(model=MODEL, base_url=base_url)
            outcome = score(make_scorer(RUBRIC, settings, environ={}))
        finally:
            process.terminate()
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
    assert [s.score for s in outcome.scores] == [4, 4, 4]


def test_reset_stats_forgets_requests_and_the_peak(server, scorer_for):
    score(scorer_for())
    assert server.max_in_flight == 1 and len(server.requests) == 1
    server.reset_stats()
    assert server.max_in_flight == 0 and server.requests == []


def test_the_builtin_template_forbids_protected_attributes_and_asks_for_quotes():
    system, user = load_prompt_template().render(RUBRIC, RESUME)
    assert "protected attributes" in system
    assert "quotes the resume verbatim" in system
    assert "experience, skills, communication" in system
    assert f"<resume>\n{RESUME}\n</resume>" in user
    assert Path(BUILTIN_PROMPT).name == "prompt.txt"
