"""The audit page laid out at 1280 and 390 px wide in headless Chromium.

The screenshots go to ``tmp_path`` (and to ``$SCREENEVAL_SCREENSHOTS`` when set, to look at);
the assertions check what a person saw in them: chart labels whole, the "Excluded because"
column at most two lines, nothing wider than a phone's screen but a table's own scroll box.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from support.audit_scenario import build_scenario
from support.cdp import Browser, chromium, chromium_or_skip
from support.golden_factory import make_rows, make_rubric, make_variants

from pytest_screeneval.report.audit import _counterfactual, _fairness_cases, build_audit
from pytest_screeneval.report.html.page import render_html
from pytest_screeneval.store.database import ScoreRow

# the bundled set's longest slice names, which the charts cut before
LONG_SLICES = (
    "hospitality-background",
    "non-traditional-education",
    "publishing-background",
    "lesser-known-college",
)
REASON = "under 2% of the data (1 of 56)"


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("layout")
    scenario = build_scenario(f"sqlite:///{(folder / 'store.db').as_posix()}")
    try:
        document: dict[str, Any] = build_audit(
            scenario.store, scenario.runs["third"], final_decision_by="Morgan Ellery, recruiter"
        )
    finally:
        scenario.store.close()
    for entry, name in zip(document["agreement"]["slices"], LONG_SLICES, strict=False):
        entry["slice"] = name
    document["rates"]["cases"]["breakdowns"][0]["categories"][0]["excluded"] = REASON
    path = folder / "audit.html"
    path.write_text(render_html(document), encoding="utf-8")
    return path


def open_at(browser: Browser, path: Path, width: int) -> None:
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=900,
        deviceScaleFactor=1,
        mobile=width < 600,
    )
    browser.call("Page.enable")
    browser.call("Page.navigate", url=path.as_uri())
    browser.wait_for("Page.loadEventFired")


def screenshot(browser: Browser, width: int, target: Path) -> None:
    height = browser.evaluate("document.documentElement.scrollHeight")
    shot = browser.call(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
    )
    target.write_bytes(base64.b64decode(shot["data"]))
    keep = os.environ.get("SCREENEVAL_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / target.name).write_bytes(target.read_bytes())


MEASURE = """(() => {
  const labels = [...document.querySelectorAll('svg.chart text')]
    .map(t => t.lastChild && t.lastChild.nodeValue || '');
  const outside = [...document.querySelectorAll('svg.chart text')].filter(t => {
    const box = t.getBBox(), view = t.ownerSVGElement.viewBox.baseVal;
    return box.x < 0 || box.x + box.width > view.width + 0.5;
  }).length;
  const reason = [...document.querySelectorAll('.reason')].map(r => {
    const lh = parseFloat(getComputedStyle(r).lineHeight);
    return Math.round(r.getBoundingClientRect().height / lh);
  });
  const facts = [...document.querySelectorAll('dl.facts dd')]
    .map(d => Math.round(d.getBoundingClientRect().width));
  const poking = [...document.querySelectorAll('body *')].filter(e =>
    e.getBoundingClientRect().right > innerWidth + 1 && !e.closest('.scroll')).length;
  return {labels, outside, reason, facts, poking,
          scrollWidth: document.documentElement.scrollWidth};
})()"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_fits_the_screen(page_file: Path, tmp_path: Path, width: int) -> None:
    with chromium(chromium_or_skip(), tmp_path / "profile") as browser:
        open_at(browser, page_file, width)
        measured = browser.evaluate(MEASURE)
        screenshot(browser, width, tmp_path / f"audit-{width}.png")
    assert (tmp_path / f"audit-{width}.png").stat().st_size > 20_000
    assert set(LONG_SLICES) <= set(measured["labels"])  # no label cut with "…"
    assert not any(label.endswith("…") for label in measured["labels"])
    assert measured["outside"] == 0
    assert measured["scrollWidth"] <= width and measured["poking"] == 0
    if width == 1280:
        assert measured["reason"] and max(measured["reason"]) <= 2
    else:
        # "At a glance" stacks: a value gets the width of the screen, not a sliver
        assert min(measured["facts"]) > 300


def test_with_no_gap_the_worst_pair_is_the_first_two_values_as_in_the_terminal() -> None:
    variants = make_variants()  # name: Ilona Varga, then Tomasz Brenner
    rows: list[ScoreRow] = []
    # rows arrive in key order, which sorts Tomasz before Ilona; the gap is 0 either way
    for value in ("Tomasz Brenner", "Ilona Varga"):
        rows += make_rows(1, ["cc-001"], variant_key=f"name={value}", score=3)
    document = _counterfactual(_fairness_cases(rows, make_rubric(), variants), 3.0)
    [name] = document["attributes"]
    assert name["worst_gap"] == 0.0
    assert name["worst_values"] == ["Ilona Varga", "Tomasz Brenner"]
