"""What one run is asked to do, beside its settings: the switches and two ini values, one table.

``settings.options.OPTIONS`` are the settings a run is judged by (they are recorded with the run).
``CONTROLS`` are what a person asks of this one invocation: turn the plugin on, accept the run,
reuse scores, only print the plan, stop above a number of calls, price the plan. The plugin
registers both tables and nothing else; ``controls_from`` reads these back as one frozen
:class:`RunControls`, refusing a contradictory combination with one sentence before anything is
scored. Pure module: no pytest import.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pytest_screeneval.errors import ScreenevalError

__all__ = ["CONTROLS", "ControlSpec", "RunControls", "controls_from", "parse_price"]

ControlKind = Literal["switch", "text", "ini"]


@dataclass(frozen=True)
class ControlSpec:
    """One control: a command-line ``switch`` (on or off), a command-line ``text`` value, or an
    ``ini`` value. ``name`` is the argparse dest or the ini name."""

    name: str
    kind: ControlKind
    help: str
    flag: str | None = None
    default: str = ""
    metavar: str | None = None


CONTROLS: tuple[ControlSpec, ...] = (
    ControlSpec(
        "screeneval",
        "switch",
        "Score the golden set, record a run, assert and gate.",
        "--screeneval",
    ),
    ControlSpec(
        "screeneval_accept",
        "switch",
        "Make this run the baseline when it completes with every gate passing.",
        "--screeneval-accept",
    ),
    ControlSpec(
        "screeneval_accepted_by",
        "text",
        "Who accepts the run (required with --screeneval-accept).",
        "--screeneval-accepted-by",
        metavar="NAME",
    ),
    ControlSpec(
        "screeneval_accept_note",
        "text",
        "A note recorded with the acceptance.",
        "--screeneval-accept-note",
        metavar="TEXT",
    ),
    ControlSpec(
        "screeneval_force_accept",
        "switch",
        "Accept despite failed gates or unreviewed crossings (needs a note).",
        "--screeneval-force-accept",
    ),
    ControlSpec(
        "screeneval_reuse",
        "switch",
        "Reuse scores of the latest complete run with the same scorer identity "
        "and input instead of calling the scorer.",
        "--screeneval-reuse",
    ),
    ControlSpec(
        "screeneval_notes",
        "text",
        "Notes stored on the run row.",
        "--screeneval-notes",
        metavar="TEXT",
    ),
    ControlSpec(
        "screeneval_plan",
        "switch",
        "Print the cost plan (texts, calls, tokens, cost) and exit without calling the "
        "scorer or opening a run.",
        "--screeneval-plan",
    ),
    ControlSpec(
        "screeneval_max_calls",
        "ini",
        "Refuse to start a run whose plan makes more scorer calls than this (empty: no limit).",
    ),
    ControlSpec(
        "screeneval_openai_price",
        "ini",
        "INPUT,OUTPUT price per million tokens, for the cost plan's estimate (e.g. 2.5,10).",
    ),
)


@dataclass(frozen=True)
class RunControls:
    """The controls of one invocation, read and checked."""

    accept: bool = False
    accepted_by: str = ""
    accept_note: str = ""
    force_accept: bool = False
    reuse: bool = False
    notes: str = ""
    plan_only: bool = False
    max_calls: int | None = None
    price: tuple[float, float] | None = None


def controls_from(get: Callable[[ControlSpec], object], *, repeat: int) -> RunControls:
    """Read every control but the on-switch (``get`` gives a flag's or an ini's value), and
    refuse a contradictory combination now, not after the whole run has been scored.

    Raises :class:`~pytest_screeneval.errors.ScreenevalError` with one sentence.
    """
    raw = {spec.name: get(spec) for spec in CONTROLS}

    def text(name: str) -> str:
        value = raw[name]
        return "" if value is None else str(value)

    controls = RunControls(
        accept=bool(raw["screeneval_accept"]),
        accepted_by=text("screeneval_accepted_by"),
        accept_note=text("screeneval_accept_note"),
        force_accept=bool(raw["screeneval_force_accept"]),
        reuse=bool(raw["screeneval_reuse"]),
        notes=text("screeneval_notes"),
        plan_only=bool(raw["screeneval_plan"]),
        max_calls=_max_calls(text("screeneval_max_calls")),
        price=parse_price(text("screeneval_openai_price")),
    )
    if controls.accept and not controls.accepted_by.strip():
        raise ScreenevalError(
            "--screeneval-accept needs --screeneval-accepted-by NAME (a name, not blank)."
        )
    if controls.force_accept and not controls.accept_note:
        raise ScreenevalError(
            "--screeneval-force-accept needs --screeneval-accept-note TEXT saying why."
        )
    if controls.reuse and repeat > 1:
        raise ScreenevalError(
            "--screeneval-reuse cannot be combined with --screeneval-repeat: "
            "reused scores would measure nothing about self-consistency."
        )
    return controls


def _max_calls(value: str) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not value.isdigit():
        raise ScreenevalError(f"screeneval_max_calls = {value!r} is not a whole number of calls.")
    return int(value)


def parse_price(value: str, where: str = "screeneval_openai_price") -> tuple[float, float] | None:
    """``INPUT,OUTPUT`` per million tokens (e.g. ``2.5,10``); empty is no price."""
    value = (value or "").strip()
    if not value:
        return None
    parts = [p.strip() for p in value.split(",")]
    try:
        prices = tuple(float(p) for p in parts)
    except ValueError:
        prices = ()
    if len(prices) != 2 or any(p < 0 or math.isnan(p) for p in prices):
        raise ScreenevalError(
            f"{where} = {value!r} is not INPUT,OUTPUT prices per million tokens (e.g. 2.5,10)."
        )
    return prices[0], prices[1]
