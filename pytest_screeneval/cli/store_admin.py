"""``screeneval verify | anchor | db upgrade | db recover``: the chain, its head, the schema,
the spool.

``verify`` recomputes the chain from the rows (see docs/guarantees.md, "What the audit record
proves"); ``--expect-head`` also checks it against a head kept outside the database, which is
what exposes a truncated, wiped or consistently re-forged chain. ``anchor`` writes that head as a
small JSON document, HMAC-signed when ``SCREENEVAL_CHAIN_KEY`` is set.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pytest_screeneval.boundary.terminal import terminal_safe
from pytest_screeneval.cli.common import open_store, out, resolve_db_url
from pytest_screeneval.errors import ScreenevalError

__all__ = [
    "anchor",
    "anchor_arguments",
    "db_recover",
    "db_recover_arguments",
    "db_upgrade",
    "verify",
    "verify_arguments",
]


def verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--expect-head",
        metavar="HEAD",
        help="a head kept outside the database: HASH, SEQ:HASH, or an anchor file "
        "(screeneval anchor); verify fails unless the chain grew from it",
    )


def verify(args: argparse.Namespace) -> int:
    from pytest_screeneval.store.chain.anchor import head_problem, parse_expected_head
    from pytest_screeneval.store.chain.payloads import CHAIN_KEY_ENV

    with open_store(args, read_only=True) as store:
        expected = (
            parse_expected_head(args.expect_head, store.chain_key)
            if getattr(args, "expect_head", None)
            else None
        )
        report = store.verify_chain()
        where = store.masked_url
    if not report.ok:
        raise ScreenevalError(
            f"The audit chain of {where} is broken ({report.entries} entries): "
            f"{report.first_break}."
        )
    if report.unchecked:
        raise ScreenevalError(
            f"The audit chain of {where} has {report.unchecked} keyed entries whose HMAC cannot "
            f"be checked without the key; set {CHAIN_KEY_ENV} to verify them."
        )
    if expected is not None:
        problem = head_problem(report.hashes, expected)
        if problem is not None:
            raise ScreenevalError(
                f"The audit chain of {where} does not match the head kept outside it: {problem}."
            )
    backfilled = (
        f" ({report.backfilled} backfilled at schema upgrades)" if report.backfilled else ""
    )
    out(f"chain intact: {report.entries} entries{backfilled}, last hash {report.last_hash}")
    if report.keyed:
        out(f"keyed: {report.keyed} of {report.entries} entries carry an HMAC that checked out")
    if expected is not None:
        position = report.hashes.index(expected.hash) + 1 if expected.hash in report.hashes else 0
        signed = " (its signature checked out)" if expected.signed else ""
        out(
            f"head kept outside{signed}: entry {position} {expected.hash[:16]}..., "
            f"{report.entries - position} entries after it"
        )
    return 0


def anchor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", metavar="FILE", type=Path, help="write the anchor here (default: print it)"
    )


def anchor(args: argparse.Namespace) -> int:
    """Verify the chain, then export its head (HMAC-signed with SCREENEVAL_CHAIN_KEY)."""
    from pytest_screeneval.store.chain.anchor import make_anchor
    from pytest_screeneval.store.database import utc_now

    with open_store(args, read_only=True) as store:
        report = store.verify_chain()
        head = store.chain_head()
        where = store.masked_url
        key = store.chain_key
    if not report.ok or report.unchecked:
        reason = report.first_break or "its keyed entries cannot be checked without the key"
        raise ScreenevalError(f"The audit chain of {where} is not anchored: {reason}.")
    document = make_anchor(
        store=where, seq=head.seq, head=head.hash, at=utc_now(), head_key_id=head.key_id, key=key
    )
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if args.out is None:
        sys.stdout.write(terminal_safe(text))
        return 0
    try:
        args.out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ScreenevalError(f"Cannot write the anchor to {args.out} ({exc.strerror}).") from None
    signed = "signed with the chain key" if key is not None else "unsigned (no chain key)"
    out(f"anchored entry {head.seq} {head.hash} in {args.out}, {signed}")
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


def db_recover_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spool",
        metavar="DIR",
        type=Path,
        help="the spool folder (default: the one beside the store)",
    )


def db_recover(args: argparse.Namespace) -> int:
    """Import the score rows a run kept in the spool when the store would not take them.

    Idempotent: a row already stored for its (run, case, variant, repeat, criterion) is
    replaced, and a file is removed only once all its rows are committed.
    """
    from pytest_screeneval.cli.locate import find_rootdir
    from pytest_screeneval.store.spool import Spool, spool_dir

    url = resolve_db_url(args)
    directory = args.spool or spool_dir(url, find_rootdir().rootdir)
    if directory is None:
        raise ScreenevalError("An in-memory store has no spool to recover.")
    spool = Spool(directory)
    files = list(spool.read())
    if not files:
        out(f"nothing to recover: no spool files in {directory}")
        return 0
    refused: list[str] = []
    with open_store(args) as store:
        for spooled in files:
            by_run: dict[int, list[object]] = {}
            for row in spooled.rows:
                by_run.setdefault(row.run_id, []).append(row)
            try:
                for run_id, rows in sorted(by_run.items()):
                    status = store.import_spooled(run_id, rows)  # type: ignore[arg-type]
                    out(
                        f"recovered {len(rows)} score rows of run {run_id} from "
                        f"{spooled.path.name} (run {run_id} is {status})"
                    )
            except ScreenevalError as exc:
                refused.append(f"{spooled.path.name}: {exc}")
                continue
            if spooled.unreadable_lines:
                out(
                    f"{spooled.path.name}: {spooled.unreadable_lines} line(s) cut off by a "
                    "crash could not be read; the file is kept"
                )
                continue
            spooled.path.unlink()
    if refused:
        raise ScreenevalError(
            f"{len(refused)} spool file(s) could not be imported and are kept: "
            + "; ".join(refused)
        )
    return 0
