"""Small inline SVG charts for the audit page, drawn in Python: no script, no font, no network.

Every chart is an ``<svg role="img">`` with a ``<title>`` and ``<desc>`` naming what it shows;
the page puts a table with the same figures next to each one, so nothing is only in a picture.
Values never carry meaning by colour alone: a limit is a labelled dashed line, and a bar over
it is also drawn hatched.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["DEFS", "Bar", "Strip", "interval_bars", "paired_bars", "strip_plot"]

WIDTH = 600
# wide enough for the bundled set's longest slice with its count ("hospitality-background (n=3)")
LABEL_W = 210
LABEL_CHARS = 32
RIGHT_PAD = 56
ROW_H = 26
TOP = 30
AXIS_H = 26
INK = "#24303c"
BAR = "#4a6f94"
LIGHT = "#a9bfd6"
ALERT = "#a33a2f"
GRID = "#d8dee4"


@dataclass(frozen=True)
class Bar:
    """One row of a bar chart: a value with an optional interval (low, high) or second value."""

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    muted: bool = False  # drawn pale: shown but not gated (e.g. a slice with few cases)


@dataclass(frozen=True)
class Strip:
    """One group of a strip plot: its label and every value in it."""

    label: str
    values: tuple[float, ...]


# The hatch pattern every chart refers to, defined once per page (ids must be unique).
DEFS = (
    '<svg width="0" height="0" aria-hidden="true" style="position:absolute">'
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
    f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{ALERT}"/>'
    '<line x1="0" y1="0" x2="0" y2="6" stroke="#ffffff" stroke-width="2"/></pattern></defs></svg>'
)


def _x(value: float, maximum: float) -> float:
    span = WIDTH - LABEL_W - RIGHT_PAD
    return LABEL_W + span * max(0.0, min(value, maximum)) / maximum


def _open(height: float, title: str, desc: str) -> list[str]:
    return [
        f'<svg role="img" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'width="{WIDTH}" height="{height:.0f}" class="chart" font-family="inherit">',
        f"<title>{escape(title)}</title><desc>{escape(desc)}</desc>",
    ]


def _axis(y: float, maximum: float, unit: str) -> list[str]:
    parts = []
    for step in range(5):
        value = maximum * step / 4
        x = _x(value, maximum)
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{y:.1f}" stroke="{GRID}"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{y + 16:.1f}" font-size="11" text-anchor="middle" '
            f'fill="{INK}">{value:g}{escape(unit)}</text>'
        )
    return parts


def _limit(x_value: float, maximum: float, y: float, label: str) -> list[str]:
    x = _x(x_value, maximum)
    return [
        f'<line x1="{x:.1f}" y1="{TOP - 12}" x2="{x:.1f}" y2="{y:.1f}" stroke="{ALERT}" '
        'stroke-width="1.5" stroke-dasharray="5 3"/>',
        f'<text x="{x + 4:.1f}" y="{TOP - 14}" font-size="11" fill="{ALERT}">'
        f"{escape(label)}</text>",
    ]


def _label(y: float, text: str) -> str:
    """A row label, cut to fit the label column; the full text is its tooltip."""
    shown = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
    return (
        f'<text x="{LABEL_W - 8}" y="{y:.1f}" font-size="11.5" text-anchor="end" '
        f'fill="{INK}"><title>{escape(text)}</title>{escape(shown)}</text>'
    )


def interval_bars(
    bars: Sequence[Bar], *, gate: float, gate_label: str, title: str, maximum: float = 100.0
) -> str:
    """Horizontal bars with whiskers for an interval, and a dashed gate line (bars under the
    gate are hatched). For agreement by slice with its Wilson interval."""
    height = TOP + ROW_H * max(len(bars), 1) + AXIS_H
    bottom = TOP + ROW_H * len(bars)
    parts = _open(height, title, f"{len(bars)} bars; the dashed line is {gate_label}.")
    parts += _axis(bottom, maximum, "%")
    for i, bar in enumerate(bars):
        y = TOP + ROW_H * i
        under = bar.value < gate and not bar.muted
        fill = "url(#hatch)" if under else (LIGHT if bar.muted else BAR)
        width = _x(bar.value, maximum) - LABEL_W
        parts.append(_label(y + 16, bar.label))
        parts.append(
            f'<rect x="{LABEL_W}" y="{y + 5}" width="{width:.1f}" height="{ROW_H - 10}" '
            f'fill="{fill}"><title>{escape(bar.label)}: {bar.value:.1f}</title></rect>'
        )
        if bar.low is not None and bar.high is not None:
            lo, hi, mid = _x(bar.low, maximum), _x(bar.high, maximum), y + ROW_H / 2
            parts.append(
                f'<path d="M{lo:.1f} {mid:.1f}H{hi:.1f}M{lo:.1f} {mid - 5:.1f}V{mid + 5:.1f}'
                f'M{hi:.1f} {mid - 5:.1f}V{mid + 5:.1f}" stroke="{INK}" stroke-width="1.3" '
                'fill="none"/>'
            )
        parts.append(
            f'<text x="{WIDTH - RIGHT_PAD + 6}" y="{y + 16:.1f}" font-size="11" '
            f'fill="{INK}">{bar.value:.1f}%</text>'
        )
    parts += _limit(gate, maximum, bottom, gate_label)
    parts.append("</svg>")
    return "".join(parts)


def paired_bars(
    rows: Sequence[tuple[str, float, float]], *, limit: float, title: str, unit: str = " pts"
) -> str:
    """Two bars per row (mean, pale; worst, dark) against a dashed limit line. For the
    counterfactual gap per attribute, in overall points."""
    maximum = max([limit * 1.5, *(worst for _, _, worst in rows), 1.0])
    maximum = float(int(maximum / 4 + 1) * 4)  # a round axis
    height = TOP + ROW_H * 1.6 * max(len(rows), 1) + AXIS_H + 18
    bottom = TOP + ROW_H * 1.6 * len(rows)
    parts = _open(height, title, f"mean and worst gap of {len(rows)} attributes; limit {limit:g}")
    parts += _axis(bottom, maximum, "")
    for i, (label, mean, worst) in enumerate(rows):
        y = TOP + ROW_H * 1.6 * i
        parts.append(_label(y + 20, label))
        for j, (name, value, colour) in enumerate((("mean", mean, LIGHT), ("worst", worst, BAR))):
            over = value > limit + 1e-9
            fill = "url(#hatch)" if over else colour
            top = y + 4 + j * 17
            parts.append(
                f'<rect x="{LABEL_W}" y="{top:.1f}" width="{_x(value, maximum) - LABEL_W:.1f}" '
                f'height="14" fill="{fill}"><title>{escape(label)} {name}: {value:.1f}</title>'
                "</rect>"
            )
            parts.append(
                f'<text x="{_x(value, maximum) + 4:.1f}" y="{top + 11:.1f}" font-size="11" '
                f'fill="{INK}">{name} {value:.1f}</text>'
            )
    parts += _limit(limit, maximum, bottom, f"limit {limit:g}{unit}")
    parts.append(
        f'<text x="{LABEL_W}" y="{height - 4:.0f}" font-size="11" fill="{INK}">'
        f"overall points (0–100 scale){escape('; hatched: over the limit')}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def strip_plot(
    strips: Sequence[Strip], *, threshold: float, threshold_label: str, title: str
) -> str:
    """One row of dots per group (each dot a candidate's overall score; dark at or above the
    threshold), a bar at the group's median and a dashed line at the advance threshold."""
    row = ROW_H + 10
    height = TOP + row * max(len(strips), 1) + AXIS_H + 18
    bottom = TOP + row * len(strips)
    parts = _open(height, title, f"{len(strips)} groups; dashed line: {threshold_label}")
    parts += _axis(bottom, 100.0, "")
    for i, strip in enumerate(strips):
        y = TOP + row * i + row / 2
        parts.append(_label(y + 4, f"{strip.label} (n={len(strip.values)})"))
        ordered = sorted(strip.values)
        if ordered:
            median = statistics.median(ordered)
            x = _x(median, 100.0)
            parts.append(
                f'<line x1="{x:.1f}" y1="{y - 13:.1f}" x2="{x:.1f}" y2="{y + 13:.1f}" '
                f'stroke="{INK}" stroke-width="2"><title>median {median:.1f}</title></line>'
            )
        for k, value in enumerate(ordered):
            jitter = ((k * 3) % 5 - 2) * 3.5  # deterministic, so the page is reproducible
            colour = BAR if value >= threshold else LIGHT
            parts.append(
                f'<circle cx="{_x(value, 100.0):.1f}" cy="{y + jitter:.1f}" r="4.5" '
                f'fill="{colour}" fill-opacity="0.85" stroke="{INK}" stroke-width="0.7">'
                f"<title>{value:.1f}</title></circle>"
            )
    parts += _limit(threshold, 100.0, bottom, threshold_label)
    parts.append(
        f'<text x="{LABEL_W}" y="{height - 4:.0f}" font-size="11" fill="{INK}">'
        "overall score; dark dot: at or above the threshold; bar: group median</text>"
    )
    parts.append("</svg>")
    return "".join(parts)
