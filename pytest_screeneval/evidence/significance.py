"""How far an impact ratio could be chance: Fisher's exact test, the two-proportion z statistic
and a 95% interval on the ratio (Katz's log method), for one category against the reference.

At n = 56 an impact ratio of 0.7 arises from noise alone, so a ratio under four fifths is only a
finding when the counts behind it are unlikely under equal chances. Auditors pair the
four-fifths rule with a test: the pooled two-proportion z statistic (the "two standard
deviations" rule) for large counts, Fisher's exact test for small ones. Every ratio the audit
shows carries all three, and its flag says which way the test went and at what n.

Fisher's exact test is computed here, in pure Python, from the hypergeometric distribution of
the 2×2 table (category / reference × selected / not): the two-sided p-value is the probability
of every table with the same margins that is no more likely than the one observed. Terms are
summed outward from the observed table and from the boundary on the other side of the mode, in
log space, so a million applicants cost a few thousand terms, not a million. Two tables count
as equally likely when their probabilities are within a relative 1e-7 (R's ``fisher.test``
rule: probabilities computed in floating point can differ in the last digits when they are
mathematically equal). The test suite checks every figure against SciPy
(``scipy.stats.fisher_exact``, ``scipy.stats.contingency.relative_risk``), an independent
implementation, to 6 significant digits; SciPy is a development dependency only.

Katz's interval: ln(RR) ± z₀.₉₇₅ · √(1/a − 1/n₁ + 1/c − 1/n₂) (Katz, Baptista, Azen and Pike,
1978, "Obtaining confidence intervals for the risk ratio in cohort studies", Biometrics 34). It
is undefined when either group has no one selected; the audit then says so instead of
inventing a continuity correction.

Pure module: no pytest, no I/O, no third-party code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "ALPHA",
    "CONFIDENCE",
    "Comparison",
    "compare",
    "fisher_exact",
    "flag_text",
    "katz_interval",
    "two_proportion_z",
]

# two-sided, the level the significance flags are read at
ALPHA = 0.05
CONFIDENCE = 0.95
# tables whose probability is within this relative distance of the observed one count as tied
_RELATIVE_TIE = 1e-7
# terms smaller than this share of the running sum no longer change a p-value's 6th digit
_NEGLIGIBLE = 1e-17


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


class _Hypergeometric:
    """The number of selected in the first row of a 2×2 table with fixed margins.

    ``total`` applicants, ``selected`` of them selected, ``drawn`` in the first row: x selected
    in the first row has probability
    C(selected, x) · C(total − selected, drawn − x) / C(total, drawn).
    """

    def __init__(self, total: int, selected: int, drawn: int) -> None:
        self.total, self.selected, self.drawn = total, selected, drawn
        self.low = max(0, drawn - (total - selected))
        self.high = min(drawn, selected)
        self._log_norm = _log_comb(total, drawn)

    def log_pmf(self, x: int) -> float:
        if x < self.low or x > self.high:
            return -math.inf
        others = self.total - self.selected
        return _log_comb(self.selected, x) + _log_comb(others, self.drawn - x) - self._log_norm

    def mode(self) -> int:
        guess = (self.drawn + 1) * (self.selected + 1) // (self.total + 2)
        return min(max(guess, self.low), self.high)

    def _ratio_up(self, x: int) -> float:
        """pmf(x + 1) / pmf(x)."""
        others = self.total - self.selected
        return ((self.selected - x) * (self.drawn - x)) / ((x + 1) * (others - self.drawn + x + 1))

    def tail_sum(self, start: int, step: int) -> float:
        """Σ pmf(x) for x = start, start + step, ... to the end of the support (step ±1)."""
        if start < self.low or start > self.high:
            return 0.0
        term = math.exp(self.log_pmf(start))
        total = 0.0
        x = start
        while True:
            total += term
            nxt = x + step
            if nxt < self.low or nxt > self.high:
                break
            term *= self._ratio_up(x) if step > 0 else 1.0 / self._ratio_up(nxt)
            x = nxt
            if term <= total * _NEGLIGIBLE:
                break
        return total


def _boundary(dist: _Hypergeometric, limit: float, start: int, stop: int) -> int:
    """On the monotone stretch from ``start`` (the mode side) to ``stop``, the first x whose log
    probability is at most ``limit`` (there is one: the caller checked ``stop``)."""
    lo, hi = start, stop  # log_pmf(lo) > limit >= log_pmf(hi), whichever way stop lies
    while abs(hi - lo) > 1:
        mid = (lo + hi) // 2
        if dist.log_pmf(mid) <= limit:
            hi = mid
        else:
            lo = mid
    return hi


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the table [[a, b], [c, d]].

    Rows are the two groups, columns selected / not selected (any orientation gives the same
    p-value). 1.0 for a table whose margins leave no room for any other (a row or a column
    empty).
    """
    if min(a, b, c, d) < 0:
        raise ValueError("a 2×2 table holds counts, not negative numbers")
    total = a + b + c + d
    dist = _Hypergeometric(total, a + c, a + b)
    if dist.low == dist.high:
        return 1.0
    observed = dist.log_pmf(a)
    limit = observed + math.log1p(_RELATIVE_TIE)
    mode = dist.mode()
    if observed >= dist.log_pmf(mode) - math.log1p(_RELATIVE_TIE):
        return 1.0
    if a < mode:
        # the observed side: every x <= a; the other side: from the first x above the mode
        # whose probability is no larger than the observed one
        p = dist.tail_sum(a, -1)
        if dist.log_pmf(dist.high) > limit:
            return min(p, 1.0)
        p += dist.tail_sum(_boundary(dist, limit, mode, dist.high), +1)
    else:
        p = dist.tail_sum(a, +1)
        if dist.log_pmf(dist.low) > limit:
            return min(p, 1.0)
        p += dist.tail_sum(_boundary(dist, limit, mode, dist.low), -1)
    return min(p, 1.0)


def two_proportion_z(x1: int, n1: int, x2: int, n2: int) -> float | None:
    """The pooled two-proportion z statistic of x1/n1 against x2/n2 (negative: the first is
    lower). None when it is undefined: an empty group, or everyone or no one selected."""
    if n1 <= 0 or n2 <= 0:
        return None
    pooled = (x1 + x2) / (n1 + n2)
    variance = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if variance <= 0:
        return None
    return (x1 / n1 - x2 / n2) / math.sqrt(variance)


def katz_interval(
    x1: int, n1: int, x2: int, n2: int, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Katz's log interval on the ratio (x1/n1) / (x2/n2); None when either count is 0."""
    if min(x1, x2) <= 0 or n1 <= 0 or n2 <= 0:
        return None
    ratio = (x1 / n1) / (x2 / n2)
    spread = math.sqrt(1 / x1 - 1 / n1 + 1 / x2 - 1 / n2)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return ratio * math.exp(-z * spread), ratio * math.exp(z * spread)


@dataclass(frozen=True)
class Comparison:
    """One category's rate against the reference category's: the tests beside its ratio."""

    reference: str
    hits: int
    n: int
    reference_hits: int
    reference_n: int
    p_value: float  # Fisher's exact test, two-sided
    z: float | None  # pooled two-proportion z (negative: below the reference)
    interval: tuple[float, float] | None  # 95% Katz interval on the impact ratio

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA

    def as_dict(self) -> dict[str, object]:
        return {
            "reference": self.reference,
            "hits": self.hits,
            "n": self.n,
            "reference_hits": self.reference_hits,
            "reference_n": self.reference_n,
            "fisher_p": self.p_value,
            "z": self.z,
            "ratio_low": self.interval[0] if self.interval else None,
            "ratio_high": self.interval[1] if self.interval else None,
            "significant": self.significant,
        }


def compare(reference: str, hits: int, n: int, reference_hits: int, reference_n: int) -> Comparison:
    """The tests of ``hits`` of ``n`` against the reference's ``reference_hits`` of
    ``reference_n``."""
    return Comparison(
        reference=reference,
        hits=hits,
        n=n,
        reference_hits=reference_hits,
        reference_n=reference_n,
        p_value=fisher_exact(hits, n - hits, reference_hits, reference_n - reference_hits),
        z=two_proportion_z(hits, n, reference_hits, reference_n),
        interval=katz_interval(hits, n, reference_hits, reference_n),
    )


def _p_text(p: float) -> str:
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.2g}" if p < 0.01 else f"p = {p:.3f}"


def flag_text(below: bool, threshold: float, comparison: Comparison | None) -> str:
    """The words beside a ratio: 'below 0.8, significant (p = 0.003)', 'below 0.8, not
    significant at n = 12 and 30 (p = 0.21)', or '' when it is not below the mark."""
    if not below:
        return ""
    if comparison is None:
        return f"below {threshold:g}"
    if comparison.significant:
        return f"below {threshold:g}, significant ({_p_text(comparison.p_value)})"
    return (
        f"below {threshold:g}, not significant at n = {comparison.n} and "
        f"{comparison.reference_n} ({_p_text(comparison.p_value)})"
    )
