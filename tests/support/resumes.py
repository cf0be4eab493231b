"""Invented resumes more than one test file reads."""

from __future__ import annotations

__all__ = ["SECTIONED_RESUME"]

# A header, then sections under capitals, a heading with a colon, one without a blank line
# before it: what the perturbation kinds reformat, reorder and garble.
SECTIONED_RESUME = """DANA OKAFOR
SENIOR DATA ANALYST
Riverton, Westland

SUMMARY
Analyst with six years in freight logistics.

EXPERIENCE
2019-2024 Senior Analyst, Quillmoor Freight
  - Built SQL pipelines in Python
  - Cut reporting time by 40%
2016-2019 Analyst, Brightwater Mills

SQL, AWS, GCP

Education:
BSc Statistics, Northfield Institute of Technology

Certifications
- Tableau Desktop Specialist
"""
