"""Requests for the perturbation-example drawer and a way to take all it drew (the drawer's
tests, inline and in a worker process)."""

from __future__ import annotations

from pytest_screeneval.probes.perturb import PERTURBATION_KINDS
from pytest_screeneval.session.drawing import DrawRequest, ExampleDrawer
from support.golden_factory import make_case

__all__ = ["draw_requests", "take_everything"]


def draw_requests() -> list[DrawRequest]:
    cases = [make_case(f"dr-{i:03d}") for i in range(4)]
    return [DrawRequest(c.id, PERTURBATION_KINDS, c.input_text, 3) for c in cases]


def take_everything(drawer: ExampleDrawer, last: str) -> list[tuple[str, str, list[str]]]:
    try:
        return list(drawer.take(through=last))
    finally:
        drawer.close()
