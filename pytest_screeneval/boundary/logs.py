"""Log lines are a sink too: every record made while a run is open is redacted.

The ``openai`` and ``httpx`` clients, SQLAlchemy and psycopg log through :mod:`logging`, and
pytest shows captured records in its failure reports and its live log. Rather than a filter on
each handler (pytest makes new ones per phase), the record factory is wrapped: each record's
message, and its traceback text, pass :func:`.secrets.redact` as the record is made, before any
handler or formatter sees it. Installed while a session is open, counted, and given back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from pytest_screeneval.boundary.secrets import redact

__all__ = ["redact_log_records"]

_lock = threading.Lock()
_holders = 0
_previous: Callable[..., logging.LogRecord] | None = None


def _redacting(previous: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a broken format is logging's own error to report
            return record
        safe = redact(message)
        if safe != message:
            record.msg, record.args = safe, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return record

    return make


def redact_log_records() -> Callable[[], None]:
    """Redact every log record from now on; call what it returns to stop (once per call)."""
    global _holders, _previous
    with _lock:
        if _holders == 0:
            _previous = logging.getLogRecordFactory()
            logging.setLogRecordFactory(_redacting(_previous))
        _holders += 1
    done = False

    def undo() -> None:
        nonlocal done
        global _holders, _previous
        with _lock:
            if done:
                return
            done = True
            _holders -= 1
            if _holders == 0 and _previous is not None:
                logging.setLogRecordFactory(_previous)
                _previous = None

    return undo
