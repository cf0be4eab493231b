"""A stochastic screener to test noise handling with: the keyword scorer plus seeded noise.

Like a served LLM grader, it moves between adjacent rubric levels from one call to the next:

* ``flip``: each criterion independently moves one level up or down with this probability
  (inward when it sits on the scale's edge; every variant of a text gets the same noise law,
  so the noise adds no gap between variants);
* ``shift``: with this probability a whole call is one level harsher or kinder on every
  criterion (clamped to the scale);
* ``jump``: with this probability a whole call is two levels harsher or kinder on every
  criterion (clamped): a heavier tail than ``shift``;
* optional bias: texts naming one of ``bias_names`` are read ``bias_levels`` lower on the first
  ``bias_criteria`` criteria of the rubric (the bundled rubric: python and cloud, 11 points), or
  on the criteria named in ``bias_only`` (``cloud`` alone: 5 points).

Calls run concurrently, so the random stream cannot follow the call order: each answer is drawn
from a generator seeded by (seed, the text's sha256, how many times this scorer has scored that
text). A run is reproducible whatever the scheduling. Parameters come from the factory's keyword
arguments, else from environment variables (so ``pytester`` and the benchmark can choose)::

    SCREENEVAL_NOISE_FLIP=0.1 SCREENEVAL_NOISE_SEED=7 \\
        pytest --screeneval -o screeneval_scorer=examples.noisy_scorer:make_scorer

``SCREENEVAL_NOISE_SHIFT``, ``SCREENEVAL_NOISE_JUMP``, ``SCREENEVAL_NOISE_BIAS_NAMES``
(comma-separated), ``SCREENEVAL_NOISE_BIAS_CRITERIA`` (default 2), ``SCREENEVAL_NOISE_BIAS_ONLY``
(comma-separated criteria) and ``SCREENEVAL_NOISE_BIAS_LEVELS`` (default 1) set the rest.
"""

from __future__ import annotations

import os
import random
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from pytest_screeneval import CriterionScore, Rubric
from pytest_screeneval.golden.model import sha256_text
from pytest_screeneval.scoring.keyword import KeywordScorer

__all__ = ["NoisyScorer", "make_scorer"]


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    return float(raw) if raw else default


class NoisyScorer:
    def __init__(
        self,
        rubric: Rubric,
        *,
        flip: float = 0.1,
        shift: float = 0.0,
        seed: int = 0,
        bias_names: Sequence[str] = (),
        bias_criteria: int = 2,
        bias_levels: int = 1,
        jump: float = 0.0,
        bias_only: Sequence[str] = (),
    ) -> None:
        self.reference = KeywordScorer(rubric)
        self.flip, self.shift, self.seed, self.jump = flip, shift, seed, jump
        self.bias_names = tuple(bias_names)
        chosen = tuple(bias_only) or tuple(rubric.criterion_names[:bias_criteria])
        self.biased = chosen if self.bias_names else ()
        self.bias_levels = bias_levels
        label = f"flip {flip:g}, shift {shift:g}, jump {jump:g}, seed {seed}"
        if self.bias_names:
            label += (
                f", bias -{bias_levels} on {', '.join(self.biased)} for {len(bias_names)} names"
            )
        self.identity = replace(
            self.reference.identity,
            name="noisy-example",
            model_id="keyword-v1-noisy",
            prompt_sha=sha256_text(f"{KeywordScorer.PROMPT} / noisy example: {label}"),
            temperature=1.0,
        )
        self._calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _random_for(self, text: str) -> random.Random:
        sha = sha256_text(text)
        with self._lock:
            count = self._calls[sha]
            self._calls[sha] += 1
        return random.Random(f"{self.seed}:{sha}:{count}")

    def score(self, text: str, rubric: Rubric) -> Sequence[CriterionScore]:
        answers = list(self.reference.score(text, rubric))
        rng = self._random_for(text)
        low, high = rubric.scale.min, rubric.scale.max
        levels = {a.criterion: a.score for a in answers}
        if self.bias_names and any(name in text for name in self.bias_names):
            for name in self.biased:
                levels[name] = max(low, levels[name] - self.bias_levels)
        for name, level in levels.items():
            if rng.random() < self.flip:
                step = rng.choice((-1, 1))
                if not low <= level + step <= high:
                    step = -step
                levels[name] = level + step
        if rng.random() < self.shift:
            step = rng.choice((-1, 1))
            levels = {name: min(high, max(low, level + step)) for name, level in levels.items()}
        if self.jump and rng.random() < self.jump:
            step = rng.choice((-2, 2))
            levels = {name: min(high, max(low, level + step)) for name, level in levels.items()}
        return [replace(a, score=levels[a.criterion]) for a in answers]


def make_scorer(rubric: Rubric, **overrides: object) -> NoisyScorer:
    """Parameters from ``overrides``, else the ``SCREENEVAL_NOISE_*`` environment variables."""
    names = os.environ.get("SCREENEVAL_NOISE_BIAS_NAMES", "")
    settings: dict[str, object] = {
        "flip": _env_float("SCREENEVAL_NOISE_FLIP", 0.1),
        "shift": _env_float("SCREENEVAL_NOISE_SHIFT", 0.0),
        "seed": int(_env_float("SCREENEVAL_NOISE_SEED", 0)),
        "bias_names": tuple(n.strip() for n in names.split(",") if n.strip()),
        "bias_criteria": int(_env_float("SCREENEVAL_NOISE_BIAS_CRITERIA", 2)),
        "bias_levels": int(_env_float("SCREENEVAL_NOISE_BIAS_LEVELS", 1)),
        "jump": _env_float("SCREENEVAL_NOISE_JUMP", 0.0),
        "bias_only": tuple(
            c.strip()
            for c in os.environ.get("SCREENEVAL_NOISE_BIAS_ONLY", "").split(",")
            if c.strip()
        ),
    }
    settings.update(overrides)
    return NoisyScorer(rubric, **settings)  # type: ignore[arg-type]
