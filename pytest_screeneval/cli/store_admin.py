"""``screeneval verify | db upgrade``: the store's audit chain and its schema."""

from __future__ import annotations

import argparse

from pytest_screeneval.cli.common import open_store, out, resolve_db_url
from pytest_screeneval.errors import ScreenevalError

__all__ = ["db_upgrade", "verify"]


def verify(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        report = store.verify_chain()
        where = store.masked_url
    if not report.ok:
        raise ScreenevalError(
            f"The audit chain of {where} is broken ({report.entries} entries): "
            f"{report.first_break}."
        )
    backfilled = (
        f" ({report.backfilled} backfilled at the schema upgrade that introduced the chain)"
        if report.backfilled
        else ""
    )
    out(f"chain intact: {report.entries} entries{backfilled}, last hash {report.last_hash}")
    return 0


def db_upgrade(args: argparse.Namespace) -> int:
    from pytest_screeneval.store.database import mask_url, upgrade

    url = resolve_db_url(args)
    before, after = upgrade(url)
    if before == after:
        out(f"the store at {mask_url(url)} is already at schema revision {after}")
    else:
        out(
            f"upgraded the store at {mask_url(url)} from schema revision "
            f"{before or '(empty)'} to {after}"
        )
    return 0
