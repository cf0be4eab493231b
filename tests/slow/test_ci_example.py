"""examples/ci/github-actions.yml: valid against GitHub's workflow schema, and its steps work.

The schema is the one check-jsonschema ships vendored (``vendor.github-workflows``), so the check
runs offline. The workflow's own shell steps are then run, as written, on a copy of this
repository's project (its bundled golden set and conftest), with ``GITHUB_STEP_SUMMARY`` set the
way a runner sets it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "examples" / "ci" / "github-actions.yml"


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema"]
    return subprocess.run(
        [*command, "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _steps() -> list[dict[str, Any]]:
    (job,) = _workflow()["jobs"].values()
    steps = job["steps"]
    assert isinstance(steps, list)
    return steps


def test_the_workflow_is_valid_against_githubs_schema() -> None:
    result = _validate(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8").replace("runs-on:", "runs_on:")
    broken.write_text(text, encoding="utf-8")
    assert _validate(broken).returncode != 0


def test_it_runs_on_pull_requests_and_keeps_the_reports() -> None:
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers
    runs = [str(step.get("run", "")) for step in _steps()]
    scoring = next(run for run in runs if run.startswith("pytest --screeneval"))
    for flag in ("--junitxml=reports/junit.xml", "--screeneval-markdown=reports/summary.md"):
        assert flag in scoring
    assert any("screeneval report" in run and "reports/audit.html" in run for run in runs)
    upload = next(
        s for s in _steps() if str(s.get("uses", "")).startswith("actions/upload-artifact")
    )
    assert upload["with"]["path"] == "reports/" and upload["if"] == "always()"


def test_its_steps_work_as_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copytree(REPO / "cases", project / "cases", ignore=shutil.ignore_patterns("*.py"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(REPO / name, project / name)
    summary = tmp_path / "step-summary.md"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SCREENEVAL_")}
    environment |= {
        "GITHUB_STEP_SUMMARY": str(summary),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    scripts = [str(s["run"]) for s in _steps() if "run" in s and "pip install" not in s["run"]]
    for script in scripts:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    reports = project / "reports"
    names = {p.name for p in reports.iterdir()}
    assert {"junit.xml", "run.json", "summary.md", "audit.html", "audit-head.json"} <= names
    run_id = json.loads((reports / "run.json").read_text())["run_id"]
    markdown = (reports / "summary.md").read_text(encoding="utf-8")
    assert markdown.startswith(f"## screeneval: PASS · run {run_id}\n")
    assert summary.read_text(encoding="utf-8").strip() == markdown.strip()
    assert "screeneval.chain_head" in (reports / "junit.xml").read_text(encoding="utf-8")


@pytest.mark.parametrize("flag", ["--screeneval-markdown", "--screeneval-json", "--junitxml"])
def test_every_flag_it_uses_is_documented(flag: str) -> None:
    options = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    assert flag in WORKFLOW.read_text(encoding="utf-8")
    assert flag == "--junitxml" or f"`{flag}`" in options
