"""The bundled golden set against a rate-limited server: adaptive concurrency, measured.

    python benchmarks/rate_limit.py [--scale 1.0] [--rpm 300] [--burst 20] [--concurrency 16]
                                    [--latency 0.1] [--modes reject,headers,compare]

Starts the test ChatServer in its own process with a token bucket in front of its chat endpoint
(``--rpm`` requests a minute, a burst of ``--burst``) and runs ``pytest --screeneval`` on the
bundled set (``cases/``) with the ``openai`` scorer, each run a whole process timed start to
exit, each against a fresh store and a rested bucket:

- ``reject``: the server answers 429 (with ``Retry-After``) and sends the x-ratelimit headers;
- ``headers``: the limit is given by the headers only, never a 429; the server counts the
  requests that went over it;
- ``compare``: ``screeneval_adaptive`` true against false at a concurrency the limit allows
  (``--compare-concurrency`` calls, each ``--compare-latency`` seconds long: under the rate).

The limit's own bound for a run is its calls ÷ the rate (calls as the server answered them);
the targets: 0 failed items, 0 stopped runs, the whole run within 1.15× that bound (reject and
headers), and adaptive no slower than 1.05× fixed (compare). ``--scale`` runs that share of
the bundled cases (every case's slice kept, the first ones of each in order) at the same rate:
a proportionally smaller set and bound. The server's answers give every criterion 3, so the
run is asked to pass with a wide tolerance: an item fails only on a scorer error.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["main"]

MODEL = "bench-screener-2025-01-15"
TARGET_FACTOR = 1.15
COMPARE_FACTOR = 1.05
ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"

OUTCOME_LINE = re.compile(r"^=* ?(\d+ (?:passed|failed|errors?)\b.* in [\d.]+s.*?) ?=*$", re.M)
SCORED_LINE = re.compile(r"(\d+) inputs scored in ([\d.]+) s")
ERRORS = re.compile(r"; (\d+) scorer errors;")
STATUS = re.compile(r"^run \d+ \((\w+)\)", re.MULTILINE)


class Server:
    """The ChatServer in its own process, limited; stopped by the pid we started."""

    def __init__(self, latency: float, rpm: float, burst: float, mode: str) -> None:
        run = "from pytest_screeneval.testing.chat_server import main; main()"
        command = [
            sys.executable,
            "-c",
            run,
            "--latency",
            str(latency),
            "--rpm",
            str(rpm),
            "--burst",
            str(burst),
            "--limit-mode",
            mode,
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            self.stop()
            raise SystemExit("the ChatServer did not start")
        self.root = self.base_url.removesuffix("/v1")

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.root}/stats", timeout=10) as answer:
            return dict(json.load(answer))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def scaled_cases(target: Path, scale: float) -> int:
    """Copy the rubric, the variants and ``scale`` of each slice's cases; returns the count."""
    target.mkdir(parents=True)
    for name in ("rubric.yaml", "variants.yaml"):
        shutil.copy(CASES / name, target / name)
    kept = 0
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir()):
        files = sorted(folder.glob("*.yaml"))
        keep = files[: max(1, math.ceil(len(files) * scale))] if scale < 1 else files
        (target / folder.name).mkdir()
        for file in keep:
            shutil.copy(file, target / folder.name / file.name)
        kept += len(keep)
    return kept


@dataclass(frozen=True)
class Run:
    label: str
    wall_s: float
    calls: int  # answered by the server (not counting 429s)
    rate_limited: int
    over_limit: int
    scorer_errors: int | None
    status: str
    exit_code: int
    outcome: str
    pacing: str
    scoring_s: float | None  # what the summary says the scoring took (the calls, not startup)

    def bound_s(self, rpm: float) -> float:
        return self.calls / (rpm / 60.0)


def run_once(
    label: str,
    cases: Path,
    workdir: Path,
    *,
    mode: str,
    rpm: float,
    burst: float,
    latency: float,
    concurrency: int,
    adaptive: bool,
) -> Run:
    server = Server(latency, rpm, burst, mode)
    db = workdir / f"{label}-{time.monotonic_ns()}.db"
    try:
        args = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--screeneval",
            "--rootdir",
            str(ROOT),
            "-c",
            str(ROOT / "pyproject.toml"),
            "-o",
            f"screeneval_cases={cases}",
            "-o",
            "screeneval_scorer=openai",
            "-o",
            f"screeneval_openai_base_url={server.base_url}",
            "-o",
            f"screeneval_openai_model={MODEL}",
            "-o",
            "screeneval_openai_response_format=json_schema",
            "-o",
            f"screeneval_concurrency={concurrency}",
            "-o",
            f"screeneval_adaptive={'true' if adaptive else 'false'}",
            "-o",
            "screeneval_expected_tolerance=4",
            "-o",
            "screeneval_min_worst_slice=0",
            "-o",
            "screeneval_rationale_flags=warn",
            "--screeneval-db",
            f"sqlite:///{db.as_posix()}",
            str(cases),
        ]
        started = time.perf_counter()
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        stats = server.stats()
    finally:
        server.stop()
    out = done.stdout
    if done.returncode not in (0,):
        sys.stderr.write(out[-3000:] + done.stderr[-1500:])
    errors = ERRORS.search(out)
    scored = SCORED_LINE.search(out)
    status = STATUS.search(out)
    outcome = OUTCOME_LINE.findall(out)
    pacing = [line for line in out.splitlines() if line.startswith("concurrency: ")]
    return Run(
        label,
        wall,
        stats["chat_requests"] - stats["rate_limited"],
        stats["rate_limited"],
        stats["over_limit"],
        int(errors.group(1)) if errors else None,
        status.group(1) if status else "?",
        done.returncode,
        outcome[-1].strip() if outcome else "(no outcome line)",
        pacing[0] if pacing else "(no concurrency line)",
        float(scored.group(2)) if scored else None,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of the bundled cases")
    parser.add_argument("--rpm", type=float, default=300.0)
    parser.add_argument("--burst", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per answer")
    parser.add_argument("--compare-concurrency", type=int, default=2)
    parser.add_argument("--compare-latency", type=float, default=0.5)
    parser.add_argument("--modes", default="reject,headers,compare")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]

    workdir = Path(tempfile.mkdtemp(prefix="screeneval-rate-limit-"))
    runs: list[Run] = []
    try:
        cases = workdir / "cases"
        kept = scaled_cases(cases, args.scale)
        common = {"rpm": args.rpm, "burst": args.burst}
        if "reject" in modes:
            runs.append(
                run_once(
                    "reject (429 + headers)",
                    cases,
                    workdir,
                    mode="reject",
                    latency=args.latency,
                    concurrency=args.concurrency,
                    adaptive=True,
                    **common,
                )
            )
        if "headers" in modes:
            runs.append(
                run_once(
                    "headers only",
                    cases,
                    workdir,
                    mode="headers",
                    latency=args.latency,
                    concurrency=args.concurrency,
                    adaptive=True,
                    **common,
                )
            )
        if "compare" in modes:
            for adaptive in (False, True):
                runs.append(
                    run_once(
                        f"{'adaptive' if adaptive else 'fixed'} at {args.compare_concurrency}",
                        cases,
                        workdir,
                        mode="reject",
                        latency=args.compare_latency,
                        concurrency=args.compare_concurrency,
                        adaptive=adaptive,
                        **common,
                    )
                )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(
        f"rate limit: {args.rpm:g} requests/minute, burst {args.burst:g}; bundled set at scale "
        f"{args.scale:g} ({kept} cases); concurrency {args.concurrency}, latency "
        f"{args.latency:g} s (compare: {args.compare_concurrency} at {args.compare_latency:g} s)"
    )
    header = "run | wall s | calls | bound s | ratio | 429s | over limit | errors | status | exit"
    print(header)
    ok = True
    for run in runs:
        bound = run.bound_s(args.rpm)
        print(
            f"{run.label} | {run.wall_s:.1f} | {run.calls} | {bound:.1f} | "
            f"{run.wall_s / bound:.3f} | {run.rate_limited} | {run.over_limit} | "
            f"{run.scorer_errors} | {run.status} | {run.exit_code}"
        )
        scoring = f"{run.scoring_s:.1f} s" if run.scoring_s is not None else "-"
        print(f"    scoring alone {scoring}; {run.pacing}")
        print(f"    {run.outcome}")
        failed = run.exit_code != 0 or run.scorer_errors != 0 or run.status != "complete"
        if failed:
            ok = False
        if not run.label.startswith(("fixed", "adaptive")):
            within = run.wall_s <= TARGET_FACTOR * bound
            print(f"    within {TARGET_FACTOR}× the bound: {'met' if within else 'MISSED'}")
            ok = ok and within
    fixed = next((r for r in runs if r.label.startswith("fixed")), None)
    adaptive = next((r for r in runs if r.label.startswith("adaptive")), None)
    if fixed is not None and adaptive is not None:
        ratio = adaptive.wall_s / fixed.wall_s
        met = ratio <= COMPARE_FACTOR
        print(f"adaptive / fixed: ratio {ratio:.3f} ({'met' if met else 'MISSED'})")
        ok = ok and met
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
