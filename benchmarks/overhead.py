"""Plugin overhead: N (case, criterion) items with an instant scorer vs N trivial pytest tests.

    python benchmarks/overhead.py --items 10000

Generates, in a temporary folder, a golden set of N/5 synthetic cases on a 5-criterion rubric
(no variants, no perturbations) with a conftest scorer that answers instantly, and a module of N
trivial parametrized tests. Runs ``pytest --screeneval`` (SQLite store) and ``pytest`` on the
trivial module, each in its own process, and prints wall time and peak memory side by side, with
the peak memory of a run of one tenth the size to show how memory grows per item. It also runs
plain pytest on trivial tests of the golden set's shape (a file per case, a test per item):
pytest's own cost for that many items in that many files, to read the ratio by. The last line
reads ``ratio R``: screeneval / trivial, each timed as the whole process, interpreter exit
included (target at most 1.5).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CRITERIA = ("python", "cloud", "databases", "leadership", "communication")

RUBRIC = """\
id: overhead
version: '1'
scale: {min: 1, max: 5}
advance_at: 50
criteria:
""" + "".join(f"  - {{name: {c}, description: {c} skills}}\n" for c in CRITERIA)

CASE = """\
id: ov-@ID@
label: slice-@SLICE@
rubric: overhead
source: benchmarks/overhead.py
input_text: |
  Candidate @ID@
  Backend engineer at Corvid Freight, 2019 - 2024
  - Built payment services in Python on AWS with PostgreSQL
  - Mentored two engineers and wrote design docs
expected:
""" + "".join(f"  {c}: {{score: 3, set_by: rater-ov, set_at: '2026-10-01'}}\n" for c in CRITERIA)

CONFTEST = """
from pytest_screeneval import CriterionScore, ScorerIdentity


class InstantScorer:
    def __init__(self, rubric):
        self.identity = ScorerIdentity("instant", "instant-v1", "0" * 64, rubric.sha, 0.0)

    def score(self, text, rubric):
        return [
            CriterionScore(
                c,
                3,
                f"The {c} criterion scores 3 because the resume says it built payment services.",
            )
            for c in rubric.criterion_names
        ]


def pytest_screeneval_scorer(config, rubric):
    return InstantScorer(rubric)
"""

TRIVIAL = """\
import pytest


@pytest.mark.parametrize("n", range({n}))
def test_trivial(n):
    assert n >= 0
"""

# one case file's items: a test per criterion and one for the decision
SHAPED = """\
import pytest


@pytest.mark.parametrize("n", range({n}))
def test_item(n):
    assert n >= 0
"""

MEASURE = """\
import json, resource, sys, time
import pytest
started = time.perf_counter()
code = pytest.main(sys.argv[1:])
wall = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("MEASURE " + json.dumps({"code": int(code), "wall": wall, "peak_kib": peak}))
"""


def make_project(root: Path, items: int) -> None:
    cases = root / "cases"
    cases.mkdir(parents=True)
    (cases / "rubric.yaml").write_text(RUBRIC)
    (cases / "variants.yaml").write_text("attributes: {}\n")  # no counterfactuals, on purpose
    for i in range(items // len(CRITERIA)):
        folder = cases / f"slice-{i % 10}"
        folder.mkdir(exist_ok=True)
        text = CASE.replace("@ID@", f"{i:05d}").replace("@SLICE@", str(i % 10))
        (folder / f"ov-{i:05d}.yaml").write_text(text)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pytest.ini").write_text(
        "[pytest]\n"
        f"screeneval_db = sqlite:///{(root / 'store.db').as_posix()}\n"
        "screeneval_perturbation_examples = 0\n"
    )
    (root / "test_trivial.py").write_text(TRIVIAL.format(n=items))
    # the same shape as the golden set: a file of trivial tests per case, one per item
    shaped = root / "same_shape"
    for i in range(items // len(CRITERIA)):
        folder = shaped / f"slice_{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"test_case_{i:05d}.py").write_text(SHAPED.format(n=len(CRITERIA) + 1))
    (root / "measure.py").write_text(MEASURE)


def measure(root: Path, *args: str) -> dict[str, float]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(root / "measure.py"), "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    total = time.perf_counter() - started
    line = next((x for x in out.stdout.splitlines() if x.startswith("MEASURE ")), None)
    if line is None or json.loads(line[8:])["code"] != 0:
        sys.exit(f"pytest {' '.join(args)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    result = json.loads(line[8:])
    result["process"] = total
    return result


def run(items: int, *, shaped: bool = False) -> tuple[dict[str, float], ...]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, items)
        screeneval = measure(root, "--screeneval")
        trivial = measure(root, "test_trivial.py")
        if not shaped:
            return screeneval, trivial
        same_shape = measure(root, "same_shape")
    return screeneval, trivial, same_shape


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    args = parser.parse_args()
    small_items = max(len(CRITERIA), args.items // 10)
    small, _ = run(small_items)
    big, trivial, same_shape = run(args.items, shaped=True)
    cases = args.items // len(CRITERIA)
    print(
        f"{args.items} (case, criterion) items = {cases} cases x {len(CRITERIA)} criteria "
        f"(+ {cases} decision items), SQLite store, instant in-process scorer"
    )
    print(f"{'job':<42}{'wall s':>9}{'process s':>11}{'peak MiB':>10}")
    print(
        f"{'pytest, trivial parametrized tests':<42}{trivial['wall']:>9.2f}"
        f"{trivial['process']:>11.2f}{trivial['peak_kib'] / 1024:>10.1f}"
    )
    shaped_items = cases * (len(CRITERIA) + 1)
    print(
        f"{f'pytest, {shaped_items} trivial tests in {cases} files':<42}"
        f"{same_shape['wall']:>9.2f}{same_shape['process']:>11.2f}"
        f"{same_shape['peak_kib'] / 1024:>10.1f}"
    )
    print(
        f"{f'pytest --screeneval, {small_items} items':<42}{small['wall']:>9.2f}"
        f"{small['process']:>11.2f}{small['peak_kib'] / 1024:>10.1f}"
    )
    print(
        f"{f'pytest --screeneval, {args.items} items':<42}{big['wall']:>9.2f}"
        f"{big['process']:>11.2f}{big['peak_kib'] / 1024:>10.1f}"
    )
    growth = (big["peak_kib"] - small["peak_kib"]) / (args.items - small_items)
    print(f"memory per item: {growth:.2f} KiB (peak growth from {small_items} to {args.items})")
    # the whole process, start-up and interpreter exit included (exit must not walk
    # the heap); ``wall`` is pytest.main alone
    # pytest's own cost for the golden set's shape (its items, a file per case), for reading
    # the ratio: what the plugin adds is the rest
    print(
        f"plugin over pytest on the same shape: {big['process'] / same_shape['process']:.2f} "
        f"(pytest --screeneval / {shaped_items} trivial tests in {cases} files)"
    )
    print(f"ratio {big['process'] / trivial['process']:.2f}")


if __name__ == "__main__":
    main()
