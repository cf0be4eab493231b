"""Store throughput: importing the golden set and writing 100,000 score rows in batches.

    python benchmarks/store_bench.py [--url URL] [--pg-url URL] [--rows N] [--batch N]

SQLite always runs (a temporary file unless --url names a store). PostgreSQL runs when --pg-url
or $SCREENEVAL_TEST_PG_URL names a server: the benchmark creates a schema of its own there and
drops it afterwards. The golden set is the bundled ``cases/`` folder, or 56 synthetic cases when
that folder is not there. Prints one line per step with its time and rate, including finishing
the run (which hashes every score row into the audit chain) and ``verify`` of the chain.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from pytest_screeneval.golden.load import load_golden_set
from pytest_screeneval.golden.model import (
    Case,
    Criterion,
    Expectation,
    GoldenSet,
    Rubric,
    Scale,
    Variants,
)
from pytest_screeneval.golden.write import write_golden_set
from pytest_screeneval.scoring.protocol import ScorerIdentity
from pytest_screeneval.store.database import ChainReport, ScoreRow, Store, mask_url

__all__ = ["main"]

REPO = Path(__file__).resolve().parent.parent
SYNTHETIC_CASES = 56


def synthetic_golden_set(root: Path) -> Path:
    """Write 56 invented cases (and their rubric) as YAML under ``root``; return the folder."""
    rubric = Rubric(
        id="bench-rubric",
        version="1",
        scale=Scale(1, 5),
        advance_at=60.0,
        criteria=tuple(
            Criterion(name, f"How well the resume shows {name}.", 1.0, {5: (name,)})
            for name in ("experience", "skills", "communication", "leadership")
        ),
    )
    slices = ("career-changer", "career-gap", "non-traditional", "baseline")
    cases = tuple(
        Case(
            id=f"bench-{i:03d}",
            label=slices[i % len(slices)],
            rubric=rubric.id,
            input_text=(
                f"Candidate {i}\nAnalyst at Harbor Lane Freight, {2010 + i % 10}-2024.\n"
                + "Led a team of four; wrote runbooks; tuned SQL reports.\n" * (1 + i % 5)
            ),
            expected={
                c.name: Expectation(c.name, 1 + (i + j) % 5, "Bench Rater", "2024-01-15")
                for j, c in enumerate(rubric.criteria)
            },
            ratings={"skills": {"rater-a": 1 + i % 5, "rater-b": 1 + (i + 1) % 5}},
            source="synthetic benchmark case",
        )
        for i in range(SYNTHETIC_CASES)
    )
    folder = root / "cases"
    write_golden_set(GoldenSet(rubric, Variants(), cases), folder)
    return folder


@contextmanager
def pg_schema_url(base_url: str) -> Iterator[str]:
    """A fresh schema on the PostgreSQL server, dropped afterwards; yields its store URL."""
    base = make_url(base_url)
    if base.drivername in ("postgresql", "postgres"):
        base = base.set(drivername="postgresql+psycopg")
    schema = f"screeneval_bench_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        url = base.update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        admin.dispose()


def timed(label: str, work: Callable[[], object], count: int, unit: str) -> float:
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    rate = count / seconds if seconds > 0 else float("inf")
    print(f"  {label:<34} {seconds * 1000:9.1f} ms  {rate:12,.0f} {unit}/s  (n={count:,})")
    return seconds


def score_rows(run_id: int, golden: GoldenSet, total: int) -> list[ScoreRow]:
    """``total`` distinct rows: every case × criterion, then variants and repeats as needed."""
    criteria = golden.rubric.criterion_names
    rows: list[ScoreRow] = []
    index = 0
    while len(rows) < total:
        variant = "" if index == 0 else f"name=variant-{index}"
        for case in golden.cases:
            for criterion in criteria:
                rows.append(
                    ScoreRow(
                        run_id=run_id,
                        case_id=case.id,
                        variant_key=variant,
                        repeat_index=0,
                        criterion=criterion,
                        score=3,
                        rationale=f"The {criterion} criterion scores 3; the resume states it.",
                        evidence=("Analyst at Harbor Lane Freight",),
                        confidence=0.8,
                        latency_ms=412.5,
                        attempts=1,
                        error=None,
                        input_sha256=case.input_sha256,
                        prompt_tokens=850,
                        completion_tokens=120,
                    )
                )
                if len(rows) == total:
                    return rows
        index += 1
    return rows


def bench(name: str, url: str, folder: Path, rows: int, batch: int) -> None:
    print(f"{name}: {mask_url(url)}")
    loaded: list[GoldenSet] = []
    timed("load the YAML golden set", lambda: loaded.append(load_golden_set(folder)), 1, "sets")
    golden = loaded[0]
    with Store.open(url) as store:
        n = len(golden.cases)
        timed("sync golden set (first, inserts)", lambda: store.sync_golden_set(golden), n, "cases")
        timed("sync golden set (again, checks)", lambda: store.sync_golden_set(golden), n, "cases")
        timed("load golden set from the store", store.load_golden_set, n, "cases")

        run_id = store.start_run(
            identity=ScorerIdentity("bench", "bench-model", "p" * 64, golden.rubric.sha),
            rubric_id=golden.rubric.id,
            golden_sha=golden.sha,
            plugin_version="bench",
            vcs_commit=None,
        )
        all_rows = score_rows(run_id, golden, rows)

        def write() -> None:
            for first in range(0, len(all_rows), batch):
                store.write_scores(all_rows[first : first + batch])

        timed(f"write score rows ({batch}/batch)", write, len(all_rows), "rows")
        # finishing hashes every score row into the run's audit chain entry
        timed(
            "finish the run (chain its rows)",
            lambda: store.finish_run(run_id, status="complete"),
            len(all_rows),
            "rows",
        )
        timed("read the run's score rows back", lambda: store.scores(run_id), len(all_rows), "rows")
        reports: list[ChainReport] = []
        timed(
            "verify the audit chain",
            lambda: reports.append(store.verify_chain()),
            len(all_rows),
            "rows",
        )
        assert reports[0].ok, reports[0].first_break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="SQLite (or any) store URL; default: a temporary file")
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("SCREENEVAL_TEST_PG_URL"),
        help="PostgreSQL server URL (default: $SCREENEVAL_TEST_PG_URL)",
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--cases", type=Path, default=REPO / "cases")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.cases
        if not (folder / "rubric.yaml").is_file():
            folder = synthetic_golden_set(Path(scratch))
            print(f"(no golden set at {args.cases}: using {SYNTHETIC_CASES} synthetic cases)")
        url = args.url or f"sqlite:///{Path(scratch) / 'bench.db'}"
        bench("SQLite", url, folder, args.rows, args.batch)
        if args.pg_url:
            with pg_schema_url(args.pg_url) as pg_url:
                bench("PostgreSQL", pg_url, folder, args.rows, args.batch)
        else:
            print("PostgreSQL: skipped (give --pg-url or set SCREENEVAL_TEST_PG_URL)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
