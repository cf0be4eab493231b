"""The audit report's noise section: the scorer's noise as the run's stored rows show
it, and what confirmation cost. Every re-score is a stored row (a later repeat of its case and
variant), so the figures come from the store, not from the run's memory. Beside the noise, what
the provider served: the system fingerprints of the run's answers, flagged when they changed
within the run or differ from the baseline's."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_screeneval.evidence.noise import estimate_noise
from pytest_screeneval.evidence.served import ServedBackend, served_backend
from pytest_screeneval.golden.model import ORIGINAL, Rubric
from pytest_screeneval.report.html.parts import facts, num, section, table
from pytest_screeneval.store.database import ScoreRow

__all__ = ["noise_document", "noise_html", "served_document", "served_of_rows"]


def noise_document(rows: Sequence[ScoreRow], rubric: Rubric, repeats: int = 1) -> dict[str, Any]:
    """Noise measured from the texts the run answered more than once, and the re-score count."""
    answers: dict[tuple[str, str], dict[int, dict[str, int]]] = defaultdict(dict)
    for row in rows:
        if row.score is not None and row.error is None:
            answers[(row.case_id, row.variant_key)].setdefault(row.repeat_index, {})[
                row.criterion
            ] = row.score
    samples = {
        f"{case}\x00{variant}": [levels for _r, levels in sorted(by_repeat.items())]
        for (case, variant), by_repeat in answers.items()
    }
    noise = estimate_noise(samples, rubric)
    extra = sum(
        1
        for (_case, variant), by_repeat in answers.items()
        for index in by_repeat
        if index >= (repeats if variant == ORIGINAL else 1)
    )
    return noise.as_dict() | {"described": noise.describe(), "extra_answers": extra}


def served_of_rows(
    rows: Sequence[ScoreRow],
    baseline_rows: Sequence[ScoreRow] = (),
    baseline_run_id: int | None = None,
) -> ServedBackend:
    """The fingerprints of a run's stored answers (one per case, variant and repeat, in the
    order they were stored) and of its baseline's."""
    seen: set[tuple[str, str, int]] = set()
    answers: list[tuple[str, str | None]] = []
    for row in rows:
        key = (row.case_id, row.variant_key, row.repeat_index)
        if key not in seen:
            seen.add(key)
            answers.append((row.case_id, row.system_fingerprint))
    baseline = [row.system_fingerprint for row in baseline_rows]
    return served_backend(answers, baseline, baseline_run_id)


def served_document(
    rows: Sequence[ScoreRow],
    baseline_rows: Sequence[ScoreRow] = (),
    baseline_run_id: int | None = None,
) -> dict[str, Any]:
    return served_of_rows(rows, baseline_rows, baseline_run_id).as_dict()


def noise_html(doc: Mapping[str, Any]) -> str:
    noise = doc.get("noise")
    if not noise:  # a document written before the noise was recorded
        return section("noise", "Noise of the scorer", "Not recorded in this document.", "")
    rows = [
        (c["criterion"], c["compared"], num(100 * c["changed_share"]), num(c["mean_abs_delta"], 2))
        for c in noise["criteria"]
        if c["compared"]
    ]
    return section(
        "noise",
        "Noise of the scorer",
        "The same text scored again can come back at another level. A difference is evidence "
        "only beyond that noise: items about to fail on a gap or a shift were re-scored and "
        "failed only when the difference held at 95% confidence; gates are intervals.",
        facts(
            [
                ("Measured", noise["described"]),
                ("Overall SD (points)", num(noise["overall_sd"])),
                ("Extra answers (probe and confirmation)", noise["extra_answers"]),
                *_served_facts(doc.get("served_backend")),
            ]
        ),
        table(
            ["Criterion", "Re-scores", "Changed %", "Mean |Δ| (levels)"],
            rows,
            numeric=(1, 2, 3),
            empty="No text was answered twice.",
        ),
    )


def _served_facts(served: Mapping[str, Any] | None) -> list[tuple[str, object]]:
    """The served backend's facts, beside the noise: a changed backend can move both."""
    if not served:  # a document written before the fingerprints were recorded
        return []
    pairs: list[tuple[str, object]] = [("Served by (system fingerprint)", served["described"])]
    pairs += [("Flag", flag) for flag in served.get("flags") or []]
    return pairs
