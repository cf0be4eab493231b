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
# distinct raw labels and dates remembered (labels are few; dates a few thousand at most)
_MEMO_LIMIT = 100_000
_MISSING = object()


@dataclass(frozen=True)
class _Refused:
    reason: str


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
        # the columns read, in order; where in that order each value sits
        self.order = columns.columns
        self._category_at = [self.order.index(columns.categories[d]) for d in self.dimensions]
        self._score_at = self.order.index(columns.score) if columns.score else None
        self._selected_at = self.order.index(columns.selected) if columns.selected else None
        self._date_at = self.order.index(columns.date) if columns.date else None
        self._labels: list[dict[str, object]] = [{} for _ in self.dimensions]
        self._dates: dict[str, object] = {}
        self._flags: dict[str, str] = {}
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
        """One row as a mapping of column → value (a JSON object); a mapped column it lacks
        makes it a bad row."""
        try:
            values = [row[column] for column in self.order]
        except KeyError as missing:
            self._rows += 1
            self._reject(line, f"missing column: {missing.args[0]!r}")
            return
        self.add_values(line, values)

    def add_values(self, line: int, values: Sequence[object]) -> None:
        """One row as its values in :attr:`order` (the CSV reader's fast path)."""
        self._rows += 1
        problem = self._check(values)
        if problem is not None:
            self._reject(line, problem)

    def _label(self, index: int, raw: object) -> str | None:
        """The canonical label of a raw value on dimension ``index``; None for unknown; raises
        ValueError with the reason for a label not allowed. Memoised: labels are few."""
        memo = self._labels[index]
        key = raw if isinstance(raw, str) else repr(raw) if raw is not None else ""
        found = memo.get(key, _MISSING)
        if found is _MISSING:
            dimension = self.dimensions[index]
            text = _normal(raw) if raw is not None else ""
            canonical = self._canonical[dimension]
            if text in UNKNOWN_LABELS:
                found = None
            elif canonical is None:
                found = " ".join(str(raw).split())
            elif text in canonical:
                found = canonical[text]
            else:
                allowed = ", ".join(canonical.values())
                found = _Refused(
                    f"unknown label: {dimension} {str(raw)[:40]!r} is not one of {allowed}"
                )
            if len(memo) < _MEMO_LIMIT:
                memo[key] = found
        if isinstance(found, _Refused):
            raise ValueError(found.reason)
        return found  # type: ignore[return-value]

    def _check(self, values: Sequence[object]) -> str | None:
        """Add a good row and return None, or return why the row is bad (adding nothing)."""
        labels_list: list[str | None] = []
        for index, position in enumerate(self._category_at):
            raw = values[position]
            # the common case in one dict lookup: a label seen before and allowed
            found = self._labels[index].get(raw, _MISSING) if type(raw) is str else _MISSING
            if found is _MISSING or type(found) is _Refused:
                try:
                    found = self._label(index, raw)
                except ValueError as refused:
                    return str(refused)
            labels_list.append(found)  # type: ignore[arg-type]
        labels = tuple(labels_list)
        score = math.nan
        if self._score_at is not None:
            value = values[self._score_at]
            try:
                score = (
                    float(value)
                    if type(value) is str or type(value) is int or type(value) is float
                    else math.nan
                )
            except ValueError:
                score = math.nan
            if not math.isfinite(score):
                return f"not a number: score {str(value)[:40]!r}"
        chosen = False
        if self._selected_at is not None:
            value = values[self._selected_at]
            key = value if type(value) is str else repr(value)
            flag = self._flags.get(key)
            if flag is None:
                text = _normal(value) if not isinstance(value, bool) else str(value).lower()
                flag = "yes" if text in _YES else "no" if text in _NO else "bad"
                if len(self._flags) < _MEMO_LIMIT:
                    self._flags[key] = flag
            if flag == "bad":
                return f"not yes or no: selected {str(value)[:40]!r}"
            chosen = flag == "yes"
        if self._date_at is not None:
            raw = values[self._date_at]
            key = raw if isinstance(raw, str) else repr(raw)
            when = self._dates.get(key, _MISSING)
            if when is _MISSING:
                when = self._date(raw)
                if len(self._dates) < _MEMO_LIMIT:
                    self._dates[key] = when
            if when is None:
                return f"not a date: {str(raw)[:40]!r}"
            assert isinstance(when, str)
            if self._first is None or when < self._first:
                self._first = when
            if self._last is None or when > self._last:
                self._last = when
        cell = self._cells.get(labels)
        if cell is None:
            cell = self._cells[labels] = _Cell()
        cell.n += 1
        cell.selected += chosen
        if self._score_at is not None:
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
