"""The verdict of a session gate: one of four words, stored and shown as they are spelled here.

Pure module. A ``str`` enum, so the JSON summary, the stored verdict and the audit chain's
canonical text hold the same words as before the enum existed.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["GateStatus"]


class GateStatus(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    # the evidence neither within nor beyond the limit, given the scorer's noise
    INCONCLUSIVE = "INCONCLUSIVE"
    # nothing to measure (no baseline, n = 0): not a finding either way
    NOT_APPLICABLE = "N/A"
