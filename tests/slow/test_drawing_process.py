"""Perturbation examples drawn in a worker process (session.drawing) are the texts, in the same
order, that the inline drawer and the items' own Hypothesis searches generate (the inline drawer
alone is tests/unit/test_drawing.py)."""

from __future__ import annotations

from support.drawing import draw_requests, take_everything

from pytest_screeneval.probes.draw import draw_texts
from pytest_screeneval.session.drawing import ExampleDrawer


def test_a_worker_process_draws_what_the_searches_generate() -> None:
    requests = draw_requests()
    in_worker = ExampleDrawer(requests, process_from=1)
    inline = ExampleDrawer(requests, process_from=10**9)
    assert not in_worker.in_process and inline.in_process
    last = requests[-1].case_id
    drawn = take_everything(in_worker, last)
    assert drawn == take_everything(inline, last)
    expected = [
        (r.case_id, kind, draw_texts(r.case_id, kind, r.text, r.examples))
        for r in requests
        for kind in r.kinds
    ]
    assert drawn == expected
    assert all(texts for _case, _kind, texts in drawn)
