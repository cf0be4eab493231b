"""The audit page in a real headless Chromium: it renders its tables and charts, logs no error
and asks the network for nothing but itself.

Chromium is Debian's ``chromium`` package (CI's ``.ci/run`` installs it). Its absence is a
failure where ``CI`` is set, and a skip with the reason elsewhere (see ``cdp.chromium_or_skip``).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from support.audit_scenario import build_scenario
from support.cdp import Browser, chromium, chromium_or_skip

from pytest_screeneval.report.audit import build_audit
from pytest_screeneval.report.html.page import SECTIONS, render_html


def chromium_path() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    scenario = build_scenario(f"sqlite:///{(folder / 'store.db').as_posix()}")
    try:
        document = build_audit(
            scenario.store, scenario.runs["third"], final_decision_by="Morgan Ellery, recruiter"
        )
    finally:
        scenario.store.close()
    path = folder / "audit.html"
    path.write_text(render_html(document), encoding="utf-8")
    return path


def load(browser: Browser, path: Path) -> None:
    for domain in ("Page", "Runtime", "Network", "Log"):
        browser.call(f"{domain}.enable")
    browser.call("Page.navigate", url=path.as_uri())
    browser.wait_for("Page.loadEventFired")


def test_page_renders_in_chromium(page_file: Path, tmp_path: Path) -> None:
    with chromium(chromium_path(), tmp_path / "profile") as browser:
        load(browser, page_file)
        counts = browser.evaluate(
            "({sections: document.querySelectorAll('main section').length,"
            " tables: document.querySelectorAll('table').length,"
            " rows: document.querySelectorAll('tbody tr').length,"
            " charts: document.querySelectorAll('svg.chart').length,"
            " drawn: [...document.querySelectorAll('svg.chart')]"
            "   .filter(s => s.getBoundingClientRect().width > 300"
            "     && s.querySelectorAll('rect, circle').length > 0).length,"
            " resources: performance.getEntriesByType('resource').length,"
            " ids: [...document.querySelectorAll('main section')].map(s => s.id)})"
        )
        width = browser.evaluate("document.documentElement.scrollWidth")
        height = browser.evaluate("document.documentElement.scrollHeight")
        shot = browser.call(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        )
        events = list(browser.events)
    (tmp_path / "audit.png").write_bytes(base64.b64decode(shot["data"]))
    assert (tmp_path / "audit.png").stat().st_size > 20_000

    assert counts["ids"] == [ident for ident, _ in SECTIONS]
    assert counts["tables"] >= 20 and counts["rows"] >= 60
    # slices (Wilson whiskers), counterfactual gaps, score by sex, score by race
    assert counts["charts"] == 4 and counts["drawn"] == 4
    assert counts["resources"] == 0

    requests = [
        e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"
    ]
    assert requests == [page_file.as_uri()]
    errors = [e for e in events if e["method"] == "Runtime.exceptionThrown"]
    errors += [
        e
        for e in events
        if e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert")
    ]
    errors += [
        e
        for e in events
        if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"
    ]
    assert errors == []


def test_page_prints_without_navigation(page_file: Path, tmp_path: Path) -> None:
    with chromium(chromium_path(), tmp_path / "profile") as browser:
        load(browser, page_file)
        browser.call("Emulation.setEmulatedMedia", media="print")
        nav_display = browser.evaluate("getComputedStyle(document.querySelector('nav')).display")
        pdf = browser.call("Page.printToPDF", printBackground=False)
    assert nav_display == "none"
    assert base64.b64decode(pdf["data"])[:5] == b"%PDF-"


def test_page_with_a_historical_audit_renders_its_tables(tmp_path: Path) -> None:
    """The page ``screeneval audit`` writes: the historical section's facts, its rate tables
    labelled historical data, beside the golden set's tables labelled test data."""
    from pytest_screeneval.cli.main import main

    url = f"sqlite:///{(tmp_path / 'store.db').as_posix()}"
    scenario = build_scenario(url)
    run_id = scenario.runs["third"]
    scenario.store.close()
    export = Path(__file__).parents[1] / "data" / "dcwp" / "selection_by_cell.csv"
    page = tmp_path / "audit.html"
    status = main(
        [
            "--db", url, "audit", str(export), "--run", str(run_id), "--by", "Dana Ilves",
            "--selected", "selected", "--date", "applied_on", "--html", str(page),
        ]
    )  # fmt: skip
    assert status == 0
    with chromium(chromium_path(), tmp_path / "profile") as browser:
        load(browser, page)
        found = browser.evaluate(
            "({captions: [...document.querySelectorAll('#historical caption')]"
            "   .map(c => c.textContent),"
            " rows: document.querySelectorAll('#historical tbody tr').length,"
            " facts: document.querySelector('#historical dl.facts').innerText,"
            " testCaptions: [...document.querySelectorAll('#rates caption')]"
            "   .map(c => c.textContent),"
            " resources: performance.getEntriesByType('resource').length})"
        )
    assert "By sex — historical data (selection_by_cell.csv)" in found["captions"]
    assert "By sex × race/ethnicity — historical data (selection_by_cell.csv)" in found["captions"]
    assert found["rows"] >= 2 + 7 + 14
    assert "Valid until" in found["facts"] and "2025-01-01 to 2025-12-28" in found["facts"]
    assert all("test data" in caption for caption in found["testCaptions"] if "By " in caption)
    assert found["resources"] == 0
