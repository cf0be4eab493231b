"""Building blocks of the audit page: escaped tables, fact lists, sections and number formats.

Every piece of text goes through ``html.escape``; only values wrapped in :class:`Raw` (HTML this
module or ``svg.py`` produced) are inserted as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

__all__ = [
    "Raw",
    "facts",
    "num",
    "pct",
    "rate",
    "section",
    "table",
    "tested_ratio",
    "text",
    "when",
]


class Raw(str):
    """HTML that is already safe (made here, never from user text)."""


def text(value: object) -> str:
    """Any value as escaped HTML text; None is a dash."""
    if isinstance(value, Raw):
        return value
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return escape(str(value))


def num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    """A percentage already on 0–100."""
    return "–" if value is None else f"{value:.{digits}f}%"


def rate(value: float | None, digits: int = 1) -> str:
    """A share on 0–1 as a percentage."""
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def tested_ratio(
    value: float | None,
    threshold: float,
    excluded: str | None,
    test: Mapping[str, Any] | None,
    flag: str,
) -> Raw:
    """An impact ratio with what backs it: its 95% interval, Fisher's p and the z statistic
    against the reference, and under ``threshold`` the flag in words ('below 0.8, significant
    (p = …)' or 'below 0.8, not significant at n = …'), not in colour only."""
    if excluded:
        return Raw('<span class="note">excluded</span>')
    if value is None:
        return Raw("–")
    shown = f"{value:.2f}"
    if flag:
        shown = f'<span class="flag">{shown} ▼ {escape(flag)}</span>'
    if test is None:  # only the reference category has a ratio and no test
        return Raw(f'{shown}<br><span class="note">reference</span>')
    low, high, z = test.get("ratio_low"), test.get("ratio_high"), test.get("z")
    interval = f"{low:.2f}–{high:.2f}" if low is not None and high is not None else "none"
    detail = (
        f"95% CI {interval} · Fisher p = {test['fisher_p']:.3g}"
        + (f" · z = {z:.2f}" if z is not None else "")
        + f" · vs {escape(str(test['reference']))}"
    )
    return Raw(f'{shown}<br><span class="note">{detail}</span>')


def when(timestamp: str | None) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM UTC' (dates without a time stay as they are)."""
    if not timestamp:
        return "–"
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp
    if len(timestamp) <= 10:
        return moment.date().isoformat()
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    numeric: Iterable[int] = (),
    caption: str = "",
    code: Iterable[int] = (),
    empty: str = "None.",
) -> str:
    """A table; ``numeric`` columns align right, ``code`` columns show hashes and ids."""
    right, mono = set(numeric), set(code)
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            cls = "num" if i in right else ("code" if i in mono else "")
            attr = f' class="{cls}"' if cls else ""
            cells.append(f"<td{attr}>{text(value)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    if not body:
        return f'<p class="note">{escape(empty)}</p>'
    head = "".join(
        ('<th scope="col" class="num">' if i in right else '<th scope="col">') + escape(h) + "</th>"
        for i, h in enumerate(headers)
    )
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    # the wrapper scrolls a wide table sideways on a phone instead of widening the whole page
    return (
        f'<div class="scroll"><table>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def facts(pairs: Iterable[tuple[str, object]]) -> str:
    items = "".join(f"<dt>{escape(k)}</dt><dd>{text(v)}</dd>" for k, v in pairs)
    return f'<dl class="facts">{items}</dl>'


def section(ident: str, title: str, lead: str, *parts: str) -> str:
    intro = f'<p class="lead">{escape(lead)}</p>' if lead else ""
    return (
        f'<section id="{escape(ident)}" aria-labelledby="{escape(ident)}-h">'
        f'<h2 id="{escape(ident)}-h">{escape(title)}</h2>{intro}{"".join(parts)}</section>'
    )
