"""Reordering shrinks to one swap of two sections from any start: forty independent searches
for "education before experience", each of which must end on a single swap (a slow repeat of the
unit test of the same name without "from any start"). Invented resume."""

from __future__ import annotations

from hypothesis import find, settings
from support.resumes import SECTIONED_RESUME

from pytest_screeneval.probes.perturb import ReorderSections, perturbations

RESUME = SECTIONED_RESUME

QUIET = settings(database=None, deadline=None)


def test_reorder_shrinks_to_one_swap_from_any_start() -> None:
    # The swaps were once a flatmap (j's range depending on i), and about one
    # search in 15 ended on two swaps forming a 3-cycle. 40 searches would meet it ~19 in 20.
    def education_first(p: object) -> bool:
        text = p.apply(RESUME)  # type: ignore[attr-defined]
        return text.index("Education:") < text.index("EXPERIENCE")

    orders = set()
    for _ in range(40):
        found = find(perturbations("reorder-sections", RESUME), education_first, settings=QUIET)
        assert isinstance(found, ReorderSections)
        orders.add(found.order)
    assert all(sum(i != j for i, j in enumerate(order)) == 2 for order in orders), orders
