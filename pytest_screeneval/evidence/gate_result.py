"""A session gate's result: the one typed value every gate builder returns.

Pure module. ``value`` is the estimate the verdict rests on and ``interval`` its interval (None
when the gate is a plain count or share with no noise to put around it); the worst single case,
when the gate has one, is named apart in ``worst_case`` and labelled as such in the detail, so a
reader never takes it for the gate's value.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_screeneval.evidence.gate_status import GateStatus

__all__ = [
    "FAIL",
    "INCONCLUSIVE",
    "NOT_APPLICABLE",
    "PASS",
    "GateResult",
    "GateStatus",
    "at_least",
    "at_most",
]


PASS = GateStatus.PASS
FAIL = GateStatus.FAIL
INCONCLUSIVE = GateStatus.INCONCLUSIVE
NOT_APPLICABLE = GateStatus.NOT_APPLICABLE


@dataclass(frozen=True)
class GateResult:
    name: str
    value: float | None  # the estimate the verdict rests on
    limit: str  # e.g. "<= 5", ">= 80"
    n: int
    status: GateStatus
    detail: str = ""
    interval: tuple[float, float] | None = None  # of ``value``, when it is an estimate
    worst_case: str = ""  # the worst single case, e.g. "cc-003 (A vs B): 12.0"

    @property
    def failed(self) -> bool:
        return self.status == FAIL

    def with_detail(self, more: str) -> GateResult:
        detail = f"{self.detail}; {more}" if self.detail else more
        return GateResult(
            self.name,
            self.value,
            self.limit,
            self.n,
            self.status,
            detail,
            self.interval,
            self.worst_case,
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "value": self.value,
            "limit": self.limit,
            "n": self.n,
            "status": str(self.status),
            "detail": self.detail,
            "interval": list(self.interval) if self.interval is not None else None,
            "worst_case": self.worst_case,
        }


def _nothing_measured(name: str, limit: str, n: int, detail: str) -> GateResult | None:
    """N/A for a gate with n = 0: a value over nothing passes nothing."""
    if n > 0:
        return None
    return GateResult(name, None, limit, 0, NOT_APPLICABLE, detail or "n = 0: nothing to measure")


def at_most(
    name: str,
    value: float | None,
    limit: float,
    n: int,
    detail: str = "",
    *,
    counts_events: bool = False,
) -> GateResult:
    """A plain gate "value <= limit" (no interval): PASS, FAIL, or N/A with nothing measured."""
    # a gate whose n counts events (crossings) rather than measurements passes with none
    if not counts_events and (empty := _nothing_measured(name, f"<= {limit:g}", n, detail)):
        return empty
    if value is None:
        return GateResult(name, None, f"<= {limit:g}", n, NOT_APPLICABLE, detail)
    return GateResult(
        name, value, f"<= {limit:g}", n, PASS if value <= limit + 1e-9 else FAIL, detail
    )


def at_least(name: str, value: float | None, limit: float, n: int, detail: str = "") -> GateResult:
    """A plain gate "value >= limit"."""
    if (empty := _nothing_measured(name, f">= {limit:g}", n, detail)) is not None:
        return empty
    if value is None:
        return GateResult(name, None, f">= {limit:g}", n, NOT_APPLICABLE, detail)
    return GateResult(
        name, value, f">= {limit:g}", n, PASS if value >= limit - 1e-9 else FAIL, detail
    )
