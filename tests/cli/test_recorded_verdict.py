"""The gate verdict a run stored is shown wherever the run is shown (runs,
show, the report's JSON and HTML), and a replaced baseline is not "accepted by" any more."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.golden_factory import make_golden
from test_commands import all_three, run_cli, scored_run

from pytest_screeneval.store.database import Store

FAILED_VERDICT = {
    "gates": [
        {"name": "agreement", "value": 62.5, "limit": ">= 80", "n": 8, "status": "FAIL"},
        {"name": "name-gap", "value": 4.0, "limit": "<= 3", "n": 8, "status": "INCONCLUSIVE"},
        {"name": "moved-share", "value": 0.0, "limit": "<= 10", "n": 8, "status": "PASS"},
    ],
    "crossings": [],
}


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{(tmp_path / 'store.db').as_posix()}"


@pytest.fixture
def runs(store_url: str) -> tuple[int, int, int]:
    with Store.open(store_url) as store:
        store.sync_golden_set(make_golden())
        first = scored_run(store, {"cc-001": all_three(3), "cc-002": all_three(2)})
        store.accept(first, by="Priya Venkat", note="first baseline")
        second = scored_run(store, {"cc-001": all_three(3), "cc-002": all_three(2)}, baseline=first)
        store.accept(second, by="Lena Frost", note="second baseline")
        failed = scored_run(
            store,
            {"cc-001": all_three(1), "cc-002": all_three(1)},
            baseline=second,
            verdict=FAILED_VERDICT,
        )
    return first, second, failed


def test_runs_shows_gates_and_a_replaced_baseline(
    store_url: str, runs: tuple[int, int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, failed = runs
    code, out, err = run_cli(capsys, "--db", store_url, "runs")
    assert (code, err) == (0, "")
    header, *rows = out.splitlines()
    assert header.split()[:3] == ["id", "status", "gates"]
    by_id = {row.split()[0]: row for row in rows}
    assert by_id[str(failed)].split()[2] == "FAIL"
    assert by_id[str(failed)].split()[3] == "1"
    assert by_id[str(first)].endswith(f"was baseline, replaced by run {second}")
    assert by_id[str(second)].endswith("Lena Frost")
    assert "Priya Venkat" not in out


def test_show_has_the_gate_verdict_and_the_replacement(
    store_url: str, runs: tuple[int, int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, failed = runs
    _, out, _ = run_cli(capsys, "--db", store_url, "show", str(failed))
    assert "  gates        1 of 3 gates failed (agreement); 1 INCONCLUSIVE" in out
    assert any(line.split()[:2] == ["agreement", "FAIL"] for line in out.splitlines())
    _, out, _ = run_cli(capsys, "--db", store_url, "show", str(first))
    assert f"  baseline     no longer: replaced by run {second}" in out
    assert "  gates        no gate failed (0 gates)" in out


def test_the_report_carries_the_gate_table(
    store_url: str,
    runs: tuple[int, int, int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, _, failed = runs
    html, data = tmp_path / "r.html", tmp_path / "r.json"
    code, _, err = run_cli(
        capsys, "--db", store_url, "report", str(failed), "--html", str(html), "--json", str(data)
    )
    assert (code, err) == (0, "")
    verdict = json.loads(data.read_text())["verdict"]
    assert verdict["failed"] == ["agreement"]
    assert [g["status"] for g in verdict["gates"]] == ["FAIL", "INCONCLUSIVE", "PASS"]
    page = html.read_text()
    glance = page[page.index('id="summary"') : page.index('id="gates"')]
    assert "<dt>Gates</dt>" in glance and "1 of 3 gates failed (agreement)" in glance
    gates = page[page.index('id="gates"') : page.index('id="run"')]
    assert gates.count("<tr>") >= 4 and "INCONCLUSIVE" in gates
    assert "Crossings 0 (0 not reviewed)" not in page
