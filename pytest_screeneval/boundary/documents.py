"""A document going to a file or a store column (a report, a run config), made safe as a whole.

Every string in it, keys too, is cleaned (:func:`.text.clean_text`: a lone surrogate cannot even
be written as UTF-8) and redacted (:func:`.secrets.redact`). The writers of the JSON and HTML
files and the run's config pass their whole document here, once, so no field added later can
carry a secret or break the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_screeneval.boundary.secrets import redact
from pytest_screeneval.boundary.text import clean_text

__all__ = ["safe_document", "safe_string"]


def safe_string(text: str) -> str:
    return redact(clean_text(text))


def safe_document(value: Any) -> Any:
    """A JSON-like value with every string made safe; mappings become dicts, tuples lists."""
    if isinstance(value, str):
        return safe_string(value)
    if isinstance(value, Mapping):
        return {
            (safe_string(k) if isinstance(k, str) else k): safe_document(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [safe_document(v) for v in value]
    return value
