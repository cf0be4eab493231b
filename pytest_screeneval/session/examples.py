"""The perturbation examples of a run: drawn beside the scoring, kept for their items, queued.

A part of the session. With ``start`` every example is drawn in a worker process
(``session.drawing``) while the calls go, and each case's are queued in item order as they come;
on an xdist worker, ``draw_case`` draws a case's when its texts are queued. ``texts`` holds what
was drawn for each (case, kind): the perturbation items judge those (``session.fairness``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.golden.model import Case, ItemKind, sha256_text

if TYPE_CHECKING:
    from pytest_screeneval.session.drawing import ExampleDrawer
    from pytest_screeneval.session.scores import ItemNeed, Scores

__all__ = ["PerturbationExamples"]


class PerturbationExamples:
    def __init__(self, cases: Mapping[str, Case], scores: Scores, per_kind: int) -> None:
        self.cases = cases
        self.scores = scores
        self.per_kind = per_kind
        self.drawer: ExampleDrawer | None = None
        # (case, kind) -> the texts drawn for it, as they were queued
        self.texts: dict[tuple[str, str], list[str]] = {}

    def start(self, needs: Sequence[ItemNeed]) -> None:
        """Draw every perturbation example beside the scoring (``session.drawing``); each case's
        are queued in item order as they come (``take``)."""
        kinds_of: dict[str, list[str]] = {}
        for need in needs:
            if need.kind == ItemKind.PERTURBATION:
                kinds_of.setdefault(need.case_id, []).append(need.target)
        if not kinds_of:
            return  # nothing to draw: Hypothesis (a second to import) is not needed
        from pytest_screeneval.session.drawing import DrawRequest, ExampleDrawer

        self.drawer = ExampleDrawer(
            [
                DrawRequest(case_id, tuple(kinds), self.cases[case_id].input_text, self.per_kind)
                for case_id, kinds in kinds_of.items()
            ]
        )
        self.scores.on_wait = self.take
        self.take()

    def take(self, through: str | None = None) -> None:
        """Queue the examples drawn so far (and, ``through`` a case, wait for its)."""
        if self.drawer is None:
            return
        for case_id, kind, texts in self.drawer.take(through):
            self._queue(self.cases[case_id], kind, texts)

    def draw_case(self, case_id: str, needs: Sequence[ItemNeed]) -> None:
        """Queue the perturbation examples this case's items will judge, drawn as they will be."""
        kinds = [
            n.target for n in needs if n.kind == ItemKind.PERTURBATION and n.case_id == case_id
        ]
        if not kinds:
            return  # nothing to draw: Hypothesis (a second to import) is not needed
        from pytest_screeneval.probes.draw import draw_texts

        case = self.cases[case_id]
        for kind in kinds:
            self._queue(case, kind, draw_texts(case.id, kind, case.input_text, self.per_kind))

    def finish(self, *, stopped: bool) -> None:
        """At the end: after a stop draw nothing more; else queue every example still owed."""
        if self.drawer is None:
            return
        if stopped:
            self.drawer.close()
        else:  # every example an item asked for is queued before the last wait
            self.take(through=self.drawer.last_case)

    def close(self) -> None:
        if self.drawer is not None:
            self.drawer.close()

    def _queue(self, case: Case, kind: str, texts: list[str]) -> None:
        """Keep a case's drawn examples of one kind for its item, and queue each for scoring."""
        self.texts[(case.id, kind)] = texts
        for text in texts:
            self.scores.add_text(case, f"perturb:{kind}:{sha256_text(text)[:12]}", text)
