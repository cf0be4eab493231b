"""Libraries loaded before any in-process pytester run, by the conftest of every folder that runs
one (all but tests/unit, which stays fast: it needs none of them).

pytester restores sys.modules after each run, and a library first imported inside one would be
imported again later as a second copy whose exception classes no longer match the first (httpx
would then leak raw transport errors past openai; psycopg's errors would escape SQLAlchemy's
wrapping; libyaml's C loader would build nodes of the first copy's classes; multiprocessing would
start a second resource tracker for the drawing worker of the next run).
"""

from __future__ import annotations

import concurrent.futures.process  # noqa: F401
import multiprocessing.resource_tracker  # noqa: F401

import openai  # noqa: F401
import psycopg  # noqa: F401
import sqlalchemy  # noqa: F401
import yaml  # noqa: F401
