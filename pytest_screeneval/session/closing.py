"""How a run closed: its summary, its status, what was missing, a store error, the chain head.

What ``ScreenevalSession.conclude`` returns at the end of a pytest session and what the plugin
reports from: the terminal's last lines, the JSON summary's closing fields, the JUnit properties
and the exit status. Pure module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_screeneval.session.summary import RunSummary
    from pytest_screeneval.store.chain_reads import ChainHead

__all__ = ["RunEnd"]


@dataclass(frozen=True)
class RunEnd:
    summary: RunSummary | None  # None when the summary's own re-scoring could not be stored
    status: str  # complete, partial or interrupted
    missing: str | None  # what keeps the run from being complete, in one clause
    close_error: str | None  # a store error while the run closed, one sentence
    chain_head: ChainHead | None  # after the run's entry (and its acceptance's)
    failed: bool  # a failed gate, or an acceptance asked for and refused

    def artefact_fields(self) -> dict[str, object]:
        """The closing fields of the JSON summary."""
        head = self.chain_head
        return {
            "missing": self.missing,
            "store_error": self.close_error,
            # an anchor outside the database: `screeneval verify --expect-head SEQ:HASH`
            "chain_head": head.as_dict() if head is not None else None,
        }
