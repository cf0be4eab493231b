"""Grounding as fact matching: quantities in any spelling, units, changes in words, facts moved
to another employer, negation by scope, and structured rationales read as plain text."""

from __future__ import annotations

import pytest

from pytest_screeneval.evidence.rationale.flags import UNGROUNDED, rationale_flags
from pytest_screeneval.evidence.rationale.quantities import quantities
from pytest_screeneval.evidence.rationale.structured import plain_text

RESUME = """\
EXPERIENCE
Staff Software Engineer, Quarrystone Logistics (2018-Present)
- Led a group of 8 engineers rebuilding the routing service in Go on Google Kubernetes Engine.
- Raised throughput from 1,200 to 2,400 requests per second by batching writes to PostgreSQL.
- Cut p95 latency from 90 ms to 60 ms.
Software Engineer, Fenwick & Lowe Insurance (2012-2018)
- Built the claims intake API in Java, processing 5,000 claims a day.
- Replaced nightly FTP batches with Kafka streams.
- Mentored 3 graduate developers.
EDUCATION
M.Eng. Software Engineering, University of Calderbrook (2012)
"""


def _ungrounded(rationale: str, criterion: str = "technical_skills") -> bool:
    return UNGROUNDED in rationale_flags(RESUME, criterion, 4, rationale)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("5k, 5,000, five and 5 claims", [5000, 5000, 5, 5]),
        ("£1.5M and 1.5 million and 2.4k", [1_500_000, 1_500_000, 2400]),
        ("a dozen, two dozen, four hundred, a quarter of a million", [12, 24, 400, 250_000]),
        ("twenty-five and over a decade and two decades", [25, 10, 20]),
        ("H-1B, a 2009 B.A. and 22ms", [2009, 22]),
    ],
)
def test_quantities_are_read_as_values_in_any_spelling(text: str, values: list[float]) -> None:
    assert [q.value for q in quantities(text)] == values


@pytest.mark.parametrize(
    "rationale",
    [
        "Technical skills: about 5k claims a day at Fenwick & Lowe, in Java.",
        "Technical skills: he doubled throughput to 2.4k requests per second.",
        "Technical skills: routing rebuilt in Go on GKE by a group of eight engineers.",
        "Technical skills: over a decade of Java and Go, latency cut by a third.",
        "Technical skills: no AWS or Azure is listed, though Kafka streams replaced FTP.",
        '{"criterion": "technical_skills", "score": 4, "why": "Go and Java; Kafka at Fenwick"}',
        "**Technical skills (4/5)**\n- Go rebuild at Quarrystone\n- Kafka streams at Fenwick",
    ],
)
def test_the_same_fact_in_another_form_is_grounded(rationale: str) -> None:
    assert not _ungrounded(rationale), rationale_flags(RESUME, "technical_skills", 4, rationale)


@pytest.mark.parametrize(
    "rationale",
    [
        "Technical skills: about 5k requests per second on the routing service.",  # 5,000 claims
        "Technical skills: he led twelve engineers on the routing rebuild.",
        "Technical skills: two decades of Java and Go.",
        "Technical skills: he halved p95 latency with the PostgreSQL work.",
        "Technical skills: he mentored 3 graduate developers at Quarrystone Logistics.",
        "Technical skills: without doubt the best, having built Flink pipelines.",
        "Technical skills: not only Kafka but also Pulsar in production.",
        '{"criterion": "technical_skills", "score": 4, "rationale": "Go, Rust and Java"}',
    ],
)
def test_a_fact_the_resume_does_not_give_there_is_ungrounded(rationale: str) -> None:
    assert _ungrounded(rationale), rationale


def test_structured_rationales_are_read_as_their_values() -> None:
    assert plain_text('{"criterion": "x", "score": 4, "why": ["Go at Quarrystone"]}') == (
        "Go at Quarrystone."
    )
    assert plain_text('```json\n{"leadership": 4, "because": "8 engineers"}\n```') == (
        "8 engineers."
    )
    assert plain_text("## Leadership: 4\n- **8 engineers**\n1. _Go_ rebuild") == (
        "Leadership: 4\n8 engineers\nGo rebuild"
    )
    assert plain_text("Plain prose stays as it is.") == "Plain prose stays as it is."
