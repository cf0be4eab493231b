"""What the provider served: its system fingerprints over a run, and against the baseline.

Pure: answers in, a plain summary out. A provider's ``system_fingerprint`` names the backend
configuration that answered; when it changes within a run, or differs from the baseline's, a
movement or a change in the noise may be the backend's, not the prompt's. That is a flag shown
next to the noise figures, never a gate: the provider changes backends without notice, and the
evidence of the scores stands on its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["ServedBackend", "served_backend"]

SHOWN = 5  # fingerprints named in a line; the rest are counted


@dataclass(frozen=True)
class ServedBackend:
    """The fingerprints one run's answers carried, in the order first seen, with counts."""

    fingerprints: tuple[tuple[str, int], ...]
    unsaid: int  # answers that carried none (a scorer or server that does not say)
    first_change: tuple[str, str, str] | None  # (case id, from, to): where it first changed
    baseline_run_id: int | None
    baseline_fingerprints: tuple[str, ...]

    @property
    def changed_within(self) -> bool:
        return len(self.fingerprints) > 1

    @property
    def differs_from_baseline(self) -> bool:
        """The run's fingerprints are not the baseline's (both having said some)."""
        mine = {name for name, _n in self.fingerprints}
        theirs = set(self.baseline_fingerprints)
        return bool(mine) and bool(theirs) and mine != theirs

    def flags(self) -> list[str]:
        """One sentence per change worth checking when the scores or the noise moved."""
        flags = []
        if self.first_change is not None:
            case_id, before, after = self.first_change
            flags.append(
                f"the system fingerprint changed within the run ({before} to {after}, first at "
                f"case {case_id}): the provider changed the backend that serves the model"
            )
        if self.differs_from_baseline:
            flags.append(
                f"the system fingerprints differ from the baseline run {self.baseline_run_id}'s "
                f"({_names(self.baseline_fingerprints)}): a movement may be the backend's"
            )
        return flags

    def describe(self) -> str:
        if not self.fingerprints:
            return "no system fingerprint said" if self.unsaid else "no answers"
        counted = [f"{name} ({count} answers)" for name, count in self.fingerprints[:SHOWN]]
        if len(self.fingerprints) > SHOWN:
            counted.append(f"{len(self.fingerprints) - SHOWN} more")
        unsaid = f"; {self.unsaid} without one" if self.unsaid else ""
        return ", ".join(counted) + unsaid

    def as_dict(self) -> dict[str, object]:
        return {
            "fingerprints": [{"fingerprint": n, "answers": c} for n, c in self.fingerprints],
            "unsaid": self.unsaid,
            "changed_within_run": self.changed_within,
            "first_change": (
                dict(zip(("case_id", "from", "to"), self.first_change, strict=True))
                if self.first_change
                else None
            ),
            "baseline_run_id": self.baseline_run_id,
            "baseline_fingerprints": list(self.baseline_fingerprints),
            "differs_from_baseline": self.differs_from_baseline,
            "flags": self.flags(),
            "described": self.describe(),
        }


def _names(fingerprints: Sequence[str]) -> str:
    shown = ", ".join(fingerprints[:SHOWN])
    return shown + (f" and {len(fingerprints) - SHOWN} more" if len(fingerprints) > SHOWN else "")


def served_backend(
    answers: Iterable[tuple[str, str | None]],
    baseline: Iterable[str | None] = (),
    baseline_run_id: int | None = None,
) -> ServedBackend:
    """From (case id, fingerprint) per answer, in the order they came, and the baseline's."""
    counts: Counter[str] = Counter()
    order: list[str] = []
    unsaid = 0
    first_change: tuple[str, str, str] | None = None
    previous: str | None = None
    for case_id, fingerprint in answers:
        if not fingerprint:
            unsaid += 1
            continue
        if fingerprint not in counts:
            order.append(fingerprint)
        counts[fingerprint] += 1
        if previous is not None and fingerprint != previous and first_change is None:
            first_change = (case_id, previous, fingerprint)
        previous = fingerprint
    theirs = sorted({f for f in baseline if f})
    return ServedBackend(
        tuple((name, counts[name]) for name in order),
        unsaid,
        first_change,
        baseline_run_id if theirs else None,
        tuple(theirs),
    )
