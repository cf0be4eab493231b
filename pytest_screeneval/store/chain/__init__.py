"""The audit chain: every finished run, acceptance, review and change to the golden set, hashed
with the entry before it (and HMAC-ed with a chain key when one is set).

``payloads`` (the canonical text of every chained record, hashing, keys, the report of a walk),
``queries`` (reading those records from the tables and appending, verifying, backfilling),
``golden`` (the golden set's state as chained, and where it was edited outside the store) and
``anchor`` (the chain head kept outside the database, and checking a store against it). Pure:
SQLAlchemy Core over a connection it is given, no pytest, no session.
"""

from __future__ import annotations

__all__: list[str] = []
