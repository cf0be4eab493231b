"""The JSON answer a model must give for a rubric: its schema, the dialects that ask for it, and
the check of what came back.

The schema is one that grammar-constrained decoders (llama.cpp and the servers built the same
way) actually enforce: they ignore ``minimum``/``maximum``, so the score is an integer ``enum``
of the scale's levels and the confidence an ``enum`` of tenths (or null). Every field is still
checked here: a server may ignore the schema, and a bad field must fail its own criterion with
the raw answer rather than slip into the run, while the answer's other criteria keep their
scores.

Dialects, as servers speak them:

``json_schema``  ``response_format: {"type": "json_schema", ...}`` (OpenAI, Azure, vLLM, Ollama)
``json_object``  ``{"type": "json_object", "schema": ...}`` (llama.cpp's Python server), with the
                 schema also stated in the prompt for servers that only force some JSON
``prompt``       no ``response_format``: the schema is stated in the prompt and the JSON object
                 is read from the text (code fences and chatter around it are tolerated)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_screeneval.boundary.text import nfc
from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.protocol import CriterionScore, ScorerError

__all__ = [
    "CONFIDENCE_STEPS",
    "DIALECTS",
    "SCHEMA_NAME",
    "ParsedAnswer",
    "complete_entries",
    "extract_json_object",
    "parse_answer",
    "parse_cut_off_answer",
    "response_format",
    "response_schema",
    "schema_instruction",
]

SCHEMA_NAME = "screeneval_rubric_scores"
# In the order ``auto`` tries them: the strictest a server accepts wins.
DIALECTS = ("json_schema", "json_object", "prompt")
CONFIDENCE_STEPS = tuple(step / 10 for step in range(11))


def _criterion_schema(rubric: Rubric, description: str) -> dict[str, Any]:
    levels = list(range(rubric.scale.min, rubric.scale.max + 1))
    return {
        "type": "object",
        "description": description,
        "properties": {
            "score": {"type": "integer", "enum": levels},
            "rationale": {"type": "string"},
            "evidence": {"type": "array", "items": {"type": "string"}},
            # Strict mode wants every property required, so "optional" is spelled nullable; an
            # anyOf, because llama.cpp's converter reads a list-valued "type" before an "enum".
            "confidence": {
                "anyOf": [
                    {"type": "number", "enum": list(CONFIDENCE_STEPS)},
                    {"type": "null"},
                ]
            },
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


def response_format(rubric: Rubric, dialect: str = "json_schema") -> dict[str, Any] | None:
    """The Chat Completions ``response_format`` for a rubric in a dialect (None: send none)."""
    if dialect == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {
                "name": SCHEMA_NAME,
                "strict": True,
                "schema": response_schema(rubric),
            },
        }
    if dialect == "json_object":
        return {"type": "json_object", "schema": response_schema(rubric)}
    if dialect == "prompt":
        return None
    raise ValueError(f"unknown response format dialect {dialect!r}")


def schema_instruction(rubric: Rubric) -> str:
    """The schema stated in words, appended to the system message when the server is not told
    it through a strict ``json_schema`` format."""
    levels = ", ".join(str(n) for n in range(rubric.scale.min, rubric.scale.max + 1))
    entry = {"score": rubric.scale.min, "rationale": "...", "evidence": ["..."], "confidence": 0.5}
    example = {name: entry for name in rubric.criterion_names}
    return (
        "Answer with one JSON object and nothing else, no text before or after it. It has "
        f"exactly these keys: {', '.join(rubric.criterion_names)}. Each value is an object "
        f'with "score" (one of the whole numbers {levels}), "rationale" (a string), '
        '"evidence" (a list of verbatim quotes) and "confidence" (0.0 to 1.0 in steps of 0.1, '
        "or null). Shape, with your own values:\n"
        f"{json.dumps(example)}\n"
        "It must validate against this JSON schema:\n"
        f"{json.dumps(response_schema(rubric), separators=(',', ':'))}"
    )


@dataclass(frozen=True)
class ParsedAnswer:
    """The usable criterion scores, in rubric order, and why each other criterion failed."""

    scores: tuple[CriterionScore, ...]
    problems: Mapping[str, str] = field(default_factory=dict)


def extract_json_object(content: str) -> dict[str, Any]:
    """The JSON object in ``content``: the whole text, else the first object inside it (a model
    answering in prose wraps it in code fences or sentences). ScorerError when there is none."""
    try:
        whole = json.loads(content)
    except ValueError as error:
        whole, first_error = None, error
    else:
        if isinstance(whole, dict):
            return whole
        raise ScorerError(
            f"the answer is a JSON {type(whole).__name__}, not an object with one entry per "
            "criterion",
            raw=content,
        )
    decoder = json.JSONDecoder()
    start = content.find("{")
    while start >= 0:
        try:
            found, _end = decoder.raw_decode(content, start)
        except ValueError:
            start = content.find("{", start + 1)
            continue
        if isinstance(found, dict):
            return found
        start = content.find("{", start + 1)
    raise ScorerError(f"the answer is not valid JSON ({first_error})", raw=content)


def parse_answer(content: str, rubric: Rubric) -> ParsedAnswer:
    """Check every criterion of the answer on its own.

    A whole-answer fault (no JSON object, criteria the rubric does not have, which means the
    answer was made for another rubric) raises ScorerError; a fault in one criterion's entry
    (missing, off the scale, a bad confidence) is that criterion's problem only.
    """
    answer = _nfc_keys(extract_json_object(content))
    extra = [str(name) for name in answer if name not in rubric.criterion_names]
    if extra:
        raise ScorerError(
            f"the answer is invalid: criteria the rubric does not have: {', '.join(extra)}",
            raw=content,
        )
    scores: list[CriterionScore] = []
    problems: dict[str, str] = {}
    for name in rubric.criterion_names:
        if name not in answer:
            problems[name] = f"the answer has no entry for criterion {name}"
            continue
        faults: list[str] = []
        score = _criterion(name, answer[name], rubric, faults)
        if score is None:
            problems[name] = "the answer is invalid: " + "; ".join(faults)
        else:
            scores.append(score)
    return ParsedAnswer(tuple(scores), problems)


def complete_entries(content: str) -> dict[str, Any]:
    """The top-level entries of a JSON object that were written out in full before the text
    ends (an answer cut off at the token limit): ``{"a": {...}, "b": {"sco`` gives ``a``."""
    decoder = json.JSONDecoder()
    start = content.find("{")
    entries: dict[str, Any] = {}
    if start < 0:
        return entries
    index = start + 1
    while True:
        index = _skip_space(content, index)
        try:
            key, index = decoder.raw_decode(content, index)
            index = _skip_space(content, index)
            if not isinstance(key, str) or content[index : index + 1] != ":":
                return entries
            value, index = decoder.raw_decode(content, _skip_space(content, index + 1))
        except ValueError:
            return entries
        entries[key] = value
        index = _skip_space(content, index)
        if content[index : index + 1] != ",":
            return entries
        index += 1


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def parse_cut_off_answer(content: str, rubric: Rubric) -> ParsedAnswer:
    """An answer cut off at the token limit: the criteria written out in full before the cut
    keep their scores (each still checked), the rest fail as cut off."""
    entries = _nfc_keys(complete_entries(content))
    scores: list[CriterionScore] = []
    problems: dict[str, str] = {}
    for name in rubric.criterion_names:
        if name not in entries:
            problems[name] = (
                f"the answer was cut off at the token limit before criterion {name} was complete"
            )
            continue
        faults: list[str] = []
        score = _criterion(name, entries[name], rubric, faults)
        if score is None:
            problems[name] = "the answer is invalid: " + "; ".join(faults)
        else:
            scores.append(score)
    return ParsedAnswer(tuple(scores), problems)


def _nfc_keys(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer's criterion names in NFC, as the rubric's are: "Présentation" is one name
    however the server composed its accent."""
    return {nfc(key) if isinstance(key, str) else key: value for key, value in answer.items()}


def _criterion(
    name: str, entry: object, rubric: Rubric, problems: list[str]
) -> CriterionScore | None:
    if not isinstance(entry, Mapping):
        problems.append(f"the entry for {name} is not an object")
        return None
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
    if problems:
        return None
    return CriterionScore(
        criterion=name,
        score=int(score),  # type: ignore[arg-type]
        rationale=str(rationale).strip(),
        evidence=tuple(evidence),
        confidence=None if confidence is None else float(confidence),
    )
