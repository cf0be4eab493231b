"""Perturbation examples drawn up front: the same texts the item's Hypothesis search will meet.

A perturbation item searches with Hypothesis, seeded by its case id and kind (not by the test
function's source, which changes whenever the code does). Drawing with the same seed and the same
settings, before any call is made, gives exactly the examples the search generates until its
first failure, so the session can queue them with everything else and score them concurrently;
the search then finds them answered. Only shrinking after a failure asks for new texts.

The first examples of every search are its stratified ones (``probes.perturb.stratified``: each
kind of edit on its own), then Hypothesis draws the rest. A failing stratified OCR example,
which spreads one kind of edit over the text, is narrowed to the smallest set of its edits that
still fails (delta debugging), as Hypothesis shrinks the examples it draws.

Pure module: Hypothesis, no pytest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from pytest_screeneval.probes.perturb import (
    OcrEdit,
    OcrNoise,
    Perturbation,
    perturbations,
    stratified,
)

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
    """Run the search of one (case, kind): ``judge`` raises on a failing example.

    ``examples`` in all: the stratified first examples, then as many drawn by Hypothesis.
    With ``shrink``, a failure is narrowed to the smallest example that still fails.
    """
    budget = max(1, examples)
    first = stratified(kind, text)[:budget]
    for perturbation in first:
        try:
            judge(perturbation)
        except Exception:
            if shrink and isinstance(perturbation, OcrNoise):
                _fail_smallest(perturbation, judge)
            raise
    if budget > len(first):
        _hypothesis_search(case_id, kind, text, budget - len(first), judge, shrink=shrink)


def _hypothesis_search(
    case_id: str,
    kind: str,
    text: str,
    examples: int,
    judge: Callable[[Perturbation], None],
    *,
    shrink: bool,
) -> None:
    from hypothesis import HealthCheck, Phase, given, seed
    from hypothesis import settings as hypothesis_settings

    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)

    @hypothesis_settings(
        max_examples=examples,
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


# At most this many extra judgements narrow a failing stratified example (each may be a call).
MAX_NARROWING_STEPS = 40


def _fails(judge: Callable[[Perturbation], None], perturbation: Perturbation) -> bool:
    try:
        judge(perturbation)
    except Exception:
        return True
    return False


def _fail_smallest(failing: OcrNoise, judge: Callable[[Perturbation], None]) -> None:
    """Judge the smallest failing subset of ``failing``'s edits, so that its failure is the one
    raised. Found by delta debugging (Zeller's ddmin: parts of the edits, then their
    complements, then finer parts), within ``MAX_NARROWING_STEPS`` judgements. Returns only when
    no smaller example fails, leaving the caller to raise the first failure."""
    edits = failing.edits
    parts, steps = 2, 0
    while len(edits) >= 2 and steps < MAX_NARROWING_STEPS:
        size = -(-len(edits) // parts)
        chunks = [edits[i : i + size] for i in range(0, len(edits), size)]
        complements = [tuple(e for e in edits if e not in c) for c in chunks] if parts > 2 else []
        found: tuple[OcrEdit, ...] | None = None
        for candidate in chunks + complements:
            if steps >= MAX_NARROWING_STEPS:
                break
            steps += 1
            if _fails(judge, OcrNoise(candidate)):
                found = candidate
                break
        if found is not None:
            parts = 2 if len(found) <= size else max(parts - 1, 2)
            edits = found
        elif parts >= len(edits):
            break
        else:
            parts = min(len(edits), parts * 2)
    if edits != failing.edits:
        judge(OcrNoise(edits))  # raises its failure, unless the scorer answers otherwise now


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
