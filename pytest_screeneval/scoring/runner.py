"""Resolving a scorer and running it: bounded concurrency, a timeout, a latency per call.

A refusal, an unparseable answer, a missing or unknown criterion, or a score off the scale is an
error recorded on the row with the scorer's raw reason: never retried here, never replaced by a
default. Built-in scorers that talk to a service count their own transport retries and report
them as ``attempts``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.protocol import (
    CriterionScore,
    ScoreOutcome,
    Scorer,
    ScorerError,
    ScorerUnavailable,
    errors_with_raw,
)

__all__ = [
    "JobResult",
    "ScoringJob",
    "load_scorer_factory",
    "run_jobs",
    "validate_scores",
]

BUILTIN_SCORERS = {
    "keyword": "pytest_screeneval.scoring.keyword:make_scorer",
    "openai": "pytest_screeneval.scoring.openai.scorer:make_scorer",
}


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

    def error_for(self, criterion: str) -> str | None:
        return self.errors.get(criterion) or self.errors.get("*")


def load_scorer_factory(spec: str) -> Callable[..., Scorer]:
    """Resolve ``keyword``, ``openai`` or ``package.module:factory`` to a callable."""
    target = BUILTIN_SCORERS.get(spec, spec)
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ScreenevalError(
            f"The scorer {spec!r} is neither a built-in ({', '.join(BUILTIN_SCORERS)}) nor "
            "'package.module:factory'."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ScreenevalError(
            f"The scorer module {module_name!r} cannot be imported: {exc}."
        ) from None
    # the user's module is not type-checked with ours: whatever is there is checked right here
    factory: Callable[..., Scorer] | None = getattr(module, attr, None)
    if not callable(factory):
        raise ScreenevalError(f"The scorer factory {attr!r} is not a callable in {module_name!r}.")
    return factory


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
        else:
            usable[item.criterion] = item
    for name in rubric.criterion_names:
        if name not in usable and name not in errors:
            errors[name] = f"the scorer returned no score for {name!r}"
    return usable, errors


async def _call(scorer: Scorer, text: str, rubric: Rubric, timeout: float) -> object:
    method = scorer.score
    if inspect.iscoroutinefunction(method):
        return await asyncio.wait_for(method(text, rubric), timeout)
    result = await asyncio.wait_for(_in_daemon_thread(method, text, rubric), timeout)
    if inspect.isawaitable(result):
        return await asyncio.wait_for(result, timeout)
    return result


def _in_daemon_thread(function: Callable[..., object], *args: object) -> asyncio.Future[object]:
    """Run a blocking scorer call in a daemon thread and hand its answer to the loop.

    Not ``asyncio.to_thread``: its pool is joined when the run ends, so a call that hangs past
    its timeout would still hold the session (and Ctrl-C) until it returned on its own.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[object] = loop.create_future()

    def settle(outcome: object, error: BaseException | None) -> None:
        if future.done():
            return  # timed out or cancelled: nobody waits for this answer any more
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(outcome)

    def work() -> None:
        try:
            outcome, error = function(*args), None
        except BaseException as exc:  # handed to the loop, which raises it in the caller
            outcome, error = None, exc
        # a closed loop: the run ended while this call was still out, nobody waits for it
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, outcome, error)

    threading.Thread(target=work, name="screeneval-scorer-call", daemon=True).start()
    return future


async def _score_one(scorer: Scorer, job: ScoringJob, rubric: Rubric, timeout: float) -> JobResult:
    started = time.perf_counter()
    try:
        answer = await _call(scorer, job.text, rubric, timeout)
    except ScorerUnavailable:
        raise  # the scorer cannot work at all: the session stops the run with this sentence
    except ScorerError as exc:
        # "*" for summaries; per criterion, the raw answer once (issue 13, item 3)
        names = rubric.criterion_names
        errors = {"*": exc.reason} | errors_with_raw(
            dict.fromkeys(names, exc.reason), exc.raw, names
        )
        return JobResult(
            job,
            (),
            errors,
            _ms(started),
            exc.attempts,
            exc.served_model,
            exc.prompt_tokens,
            exc.completion_tokens,
            exc.raw,
        )
    except TimeoutError:
        return JobResult(job, (), {"*": f"the scorer took longer than {timeout:g} s"}, _ms(started))
    except Exception as exc:
        return JobResult(
            job, (), {"*": f"the scorer raised {type(exc).__name__}: {exc}"}, _ms(started)
        )
    outcome = answer if isinstance(answer, ScoreOutcome) else ScoreOutcome(scores=answer)  # type: ignore[arg-type]
    usable, errors = validate_scores(outcome.scores, rubric)
    errors.update(outcome.errors)  # the scorer's own reason for each criterion it could not score
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
    )


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


async def _run_async(
    scorer: Scorer,
    rubric: Rubric,
    jobs: Sequence[ScoringJob],
    concurrency: int,
    timeout: float,
    on_result: Callable[[JobResult], None],
) -> list[JobResult]:
    limit = asyncio.Semaphore(concurrency)
    results: list[JobResult] = []

    async def guarded(job: ScoringJob) -> None:
        async with limit:
            result = await _score_one(scorer, job, rubric, timeout)
        results.append(result)
        on_result(result)

    tasks = [asyncio.ensure_future(guarded(job)) for job in jobs]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    return results


def run_jobs(
    scorer: Scorer,
    rubric: Rubric,
    jobs: Sequence[ScoringJob],
    *,
    concurrency: int,
    timeout: float,
    on_result: Callable[[JobResult], None] = lambda result: None,
) -> list[JobResult]:
    """Score every job with at most ``concurrency`` calls in flight; ``on_result`` sees each."""
    if not jobs:
        return []
    return asyncio.run(_run_async(scorer, rubric, jobs, concurrency, timeout, on_result))
