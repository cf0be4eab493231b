"""Every setting of the plugin in one table: ini name, flag, default, validator, help.

The plugin registers these in one option group; the validators are argparse ``type=`` functions,
so a bad value on the command line and a bad value in the ini file get the same one-sentence
error. Pure module: no pytest import.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_screeneval.settings.validators import (
    boolean,
    call_budget,
    env_name,
    flag_policy,
    fraction,
    judge_choice,
    judge_scope,
    non_negative_float,
    non_negative_int,
    optional_http_url,
    percentage,
    positive_float,
    positive_int,
    source_kind,
    step_summary_policy,
    temperature,
    text_value,
)

__all__ = ["OPTIONS", "OptionSpec", "SettingError", "Settings", "settings_from"]


@dataclass(frozen=True)
class OptionSpec:
    """One setting: read from ``--flag`` if given, else from the ini ``name``, else ``default``.

    ``default`` is the text an ini file would hold ("" for unset); ``type`` parses a text (an
    argparse ``type=``); ``field`` names the settings field it sets where that is not the ini
    name without its ``screeneval_`` prefix (the ``openai`` scorer's own settings).
    """

    name: str
    default: str
    help: str
    type: Callable[[str], Any] = text_value
    flag: str | None = None
    field: str = ""


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "screeneval_cases",
        "cases",
        "Folder of the golden set (rubric.yaml, variants.yaml, "
        "<slice>/<id>.yaml), relative to the rootdir.",
    ),
    OptionSpec(
        "screeneval_source",
        "yaml",
        "Where the golden set comes from: 'yaml' (the folder) or 'db' (the store's active cases).",
        source_kind,
    ),
    OptionSpec(
        "screeneval_db",
        "",
        "SQLAlchemy URL of the run store (default: env SCREENEVAL_DB, "
        "else sqlite:///<rootdir>/.screeneval/screeneval.db).",
        text_value,
        "--screeneval-db",
    ),
    OptionSpec(
        "screeneval_scorer",
        "keyword",
        "The scorer: a built-in name ('keyword', 'openai') "
        "or 'package.module:factory' (called with the rubric).",
        text_value,
        "--screeneval-scorer",
    ),
    OptionSpec(
        "screeneval_concurrency",
        "8",
        "How many scorer calls may be in flight at once: the ceiling of the adaptive concurrency.",
        positive_int,
        "--screeneval-concurrency",
    ),
    OptionSpec(
        "screeneval_adaptive",
        "true",
        "Adapt the concurrency to the provider's rate limit (halved on a 429, paced by its "
        "rate-limit headers, raised again as calls succeed, never above screeneval_concurrency); "
        "false keeps it fixed.",
        boolean,
    ),
    OptionSpec(
        "screeneval_timeout",
        # Above the openai scorer's own bound (240 s a request, 2 retries): a small model on a
        # CPU behind a one-slot server is slow, and its calls queue.
        "900",
        "Seconds one scorer call may take, its own retries included, before it is recorded as "
        "an error.",
        positive_float,
    ),
    OptionSpec(
        "screeneval_repeat",
        "1",
        "Score every input this many times to measure self-consistency.",
        positive_int,
        "--screeneval-repeat",
    ),
    OptionSpec(
        "screeneval_expected_tolerance",
        "1",
        "Largest distance from the expected score that still passes.",
        non_negative_float,
    ),
    OptionSpec(
        "screeneval_movement_tolerance",
        "0",
        "Largest score movement against the baseline that passes without a review.",
        non_negative_float,
    ),
    OptionSpec(
        "screeneval_contested_max_confidence",
        "0.7",
        "Highest confidence a scorer may report on a contested item.",
        fraction,
    ),
    OptionSpec(
        "screeneval_rationale_flags",
        "fail",
        "What a rationale flag other than protected-attribute does to its item: 'fail' or 'warn'.",
        flag_policy,
    ),
    OptionSpec(
        "screeneval_protected_terms",
        "",
        "A YAML file of protected-attribute terms, relative to the rootdir: added to the "
        "built-in list, or replacing it when the file says 'replace: true'.",
    ),
    OptionSpec(
        "screeneval_rationale_judge",
        "",
        "An LLM judge of every rationale beside the rules: 'openai' (any OpenAI-compatible chat "
        "model) or empty for none. Its verdicts are stored, chained and cached.",
        judge_choice,
        "--screeneval-rationale-judge",
    ),
    OptionSpec(
        "screeneval_rationale_judge_model",
        "",
        "The judge's model id; pin a dated snapshot (recorded with each verdict, as served too).",
        text_value,
        "--screeneval-rationale-judge-model",
    ),
    OptionSpec(
        "screeneval_rationale_judge_base_url",
        "",
        "The judge's OpenAI-compatible endpoint ending in /v1 (default: the openai library's).",
        optional_http_url,
        "--screeneval-rationale-judge-base-url",
    ),
    OptionSpec(
        "screeneval_rationale_judge_api_key_env",
        "SCREENEVAL_RATIONALE_JUDGE_API_KEY",
        "The name of the environment variable holding the judge's own API key (never the key).",
        env_name,
    ),
    OptionSpec(
        "screeneval_rationale_judge_temperature",
        "0.0",
        "The judge's sampling temperature, 0 to 2.",
        temperature,
    ),
    OptionSpec(
        "screeneval_rationale_judge_timeout",
        "240",
        "Seconds one judge request may take, waiting in the server's queue included.",
        positive_float,
    ),
    OptionSpec(
        "screeneval_rationale_judge_max_tokens",
        "400",
        "Most tokens one judge answer may have.",
        positive_int,
    ),
    OptionSpec(
        "screeneval_rationale_judge_concurrency",
        "4",
        "How many judge calls may be in flight at once: the judge's own limit, apart from the "
        "scorer's screeneval_concurrency (it is another endpoint, often another provider).",
        positive_int,
    ),
    OptionSpec(
        "screeneval_rationale_judge_scope",
        "unflagged",
        "Which rationales the judge reads: 'unflagged' (those the rules raised neither "
        "protected-attribute nor ungrounded on) or 'all'.",
        judge_scope,
        "--screeneval-rationale-judge-scope",
    ),
    OptionSpec(
        "screeneval_max_agreement_drop",
        "5",
        "Gate: most exact-agreement points a criterion may lose against the baseline.",
        percentage,
    ),
    OptionSpec(
        "screeneval_max_moved_share",
        "10",
        "Gate: most percent of compared items that may move against the baseline.",
        percentage,
    ),
    OptionSpec(
        "screeneval_min_worst_slice",
        "80",
        "Gate: least within-tolerance agreement (%) on the worst slice.",
        percentage,
    ),
    OptionSpec(
        "screeneval_slice_min_n", "5", "Slices with fewer cases are shown, not gated.", positive_int
    ),
    OptionSpec(
        "screeneval_max_case_id_chars",
        "100",
        "Longest case id the golden set may use; longer ones are refused when loading.",
        positive_int,
    ),
    OptionSpec(
        "screeneval_max_input_chars",
        "100000",
        "Largest input_text (characters) a case may have; larger ones are refused when loading.",
        positive_int,
    ),
    OptionSpec(
        "screeneval_max_gap",
        "3",
        "Most overall points the score may move across an attribute's counterfactual values.",
        non_negative_float,
    ),
    OptionSpec(
        "screeneval_max_criterion_gap",
        "0.5",
        "Most levels one criterion's score may differ, systematically, across an attribute's "
        "counterfactual values (below one level: a one-level trade between criteria fails).",
        non_negative_float,
    ),
    OptionSpec(
        "screeneval_max_perturbation_shift",
        "5",
        "Most overall points a perturbation may move the score.",
        non_negative_float,
    ),
    OptionSpec(
        "screeneval_perturbation_examples",
        "10",
        "Hypothesis examples per (case, perturbation kind).",
        non_negative_int,
    ),
    OptionSpec(
        "screeneval_max_self_disagreement",
        "5",
        "Gate: most percent of items whose score differs across repeats.",
        percentage,
    ),
    OptionSpec(
        "screeneval_inconclusive",
        "warn",
        "What an INCONCLUSIVE gate (the evidence neither within nor beyond the limit, given the "
        "scorer's noise) does to the session: 'warn' (shown, exit status kept) or 'fail'.",
        flag_policy,
    ),
    OptionSpec(
        "screeneval_confirm_budget",
        "auto",
        "Most extra scorer calls to spend confirming differences against the scorer's noise "
        "(re-scores); 'auto' is twice the calls the selection plans.",
        call_budget,
    ),
    OptionSpec(
        "screeneval_decide_budget",
        "0",
        "Extra scorer calls to spend where a counterfactual or perturbation gate is "
        "INCONCLUSIVE, on the texts that shrink its interval most, until it decides (0: none).",
        non_negative_int,
    ),
    OptionSpec(
        "screeneval_final_decision_by",
        "a recruiter of the hiring team",
        "Who makes the final decision about a candidate (stated in every report).",
    ),
    OptionSpec(
        "screeneval_store_retry_seconds",
        "20",
        "Seconds a failed score write is retried (with back-off) before its rows go to the "
        "spool beside the store, for `screeneval db recover`.",
        non_negative_float,
    ),
    OptionSpec(
        "screeneval_json",
        "",
        "Write the run's full summary as JSON to this path.",
        text_value,
        "--screeneval-json",
    ),
    OptionSpec(
        "screeneval_markdown",
        "",
        "Write the run's short Markdown summary (verdict, failed and INCONCLUSIVE gates, worst "
        "movements, crossings to review, failed fairness items, chain head) to this path.",
        text_value,
        "--screeneval-markdown",
    ),
    OptionSpec(
        "screeneval_step_summary",
        "auto",
        "'auto': append the Markdown summary to the file $GITHUB_STEP_SUMMARY names, when that "
        "is set (GitHub Actions); 'off': never.",
        step_summary_policy,
        "--screeneval-step-summary",
    ),
)


@dataclass(frozen=True)
class Settings:
    """Every plugin setting, validated. Built once per session."""

    cases: str
    source: str
    db: str
    scorer: str
    concurrency: int
    adaptive: bool
    timeout: float
    repeat: int
    expected_tolerance: float
    movement_tolerance: float
    contested_max_confidence: float
    rationale_flags: str
    protected_terms: str
    rationale_judge: str
    rationale_judge_model: str
    rationale_judge_base_url: str
    rationale_judge_api_key_env: str
    rationale_judge_temperature: float
    rationale_judge_timeout: float
    rationale_judge_max_tokens: int
    rationale_judge_concurrency: int
    rationale_judge_scope: str
    max_agreement_drop: float
    max_moved_share: float
    min_worst_slice: float
    slice_min_n: int
    max_case_id_chars: int
    max_input_chars: int
    max_gap: float
    max_criterion_gap: float
    max_perturbation_shift: float
    perturbation_examples: int
    max_self_disagreement: float
    inconclusive: str
    confirm_budget: int | None
    decide_budget: int
    final_decision_by: str
    store_retry_seconds: float
    json: str
    markdown: str
    step_summary: str


class SettingError(ValueError):
    """A setting has a value its validator refuses; the message names the setting."""


def settings_from(get: Callable[[OptionSpec], object | None]) -> Settings:
    """Build :class:`Settings` from a getter (flag value, else ini value, else None)."""
    values: dict[str, Any] = {}
    for spec in OPTIONS:
        raw = get(spec)
        if raw is None or raw == "":
            raw = spec.default
        try:
            value = spec.type(raw) if isinstance(raw, str) else raw
        except argparse.ArgumentTypeError as exc:
            where = f"{spec.flag} / ini {spec.name}" if spec.flag else f"ini {spec.name}"
            raise SettingError(f"Invalid value for {where}: {exc}.") from None
        values[spec.name.removeprefix("screeneval_")] = value
    return Settings(**values)
