"""A bias audit on historical data: the rates of 6 RCNY §5-301 over an export of the screener's
real use, one row per applicant, streamed.

§5-302(a) asks a bias audit to use historical data of the tool's real use; the golden set's rates
are test data. This module takes rows one at a time (from ``report/historical_file.py``, which
reads CSV or JSON Lines), keeps only counts and scores per combination of categories (a million
applicants are a million floats, not a million objects), and at the end computes, per category
of sex, race/ethnicity, their intersection, and any optional category (an age band, ...):

* selection rates and impact ratios, where the export has a selected flag (a selection tool);
* scoring rates (share strictly above the median score of the full sample) and their ratios,
  where it has a score (a scoring tool);
* with each ratio, Fisher's exact test, the z statistic and Katz's interval against the reference
  category (``evidence/significance.py``).

A row with a label outside the allowed ones, a missing column, a score that is not a finite
number, a selected flag that is not yes/no, or a date that is not a date is a *bad row*: counted,
named by its line number and reason, and left out of every figure. It is never guessed. An
unknown category ("", "unknown", "prefer not to say", ...) is not bad: the rule has applicants of
unknown category counted and left out of that dimension's rates.

Pure module: no pytest, no I/O.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from pytest_screeneval.evidence.rates import (
    INTERSECTION,
    MIN_SHARE,
    RACE,
    SEX,
    UNKNOWN_LABELS,
    Breakdown,
    CategoryCounts,
    breakdown_from_counts,
)

__all__ = [
    "AGE",
    "AGE_BANDS",
    "BAD_ROWS_NAMED",
    "DEFAULT_LABELS",
    "BadRow",
    "ColumnMap",
    "HistoricalAudit",
    "HistoricalRates",
    "valid_until",
]

AGE = "age"
AGE_BANDS = ("under 40", "40 and over")
# The EEO-1 categories the rule's tables use; a project may give its own (``--labels``).
DEFAULT_LABELS: Mapping[str, tuple[str, ...]] = {
    SEX: ("Male", "Female"),
    RACE: (
        "Hispanic or Latino",
        "White",
        "Black or African American",
        "Native Hawaiian or Pacific Islander",
        "Asian",
        "Native American or Alaska Native",
        "Two or More Races",
    ),
    AGE: AGE_BANDS,
}
# how many bad rows are named one by one (all are counted, by reason)
BAD_ROWS_NAMED = 100
_YES = frozenset({"1", "true", "yes", "y", "selected", "advance", "advanced"})
_NO = frozenset({"0", "false", "no", "n", "not selected", "rejected", "hold", "held"})


@dataclass(frozen=True)
class ColumnMap:
    """Which column holds what. At least one of ``score`` and ``selected``; ``categories`` maps
    each category dimension (sex, race, age, ...) to its column."""

    categories: Mapping[str, str]
    score: str | None = None
    selected: str | None = None
    date: str | None = None

    def __post_init__(self) -> None:
        if self.score is None and self.selected is None:
            raise ValueError("a historical audit needs a score column, a selected column or both")
        for needed in (SEX, RACE):
            if needed not in self.categories:
                raise ValueError(f"a historical audit needs the {needed} column")

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the audit reads, in a stable order."""
        named = [self.score, self.selected, *self.categories.values(), self.date]
        return tuple(dict.fromkeys(c for c in named if c is not None))


@dataclass(frozen=True)
class BadRow:
    line: int
    reason: str


@dataclass(frozen=True)
class HistoricalRates:
    """The figures of a historical audit: rates by every dimension, with what they rest on."""

    rows: int  # data rows read (good and bad)
    applicants: int  # good rows: the full sample
    bad_rows: int
    bad_by_reason: Mapping[str, int]
    bad_named: tuple[BadRow, ...]
    first_date: str | None
    last_date: str | None
    median: float | None  # of the full sample's scores (scoring tools)
    breakdowns: tuple[Breakdown, ...]  # each dimension, then sex × race
    selection_tool: bool  # the export has a selected flag: selection rates are meaningful
    scoring_tool: bool  # the export has a score: scoring rates are meaningful
    min_share: float  # 0 when the 2% exclusion was not applied


def valid_until(audit_date: date) -> date:
    """Twelve months after the audit (§5-301(a): a tool may not be used once its latest bias
    audit is more than a year old); 29 February becomes 28 February."""
    try:
        return audit_date.replace(year=audit_date.year + 1)
    except ValueError:
        return audit_date.replace(year=audit_date.year + 1, day=28)


def _normal(label: object) -> str:
    return " ".join(str(label).split()).lower()


@dataclass
class _Cell:
    """One combination of categories: its scores and how many of it were selected."""

    scores: array[float] = field(default_factory=lambda: array("d"))
    n: int = 0
    selected: int = 0


class HistoricalAudit:
    """Feed rows with :meth:`add` (any mapping of column → value, with its line number), then
    read :meth:`result`. ``labels`` are the allowed labels per dimension (case and spacing
    ignored; shown as written there); a dimension without a list takes any label."""

    def __init__(
        self,
        columns: ColumnMap,
        *,
        labels: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.columns = columns
        self.dimensions = tuple(columns.categories)
        allowed = dict(DEFAULT_LABELS if labels is None else labels)
        self._canonical: dict[str, dict[str, str] | None] = {}
        for dimension in self.dimensions:
            names = allowed.get(dimension)
            self._canonical[dimension] = (
                {_normal(name): name for name in names} if names is not None else None
            )
        self._cells: dict[tuple[str | None, ...], _Cell] = {}
        self._rows = 0
        self._bad: Counter[str] = Counter()
        self._named: list[BadRow] = []
        self._first: str | None = None
        self._last: str | None = None

    # ---- rows ---------------------------------------------------------------------------

    def bad(self, line: int, reason: str) -> None:
        """Count a row that cannot be read at all (not a JSON object, a short CSV row, ...)."""
        self._rows += 1
        self._reject(line, reason)

    def _reject(self, line: int, reason: str) -> None:
        self._bad[reason.split(":", 1)[0]] += 1
        if len(self._named) < BAD_ROWS_NAMED:
            self._named.append(BadRow(line, reason))

    def add(self, line: int, row: Mapping[str, object]) -> None:
        self._rows += 1
        problem = self._check(line, row)
        if problem is not None:
            self._reject(line, problem)

    def _check(self, line: int, row: Mapping[str, object]) -> str | None:
        """Add a good row and return None, or return why the row is bad (adding nothing)."""
        columns = self.columns
        for column in columns.columns:
            if column not in row:
                return f"missing column: {column!r}"
        labels: list[str | None] = []
        for dimension in self.dimensions:
            raw = row[columns.categories[dimension]]
            text = _normal(raw)
            if text in UNKNOWN_LABELS:
                labels.append(None)
                continue
            canonical = self._canonical[dimension]
            if canonical is None:
                labels.append(" ".join(str(raw).split()))
            elif text in canonical:
                labels.append(canonical[text])
            else:
                allowed = ", ".join(canonical.values())
                return f"unknown label: {dimension} {str(raw)[:40]!r} is not one of {allowed}"
        score = math.nan
        if columns.score is not None:
            value = row[columns.score]
            try:
                score = float(value) if isinstance(value, str | int | float) else math.nan
                score = math.nan if isinstance(value, bool) else score
            except ValueError:
                score = math.nan
            if not math.isfinite(score):
                return f"not a number: score {str(value)[:40]!r}"
        chosen = False
        if columns.selected is not None:
            value = row[columns.selected]
            flag = _normal(value) if not isinstance(value, bool) else str(value).lower()
            if flag in _YES:
                chosen = True
            elif flag not in _NO:
                return f"not yes or no: selected {str(value)[:40]!r}"
        if columns.date is not None:
            when = self._date(row.get(columns.date))
            if when is None:
                return f"not a date: {str(row.get(columns.date))[:40]!r}"
            if self._first is None or when < self._first:
                self._first = when
            if self._last is None or when > self._last:
                self._last = when
        key = tuple(labels)
        cell = self._cells.get(key)
        if cell is None:
            cell = self._cells[key] = _Cell()
        cell.n += 1
        cell.selected += chosen
        if columns.score is not None:
            cell.scores.append(score)
        return None

    @staticmethod
    def _date(value: object) -> str | None:
        text = str(value).strip() if value is not None else ""
        try:
            if len(text) == 10:
                return date.fromisoformat(text).isoformat()
            return datetime.fromisoformat(text).date().isoformat()
        except ValueError:
            return None

    def add_rows(self, rows: Iterable[tuple[int, Mapping[str, object]]]) -> None:
        for line, row in rows:
            self.add(line, row)

    # ---- the figures -------------------------------------------------------------------

    def result(self, *, exclude_small: bool = False) -> HistoricalRates:
        """The audit's figures; ``exclude_small`` applies the rule's 2% exclusion (§5-301(d))."""
        min_share = MIN_SHARE if exclude_small else 0.0
        applicants = sum(cell.n for cell in self._cells.values())
        median: float | None = None
        above: dict[tuple[str | None, ...], int] = {}
        if self.columns.score is not None and applicants:
            every = array("d")
            for cell in self._cells.values():
                every.extend(cell.scores)
            ordered = sorted(every)
            middle = len(ordered) // 2
            median = (
                ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
            )
            for key, cell in self._cells.items():
                scores = sorted(cell.scores)
                above[key] = len(scores) - bisect_right(scores, median)
        wanted = list(self.dimensions)
        intersections = [INTERSECTION.join((SEX, RACE))]
        breakdowns: list[Breakdown] = []
        for dimension in [*wanted, *intersections]:
            parts = dimension.split(INTERSECTION)
            positions = [self.dimensions.index(part) for part in parts]
            counts: dict[str, list[int]] = {}
            unknown = 0
            for key, cell in self._cells.items():
                values = [key[i] for i in positions]
                if any(v is None for v in values):
                    unknown += cell.n
                    continue
                name = INTERSECTION.join(v for v in values if v is not None)
                entry = counts.setdefault(name, [0, 0, 0])
                entry[0] += cell.n
                entry[1] += above.get(key, 0)
                entry[2] += cell.selected
            cells = {name: CategoryCounts(*entry) for name, entry in counts.items()}
            breakdowns.append(
                breakdown_from_counts(
                    dimension, cells, unknown=unknown, total=applicants, min_share=min_share
                )
            )
        return HistoricalRates(
            rows=self._rows,
            applicants=applicants,
            bad_rows=sum(self._bad.values()),
            bad_by_reason=dict(sorted(self._bad.items())),
            bad_named=tuple(self._named),
            first_date=self._first,
            last_date=self._last,
            median=median,
            breakdowns=tuple(breakdowns),
            selection_tool=self.columns.selected is not None,
            scoring_tool=self.columns.score is not None,
            min_share=min_share,
        )
