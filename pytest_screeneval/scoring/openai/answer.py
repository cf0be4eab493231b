"""The JSON answer a model must give for a rubric: its schema, and the check of what came back.

The schema goes to the endpoint as a strict structured-output format, and the answer is checked
again here anyway: a compatible server may ignore the schema, and a wrong score must fail its
item with the raw answer rather than slip into the run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.protocol import CriterionScore, ScorerError

__all__ = ["SCHEMA_NAME", "parse_answer", "response_format", "response_schema"]

SCHEMA_NAME = "screeneval_rubric_scores"


def _criterion_schema(rubric: Rubric, description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {
            "score": {
                "type": "integer",
                "minimum": rubric.scale.min,
                "maximum": rubric.scale.max,
            },
            "rationale": {"type": "string"},
            "evidence": {"type": "array", "items": {"type": "string"}},
            # Strict mode wants every property required: "optional" is spelled nullable.
            "confidence": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        },
        "required": ["score", "rationale", "evidence", "confidence"],
        "additionalProperties": False,
    }


def response_schema(rubric: Rubric) -> dict[str, Any]:
    """One required property per criterion, nothing else allowed."""
    return {
        "type": "object",
        "properties": {c.name: _criterion_schema(rubric, c.description) for c in rubric.criteria},
        "required": list(rubric.criterion_names),
        "additionalProperties": False,
    }


def response_format(rubric: Rubric) -> dict[str, Any]:
    """The Chat Completions ``response_format`` for a rubric (strict JSON schema)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": response_schema(rubric)},
    }


def parse_answer(content: str, rubric: Rubric) -> list[CriterionScore]:
    """The criterion scores in ``content``, in rubric order, or a ScorerError naming every fault."""
    try:
        answer = json.loads(content)
    except ValueError as error:
        raise ScorerError(f"the answer is not valid JSON ({error})", raw=content) from None
    if not isinstance(answer, dict):
        raise ScorerError(
            f"the answer is a JSON {type(answer).__name__}, not an object with one entry per "
            "criterion",
            raw=content,
        )
    problems: list[str] = []
    missing = [name for name in rubric.criterion_names if name not in answer]
    if missing:
        problems.append(f"no entry for criterion {', '.join(missing)}")
    extra = [str(name) for name in answer if name not in rubric.criterion_names]
    if extra:
        problems.append(f"criteria the rubric does not have: {', '.join(extra)}")
    scores: list[CriterionScore] = []
    for name in rubric.criterion_names:
        if name in answer:
            score = _criterion(name, answer[name], rubric, problems)
            if score is not None:
                scores.append(score)
    if problems:
        raise ScorerError("the answer is invalid: " + "; ".join(problems), raw=content)
    return scores


def _criterion(
    name: str, entry: object, rubric: Rubric, problems: list[str]
) -> CriterionScore | None:
    if not isinstance(entry, Mapping):
        problems.append(f"the entry for {name} is not an object")
        return None
    found = len(problems)
    score = entry.get("score")
    # bool is an int in Python, and 4.0 is not a whole-number answer either: both are refused.
    if not isinstance(score, int) or isinstance(score, bool):
        problems.append(f"the score for {name} is {json.dumps(score)}, not a whole number")
    elif not rubric.scale.contains(score):
        problems.append(
            f"the score for {name} is {score}, off the scale {rubric.scale.min}..{rubric.scale.max}"
        )
    rationale = entry.get("rationale")
    if not isinstance(rationale, str) or not rationale.strip():
        problems.append(f"the rationale for {name} is empty")
    evidence = entry.get("evidence", [])
    if evidence is None:
        evidence = []
    if not isinstance(evidence, list) or not all(isinstance(q, str) for q in evidence):
        problems.append(f"the evidence for {name} is not a list of quotes")
    confidence = entry.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not math.isfinite(confidence)
        or not 0 <= confidence <= 1
    ):
        problems.append(
            f"the confidence for {name} is {json.dumps(confidence)}, not a number from 0 to 1"
        )
    if len(problems) > found:
        return None
    return CriterionScore(
        criterion=name,
        score=int(score),  # type: ignore[arg-type]
        rationale=str(rationale).strip(),
        evidence=tuple(evidence),
        confidence=None if confidence is None else float(confidence),
    )
