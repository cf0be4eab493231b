"""The bundled golden set is what its generator writes: regenerated into a temporary folder, it
equals cases/ file for file, byte for byte."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_scripts_generate_cases_writes_cases_exactly(tmp_path: Path) -> None:
    out = tmp_path / "cases"
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "generate_cases.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    bundled = REPO / "cases"
    assert _files(out) == _files(bundled)
    differ = [
        name
        for name in sorted(_files(bundled))
        if not filecmp.cmp(out / name, bundled / name, False)
    ]
    assert differ == [], f"cases/ differs from what scripts/generate_cases.py writes: {differ}"
