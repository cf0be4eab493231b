"""What a scorer call is and what it becomes: the job, its result, the checks on an answer.

Pure module (no event loop, no threads): the runner (``scoring.runner``) sends the calls; this
turns each answer, or what the scorer raised, into a ``JobResult``. A refusal, an unparseable
answer, a missing or unknown criterion, or a score off the scale is an error recorded on the row
with the scorer's raw reason: never retried here, never replaced by a default.

:func:`result_of` is also the boundary for scorer text: every result it returns has passed
:func:`safe_result` (no lone surrogate, NUL or control character, every text bounded, no known
secret), so the store, the reports and the terminal only ever see an answer made safe once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from pytest_screeneval.boundary.numbers import is_finite_number
from pytest_screeneval.boundary.secrets import redact
from pytest_screeneval.boundary.text import MAX_ANSWER_CHARS, bounded, clean_text, nfc
from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.protocol import (
    CriterionScore,
    ScoreOutcome,
    ScorerError,
    ScorerIdentity,
    ScorerUnavailable,
    errors_with_raw,
)

__all__ = [
    "MAX_EVIDENCE_QUOTES",
    "JobResult",
    "ScoringJob",
    "result_of",
    "safe_identity",
    "safe_result",
    "safe_text",
    "validate_scores",
]

# quotes kept per criterion: an answer with a million quotes is still one answer
MAX_EVIDENCE_QUOTES = 50


@dataclass(frozen=True)
class ScoringJob:
    """One text to score: the original case text or a variant, for one repeat."""

    case_id: str
    variant_key: str
    repeat_index: int
    text: str
    input_sha256: str


@dataclass(frozen=True)
class JobResult:
    job: ScoringJob
    scores: Sequence[CriterionScore]
    errors: dict[str, str]  # criterion -> reason; "*" -> the whole answer is unusable
    latency_ms: float
    attempts: int = 1
    served_model: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw: str = ""
    reused_from_run: int | None = None
    cached: bool = False
    by_criterion: dict[str, CriterionScore] = field(default_factory=dict)
    system_fingerprint: str | None = None  # the backend configuration the provider served

    def error_for(self, criterion: str) -> str | None:
        return self.errors.get(criterion) or self.errors.get("*")


def validate_scores(
    answer: Sequence[CriterionScore], rubric: Rubric
) -> tuple[dict[str, CriterionScore], dict[str, str]]:
    """Check a scorer's answer against the rubric: each criterion once, on the scale, as a number.

    Returns the usable scores by criterion and the errors by criterion (``"*"`` when the answer
    as a whole cannot be trusted, e.g. it names a criterion the rubric does not have).
    """
    names = set(rubric.criterion_names)
    usable: dict[str, CriterionScore] = {}
    errors: dict[str, str] = {}
    if isinstance(answer, str | bytes) or not isinstance(answer, Iterable):
        return {}, {
            "*": f"the scorer returned {type(answer).__name__}, not a list of CriterionScore"
        }
    for item in answer:
        if not isinstance(item, CriterionScore):
            return {}, {"*": f"the scorer returned a {type(item).__name__}, not a CriterionScore"}
        if not isinstance(item.criterion, str):
            return {}, {"*": f"the scorer returned a criterion {item.criterion!r}, not a name"}
        if item.criterion not in names and nfc(item.criterion) in names:
            item = replace(item, criterion=nfc(item.criterion))
        if item.criterion not in names:
            return {}, {"*": f"the scorer returned an unknown criterion {item.criterion!r}"}
        if item.criterion in usable or item.criterion in errors:
            errors[item.criterion] = f"the scorer returned {item.criterion!r} twice"
            usable.pop(item.criterion, None)
            continue
        score = item.score
        if isinstance(score, bool) or not isinstance(score, int):
            errors[item.criterion] = f"the scorer returned a non-integer score {score!r}"
        elif not rubric.scale.contains(score):
            errors[item.criterion] = (
                f"the scorer returned {score}, off the scale {rubric.scale.min}..{rubric.scale.max}"
            )
        elif not _is_confidence(item.confidence):
            # NaN compares false with everything: it would slip past the contested-item check
            errors[item.criterion] = (
                f"the scorer returned a confidence of {item.confidence!r} for "
                f"{item.criterion!r}, not a number from 0 to 1"
            )
        else:
            usable[item.criterion] = item
    for name in rubric.criterion_names:
        if name not in usable and name not in errors:
            errors[name] = f"the scorer returned no score for {name!r}"
    return usable, errors


def _is_confidence(value: object) -> bool:
    """None (not given) or a finite number from 0 to 1."""
    if value is None:
        return True
    return is_finite_number(value) and 0 <= value <= 1  # type: ignore[operator]


def _exit_code(error: BaseException) -> str:
    code = getattr(error, "code", None)
    return "" if code is None and not isinstance(error, SystemExit) else repr(code)


def result_of(
    job: ScoringJob,
    rubric: Rubric,
    *,
    answer: object,
    error: BaseException | None,
    started: float,
    timeout: float,
) -> JobResult:
    """The result of one call from the scorer's answer, or from what it raised, made safe
    (:func:`safe_result`).

    Raises ScorerUnavailable (the scorer cannot work at all: the session stops the run with its
    sentence), ScorerInterrupted, and anything that is not an ``Exception`` (SystemExit).
    """
    try:
        result = _result_of(
            job, rubric, answer=answer, error=error, started=started, timeout=timeout
        )
    except Exception as fault:
        if fault is error or isinstance(fault, ScorerUnavailable):
            raise
        # an answer of a shape no check foresaw is still that call's error, not a traceback
        result = JobResult(
            job,
            (),
            {"*": f"the scorer's answer could not be read ({type(fault).__name__}: {fault})"},
            _ms(started),
        )
    return safe_result(result)


def safe_text(text: object, limit: int = MAX_ANSWER_CHARS) -> str:
    """One text from a scorer or a server as it may be stored and shown: text, cleaned of what
    no backend or terminal takes, bounded, without a known secret."""
    return redact(bounded(clean_text(text if isinstance(text, str) else str(text)), limit))


def safe_identity(identity: ScorerIdentity) -> ScorerIdentity:
    """A scorer's identity as the run row records it: its name and model are the scorer's own
    text (a NUL in a name would lose the run row on PostgreSQL)."""
    name, model = safe_text(identity.name, 200), safe_text(identity.model_id, 200)
    if (name, model) == (identity.name, identity.model_id):
        return identity
    return replace(identity, name=name, model_id=model)


def _safe_count(value: object) -> int:
    """A count from a scorer (attempts, tokens): a whole number of at least 0, else 0."""
    return value if is_finite_number(value) and isinstance(value, int) and value >= 0 else 0


def safe_result(result: JobResult) -> JobResult:
    """The result with every text it carries made safe (:func:`safe_text`) and every count a
    whole number: the one gate between a scorer and the store, the reports and the terminal."""

    def clean(score: CriterionScore) -> CriterionScore:
        evidence = score.evidence if isinstance(score.evidence, tuple | list) else ()
        return replace(
            score,
            rationale=safe_text(score.rationale),
            evidence=tuple(safe_text(quote) for quote in evidence[:MAX_EVIDENCE_QUOTES]),
        )

    served = result.served_model
    by_criterion = {key: clean(score) for key, score in result.by_criterion.items()}
    return replace(
        result,
        scores=tuple(by_criterion.get(s.criterion) or clean(s) for s in result.scores),
        errors={
            safe_text(key, 200): safe_text(reason)
            for key, reason in result.errors.items()
            if reason is not None
        },
        raw=safe_text(result.raw),
        served_model=None if served is None else safe_text(served, 200),
        attempts=max(1, _safe_count(result.attempts)),
        prompt_tokens=_safe_count(result.prompt_tokens),
        completion_tokens=_safe_count(result.completion_tokens),
        by_criterion=by_criterion,
    )


def _result_of(
    job: ScoringJob,
    rubric: Rubric,
    *,
    answer: object,
    error: BaseException | None,
    started: float,
    timeout: float,
) -> JobResult:
    if error is not None:
        if isinstance(error, SystemExit | GeneratorExit):
            # a scorer that tries to end the process: the run stops, saying so, and ends as
            # every stopped run does (its summary, its status, its JUnit file)
            raise ScorerUnavailable(
                f"The scorer raised {type(error).__name__}({_exit_code(error)}) while scoring "
                f"case {job.case_id}; a scorer must raise an exception, not end the process, "
                "so the run stops."
            )
        if isinstance(error, ScorerUnavailable) or not isinstance(error, Exception):
            raise error
        if isinstance(error, ScorerError):
            # "*" for summaries; per criterion, the raw answer once
            names = rubric.criterion_names
            errors = {"*": error.reason} | errors_with_raw(
                dict.fromkeys(names, error.reason), error.raw, names
            )
            return JobResult(
                job,
                (),
                errors,
                _ms(started),
                error.attempts,
                error.served_model,
                error.prompt_tokens,
                error.completion_tokens,
                error.raw,
                system_fingerprint=error.system_fingerprint,
            )
        if isinstance(error, TimeoutError):
            return JobResult(
                job, (), {"*": f"the scorer took longer than {timeout:g} s"}, _ms(started)
            )
        return JobResult(
            job, (), {"*": f"the scorer raised {type(error).__name__}: {error}"}, _ms(started)
        )
    outcome = answer if isinstance(answer, ScoreOutcome) else ScoreOutcome(scores=answer)  # type: ignore[arg-type]
    usable, errors = validate_scores(outcome.scores, rubric)
    # the scorer's own reason for each criterion it could not score
    errors.update(
        {str(key): str(reason) for key, reason in dict(outcome.errors or {}).items() if reason}
    )
    return JobResult(
        job,
        tuple(usable.values()),
        errors,
        _ms(started),
        outcome.attempts,
        outcome.served_model,
        outcome.prompt_tokens,
        outcome.completion_tokens,
        outcome.raw,
        by_criterion=usable,
        system_fingerprint=outcome.system_fingerprint,
    )


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
