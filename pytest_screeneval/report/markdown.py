"""A run as a short Markdown summary, for a CI job's summary page and a pull request.

Pure: plain values in, text out. ``report.markdown_run`` fills :class:`MarkdownRun` from the
stored run, for ``--screeneval-markdown``, the GitHub step summary and
``screeneval show RUN --format markdown`` alike, so the three cannot differ.

The verdict comes first, then what needs a person: the gates that failed or were
INCONCLUSIVE, the worst movements, the crossings to review (each with the command that records
the review), the failed fairness items; then the run id and the chain head. GitHub refuses a
step summary over 1 MiB, so every list is cut at a few rows with a count of the rest, and every
cell at a few hundred characters: the page stays far under the limit whatever the run's size.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_screeneval.evidence.gate_status import GateStatus

__all__ = [
    "MAX_CELL_CHARS",
    "MAX_ROWS",
    "FairnessFailure",
    "MarkdownRun",
    "MovedItem",
    "ReviewableCrossing",
    "render_markdown",
]

MAX_ROWS = 10  # per list; the rest is counted
MAX_CELL_CHARS = 200
FAIL, PASS, INCONCLUSIVE = GateStatus.FAIL, GateStatus.PASS, GateStatus.INCONCLUSIVE

# control characters (a terminal escape in a scorer's text), kept out of the page
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# what Markdown could read as syntax inside a table cell: escaped with a backslash
_SYNTAX = re.compile(r"([\\`*_\[\]<>|~])")


@dataclass(frozen=True)
class MovedItem:
    """A (case, criterion) score that differs from the baseline's."""

    case_id: str
    criterion: str
    before: int
    after: int
    reviewed_by: str | None = None

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True)
class ReviewableCrossing:
    """A case whose decision flipped against the baseline (overall scores and decisions)."""

    case_id: str
    before: str
    after: str
    reviewed_by: str | None = None


@dataclass(frozen=True)
class FairnessFailure:
    """A counterfactual or perturbation item that failed: its gap or shift and the limit."""

    case_id: str
    item: str  # e.g. counterfactual[gap], perturbation[reformat]
    value: float | None
    limit: float | None


@dataclass(frozen=True)
class MarkdownRun:
    """What the summary shows of one run, as plain values."""

    run_id: int
    status: str
    scorer: str
    model_id: str
    gates: Sequence[
        Mapping[str, Any]
    ]  # the gates' documents: name, value, limit, n, status, detail
    baseline_run_id: int | None = None
    baseline_accepted_by: str | None = None
    items: Mapping[str, int] | None = None  # outcome → count; None when the run recorded none
    movements: Sequence[MovedItem] = ()
    crossings: Sequence[ReviewableCrossing] = ()
    fairness_failures: Sequence[FairnessFailure] | None = None  # None: not recorded
    chain_head: str | None = None  # SEQ:HASH
    missing: str | None = None  # what a partial run lacks
    inconclusive_fails: bool = False  # screeneval_inconclusive = fail
    notes: Sequence[str] = field(default_factory=tuple)


def _text(value: object) -> str:
    """A cell's text: one line, no control characters, Markdown syntax escaped, cut short."""
    text = " ".join(_CONTROL.sub(" ", str(value)).split())
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 1] + "…"
    return _SYNTAX.sub(r"\\\1", text)


def _code(value: str) -> str:
    """A command or id as a code span (the ids the golden set allows hold no backtick)."""
    return "`" + _CONTROL.sub(" ", value).replace("`", "'") + "`"


def _number(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return _text(value)


def _limit(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int]) -> list[str]:
    rule = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _cut(total: int, shown: int, where: str = "") -> list[str]:
    if total <= shown:
        return []
    return [f"… and {total - shown} more{where}.", ""]


def _verdict(run: MarkdownRun) -> tuple[str, str]:
    statuses = [str(g.get("status")) for g in run.gates]
    failed_items = (run.items or {}).get("failed", 0)
    if FAIL in statuses or failed_items or (run.inconclusive_fails and INCONCLUSIVE in statuses):
        return "❌", FAIL
    if run.status != "complete":
        return "⚠️", run.status.upper()
    if INCONCLUSIVE in statuses:
        return "⚠️", INCONCLUSIVE
    return "✅", PASS


def _headline(run: MarkdownRun, word: str, mark: str) -> list[str]:
    statuses = [str(g.get("status")) for g in run.gates]
    failed = statuses.count(FAIL)
    parts = [f"{failed} of {len(statuses)} gates failed" if failed else "no gate failed"]
    if INCONCLUSIVE in statuses:
        parts.append(f"{statuses.count(INCONCLUSIVE)} INCONCLUSIVE")
    if run.items is not None:
        total = sum(run.items.values())
        parts.append(f"{run.items.get('failed', 0)} of {total} items failed")
    against = (
        f"against baseline run {run.baseline_run_id}"
        + (f" (accepted by {_text(run.baseline_accepted_by)})" if run.baseline_accepted_by else "")
        if run.baseline_run_id is not None
        else "no baseline yet"
    )
    lines = [
        f"## screeneval: {word} · run {run.run_id}",
        "",
        f"{mark} **{word}**: {', '.join(parts)}.",
        "",
        f"Run {run.run_id} ({_text(run.status)}), scorer {_text(run.scorer)} "
        f"(model {_text(run.model_id)}), {against}.",
        "",
    ]
    if run.missing:
        lines += [f"The run is not complete: {_text(run.missing)}.", ""]
    lines += [f"{_text(note)}" for note in run.notes]
    return lines + ([""] if run.notes else [])


def _gates(run: MarkdownRun) -> list[str]:
    shown = [g for g in run.gates if g.get("status") in (FAIL, INCONCLUSIVE)]
    if not shown:
        return []
    shown.sort(key=lambda g: (g.get("status") != FAIL, str(g.get("name"))))
    rows = [
        [
            _text(g.get("name")),
            f"**{_text(g.get('status'))}**",
            _number(g.get("value")),
            _text(g.get("limit")),
            _number(g.get("n")),
            _text(g.get("detail") or ""),
        ]
        for g in shown[:MAX_ROWS]
    ]
    rest = len(run.gates) - len(shown)
    lines = ["### Gates that failed or were inconclusive", ""]
    lines += _table(("gate", "status", "value", "limit", "n", "detail"), rows, (2, 4))
    lines += _cut(len(shown), MAX_ROWS)
    lines += [f"The other {rest} gates passed or had nothing to measure.", ""] if rest else []
    return lines


def _movements(run: MarkdownRun) -> list[str]:
    if not run.movements:
        return []
    worst = sorted(run.movements, key=lambda m: (-abs(m.delta), m.case_id, m.criterion))
    unreviewed = sum(1 for m in run.movements if m.reviewed_by is None)
    rows = [
        [
            _code(m.case_id),
            _text(m.criterion),
            str(m.before),
            str(m.after),
            f"{m.delta:+d}",
            _text(m.reviewed_by) if m.reviewed_by else "not reviewed",
        ]
        for m in worst[:MAX_ROWS]
    ]
    lines = [
        f"### Worst movements against run {run.baseline_run_id} "
        f"({len(run.movements)} in all, {unreviewed} not reviewed)",
        "",
    ]
    lines += _table(
        ("case", "criterion", "before", "after", "change", "reviewed by"), rows, (2, 3, 4)
    )
    where = f" (`screeneval diff {run.baseline_run_id} {run.run_id}` lists every one)"
    return lines + _cut(len(worst), MAX_ROWS, where)


def _crossings(run: MarkdownRun) -> list[str]:
    if not run.crossings:
        return []
    open_ = [c for c in run.crossings if c.reviewed_by is None]
    reviewed = len(run.crossings) - len(open_)
    lines = [
        f"### Crossings to review ({len(open_)} of {len(run.crossings)} not reviewed)",
        "",
    ]
    if open_:
        rows = [
            [
                _code(c.case_id),
                _text(c.before),
                _text(c.after),
                _code(f"screeneval review {run.run_id} {c.case_id} --by NAME --note TEXT"),
            ]
            for c in sorted(open_, key=lambda c: c.case_id)[:MAX_ROWS]
        ]
        lines += _table(("case", "before", "after", "record a review"), rows, ())
        lines += _cut(len(open_), MAX_ROWS)
    if reviewed:
        lines += [f"{reviewed} crossing(s) reviewed already.", ""]
    return lines


def _fairness(run: MarkdownRun) -> list[str]:
    if not run.fairness_failures:
        return []
    failures = sorted(run.fairness_failures, key=lambda f: (-(f.value or 0.0), f.case_id, f.item))
    rows = [
        [_code(f.case_id), _text(f.item), _number(f.value), _limit(f.limit)]
        for f in failures[:MAX_ROWS]
    ]
    by_item = Counter(f.item for f in failures)
    lines = [f"### Failed fairness items ({len(failures)})", ""]
    if len(by_item) > 1:
        ranked = sorted(by_item.items(), key=lambda kv: (-kv[1], kv[0]))
        listed = ", ".join(f"{_text(item)} {count}" for item, count in ranked[:MAX_ROWS])
        more = f" and {len(ranked) - MAX_ROWS} more kinds" if len(ranked) > MAX_ROWS else ""
        lines += [f"By item: {listed}{more}.", ""]
    lines += _table(("case", "item", "gap or shift (points)", "limit"), rows, (2, 3))
    return lines + _cut(len(failures), MAX_ROWS)


def _footer(run: MarkdownRun) -> list[str]:
    lines = [f"Run id: **{run.run_id}**."]
    if run.chain_head:
        lines.append(
            f"Chain head: {_code(run.chain_head)}; keep it outside the store, then "
            f"{_code('screeneval verify --expect-head ' + run.chain_head)} exposes a store that "
            "was truncated or rewritten."
        )
    return ["---", "", " ".join(lines), ""]


def render_markdown(run: MarkdownRun) -> str:
    """The summary as Markdown text, ending with a newline."""
    mark, word = _verdict(run)
    lines = _headline(run, word, mark)
    lines += _gates(run) + _movements(run) + _crossings(run) + _fairness(run) + _footer(run)
    return "\n".join(lines)
