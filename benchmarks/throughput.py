"""Scoring throughput of ``pytest --screeneval`` with the openai scorer against a local server.

    python benchmarks/throughput.py [--n 1000] [--latency 0.2] [--concurrency 16] [--sample 50]

Starts the test ChatServer in its own process (every answer waits ``--latency`` seconds), writes
N synthetic cases (a rubric of 5 criteria, short invented resumes, no variants) into a temporary
project whose ini names the ``openai`` scorer, runs ``pytest --screeneval`` there in a subprocess
at ``screeneval_concurrency = C`` with perturbations on (``--examples``), then as many calls
through a reference loop (asyncio + AsyncOpenAI + a semaphore, a script in a process of its own,
timed whole as the pytest run is, and its loop alone), and then the same requests with
a plain sequential loop of the ``openai`` client (for N above ``--sample`` it times that many and
extrapolates, and says so). The table compares both with the limit N·L/C; the server reports the
most requests it saw in flight at once. The design target: at N=1000, L=0.2 s, C=16 the whole
pytest run takes at most 1.15 × N·L/C + 2 s. The last line reads ``ratio R`` (whole pytest
run / limit).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from pytest_screeneval.golden.model import Case, Criterion, Expectation, Rubric, Scale
from pytest_screeneval.golden.write import dump_case, dump_rubric
from pytest_screeneval.scoring.openai.answer import response_format
from pytest_screeneval.scoring.openai.prompt import load_prompt_template

__all__ = ["main"]

MODEL = "bench-screener-2025-01-15"
TARGET_FACTOR = 1.15
TARGET_STARTUP_S = 2.0
BUNDLED_FACTOR = 1.3

RUBRIC = Rubric(
    id="bench-backend",
    version="1",
    scale=Scale(1, 5),
    advance_at=50.0,
    criteria=(
        Criterion("python", "Builds and maintains production Python services.", 2.0),
        Criterion("cloud", "Runs services on cloud infrastructure.", 1.0),
        Criterion("databases", "Designs and operates relational databases.", 1.0),
        Criterion("leadership", "Leads engineers and projects to delivery.", 1.0),
        Criterion("communication", "Explains technical work clearly in writing and speech.", 1.0),
    ),
)
SLICES = (
    "career-changer",
    "returner",
    "contractor",
    "bootcamp",
    "self-taught",
    "senior",
    "junior",
    "non-traditional",
)
# Invented employers and tools; the resumes carry no name, address, e-mail or phone number.
EMPLOYERS = ("Harbor Lane Freight", "Quillstone Books", "Mossgate Energy", "Tidewell Clinics")
CLOUDS = ("AWS with Docker and Terraform", "GCP with Kubernetes", "Azure with Helm charts")
STORES = ("PostgreSQL", "MySQL", "Redis and PostgreSQL", "SQLite and PostgreSQL")


def resume(i: int) -> str:
    """A short invented resume; no two are equal, so every case is its own request."""
    employer = EMPLOYERS[i % len(EMPLOYERS)]
    start = 2008 + i % 12
    return (
        f"Candidate {i:05d}\n"
        f"Backend engineer at {employer}, {start}-2024.\n"
        f"- Wrote Python services for {40 + i % 200} internal users, tested with pytest.\n"
        f"- Ran the services on {CLOUDS[i % len(CLOUDS)]}.\n"
        f"- Tuned {STORES[i % len(STORES)]} queries and planned schema migrations.\n"
        f"- Led a team of {2 + i % 6} engineers through {1 + i % 4} releases.\n"
        "- Presented the quarterly platform review to the operations staff.\n"
    )


def make_case(i: int) -> Case:
    # The server scores every criterion 3; expectations of 2..4 keep every item within
    # tolerance 1 while the agreement table still has something to count.
    expected = {
        c.name: Expectation(c.name, 2 + (i + j) % 3, "rater-bench", "2026-01-15")
        for j, c in enumerate(RUBRIC.criteria)
    }
    label = SLICES[i % len(SLICES)]
    return Case(
        id=f"bench-{i:05d}",
        label=label,
        rubric=RUBRIC.id,
        input_text=resume(i),
        expected=expected,
        slices=("synthetic",),
        source="benchmarks/throughput.py: generated, invented",
    )


def write_project(root: Path, n: int, base_url: str, concurrency: int, examples: int = 2) -> Path:
    cases = root / "cases"
    cases.mkdir(parents=True)
    (cases / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (cases / "variants.yaml").write_text("attributes: {}\n", encoding="utf-8")  # none, on purpose
    for slice_name in SLICES:
        (cases / slice_name).mkdir()
    for i in range(n):
        case = make_case(i)
        (cases / case.label / f"{case.id}.yaml").write_text(dump_case(case), encoding="utf-8")
    ini = {
        "screeneval_scorer": "openai",
        "screeneval_openai_base_url": base_url,
        "screeneval_openai_model": MODEL,
        "screeneval_concurrency": str(concurrency),
        "screeneval_perturbation_examples": str(examples),
        "screeneval_db": f"sqlite:///{(root / 'store.db').as_posix()}",
    }
    (root / "pytest.ini").write_text(
        "[pytest]\n" + "".join(f"{k} = {v}\n" for k, v in ini.items()), encoding="utf-8"
    )
    return root


# -- the server ------------------------------------------------------------------------------


class Server:
    """The ChatServer in its own process (its own GIL), stopped by the pid we started."""

    def __init__(self, latency: float) -> None:
        # -c rather than -m: the package imports the module first, and runpy warns about that.
        run = "from pytest_screeneval.testing.chat_server import main; main()"
        command = [sys.executable, "-c", run, "--latency", str(latency)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            self.stop()
            raise SystemExit("the ChatServer did not start")
        self.root = self.base_url.removesuffix("/v1")

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.root}/stats", timeout=10) as answer:
            counts = dict(json.load(answer))
        counts["connections"] -= 1  # the connection that asked for these counts
        return counts

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.root}/stats/reset", b"{}", method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


# -- the runs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PytestRun:
    wall_s: float
    scoring_s: float | None
    scored: int | None
    exit_code: int
    outcome: str


SCORED_LINE = re.compile(r"(\d+) inputs scored in ([\d.]+) s")
OUTCOME_LINE = re.compile(r"^=+ (.*\d+ (?:passed|failed|errors?)\b.*) =+$", re.MULTILINE)


def pytest_env() -> dict[str, str]:
    # As on a user's machine: bytecode and pytest's rewritten-assertion caches are written, so
    # a run does not compile openai, hypothesis and the plugin afresh (a sandbox may turn that
    # off with PYTHONDONTWRITEBYTECODE, which costs every run about a second here).
    drop = {"PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def timed_pytest(cwd: Path, args: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, env=pytest_env(), check=False
    )
    return time.perf_counter() - started, done


def run_pytest(project: Path, extra: list[str]) -> PytestRun:
    wall, done = timed_pytest(project, ["--screeneval", *extra])
    scored = SCORED_LINE.search(done.stdout)
    outcome = OUTCOME_LINE.findall(done.stdout)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-2000:])
    last = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    return PytestRun(
        wall,
        float(scored.group(2)) if scored else None,
        int(scored.group(1)) if scored else None,
        done.returncode,
        outcome[-1].strip() if outcome else last[0],
    )


def pytest_floor(workdir: Path, items: int) -> float:
    """Wall time of plain pytest on ``items`` trivial parametrized tests (no --screeneval)."""
    folder = workdir / f"floor-{items}"
    folder.mkdir(exist_ok=True)
    (folder / "test_trivial.py").write_text(
        "import pytest\n\n\n"
        f"@pytest.mark.parametrize('i', range({items}))\n"
        "def test_trivial(i):\n    pass\n",
        encoding="utf-8",
    )
    wall, done = timed_pytest(folder, [])
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-2000:])
    return wall


REFERENCE_SCRIPT = """\
import asyncio, json, sys, time
from openai import AsyncOpenAI

requests = json.load(open(sys.argv[1], encoding="utf-8"))
base_url, concurrency, model = sys.argv[2], int(sys.argv[3]), sys.argv[4]


async def run():
    limit = asyncio.Semaphore(concurrency)
    async with AsyncOpenAI(base_url=base_url, api_key="screeneval-no-key", max_retries=0) as c:

        async def one(request):
            async with limit:
                completion = await c.chat.completions.create(
                    model=model, temperature=0.0, **request
                )
            json.loads(completion.choices[0].message.content or "")

        started = time.perf_counter()
        await asyncio.gather(*(one(r) for r in requests))
        return time.perf_counter() - started


print(f"LOOP {asyncio.run(run()):.6f}")
"""


@dataclass(frozen=True)
class ReferenceRun:
    whole_s: float  # the whole process: interpreter, import openai, the loop, exit
    loop_s: float  # the loop alone, as the process timed it


def reference_loop(
    base_url: str, texts: list[str], concurrency: int, workdir: Path
) -> ReferenceRun:
    """asyncio + AsyncOpenAI + a semaphore over the same number of calls, as a hand-written
    script in a process of its own: what a bare loop achieves, the throughput target's
    yardstick (pytest-screeneval at most 1.15x its time). The requests are built here, so the script
    imports only asyncio, json and openai; it is timed whole, as the pytest run is."""
    template = load_prompt_template(None)
    fmt = response_format(RUBRIC)
    requests = []
    for text in texts:
        system, user = template.render(RUBRIC, text)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        requests.append({"messages": messages, "response_format": fmt})
    script = workdir / "reference_loop.py"
    script.write_text(REFERENCE_SCRIPT, encoding="utf-8")
    data = workdir / "reference_requests.json"
    data.write_text(json.dumps(requests), encoding="utf-8")
    command = [sys.executable, str(script), str(data), base_url, str(concurrency), MODEL]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=pytest_env(), check=False)
    whole = time.perf_counter() - started
    found = re.search(r"^LOOP ([\d.]+)$", done.stdout, re.MULTILINE)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the reference loop failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return ReferenceRun(whole, float(found.group(1)))


def sequential_loop(base_url: str, n: int, sample: int) -> tuple[float, int]:
    """Seconds for ``min(n, sample)`` requests one after another; the count actually timed."""
    from openai import OpenAI

    template = load_prompt_template(None)
    fmt = response_format(RUBRIC)
    count = min(n, sample) if sample > 0 else n
    with OpenAI(base_url=base_url, api_key="screeneval-no-key", max_retries=0) as client:
        started = time.perf_counter()
        for i in range(count):
            system, user = template.render(RUBRIC, resume(i))
            completion = client.chat.completions.create(  # type: ignore[call-overload]
                model=MODEL,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                response_format=fmt,
                temperature=0.0,
            )
            json.loads(completion.choices[0].message.content or "")
        return time.perf_counter() - started, count


# -- the report ------------------------------------------------------------------------------


def table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="cases (one request each)")
    parser.add_argument("--latency", type=float, default=0.2, help="server seconds per answer")
    parser.add_argument("--concurrency", type=int, default=16, help="screeneval_concurrency")
    parser.add_argument(
        "--sample",
        type=int,
        default=50,
        help="requests the sequential loop times before extrapolating to N (0: all N)",
    )
    parser.add_argument(
        "--no-floor",
        action="store_true",
        help="skip timing plain pytest on trivial tests (the floor under any pytest run)",
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=2,
        help="screeneval_perturbation_examples (perturbations ON: N counts every call made)",
    )
    parser.add_argument(
        "--bundled",
        action="store_true",
        help="run the bundled golden set (cases/) with the openai scorer instead of N cases",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated project")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    n, latency, concurrency = args.n, args.latency, args.concurrency
    items = n * (len(RUBRIC.criteria) + 1 + 3 * (args.examples > 0))

    server = Server(latency)
    workdir = Path(tempfile.mkdtemp(prefix="screeneval-throughput-"))
    floors: dict[int, float] = {}
    try:
        pytest_floor(workdir, 1)  # warm-up: a first run's cache writes are not what we measure
        if args.bundled:
            project = Path(__file__).resolve().parents[1]
            extra = [
                "-o",
                "screeneval_scorer=openai",
                "-o",
                f"screeneval_openai_base_url={server.base_url}",
                "-o",
                f"screeneval_openai_model={MODEL}",
                "-o",
                f"screeneval_concurrency={concurrency}",
                "--screeneval-db",
                f"sqlite:///{(workdir / 'bundled.db').as_posix()}",
            ]
        else:
            project = write_project(
                workdir / "project", n, server.base_url, concurrency, args.examples
            )
            extra = []
            if not args.no_floor:
                floors = {1: pytest_floor(workdir, 1), items: pytest_floor(workdir, items)}
        run = run_pytest(project, [*extra, *args.pytest_args])
        pytest_stats = server.stats()
        server.reset()
        # N counts every call the run made (originals, perturbation examples, re-scores)
        n = pytest_stats["chat_requests"]
        texts = [resume(i) for i in range(n)]
        reference = reference_loop(server.base_url, texts, concurrency, workdir)
        reference_stats = server.stats()
        server.reset()
        sequential_s, timed = sequential_loop(server.base_url, n, args.sample)
        sequential_stats = server.stats()
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    sequential_total = sequential_s * n / timed
    limit = n * latency / concurrency
    target = BUNDLED_FACTOR * limit if args.bundled else TARGET_FACTOR * limit + TARGET_STARTUP_S
    sequential_note = "" if timed == n else f" (timed {timed}, extrapolated)"

    def ratio(seconds: float | None) -> str:
        return "" if seconds is None else f"{seconds / limit:.2f}"

    def secs(seconds: float | None) -> str:
        return "-" if seconds is None else f"{seconds:.2f}"

    kept = f"kept at {workdir}" if args.keep else "removed afterwards"
    print(
        f"throughput: {'the bundled set' if args.bundled else f'{args.n} cases'}, "
        f"N={n} calls, latency L={latency:g} s, concurrency C={concurrency}; "
        f"ChatServer in its own process; project {kept}"
    )
    print(f"pytest --screeneval: exit code {run.exit_code}; {run.outcome}")
    rest = None if run.scoring_s is None else run.wall_s - run.scoring_s
    rows: list[tuple[str, ...]] = [
        ("job", "seconds", "/ limit", "requests", "max in flight", "connections"),
        ("limit N·L/C", secs(limit), "1.00", str(n), str(concurrency), ""),
        (
            "pytest --screeneval, whole run",
            secs(run.wall_s),
            ratio(run.wall_s),
            str(pytest_stats["chat_requests"]),
            str(pytest_stats["max_in_flight"]),
            str(pytest_stats["connections"]),
        ),
        (
            "  scoring phase (plugin's own line)",
            secs(run.scoring_s),
            ratio(run.scoring_s),
            "",
            "",
            "",
        ),
        ("  everything else", secs(rest), ratio(rest), "", "", ""),
        (
            "reference: asyncio + AsyncOpenAI + semaphore, whole process",
            secs(reference.whole_s),
            ratio(reference.whole_s),
            str(reference_stats["chat_requests"]),
            str(reference_stats["max_in_flight"]),
            str(reference_stats["connections"]),
        ),
        ("  its loop alone", secs(reference.loop_s), ratio(reference.loop_s), "", "", ""),
        (
            f"sequential openai loop{sequential_note}",
            secs(sequential_total),
            ratio(sequential_total),
            str(sequential_stats["chat_requests"]),
            str(sequential_stats["max_in_flight"]),
            str(sequential_stats["connections"]),
        ),
        *(
            (f"floor: plain pytest, {k} trivial test(s)", secs(v), ratio(v), "", "", "")
            for k, v in floors.items()
        ),
        (
            f"target {BUNDLED_FACTOR:g} × limit"
            if args.bundled
            else f"target {TARGET_FACTOR:g} × limit + {TARGET_STARTUP_S:g} s",
            secs(target),
            ratio(target),
            "",
            "",
            "",
        ),
    ]
    for line in table(rows):
        print(line)
    complete = run.exit_code in (0, 1) and n > 0  # 1: items failed, the run still completed
    if not complete:
        print(
            f"target MISSED: the pytest run failed (exit code {run.exit_code}, "
            f"{pytest_stats['chat_requests']} of {n} requests); its output is on stderr"
        )
    else:
        verdict = "met" if run.wall_s <= target else "MISSED"
        print(
            f"target {verdict}: whole run {run.wall_s:.2f} s against {target:.2f} s; "
            f"{sequential_total / run.wall_s:.1f}x faster than the sequential loop"
        )
    print(
        f"side by side, whole processes: pytest-screeneval {run.wall_s:.2f} s, reference loop "
        f"{reference.whole_s:.2f} s, ratio {run.wall_s / reference.whole_s:.2f} "
        "(target at most 1.15 at N=200)"
    )
    if run.scoring_s is not None:
        print(
            f"side by side, loops alone: scoring phase {run.scoring_s:.2f} s, reference loop "
            f"{reference.loop_s:.2f} s, ratio {run.scoring_s / reference.loop_s:.2f}"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (the machine is shared)")
    print(f"ratio {run.wall_s / limit:.2f}")
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
