"""The optional LLM judge of the rationales, beside the rules (``screeneval_rationale_judge``).

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`. For each (case,
criterion) answer in its scope (``unflagged``: the rules raised neither protected-attribute nor
ungrounded; ``all``), the judge is asked once per store: a verdict stored for the same judge
(model, prompt sha, temperature) and question (resume text, criterion, score, rationale text)
is reused, never asked again. A new judgement is stored with the judge's identity and chained
in the same transaction, whether it found something, nothing, or failed.

Calls go out ahead of the items, as the answers are stored (``ahead``), on one event loop in a
thread of its own, at most ``screeneval_concurrency`` at once; an item waits only for its own
judgement (``evidence``). Store reads and writes stay in the items' thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.verdicts import JudgeEvidence
from pytest_screeneval.golden.model import sha256_text
from pytest_screeneval.scoring.openai.judge import JudgeOutcome, JudgeQuestion
from pytest_screeneval.store.judgements import (
    JudgementKey,
    JudgementRecord,
    find_judgements,
    record_judgement,
)
from pytest_screeneval.store.lifecycle import utc_now

if TYPE_CHECKING:
    from pytest_screeneval.scoring.openai.judge import RationaleJudgeClient
    from pytest_screeneval.settings.options import Settings
    from pytest_screeneval.store.database import Store

__all__ = [
    "JUDGED_FLAGS",
    "JudgeAsk",
    "RationaleJudging",
    "in_scope",
    "open_rationale_judging",
    "rationale_judge_secrets",
]

# the rule flags the judge answers about
JUDGED_FLAGS = frozenset({"protected-attribute", "ungrounded"})
CLOSE_TIMEOUT_S = 5.0
_T = TypeVar("_T")


def in_scope(scope: str, rule_flags: Sequence[str]) -> bool:
    """Whether the judge reads a rationale the rules gave these flags."""
    return scope == "all" or not JUDGED_FLAGS.intersection(rule_flags)


@dataclass(frozen=True)
class JudgeAsk:
    """One answer to judge: its case and resume, criterion, score and rationale."""

    case_id: str
    resume: str
    criterion: str
    score: int
    rationale: str


class _Loop:
    """An event loop in a daemon thread of its own, for the judge's calls."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._serve, name="screeneval-rationale-judge", daemon=True
        )
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coroutine: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def close(self, last: Callable[[], Coroutine[Any, Any, None]]) -> None:
        with contextlib.suppress(Exception):
            self.submit(last()).result(timeout=CLOSE_TIMEOUT_S)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=CLOSE_TIMEOUT_S)
        if not self._thread.is_alive():
            self.loop.close()


class RationaleJudging:
    """The judge's verdicts of one run: asked ahead, stored and chained, reused from the store."""

    def __init__(
        self,
        client: RationaleJudgeClient,
        store: Store,
        scope: str,
        *,
        concurrency: int,
        run_id: Callable[[], int | None],
    ) -> None:
        self.client = client
        self.store = store
        self.scope = scope
        self.concurrency = max(1, concurrency)
        self.run_id = run_id
        self.identity = client.identity
        self.asked = 0  # judgements asked in this run
        self.reused = 0  # verdicts reused from the store
        self.errors = 0  # judgements that failed
        # verdicts the store would not take: they still inform their items, and the summary
        # says how many the audit record lacks, with the store's sentence
        self.unstored = 0
        self.store_error: str | None = None
        # False on an xdist controller: its workers asked (and counted); it only reads the
        # verdicts they stored, for the summary's gate, and never asks the judge itself
        self.asks = True
        self._known: dict[JudgementKey, JudgeEvidence] = {}
        self._pending: dict[JudgementKey, concurrent.futures.Future[JudgeOutcome]] = {}
        self._loop: _Loop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._unavailable: str | None = None
        # the (case, criterion) items of this run: only their answers are asked ahead
        self.selected: set[tuple[str, str]] | None = None

    def counts(self) -> tuple[int, int, int, int]:
        """Verdicts asked, reused from the store, failed, and not stored: sent by an xdist
        worker to its controller, whose summary counts every worker's."""
        return (self.asked, self.reused, self.errors, self.unstored)

    def add_counts(self, counts: tuple[int, int, int, int], store_error: str | None) -> None:
        asked, reused, failed, unstored = counts
        self.asked += asked
        self.reused += reused
        self.errors += failed
        self.unstored += unstored
        self.store_error = store_error or self.store_error

    def wanted(self, case_id: str, criterion: str) -> bool:
        """Whether an item of this run reads the judgement of this answer."""
        return self.selected is None or (case_id, criterion) in self.selected

    @property
    def label(self) -> str:
        return self.identity.label

    def key(self, ask: JudgeAsk) -> JudgementKey:
        return JudgementKey(
            self.identity.model,
            self.identity.prompt_sha,
            self.identity.temperature,
            sha256_text(ask.resume),
            ask.criterion,
            ask.score,
            sha256_text(ask.rationale),
        )

    # ---------------------------------------------------------------- asking

    def ahead(self, asks: Sequence[JudgeAsk]) -> None:
        """Send the judgements these answers need (those not known and not stored yet)."""
        new = {self.key(ask): ask for ask in asks}
        new = {k: a for k, a in new.items() if k not in self._known and k not in self._pending}
        try:
            stored = find_judgements(self.store, list(new))  # one query for the batch
        except ScreenevalError as exc:  # nothing reused: each is asked, and kept if the store is
            self.store_error = str(exc)
            stored = {}
        for key, ask in new.items():
            record = stored.get(key)
            if record is not None:
                self._known[key] = self._evidence(record, cached=True)
                if self.asks:  # a controller's reading is no reuse: its worker counted it
                    self.reused += 1
            elif self.asks:
                self._send(key, ask)

    def _send(self, key: JudgementKey, ask: JudgeAsk) -> None:
        if self._loop is None:
            self._loop = _Loop()
        question = JudgeQuestion(ask.resume, ask.criterion, ask.score, ask.rationale)
        self._pending[key] = self._loop.submit(self._judge(question))

    async def _judge(self, question: JudgeQuestion) -> JudgeOutcome:
        if self._slots is None:  # made on the loop that uses it
            self._slots = asyncio.Semaphore(self.concurrency)
        async with self._slots:
            if self._unavailable is not None:
                return JudgeOutcome(
                    None, self._unavailable, "", None, self.client.response_format or "auto"
                )
            outcome = await self.client.judge(question)
            if outcome.unavailable and outcome.error:
                self._unavailable = outcome.error
            return outcome

    def evidence(self, ask: JudgeAsk) -> JudgeEvidence:
        """The judge's verdict of this answer: known, stored, or asked now and stored."""
        key = self.key(ask)
        known = self._known.get(key)
        if known is not None:
            return known
        if key not in self._pending:
            self.ahead([ask])
            known = self._known.get(key)
            if known is not None:
                return known
            if not self.asks:  # a worker judged it and the store does not have it
                return self._unread(ask, key)
        future = self._pending.pop(key)
        try:
            outcome = future.result()
        except Exception as error:
            outcome = JudgeOutcome(
                None, f"the judge's call did not finish ({type(error).__name__})", "", None, ""
            )
        record = self._record(ask, key, outcome)
        try:
            record = record_judgement(self.store, record)
        except ScreenevalError as exc:
            self.unstored += 1
            self.store_error = str(exc)
        self.asked += 1
        if record.error is not None:
            self.errors += 1
        evidence = self._evidence(record, cached=False)
        self._known[key] = evidence
        return evidence

    def _unread(self, ask: JudgeAsk, key: JudgementKey) -> JudgeEvidence:
        outcome = JudgeOutcome(
            None, "the worker's verdict is not in the store (the store refused it)", "", None, ""
        )
        return self._evidence(self._record(ask, key, outcome), cached=False)

    # ---------------------------------------------------------------- records

    def _record(self, ask: JudgeAsk, key: JudgementKey, outcome: JudgeOutcome) -> JudgementRecord:
        finding = outcome.finding
        return JudgementRecord(
            run_id=self.run_id(),
            case_id=ask.case_id,
            criterion=ask.criterion,
            score=ask.score,
            input_sha256=key.input_sha256,
            rationale_sha256=key.rationale_sha256,
            judge_model=self.identity.model,
            served_model=outcome.served_model,
            prompt_sha=self.identity.prompt_sha,
            temperature=self.identity.temperature,
            response_format=outcome.response_format,
            protected=None if finding is None else finding.protected,
            protected_category="" if finding is None else finding.category,
            protected_phrase="" if finding is None else finding.phrase,
            ungrounded=None if finding is None else finding.ungrounded,
            claim="" if finding is None else finding.claim,
            error=outcome.error or (None if finding else "the judge gave no finding"),
            raw=outcome.raw,
            prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens,
            attempts=outcome.attempts,
            latency_ms=outcome.latency_ms,
            judged_at=utc_now(),
        )

    def _evidence(self, record: JudgementRecord, *, cached: bool) -> JudgeEvidence:
        detail = (
            f'{record.protected_category}: "{record.protected_phrase}"' if record.protected else ""
        )
        error = record.error
        if error is None and (record.protected is None or record.ungrounded is None):
            error = "the stored judgement holds no verdict"
        return JudgeEvidence(
            judge=self.label,
            protected=bool(record.protected),
            protected_finding=detail,
            ungrounded=bool(record.ungrounded),
            claim=record.claim,
            error=error,
            cached=cached,
            served_model=record.served_model,
            judgement_id=record.id,
        )

    def close(self) -> None:
        """Cancel what was not asked for, close the client's connections, stop the loop."""
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()
        if self._loop is not None:
            self._loop.close(self.client.aclose)
            self._loop = None


def rationale_judge_secrets(settings: Settings) -> tuple[str, ...]:
    """The judge's API key (from its own variable) and its endpoint's password: the session
    remembers them before the judge is made, so every sink redacts them."""
    from pytest_screeneval.scoring.redact import judge_secrets

    return judge_secrets(settings.rationale_judge_api_key_env, settings.rationale_judge_base_url)


def open_rationale_judging(
    settings: Settings, store: Store, *, run_id: Callable[[], int | None]
) -> RationaleJudging:
    """The judge ``screeneval_rationale_judge`` names, with its own model, key and limits."""
    from pytest_screeneval.scoring.openai.judge import make_judge

    s = settings
    client = make_judge(
        model=s.rationale_judge_model,
        base_url=s.rationale_judge_base_url,
        api_key_env=s.rationale_judge_api_key_env,
        temperature=s.rationale_judge_temperature,
        timeout_s=s.rationale_judge_timeout,
        max_tokens=s.rationale_judge_max_tokens,
    )
    return RationaleJudging(
        client,
        store,
        s.rationale_judge_scope,
        concurrency=s.rationale_judge_concurrency,
        run_id=run_id,
    )
