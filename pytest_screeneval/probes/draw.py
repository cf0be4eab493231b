"""Perturbation examples drawn up front: the same texts the item's Hypothesis search will meet.

A perturbation item searches with Hypothesis, seeded by its case id and kind (not by the test
function's source, which changes whenever the code does). Drawing with the same seed and the same
settings, before any call is made, gives exactly the examples the search generates until its
first failure, so the session can queue them with everything else and score them concurrently;
the search then finds them answered. Only shrinking after a failure asks for new texts.

Pure module: Hypothesis, no pytest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from pytest_screeneval.probes.perturb import Perturbation, perturbations

__all__ = ["draw_case", "draw_texts", "perturbation_seed", "search"]


def perturbation_seed(case_id: str, kind: str) -> int:
    """A stable seed per (case, kind): the same examples in every run and every process."""
    digest = hashlib.sha256(f"{case_id}\x00{kind}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def search(
    case_id: str,
    kind: str,
    text: str,
    examples: int,
    judge: Callable[[Perturbation], None],
    *,
    shrink: bool,
) -> None:
    """Run the Hypothesis search of one (case, kind): ``judge`` raises on a failing example."""
    from hypothesis import HealthCheck, Phase, given, seed
    from hypothesis import settings as hypothesis_settings

    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)

    @hypothesis_settings(
        max_examples=max(1, examples),
        derandomize=False,  # seeded below, by case and kind
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
        phases=phases,
    )
    @seed(perturbation_seed(case_id, kind))
    @given(perturbations(kind, text))
    def check(perturbation: Any) -> None:
        judge(perturbation)

    # Without a database the key is never used, but Hypothesis would still derive it from the
    # test's source (inspect + tokenize: a quarter of a search's time). Its own attribute for a
    # key given up front; should it ever be renamed, the key is derived again, nothing else.
    check._hypothesis_internal_database_key = b"screeneval-no-database"  # type: ignore[attr-defined]
    check()


def draw_texts(case_id: str, kind: str, text: str, examples: int) -> list[str]:
    """The perturbed texts the search of (case, kind) generates, in order, duplicates kept."""
    drawn: list[str] = []
    search(case_id, kind, text, examples, lambda p: drawn.append(p.apply(text)), shrink=False)
    return drawn


def draw_case(
    case_id: str, kinds: Sequence[str], text: str, examples: int
) -> list[tuple[str, list[str]]]:
    """Every kind's drawn texts for one case, in the order of ``kinds`` (picklable: a worker
    process runs it)."""
    return [(kind, draw_texts(case_id, kind, text, examples)) for kind in kinds]
