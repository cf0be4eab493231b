"""Perturbation examples drawn beside the scoring (session.drawing), inline: taken in request
order and once, and drawn inline when no worker process can start (the worker process itself is
tests/slow/test_drawing_process.py)."""

from __future__ import annotations

import pytest
from support.drawing import draw_requests, take_everything

from pytest_screeneval.probes.perturb import PERTURBATION_KINDS
from pytest_screeneval.session.drawing import ExampleDrawer


def test_what_is_drawn_is_taken_in_request_order_and_only_once() -> None:
    requests = draw_requests()
    drawer = ExampleDrawer(requests, process_from=10**9)
    try:
        # inline, everything is drawn already: a take through the first case yields it all
        taken = [(case, kind) for case, kind, _texts in drawer.take(through=requests[0].case_id)]
        assert taken == [(r.case_id, kind) for r in requests for kind in PERTURBATION_KINDS]
        assert list(drawer.take()) == []
        assert list(drawer.take(through=requests[-1].case_id)) == []
    finally:
        drawer.close()


def test_without_worker_processes_it_draws_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox that cannot start processes (no semaphores) still gets the same examples."""
    from pytest_screeneval.session import worker_process

    def refuse(method: str) -> None:
        raise OSError("[Errno 38] Function not implemented")

    monkeypatch.setattr(worker_process.multiprocessing, "get_context", refuse)
    requests = draw_requests()
    drawer = ExampleDrawer(requests, process_from=1)
    assert drawer.in_process
    expected = take_everything(ExampleDrawer(requests, process_from=10**9), requests[-1].case_id)
    assert take_everything(drawer, requests[-1].case_id) == expected
