"""Noise handling on the bundled golden set: false alarms, detection and cost over S seeds.

    python benchmarks/noise.py                  # 20 seeds per noise model (long: minutes per run)
    python benchmarks/noise.py --seeds 5 --jobs 2

For each noise model of ``examples/noisy_scorer.py`` (the offline keyword scorer plus seeded
level flips, per-call shifts and an optional name bias) it runs ``pytest --screeneval`` on a copy
of ``cases/`` once per seed, each in its own process with its own SQLite store, and reads the
JSON summary and the JUnit report. It prints, per model:

* the false-alarm rate of every fairness gate (FAIL in how many seeds; INCONCLUSIVE apart);
* the share of counterfactual and perturbation items failed;
* for the biased model, the detection rate: ``counterfactual-gap[name]`` FAIL with college and
  gap not FAIL;
* the calls spent against a deterministic run of the same selection (the keyword scorer).

The targets (docs/design.md, "Performance targets") are printed next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAIRNESS_GATES = (
    "counterfactual-gap[college]",
    "counterfactual-gap[gap]",
    "counterfactual-gap[name]",
    "perturbation-shift[ocr-noise]",
    "perturbation-shift[reformat]",
    "perturbation-shift[reorder-sections]",
)
BIAS_NAMES = "Aisha Bello,Marcus Boateng"  # read one level lower on python and cloud: 11 points


@dataclass(frozen=True)
class Model:
    name: str
    env: dict[str, str]
    biased: bool = False


MODELS = (
    Model("flip 10%", {"SCREENEVAL_NOISE_FLIP": "0.1"}),
    Model(
        "flip 3% + shift 10%", {"SCREENEVAL_NOISE_FLIP": "0.03", "SCREENEVAL_NOISE_SHIFT": "0.1"}
    ),
    Model(
        "name bias 11 pts + flip 10%",
        {"SCREENEVAL_NOISE_FLIP": "0.1", "SCREENEVAL_NOISE_BIAS_NAMES": BIAS_NAMES},
        biased=True,
    ),
)


@dataclass
class RunResult:
    gates: dict[str, str]
    items: Counter[str] = field(default_factory=Counter)  # kind -> run
    failed: Counter[str] = field(default_factory=Counter)  # kind -> failed
    unstable: int = 0
    calls: int = 0
    extra_calls: int = 0


def run_once(scorer: str, env: dict[str, str], examples: int) -> RunResult:
    with tempfile.TemporaryDirectory(prefix="screeneval-noise-") as folder:
        work = Path(folder)
        shutil.copytree(ROOT / "cases", work / "cases")
        (work / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        summary, junit = work / "summary.json", work / "junit.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "--screeneval",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--screeneval-db=sqlite:///{work / 'store.db'}",
            f"--screeneval-json={summary}",
            f"--junitxml={junit}",
            "-o",
            f"screeneval_scorer={scorer}",
            "-o",
            f"screeneval_perturbation_examples={examples}",
        ]
        environment = os.environ | env | {"PYTHONPATH": str(ROOT)}
        subprocess.run(command, cwd=work, env=environment, capture_output=True, check=False)
        document = json.loads(summary.read_text(encoding="utf-8"))
        result = RunResult({g["name"]: g["status"] for g in document["gates"]})
        result.calls = int(document["calls"]["scored"])
        confirmation = document.get("confirmation") or {}
        result.extra_calls = int(confirmation.get("extra_calls", 0))
        result.unstable = len(confirmation.get("unstable", []))
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = case.get("name", "")
            kind = name.split("[")[0].split("::")[-1]
            if kind not in ("counterfactual", "perturbation"):
                continue
            result.items[kind] += 1
            if case.find("failure") is not None or case.find("error") is not None:
                result.failed[kind] += 1
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    parser.add_argument("--examples", type=int, default=10, help="perturbation examples")
    parser.add_argument(
        "--models",
        default=",".join(str(i) for i in range(len(MODELS))),
        help="which noise models, by index (0 flips, 1 flips + shifts, 2 name bias)",
    )
    args = parser.parse_args()
    chosen = [MODELS[int(i)] for i in args.models.split(",")]

    deterministic = run_once("keyword", {}, args.examples)
    print(
        f"deterministic keyword run: {deterministic.calls} calls "
        f"({deterministic.extra_calls} for the noise probe), "
        f"fairness gates: {', '.join(f'{g} {deterministic.gates.get(g)}' for g in FAIRNESS_GATES)}"
    )
    scorer = "examples.noisy_scorer:make_scorer"
    for model in chosen:
        jobs = [model.env | {"SCREENEVAL_NOISE_SEED": str(seed)} for seed in range(args.seeds)]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            runs = list(pool.map(lambda env: run_once(scorer, env, args.examples), jobs))
        print(f"\n## {model.name} ({len(runs)} seeds)", flush=True)
        print(f"  {'gate':38} {'FAIL':>6} {'INCONCL':>8} {'PASS':>6}")
        for gate in FAIRNESS_GATES:
            statuses = Counter(r.gates.get(gate, "-") for r in runs)
            print(
                f"  {gate:38} {statuses['FAIL']:>3}/{len(runs):<2} "
                f"{statuses['INCONCLUSIVE']:>5}/{len(runs):<2} {statuses['PASS']:>3}/{len(runs):<2}"
            )
        items = sum(sum(r.items.values()) for r in runs)
        failed = sum(sum(r.failed.values()) for r in runs)
        unstable = sum(r.unstable for r in runs)
        share = 100.0 * failed / items if items else 0.0
        print(
            f"  counterfactual + perturbation items failed: {failed}/{items} ({share:.1f}%); "
            f"reported unstable (not a finding): {unstable}"
        )
        if model.biased:
            detected = sum(
                1
                for r in runs
                if r.gates.get("counterfactual-gap[name]") == "FAIL"
                and r.gates.get("counterfactual-gap[college]") != "FAIL"
                and r.gates.get("counterfactual-gap[gap]") != "FAIL"
            )
            print(f"  bias detected (name FAIL, college and gap not FAIL): {detected}/{len(runs)}")
        calls = [r.calls / deterministic.calls for r in runs]
        print(
            f"  calls vs the deterministic run: mean {sum(calls) / len(calls):.2f}×, "
            f"max {max(calls):.2f}× (target at most 3×)"
        )


if __name__ == "__main__":
    main()
