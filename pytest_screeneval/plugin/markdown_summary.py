"""``--screeneval-markdown PATH`` and the GitHub step summary, written once the run is stored.

The text is :func:`pytest_screeneval.report.markdown_run.markdown_of_run` of the finished run,
what ``screeneval show RUN --format markdown`` prints. A summary that cannot be written is said
in one sentence in the terminal summary; it never fails the run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_screeneval.errors import ScreenevalError

if TYPE_CHECKING:
    from pytest_screeneval.session.core import ScreenevalSession

__all__ = ["STEP_SUMMARY_VARIABLE", "write_markdown_summaries"]

STEP_SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"


def _targets(screeneval: ScreenevalSession) -> list[tuple[Path, bool]]:
    """(path, append) of every file the summary goes to."""
    targets = []
    if screeneval.settings.markdown:
        targets.append((Path(screeneval.settings.markdown), False))
    step_summary = os.environ.get(STEP_SUMMARY_VARIABLE, "")
    if step_summary and screeneval.settings.step_summary != "off":
        targets.append((Path(step_summary), True))
    return targets


def write_markdown_summaries(screeneval: ScreenevalSession, close_error: str | None) -> list[str]:
    """Write the run's Markdown summary where asked; the sentences of what went wrong."""
    targets = _targets(screeneval)
    if not targets or screeneval.run_id is None or screeneval.store is None:
        return []
    if close_error is not None:
        text = (
            f"## screeneval: ERROR · run {screeneval.run_id}\n\n"
            f"The run could not be recorded: {close_error}\n"
        )
    else:
        from pytest_screeneval.report.markdown_run import markdown_of_run

        try:
            text = markdown_of_run(screeneval.store, screeneval.run_id)
        except ScreenevalError as exc:
            return [f"The Markdown summary could not be made: {exc}"]
    problems = []
    for path, append in targets:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a" if append else "w", encoding="utf-8") as file:
                file.write(text if not append else "\n" + text)
        except OSError as exc:
            problems.append(
                f"The Markdown summary could not be written to {path}: {exc.strerror or exc}."
            )
    return problems
