"""The cost plan of a run: what will be scored, the calls, tokens and cost.

Made from the session's queue before the first call (every text is queued and every
perturbation example drawn by then), printed, checked against ``screeneval_max_calls`` and kept
in the run record next to the actuals. Confirmation re-scores depend on the answers, so they are
a bound: the confirmation budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_screeneval.scoring.results import ScoringJob

__all__ = ["JUDGE_TOKEN_RULE", "TOKEN_RULE", "CostPlan", "JudgePlan", "cost_plan", "judge_plan"]

CHARS_PER_TOKEN = 4
PROMPT_OVERHEAD_TOKENS = 400  # the instructions and the rubric sent with every resume
ANSWER_TOKENS_PER_CRITERION = 60  # a score, a rationale of a sentence or two, evidence
TOKEN_RULE = (
    f"{CHARS_PER_TOKEN} characters a token of resume text + {PROMPT_OVERHEAD_TOKENS} for the "
    f"prompt; {ANSWER_TOKENS_PER_CRITERION} answer tokens a criterion"
)
# The rationale judge: its instructions, the criterion, score and rationale with every resume
JUDGE_PROMPT_OVERHEAD_TOKENS = 550
JUDGE_ANSWER_TOKENS = 60  # two booleans, a category, a phrase, a claim
JUDGE_TOKEN_RULE = (
    f"{CHARS_PER_TOKEN} characters a token of resume text + {JUDGE_PROMPT_OVERHEAD_TOKENS} for "
    f"the prompt and rationale; {JUDGE_ANSWER_TOKENS} answer tokens"
)


@dataclass(frozen=True)
class JudgePlan:
    """The rationale judge's calls: at most one per criterion answer (a bound: verdicts stored
    before are reused, and with scope unflagged the rationales the rules flagged are not asked)."""

    model: str
    scope: str
    calls: int
    prompt_tokens: int
    completion_tokens: int

    def line(self) -> str:
        return (
            f"screeneval plan: rationale judge {self.model} (scope {self.scope}): at most "
            f"{self.calls} calls, one per criterion answer (stored verdicts are reused), about "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens "
            f"({JUDGE_TOKEN_RULE}; not in the cost above)"
        )


def judge_plan(model: str, scope: str, texts: Iterable[str]) -> JudgePlan:
    """The judge's plan for these criterion answers (one resume text each)."""
    calls = prompt = 0
    for text in texts:
        calls += 1
        prompt += math.ceil(len(text) / CHARS_PER_TOKEN) + JUDGE_PROMPT_OVERHEAD_TOKENS
    return JudgePlan(model, scope, calls, prompt, calls * JUDGE_ANSWER_TOKENS)


@dataclass(frozen=True)
class CostPlan:
    originals: int
    variants: int
    perturbation_examples: int
    repeats: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # in the price's currency, when screeneval_openai_price is set
    confirm_bound: int | None  # re-scores confirmation may add, at most
    decide_budget: int = 0  # re-scores spent where a fairness gate is INCONCLUSIVE, at most
    judge: JudgePlan | None = None  # the rationale judge's calls, when one is configured

    def as_dict(self) -> dict[str, object]:
        values = asdict(self) | {"token_rule": TOKEN_RULE}
        if self.judge is None:
            values.pop("judge")
        else:
            values["judge"] = asdict(self.judge) | {"token_rule": JUDGE_TOKEN_RULE}
        return values

    def lines(self, price: tuple[float, float] | None) -> list[str]:
        # examples are drawn as the calls go: the plan counts those asked for, a bound
        drawn = self.perturbation_examples
        examples = f"up to {drawn}" if drawn else "0"
        calls = f"at most {self.calls} calls" if drawn else f"{self.calls} calls"
        bound = "unknown" if self.confirm_bound is None else f"at most {self.confirm_bound}"
        cost = (
            f"about {self.cost:.2f} at {price[0]:g} / {price[1]:g} per million tokens in / out"
            if self.cost is not None and price is not None
            else "not estimated (set screeneval_openai_price = INPUT,OUTPUT per million tokens)"
        )
        return [
            f"screeneval plan: {self.originals} originals, {self.variants} variants, "
            f"{examples} perturbation examples, {self.repeats} repeats: {calls}",
            f"screeneval plan: about {self.prompt_tokens} prompt + {self.completion_tokens} "
            f"completion tokens ({TOKEN_RULE}); cost {cost}",
            f"screeneval plan: confirmation re-scores {bound} (they depend on the answers)",
            f"screeneval plan: decide budget {self.decide_budget} calls (re-scores where a "
            "fairness gate is INCONCLUSIVE; screeneval_decide_budget)",
            *([self.judge.line()] if self.judge is not None else []),
        ]


def cost_plan(
    calls: Iterable[ScoringJob],
    criteria: int,
    price: tuple[float, float] | None,
    confirm_bound: int | None,
    *,
    example_texts: Iterable[str] = (),
    decide_budget: int = 0,
    judge: JudgePlan | None = None,
) -> CostPlan:
    """The plan of these queued calls (one job a call; identical texts already shared) and of
    the perturbation examples still to draw: one text per example asked for (the case's text,
    whose size a perturbed copy keeps), a bound, since identical draws are scored once."""
    originals = variants = examples = repeats = prompt = 0
    count = 0
    for text in example_texts:
        count += 1
        examples += 1
        prompt += math.ceil(len(text) / CHARS_PER_TOKEN) + PROMPT_OVERHEAD_TOKENS
    for job in calls:
        count += 1
        if job.variant_key == "":
            if job.repeat_index == 0:
                originals += 1
            else:
                repeats += 1
        elif job.variant_key.startswith("perturb:"):
            examples += 1
        else:
            variants += 1
        prompt += math.ceil(len(job.text) / CHARS_PER_TOKEN) + PROMPT_OVERHEAD_TOKENS
    completion = count * criteria * ANSWER_TOKENS_PER_CRITERION
    cost = None
    if price is not None:
        cost = prompt / 1e6 * price[0] + completion / 1e6 * price[1]
    return CostPlan(
        originals,
        variants,
        examples,
        repeats,
        count,
        prompt,
        completion,
        cost,
        confirm_bound,
        decide_budget,
        judge,
    )
