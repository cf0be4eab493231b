"""``screeneval audit`` on 1,000,000 applicant rows: wall time and peak memory, against the
targets of 20 s and 1 GB.

    python benchmarks/historical_audit.py                 # 1,000,000 rows, CSV
    python benchmarks/historical_audit.py --rows 200000 --format jsonl

It writes its own synthetic export (seeded: sex, race/ethnicity, age band, a score, a selected
flag and a date per applicant, with 3% unknown categories and 0.1% bad rows), makes a store with
one run of the bundled golden set (``pytest --screeneval``, not timed), then times the real
command in its own process, ``screeneval audit FILE --run 1 --score ... --selected ... --html
--json``, and reads that process's peak resident memory from ``getrusage``. It prints the
figures and the ratios to the targets.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 20.0
TARGET_BYTES = 1 << 30
SEXES = ("Male", "Female")
RACES = (
    "Hispanic or Latino",
    "White",
    "Black or African American",
    "Native Hawaiian or Pacific Islander",
    "Asian",
    "Native American or Alaska Native",
    "Two or More Races",
)
AGES = ("under 40", "40 and over")
# the command as `screeneval` runs it, then its own peak resident memory on stderr
_MEASURED = (
    "import resource, runpy, sys\n"
    "sys.argv[0] = 'screeneval'\n"
    "try:\n"
    "    runpy.run_module('pytest_screeneval.cli.main', run_name='__main__')\n"
    "finally:\n"
    "    print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)
COLUMNS = ("applicant", "sex", "race", "age_band", "score", "selected", "applied_on")


def write_export(path: Path, rows: int, fmt: str, seed: int = 144) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle) if fmt == "csv" else None
        if writer is not None:
            writer.writerow(COLUMNS)
        for i in range(rows):
            sex = "prefer not to say" if rng.random() < 0.03 else rng.choice(SEXES)
            race = "" if rng.random() < 0.03 else rng.choice(RACES)
            score = f"{rng.gauss(60, 15):.1f}" if rng.random() > 0.001 else "n/a"
            row = (
                f"a{i}",
                sex,
                race,
                rng.choice(AGES),
                score,
                "yes" if rng.random() < 0.4 else "no",
                f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )
            if writer is not None:
                writer.writerow(row)
            else:
                handle.write(json.dumps(dict(zip(COLUMNS, row, strict=True))) + "\n")


def make_store(folder: Path) -> str:
    url = f"sqlite:///{(folder / 'store.db').as_posix()}"
    subprocess.run(
        [sys.executable, "-m", "pytest", "--screeneval", "-q", "-p", "no:cacheprovider",
         "--screeneval-db", url, str(ROOT / "cases")],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        export = folder / f"export.{args.format}"
        started = time.perf_counter()
        write_export(export, args.rows, args.format)
        print(
            f"wrote {args.rows:,} rows ({export.stat().st_size / 1e6:.0f} MB) in "
            f"{time.perf_counter() - started:.1f} s"
        )
        url = make_store(folder)
        command = [
            sys.executable, "-c", _MEASURED, "--db", url, "audit",
            str(export), "--run", "1", "--by", "benchmark", "--score", "score",
            "--selected", "selected", "--age", "age_band", "--date", "applied_on",
            "--html", str(folder / "audit.html"), "--json", str(folder / "audit.json"),
        ]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=os.environ)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        peak = int(done.stderr.strip().splitlines()[-1].split()[-1]) * 1024  # KiB on Linux
        doc = json.loads((folder / "audit.json").read_text(encoding="utf-8"))["historical"]
    print(
        f"audited {doc['rows']:,} rows: {doc['applicants']:,} applicants, {doc['bad_rows']:,} "
        f"bad rows, {len(doc['breakdowns'])} breakdowns"
    )
    ratio = seconds / TARGET_SECONDS
    print(f"wall time {seconds:.2f} s (target {TARGET_SECONDS:g} s: {ratio:.2f}x)")
    print(f"peak memory {peak / 2**20:.0f} MiB (target 1 GiB: {peak / TARGET_BYTES:.2f}x)")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
