"""``screeneval judge-check [CORPUS]``: how far a configured rationale judge can be trusted.

It asks the judge (the ``screeneval_rationale_judge_*`` settings, from flags or the ini file
pytest would read) about every rationale of the HELD-OUT part of a labelled rationale corpus
(the even resumes of ``tests/data/rationale_corpus/``, see ``evidence.rationale.corpus``) and
prints, per flag it answers (protected-attribute, ungrounded), its precision and recall with 95%
Wilson intervals, the offline rules' beside it on the same rationales. A judgement that failed is
counted and left out of the figures, never read as "no finding". Nothing is stored.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_screeneval.cli.common import out, table
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.settings.validators import (
    non_negative_int,
    optional_http_url,
    positive_float,
    positive_int,
    temperature,
    text_value,
)

__all__ = ["judge_check", "judge_check_arguments"]

DEFAULT_CORPUS = "tests/data/rationale_corpus"
JUDGED = ("protected-attribute", "ungrounded")
# the judge's settings: flag dest -> (ini name, validator)
_SETTINGS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "model": ("screeneval_rationale_judge_model", text_value),
    "base_url": ("screeneval_rationale_judge_base_url", optional_http_url),
    "api_key_env": ("screeneval_rationale_judge_api_key_env", text_value),
    "temperature": ("screeneval_rationale_judge_temperature", temperature),
    "timeout": ("screeneval_rationale_judge_timeout", positive_float),
    "max_tokens": ("screeneval_rationale_judge_max_tokens", positive_int),
    "concurrency": ("screeneval_rationale_judge_concurrency", positive_int),
}


def judge_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "corpus",
        nargs="?",
        default=DEFAULT_CORPUS,
        metavar="CORPUS",
        help=f"the labelled rationale corpus folder (default: {DEFAULT_CORPUS})",
    )
    parser.add_argument(
        "--model", help="the judge's model id (ini screeneval_rationale_judge_model)"
    )
    parser.add_argument("--base-url", help="the judge's endpoint, ending in /v1")
    parser.add_argument(
        "--api-key-env", help="the environment variable holding the judge's API key"
    )
    parser.add_argument("--temperature", type=temperature, help="the judge's temperature")
    parser.add_argument("--timeout", type=positive_float, help="seconds one request may take")
    parser.add_argument("--max-tokens", type=positive_int, help="most tokens one answer may have")
    parser.add_argument(
        "--limit",
        type=non_negative_int,
        default=0,
        help="ask about the first N held-out rationales only (0: all)",
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        help="judge calls in flight at once (ini screeneval_rationale_judge_concurrency)",
    )


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """Each judge setting: the flag, else the ini value pytest would read, else its default."""
    from pytest_screeneval.cli.locate import find_rootdir
    from pytest_screeneval.settings.options import OPTIONS

    defaults = {spec.name: spec.default for spec in OPTIONS}
    ini = find_rootdir().values
    values: dict[str, Any] = {}
    for dest, (name, parse) in _SETTINGS.items():
        given = getattr(args, dest, None)
        if given is not None:
            values[dest] = parse(given) if isinstance(given, str) else given
            continue
        raw = ini.get(name, "").strip() or defaults[name]
        try:
            values[dest] = parse(raw)
        except argparse.ArgumentTypeError as error:
            raise ScreenevalError(f"The ini value {name} is invalid: {error}.") from None
    return values


def judge_check(args: argparse.Namespace) -> int:
    from pytest_screeneval.boundary.secrets import remember
    from pytest_screeneval.evidence.rationale.corpus import HELD_OUT, load_corpus, score_flags
    from pytest_screeneval.evidence.rationale.flags import ALL_FLAGS, rationale_flags
    from pytest_screeneval.scoring.openai.judge import JudgeQuestion, make_judge
    from pytest_screeneval.scoring.redact import judge_secrets

    folder = Path(args.corpus)
    if not (folder / "corpus.yaml").is_file():
        raise ScreenevalError(
            f"There is no labelled rationale corpus at {folder} (no corpus.yaml): pass the "
            f"corpus folder, e.g. screeneval judge-check path/to/{DEFAULT_CORPUS}."
        )
    values = _settings(args)
    remember(*judge_secrets(values["api_key_env"], values["base_url"]))
    client = make_judge(
        model=values["model"],
        base_url=values["base_url"],
        api_key_env=values["api_key_env"],
        temperature=values["temperature"],
        timeout_s=values["timeout"],
        max_tokens=values["max_tokens"],
    )
    entries = load_corpus(folder, ALL_FLAGS)
    held_out = [e for e in entries if e.split == HELD_OUT]
    if not held_out:
        raise ScreenevalError(f"The rationale corpus at {folder} has no held-out rationales.")
    chosen = held_out[: args.limit] if args.limit else held_out
    limited = f" (the first {len(chosen)} of {len(held_out)}: --limit)" if args.limit else ""
    out(
        f"asking {client.identity.label} at {client.endpoint} about {len(chosen)} held-out "
        f"rationales{limited}"
    )

    async def ask_all() -> list[Any]:
        slots = asyncio.Semaphore(values["concurrency"])

        async def ask(question: JudgeQuestion) -> Any:
            async with slots:
                return await client.judge(question)

        try:
            return await asyncio.gather(
                *(
                    ask(JudgeQuestion(e.input_text, e.criterion, e.score, e.rationale))
                    for e in chosen
                )
            )
        finally:
            await client.aclose()

    outcomes = asyncio.run(ask_all())
    answered = [(e, o) for e, o in zip(chosen, outcomes, strict=True) if o.finding is not None]
    failed = [(e, o) for e, o in zip(chosen, outcomes, strict=True) if o.finding is None]
    served = sorted({o.served_model for o in outcomes if o.served_model})
    out(
        f"judge: model {client.identity.model} (served: {', '.join(served) or 'not said'}), "
        f"prompt sha {client.identity.prompt_sha[:12]}, temperature "
        f"{client.identity.temperature:g}, response format {client.response_format or 'none'}"
    )
    out(
        f"{len(answered)} judged, {len(failed)} failed (left out of the figures, not read as "
        "no finding)"
    )
    for entry, outcome in failed[:5]:
        out(f"  failed {entry.id}: {outcome.error}")
    if len(failed) > 5:
        out(f"  ... and {len(failed) - 5} more")
    if not answered:
        raise ScreenevalError(
            f"The rationale judge answered none of the {len(chosen)} rationales; the first "
            f"failure: {failed[0][1].error}."
        )
    judged_entries = [e for e, _ in answered]
    by_id = {e.id: o.finding.flags for e, o in answered}
    judge_scores = score_flags(judged_entries, JUDGED, by_id)
    rule_scores = score_flags(
        judged_entries,
        JUDGED,
        lambda e: frozenset(
            rationale_flags(e.input_text, e.criterion, e.score, e.rationale, e.evidence)
        ),
    )
    out()
    out(
        f"held-out part: {len(judged_entries)} rationales over "
        f"{len({e.resume_id for e in judged_entries})} resumes; 95% Wilson intervals"
    )
    rows = [_row("judge", score) for score in judge_scores] + [
        _row("rules", score) for score in rule_scores
    ]
    for line in table(
        ("who", "flag", "positives", "tp", "fp", "fn", "precision (95% CI)", "recall (95% CI)"),
        rows,
    ):
        out(line)
    return 0


def _row(who: str, score: Any) -> Sequence[str]:
    low_p, high_p = score.precision_interval
    low_r, high_r = score.recall_interval
    return (
        who,
        score.flag,
        str(score.positives),
        str(score.tp),
        str(score.fp),
        str(score.fn),
        f"{score.precision:.2f} ({low_p:.2f}-{high_p:.2f})",
        f"{score.recall:.2f} ({low_r:.2f}-{high_r:.2f})",
    )
