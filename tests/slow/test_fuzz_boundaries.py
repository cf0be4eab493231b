"""Hypothesis fuzzers over the three ways text and numbers come in: case files, scorer answers
and server bodies. Each asserts the invariants whatever the input, not an expected answer:

* a case file loads, or is refused with one sentence naming the file, within a time bound; what
  loads holds no unsafe character, only finite numbers, scalar labels, NFC names, a past ISO
  ``retired_at`` and case ids unique without regard to case;
* a scorer's answer, whatever it is, becomes a result whose every text is safe (no lone
  surrogate, NUL or control character, bounded, no known secret) and whose every row is stored
  and read back on SQLite and PostgreSQL;
* a server's body, whatever it is, becomes an answer or one ``ScorerError`` sentence from the
  real ``openai`` client, never another exception, within a time bound, and the key it echoes
  reaches no text.

Examples are few and derandomized, so the suite stays fast and never flaky.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.golden_factory import make_golden, make_identity
from support.plugin_project import RUBRIC

from pytest_screeneval.boundary.secrets import forget, remember
from pytest_screeneval.boundary.text import MAX_ANSWER_CHARS, nfc, unsafe_character
from pytest_screeneval.errors import GoldenSetError, ScreenevalError
from pytest_screeneval.golden.load import case_id_key, load_golden_set
from pytest_screeneval.golden.write import write_golden_set
from pytest_screeneval.scoring.protocol import (
    CriterionScore,
    ScoreOutcome,
    ScorerError,
    ScorerUnavailable,
)
from pytest_screeneval.scoring.results import JobResult, ScoringJob, result_of
from pytest_screeneval.session.run import RunLog
from pytest_screeneval.store.database import Store
from pytest_screeneval.testing.chat_server import ChatServer, Reply

FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SECRET = "k3y"  # short on purpose: a secret of any length is redacted
LOAD_BOUND_S = 5.0
CALL_BOUND_S = 15.0

# -------------------------------------------------------------------------------------------
# Case files
# -------------------------------------------------------------------------------------------

_TEXTS = st.text(max_size=12)
# YAML a person, a tool or an attacker might put where a value goes
_SCALARS = st.one_of(
    _TEXTS.map(json.dumps),  # a double-quoted string: any escape, \0, \x1b, \ud83d...
    st.sampled_from(
        [
            *[".nan", ".inf", "-.inf", "~", "''", "' '", "yes", "2999-01-01", "soon-ish"],
            *["2024-02-30", "2020-01-01", "0", "-1", "1e309", "3", "7", "Café"],
            *['"\\0"', '"\\e[2K"', '"\\x85"'],
        ]
    ),
    st.integers(-10, 10).map(str),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: f"[{', '.join(items)}]"),
        st.dictionaries(st.sampled_from(["a", "b", "''", "~"]), inner, max_size=2).map(
            lambda d: "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}"
        ),
        inner.map(lambda v: f"&x {v}"),
        st.just("*x"),
        st.integers(1, 60).map(lambda n: "[" * n + "]" * n),
    ),
    max_leaves=6,
)


def _alias_bomb(levels: int) -> str:
    """One flow value whose aliases multiply: 10**levels strings if expanded."""
    parts = ["&a0 [x, x, x, x, x, x, x, x, x, x]"]
    parts += [f"&a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return f"[{', '.join(parts)}]"


_VALUES = st.one_of(_VALUES, st.integers(2, 9).map(_alias_bomb))
# where a value goes: (file, the line as written, the line with {value})
_SPOTS = [
    ("rubric.yaml", "  - name: experience", "  - name: {value}"),
    ("rubric.yaml", "    weight: 2", "    weight: {value}"),
    ("rubric.yaml", "advance_at: 60", "advance_at: {value}"),
    ("variants.yaml", "sex: female", "sex: {value}"),
    ("career-changer/cc-001.yaml", "  sex: female", "  sex: {value}"),
    ("career-changer/cc-001.yaml", "  sex: female", "  {value}: female"),
    ("career-changer/cc-001.yaml", "demographics:", "retired_at: {value}\ndemographics:"),
    (
        "career-changer/cc-001.yaml",
        "demographics:",
        "ratings:\n  skills:\n    {value}: 3\ndemographics:",
    ),
    ("career-changer/cc-001.yaml", "  skills:\n    score: 3", "  skills:\n    score: {value}"),
    ("career-changer/cc-001.yaml", "  name: Ilona Varga", "  name: {value}"),
    ("career-changer/cc-002.yaml", "id: cc-002", "id: {value}"),
    ("career-changer/cc-001.yaml", "source: ", "source: {value}\nxfail: "),
]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("pristine") / "cases"
    write_golden_set(make_golden(), root)
    return {p.relative_to(root).as_posix(): p.read_text("utf-8") for p in root.rglob("*.yaml")}


def _check_loaded(root: Path) -> None:
    golden = load_golden_set(root)
    for criterion in golden.rubric.criteria:
        assert math.isfinite(criterion.weight) and criterion.weight > 0
        assert criterion.name == nfc(criterion.name)
    assert math.isfinite(golden.rubric.advance_at)
    keys = [case_id_key(case.id) for case in golden.cases]
    assert len(keys) == len(set(keys))
    for case in golden.cases:
        for name, value in case.demographics.items():
            assert isinstance(value, str) and name.strip() and nfc(name) == name
            assert nfc(value) == value
        for raters in case.ratings.values():
            assert all(isinstance(r, str) and r.strip() for r in raters)
        if case.retired_at is not None:
            assert date.fromisoformat(case.retired_at[:10]) <= date.today()
        texts = [case.id, case.input_text, case.source, *case.demographics.values()]
        texts += [reason for reason in case.xfail.values()]
        assert all(unsafe_character(t) is None for t in texts)


@FUZZ
@given(spots=st.lists(st.tuples(st.sampled_from(_SPOTS), _VALUES), min_size=1, max_size=3))
def test_any_case_file_loads_safely_or_is_one_sentence_naming_it(
    tmp_path: Path, pristine: dict[str, str], spots: list[tuple[tuple[str, str, str], str]]
) -> None:
    root = tmp_path / f"fuzz-{time.monotonic_ns()}" / "cases"
    files = dict(pristine)
    for (name, line, template), value in spots:
        files[name] = files[name].replace(line, template.format(value=value), 1)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    started = time.monotonic()
    try:
        _check_loaded(root)
    except GoldenSetError as refused:
        message = str(refused)
        assert "\n" not in message and message.endswith("."), message
        assert message.startswith("cases/"), message
    assert time.monotonic() - started < LOAD_BOUND_S


# -------------------------------------------------------------------------------------------
# Scorer answers
# -------------------------------------------------------------------------------------------

_ANY_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["\x00", "\ud83d", "\x1b[2K\rPASSED", f"key {SECRET}.", "x" * 30_000]),
)
_NUMBERS = st.one_of(
    st.integers(-3, 9),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)
_SCORES = st.builds(
    CriterionScore,
    criterion=st.one_of(st.sampled_from(RUBRIC.criterion_names), st.text(max_size=8)),
    score=_NUMBERS,
    rationale=_ANY_TEXT,
    evidence=st.one_of(st.lists(_ANY_TEXT, max_size=3).map(tuple), st.just(None)),
    confidence=_NUMBERS,
)
_ANSWERS = st.one_of(
    st.lists(_SCORES, max_size=4),
    st.builds(
        ScoreOutcome,
        scores=st.lists(_SCORES, max_size=4),
        attempts=_NUMBERS,
        served_model=st.one_of(st.none(), _ANY_TEXT),
        prompt_tokens=_NUMBERS,
        completion_tokens=_NUMBERS,
        raw=_ANY_TEXT,
        errors=st.one_of(
            st.dictionaries(_ANY_TEXT, st.one_of(_ANY_TEXT, st.none()), max_size=2), st.none()
        ),
    ),
    st.none(),
    _ANY_TEXT,
    st.integers(),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_RAISED = st.one_of(
    st.none(),
    st.builds(ScorerError, _ANY_TEXT, _ANY_TEXT),
    st.builds(RuntimeError, _ANY_TEXT),
    st.builds(ValueError, _ANY_TEXT),
    st.just(TimeoutError()),
)


def _texts_of(result: JobResult) -> list[str]:
    texts = [result.raw, result.served_model or "", *result.errors, *result.errors.values()]
    for score in result.scores:
        texts += [score.rationale, *score.evidence]
    return texts


@pytest.fixture
def secret() -> Iterator[str]:
    held = remember(SECRET)
    yield SECRET
    forget(held)


@pytest.fixture
def run_log(store_url: str) -> Iterator[tuple[Store, RunLog]]:
    with Store.open(store_url) as store:
        run_id = store.start_run(
            identity=make_identity(),
            rubric_id=RUBRIC.id,
            golden_sha="g" * 64,
            plugin_version="0",
            vcs_commit=None,
        )
        log = RunLog(store, RUBRIC)
        log.attach(run_id)
        yield store, log


@FUZZ
@given(answer=_ANSWERS, raised=_RAISED)
def test_any_scorer_answer_is_made_safe_and_every_row_is_stored(
    secret: str,
    run_log: tuple[Store, RunLog],
    answer: object,
    raised: BaseException | None,
) -> None:
    store, log = run_log
    variant = f"fuzz-{time.monotonic_ns()}"
    job = ScoringJob("cc-001", variant, 0, "text", "s" * 64)
    result = result_of(
        job, RUBRIC, answer=answer, error=raised, started=time.perf_counter(), timeout=1.0
    )
    for text in _texts_of(result):
        assert isinstance(text, str)
        assert unsafe_character(text) is None
        assert len(text) <= MAX_ANSWER_CHARS + 60
        assert not re.search(rf"(?<![A-Za-z0-9]){secret}(?![A-Za-z0-9])", text)
    assert all(isinstance(n, int) and n >= 0 for n in (result.prompt_tokens, result.attempts))
    for criterion in RUBRIC.criterion_names:  # each criterion has a score or says why not
        assert (criterion in result.by_criterion) != (result.error_for(criterion) is not None)
    log.queue(result)
    log.flush(force=True)
    stored = [row for row in store.scores(log.run_id or 0) if row.variant_key == variant]
    assert len(stored) == len(RUBRIC.criteria)  # no row lost, on either backend


# -------------------------------------------------------------------------------------------
# Server bodies
# -------------------------------------------------------------------------------------------

_JSONISH = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10), st.just(SECRET)
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_BODIES = st.one_of(
    st.binary(max_size=200),
    _JSONISH.map(lambda v: json.dumps(v).encode()),
    st.integers(0, 400).map(
        lambda n: json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
            }
        ).encode()[:n]
    ),
)
_REPLIES = st.one_of(
    st.builds(
        Reply,
        status=st.sampled_from([200, 200, 400, 401, 404, 429, 500, 502, 503]),
        raw_body=_BODIES,
        content_type=st.sampled_from(["application/json", "text/html", "text/plain"]),
    ),
    st.builds(
        Reply,
        status=st.sampled_from([400, 401, 403, 429, 500]),
        error_message=st.one_of(_ANY_TEXT, st.just("Incorrect API key provided: {key}.")),
        echoes_key=st.just(True),
        headers=st.sampled_from([{}, {"Retry-After": "nan"}, {"retry-after-ms": "inf"}]),
    ),
    st.builds(Reply, content=st.one_of(_ANY_TEXT, _JSONISH.map(json.dumps))),
    st.builds(
        Reply,
        fields=st.fixed_dictionaries(
            {
                "<all>": st.dictionaries(
                    st.sampled_from(["score", "rationale", "evidence", "confidence"]),
                    _JSONISH,
                    max_size=3,
                )
            }
        ),
        finish_reason=st.sampled_from(["stop", "length", "content_filter", "weird"]),
        usage=st.one_of(st.none(), st.tuples(st.integers(-5, 5), st.integers(-5, 5))),
    ),
)


@pytest.fixture(scope="module")
def chat() -> Iterator[ChatServer]:
    with ChatServer(api_key="server-side-key") as server:
        yield server


@FUZZ
@given(reply=_REPLIES)
def test_any_server_body_is_an_answer_or_one_sentence_and_echoes_no_key(
    chat: ChatServer, secret: str, reply: Reply
) -> None:
    from pytest_screeneval.scoring.openai.options import OpenAISettings
    from pytest_screeneval.scoring.openai.scorer import make_scorer

    chat.api_key = None  # every body reaches the client; a 401 is scripted when wanted
    chat.enqueue(reply)
    settings_ = OpenAISettings(
        model="m",
        base_url=chat.base_url,
        max_retries=0,
        timeout_s=5.0,
        stop_after_failures=0,
        response_format="json_schema",
    )
    scorer = make_scorer(RUBRIC, settings_, environ={"SCREENEVAL_OPENAI_API_KEY": secret})
    started = time.perf_counter()
    answer: Any = None
    error: BaseException | None = None
    try:
        answer = asyncio.run(scorer.score("Analyst at Harbourline Foods since 2019.", RUBRIC))
    except (ScorerError, ScreenevalError) as raised:
        error = raised
        message = raised.reason if isinstance(raised, ScorerError) else str(raised)
        assert message and "Traceback" not in message
    assert time.perf_counter() - started < CALL_BOUND_S
    if isinstance(error, ScorerUnavailable):  # stops the run with its sentence
        assert not re.search(rf"(?<![A-Za-z0-9]){secret}(?![A-Za-z0-9])", str(error))
        return
    job = ScoringJob("cc-001", "", 0, "text", "s" * 64)
    result = result_of(job, RUBRIC, answer=answer, error=error, started=started, timeout=5.0)
    for text in _texts_of(result):
        assert unsafe_character(text) is None
        assert not re.search(rf"(?<![A-Za-z0-9]){secret}(?![A-Za-z0-9])", text), text
