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
FAIRNESS = ("counterfactual-gap", "counterfactual-criterion-gap", "perturbation-shift")
BIAS_NAMES = "Aisha Bello,Marcus Boateng"  # read one level lower on python and cloud: 11 points
SHIFTS = {"SCREENEVAL_NOISE_FLIP": "0.03", "SCREENEVAL_NOISE_SHIFT": "0.1"}


@dataclass(frozen=True)
class Model:
    name: str
    env: dict[str, str]
    biased: bool = False
    decide: bool = False  # with screeneval_decide_budget = 2x the deterministic run's calls


MODELS = (
    Model("flip 10%", {"SCREENEVAL_NOISE_FLIP": "0.1"}),
    Model("flip 3% + shift 10%", SHIFTS),
    Model(
        "flip 3% + jump 2 levels 8% (heavier tail)",
        {"SCREENEVAL_NOISE_FLIP": "0.03", "SCREENEVAL_NOISE_JUMP": "0.08"},
    ),
    Model("flip 3% + shift 10%, decide budget", SHIFTS, decide=True),
    Model(
        "name bias 11 pts + flip 10%",
        {"SCREENEVAL_NOISE_FLIP": "0.1", "SCREENEVAL_NOISE_BIAS_NAMES": BIAS_NAMES},
        biased=True,
    ),
    Model(
        "name bias 5 pts (cloud) + flip 3% + shift 10%, decide budget",
        SHIFTS | {"SCREENEVAL_NOISE_BIAS_NAMES": BIAS_NAMES, "SCREENEVAL_NOISE_BIAS_ONLY": "cloud"},
        biased=True,
        decide=True,
    ),
)


@dataclass
class RunResult:
    gates: dict[str, str]
    items: Counter[str] = field(default_factory=Counter)  # kind -> run
    failed: Counter[str] = field(default_factory=Counter)  # kind -> failed
    failed_names: list[str] = field(default_factory=list)  # node ids of failed fairness items
    decide_calls: int = 0
    unstable: int = 0
    calls: int = 0
    extra_calls: int = 0


def run_once(scorer: str, env: dict[str, str], examples: int, decide: int = 0) -> RunResult:
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
            "-o",
            f"screeneval_decide_budget={decide}",
        ]
        environment = os.environ | env | {"PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            command, cwd=work, env=environment, capture_output=True, text=True, check=False
        )
        if not summary.exists():  # the run ended before its summary: show why, not a traceback
            raise SystemExit(
                f"a run wrote no summary (exit {done.returncode}); its last output:\n"
                + (done.stdout + done.stderr)[-3000:]
            )
        document = json.loads(summary.read_text(encoding="utf-8"))
        result = RunResult({g["name"]: g["status"] for g in document["gates"]})
        result.calls = int(document["calls"]["scored"])
        confirmation = document.get("confirmation") or {}
        result.extra_calls = int(confirmation.get("extra_calls", 0))
        result.unstable = len(confirmation.get("unstable", []))
        result.decide_calls = int(confirmation.get("decide_calls", 0))
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = case.get("name", "")
            kind = name.split("[")[0].split("::")[-1]
            if kind not in ("counterfactual", "perturbation"):
                continue
            result.items[kind] += 1
            if case.find("failure") is not None or case.find("error") is not None:
                result.failed[kind] += 1
                result.failed_names.append(name)
        return result


def false_findings(run: RunResult, biased: bool) -> int:
    """Fairness items failed that no bias explains (a biased model: those not on names)."""
    return sum(1 for name in run.failed_names if not (biased and "counterfactual[name]" in name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    parser.add_argument("--examples", type=int, default=10, help="perturbation examples")
    parser.add_argument(
        "--models",
        default=",".join(str(i) for i in range(len(MODELS))),
        help="which noise models, by index: "
        # argparse formats help with %: a model's name holds percentages
        + "; ".join(f"{i} {m.name}" for i, m in enumerate(MODELS)).replace("%", "%%"),
    )
    args = parser.parse_args()
    chosen = [MODELS[int(i)] for i in args.models.split(",")]

    deterministic = run_once("keyword", {}, args.examples)
    planned = deterministic.calls - deterministic.extra_calls
    print(
        f"deterministic keyword run: {deterministic.calls} calls "
        f"({deterministic.extra_calls} extra: {100 * deterministic.extra_calls / planned:.1f}% "
        f"of the planned {planned}; target at most 5%), fairness gates: "
        + ", ".join(f"{g} {s}" for g, s in sorted(deterministic.gates.items()) if "[" in g)
    )
    scorer = "examples.noisy_scorer:make_scorer"
    for model in chosen:
        decide = 2 * planned if model.decide else 0
        jobs = [model.env | {"SCREENEVAL_NOISE_SEED": str(seed)} for seed in range(args.seeds)]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            runs = list(
                pool.map(lambda env, d=decide: run_once(scorer, env, args.examples, d), jobs)
            )
        n = len(runs)
        print(f"\n## {model.name} ({n} seeds; decide budget {decide})", flush=True)
        print(f"  {'gate':38} {'FAIL':>6} {'INCONCL':>8} {'PASS':>6}")
        gates = sorted({g for r in runs for g in r.gates if g.startswith(FAIRNESS)})
        for gate in gates:
            statuses = Counter(r.gates.get(gate, "-") for r in runs)
            print(
                f"  {gate:38} {statuses['FAIL']:>3}/{n:<2} "
                f"{statuses['INCONCLUSIVE']:>5}/{n:<2} {statuses['PASS']:>3}/{n:<2}"
            )
        biased_gates = ("counterfactual-gap[name]", "counterfactual-criterion-gap[name]")
        unbiased_gates = [g for g in gates if not (model.biased and g in biased_gates)]
        false_gate_runs = sum(
            1 for r in runs if any(r.gates.get(g) == "FAIL" for g in unbiased_gates)
        )
        print(f"  runs with a false fairness gate FAIL: {false_gate_runs}/{n} (target 0)")
        false_items = [false_findings(r, model.biased) for r in runs]
        print(
            f"  false item findings per run: {false_items} "
            f"(runs with any: {sum(1 for f in false_items if f)}/{n}; target at most 1 in 20)"
        )
        counterfactual = [
            s for r in runs for g, s in r.gates.items() if g.startswith("counterfactual-gap")
        ]
        decided = sum(1 for s in counterfactual if s in ("PASS", "FAIL"))
        print(
            f"  counterfactual gate verdicts decided: {decided}/{len(counterfactual)} "
            f"({100 * decided / max(1, len(counterfactual)):.0f}%; target with the decide "
            "budget at least 90%)"
        )
        items = sum(sum(r.items.values()) for r in runs)
        unstable = sum(r.unstable for r in runs)
        print(f"  fairness items judged: {items}; reported unstable (not a finding): {unstable}")
        if model.biased:
            detected = sum(
                1
                for r in runs
                if r.gates.get("counterfactual-gap[name]") == "FAIL"
                and r.gates.get("counterfactual-gap[college]") != "FAIL"
                and r.gates.get("counterfactual-gap[gap]") != "FAIL"
            )
            print(f"  bias detected (name FAIL, college and gap not FAIL): {detected}/{n}")
        calls = [r.calls / deterministic.calls for r in runs]
        spent = [r.decide_calls for r in runs]
        print(
            f"  calls vs the deterministic run: mean {sum(calls) / n:.2f}x, "
            f"max {max(calls):.2f}x (target at most 3x); decide calls spent: mean "
            f"{sum(spent) / n:.0f}, max {max(spent)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
