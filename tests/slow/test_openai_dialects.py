"""The openai scorer against servers that speak different structured-output dialects.

Real openai client, real HTTP to a ChatServer imitating each dialect: an OpenAI-like server, one
that rejects ``json_schema`` the way llama.cpp does (HTTP 500, a validation error), one with
JSON mode only, and one without structured output at all (the answer is prose around a fenced
JSON block). Every person and employer in the resume is invented.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_screeneval.golden.model import Criterion, Rubric, Scale
from pytest_screeneval.scoring.openai.options import OpenAISettings
from pytest_screeneval.scoring.openai.scorer import OpenAIScorer, is_rejection, make_scorer
from pytest_screeneval.scoring.protocol import ScoreOutcome, ScorerError, ScorerUnavailable
from pytest_screeneval.testing import DIALECTS, ChatServer, Reply

MODEL = "acme-screener-2025-03-01"
RESUME = (
    "Rowan Ellery\n"
    "Warehouse analyst at Quillfield Supplies, 2020-2025.\n"
    "Built the weekly stock report in SQL and presented it to the store managers.\n"
)
RUBRIC = Rubric(
    id="analyst",
    version="1",
    scale=Scale(1, 5),
    advance_at=60.0,
    criteria=(
        Criterion("skills", "SQL and reporting.", 1.0),
        Criterion("experience", "Years of analysis work.", 1.0),
        Criterion("communication", "Explains findings.", 1.0),
    ),
)
NAMES = RUBRIC.criterion_names
# What ``auto`` settles on against each imitated server.
CHOSEN = {
    "openai": "json_schema",
    "llama.cpp": "json_object",
    "json_object": "json_object",
    "prompt": "prompt",
}


@pytest.fixture(params=sorted(DIALECTS))
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(dialect: str) -> Iterator[ChatServer]:
    with ChatServer(dialect=dialect) as chat:
        yield chat


def build(server: ChatServer, **changes: Any) -> OpenAIScorer:
    settings = OpenAISettings(
        **{"model": MODEL, "base_url": server.base_url, "timeout_s": 5.0, **changes}
    )
    return make_scorer(RUBRIC, settings, environ={})


@pytest.fixture
def scorer_for(server: ChatServer) -> Callable[..., OpenAIScorer]:
    return lambda **changes: build(server, **changes)


def score(scorer: OpenAIScorer, text: str = RESUME) -> ScoreOutcome:
    return asyncio.run(scorer.score(text, RUBRIC))


def formats_sent(server: ChatServer) -> list[str]:
    sent = []
    for request in server.chat_requests:
        wanted = request.body.get("response_format")
        sent.append(wanted["type"] if wanted else "none")
    return sent


# ---------------------------------------------------------------------------------------------
# auto: one probe per dialect tried, strictest first, then every call in the chosen one
# ---------------------------------------------------------------------------------------------


def test_auto_probes_once_falls_back_and_scores_in_the_chosen_dialect(dialect, server, scorer_for):
    scorer = scorer_for(max_retries=3)

    outcomes = [score(scorer) for _ in range(3)]

    chosen = CHOSEN[dialect]
    tried = list(("json_schema", "json_object", "prompt")[: scorer.probe_calls])
    assert tried[-1] == chosen
    # each rejected probe was sent once (not retried), then three calls in the chosen dialect
    sent = [f if f != "none" else "prompt" for f in formats_sent(server)]
    assert sent == tried + [chosen] * 3
    assert scorer.response_format == chosen
    assert scorer.identity.name == f"openai[{chosen}]"
    assert scorer.identity.as_dict()["response_format"] == chosen
    for outcome in outcomes:
        assert not outcome.errors
        assert [s.score for s in outcome.scores] == [3, 3, 3]
        assert outcome.extra["response_format"] == chosen
    assert len(scorer.probe_rejections) == len(tried) - 1


def test_the_rejected_dialects_are_named_with_the_servers_message():
    with ChatServer(dialect="llama.cpp") as server:
        scorer = build(server)
        score(scorer)
    (rejected,) = scorer.probe_rejections
    assert rejected.startswith("json_schema: HTTP 500 (")
    assert "Input should be 'text' or 'json_object'" in rejected
    assert "File " not in rejected  # the server's stack location is cut off


def test_outside_json_schema_the_schema_is_stated_in_the_prompt(dialect, server, scorer_for):
    score(scorer_for())
    last = server.chat_requests[-1].body
    system = last["messages"][0]["content"]
    stated = '"enum":[1,2,3,4,5]' in system
    assert stated == (CHOSEN[dialect] != "json_schema")
    if CHOSEN[dialect] == "json_object":
        assert last["response_format"]["schema"]["required"] == list(NAMES)


def test_prepare_settles_the_format_before_any_score(dialect, server, scorer_for):
    scorer = scorer_for()
    assert scorer.identity.name == "openai" and scorer.response_format is None
    scorer.prepare()
    probes = len(server.chat_requests)
    assert probes == scorer.probe_calls >= 1
    assert scorer.response_format == CHOSEN[dialect]
    scorer.prepare()  # settled once: no second probe
    score(scorer)
    assert len(server.chat_requests) == probes + 1


# ---------------------------------------------------------------------------------------------
# Per-criterion validity, in every dialect
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "bad", "complaint"),
    [
        (Reply.off_scale("skills", 10), "skills", "score for skills is 10, off the scale 1..5"),
        (Reply.off_scale("experience", 95), "experience", "is 95, off the scale"),
        (Reply.bad_field("confidence", 2.5, "communication"), "communication", "confidence"),
        (Reply.missing_criterion("experience"), "experience", "no entry for criterion"),
        (Reply.bad_field("evidence", "a quote", "skills"), "skills", "not a list of quotes"),
    ],
)
def test_a_bad_field_fails_its_own_criterion_and_the_others_keep_their_scores(
    dialect, server, scorer_for, reply, bad, complaint
):
    scorer = scorer_for(max_retries=3)
    scorer.prepare()
    calls = len(server.chat_requests)
    server.enqueue(reply)

    outcome = score(scorer)

    assert list(outcome.errors) == [bad]
    assert complaint in outcome.errors[bad]
    assert "(raw answer: " in outcome.errors[bad]
    assert {s.criterion: s.score for s in outcome.scores} == {n: 3 for n in NAMES if n != bad}
    assert len(server.chat_requests) == calls + 1  # an answer is never retried


def test_several_bad_fields_keep_the_raw_answer_once(dialect, server, scorer_for):
    scorer = scorer_for()
    scorer.prepare()
    server.enqueue(Reply(scores={"skills": 98, "communication": 0}))

    outcome = score(scorer)

    assert sorted(outcome.errors) == ["communication", "skills"]
    assert "(raw answer: " in outcome.errors["skills"]
    assert outcome.errors["communication"].endswith("(the raw answer is on the row of skills)")
    assert [s.criterion for s in outcome.scores] == ["experience"]


def test_a_refusal_remains_an_error_of_the_whole_answer(dialect, server, scorer_for):
    scorer = scorer_for()
    scorer.prepare()
    server.enqueue(Reply.refused("I will not score people."))
    with pytest.raises(ScorerError, match="the model refused: I will not score people"):
        score(scorer)


def test_prose_without_a_json_object_is_an_error_with_the_raw_text(dialect, server, scorer_for):
    scorer = scorer_for()
    scorer.prepare()
    server.enqueue(Reply(content="This candidate looks strong overall."))
    with pytest.raises(ScorerError) as caught:
        score(scorer)
    assert caught.value.reason.startswith("the answer is not valid JSON")
    assert caught.value.raw == "This candidate looks strong overall."


# ---------------------------------------------------------------------------------------------
# Rejections: never retried; K identical failures in a row stop the run
# ---------------------------------------------------------------------------------------------


def test_a_fixed_dialect_the_server_rejects_stops_after_k_identical_failures():
    with ChatServer(dialect="llama.cpp") as server:
        scorer = build(server, response_format="json_schema", max_retries=3, stop_after_failures=3)
        for _ in range(2):
            with pytest.raises(ScorerError) as caught:
                score(scorer)
            assert "rejected the request with HTTP 500" in caught.value.reason
            assert "not retried" in caught.value.reason
        with pytest.raises(ScorerUnavailable) as stopped:
            score(scorer)
        assert len(server.chat_requests) == 3  # one request per call: no retries
        base_url = server.base_url
    sentence = str(stopped.value)
    assert sentence.startswith("The openai scorer stopped the run after 3 requests in a row to ")
    assert base_url in sentence
    assert "HTTP 500" in sentence and "Input should be 'text' or 'json_object'" in sentence
    assert "screeneval_openai_response_format = auto" in sentence
    assert sentence.count(".\n") == 0 and "\n" not in sentence


def test_a_success_between_failures_resets_the_count():
    with ChatServer() as server:
        scorer = build(server, response_format="json_schema", max_retries=0, stop_after_failures=3)
        bad = Reply(status=400, error_message="Unsupported parameter: 'seed'.")
        server.enqueue(bad, bad, Reply(), bad, bad)
        for expected in ("error", "error", "ok", "error", "error"):
            if expected == "ok":
                assert len(score(scorer).scores) == 3
            else:
                with pytest.raises(ScorerError):
                    score(scorer)


def test_different_failures_are_not_identical():
    with ChatServer() as server:
        scorer = build(server, response_format="json_schema", max_retries=0, stop_after_failures=2)
        server.enqueue(
            Reply(status=400, error_message="Bad one."), Reply(status=422, error_message="Other.")
        )
        for _ in range(2):
            with pytest.raises(ScorerError):
                score(scorer)


def test_zero_never_stops():
    with ChatServer() as server:
        scorer = build(server, response_format="json_schema", max_retries=0, stop_after_failures=0)
        server.enqueue(*[Reply(status=400, error_message="No.")] * 6)
        for _ in range(6):
            with pytest.raises(ScorerError):
                score(scorer)


def test_a_500_without_an_invalid_request_body_is_retried():
    with ChatServer() as server:
        scorer = build(server, response_format="json_schema", max_retries=2)
        server.enqueue(Reply.server_error(500))
        outcome = score(scorer)
    assert outcome.attempts == 2


@pytest.mark.parametrize(
    ("status", "message", "rejected"),
    [
        (400, "Unsupported parameter", True),
        (401, "Incorrect API key", True),
        (404, "The model does not exist", True),
        (422, "Unprocessable", True),
        (429, "Rate limit", False),
        (408, "Timeout", False),
        (409, "Conflict", False),
        (500, "The server had an error.", False),
        (500, "1 validation error: Input should be 'text' or 'json_object'", True),
        (500, "response_format json_schema is not supported", True),
        (502, "Bad gateway: invalid response from upstream", False),
        (503, "Overloaded", False),
    ],
)
def test_which_http_errors_are_rejections(status, message, rejected):
    assert is_rejection(status, message) is rejected


def test_an_auth_failure_while_probing_stops_at_once():
    with ChatServer(api_key="sk-right") as server:
        scorer = build(server, max_retries=3)
        with pytest.raises(ScorerUnavailable) as stopped:
            scorer.prepare()
        assert len(server.chat_requests) == 1
    assert "rejected the openai scorer's first request with HTTP 401" in str(stopped.value)


def test_an_unreachable_server_while_probing_is_one_sentence():
    with ChatServer() as gone:
        base_url = gone.base_url
    settings = OpenAISettings(model=MODEL, base_url=base_url, max_retries=1, timeout_s=2)
    scorer = make_scorer(RUBRIC, settings, environ={})
    with pytest.raises(ScorerUnavailable) as stopped:
        scorer.prepare()
    sentence = str(stopped.value)
    assert sentence.startswith(f"The openai scorer could not reach {base_url}")
    assert "after 2 attempt(s)" in sentence


def test_a_server_that_rejects_every_format_is_named_with_each_rejection():
    def reject_all(body: Any) -> Reply:
        return Reply(status=400, error_message="This endpoint only does embeddings.")

    with ChatServer(reject_all) as server:
        scorer = build(server)
        with pytest.raises(ScorerUnavailable) as stopped:
            scorer.prepare()
        assert len(server.chat_requests) == 3
    sentence = str(stopped.value)
    assert "rejected every response format the openai scorer can ask for" in sentence
    for dialect in ("json_schema", "json_object", "prompt"):
        assert f"{dialect}: HTTP 400 (This endpoint only does embeddings.)" in sentence


def test_a_probe_asks_for_one_token_and_does_without_when_the_limit_is_rejected():
    def reasoning_model(body: Any) -> Reply:
        if "max_tokens" in body:
            message = "Unsupported parameter: 'max_tokens'; use 'max_completion_tokens' instead."
            return Reply(status=400, error_message=message)
        return Reply()

    with ChatServer(reasoning_model) as server:
        scorer = build(server)
        outcome = score(scorer)
        limits = [r.body.get("max_tokens") for r in server.chat_requests]
    assert scorer.response_format == "json_schema" and not outcome.errors
    assert limits == [1, None, None]  # the probe, the probe again without a limit, the call
    assert scorer.probe_calls == 2 and scorer.probe_rejections == ()
