"""Perturbation examples drawn in a worker process (session.drawing) are the texts, in the same
order, that the inline drawer and the items' own Hypothesis searches generate (the inline drawer
alone is tests/unit/test_drawing.py)."""

from __future__ import annotations

from support.golden_factory import make_case

from pytest_screeneval.probes.draw import draw_texts
from pytest_screeneval.probes.perturb import PERTURBATION_KINDS
from pytest_screeneval.session.drawing import DrawRequest, ExampleDrawer


def _requests() -> list[DrawRequest]:
    cases = [make_case(f"dr-{i:03d}") for i in range(4)]
    return [DrawRequest(c.id, PERTURBATION_KINDS, c.input_text, 3) for c in cases]


def _everything(drawer: ExampleDrawer, last: str) -> list[tuple[str, str, list[str]]]:
    try:
        return list(drawer.take(through=last))
    finally:
        drawer.close()


def test_a_worker_process_draws_what_the_searches_generate() -> None:
    requests = _requests()
    in_worker = ExampleDrawer(requests, process_from=1)
    inline = ExampleDrawer(requests, process_from=10**9)
    assert not in_worker.in_process and inline.in_process
    last = requests[-1].case_id
    drawn = _everything(in_worker, last)
    assert drawn == _everything(inline, last)
    expected = [
        (r.case_id, kind, draw_texts(r.case_id, kind, r.text, r.examples))
        for r in requests
        for kind in r.kinds
    ]
    assert drawn == expected
    assert all(texts for _case, _kind, texts in drawn)
