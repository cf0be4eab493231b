"""The layout test itself fails on a copy of the tree with outward imports, naming each
(tests/unit/test_layout.py checks its functions find them; this runs the file, as CI would)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYOUT_TEST = REPO / "tests" / "unit" / "test_layout.py"
OUTWARD = [  # evidence -> settings, store -> report, scoring -> testing
    ("evidence/noise.py", "from pytest_screeneval.settings.options import OPTIONS"),
    ("store/values.py", "from pytest_screeneval.report import json"),
    ("scoring/keyword.py", "from pytest_screeneval.testing import chat_server"),
]


def test_the_layout_test_fails_on_a_copy_with_outward_imports(tmp_path: Path) -> None:
    copy = tmp_path / "pytest_screeneval"
    shutil.copytree(REPO / "pytest_screeneval", copy, ignore=shutil.ignore_patterns("__pycache__"))
    for module, line in OUTWARD:
        target = copy / module
        target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", str(LAYOUT_TEST), "-q", "-p", "no:cacheprovider"),
            *("--noconftest", "-k", "arrows or allowlist or cycles"),
        ],
        env={**os.environ, "SCREENEVAL_LAYOUT_ROOT": str(copy)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    for module, _ in OUTWARD:
        dotted = "pytest_screeneval." + module.removesuffix(".py").replace("/", ".")
        assert f"{dotted} imports" in result.stdout


def test_the_layout_test_passes_on_an_unchanged_copy(tmp_path: Path) -> None:
    copy = tmp_path / "pytest_screeneval"
    shutil.copytree(REPO / "pytest_screeneval", copy, ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", str(LAYOUT_TEST), "-q", "-p", "no:cacheprovider"),
            *("--noconftest", "-k", "arrows or allowlist or cycles"),
        ],
        env={**os.environ, "SCREENEVAL_LAYOUT_ROOT": str(copy)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
