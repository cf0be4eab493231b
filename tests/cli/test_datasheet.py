"""The golden set's datasheet: ``screeneval cases datasheet`` and its section of the audit page.

The expected counts are read from the case files with plain YAML here, not through the loader or
the datasheet's code.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.audit_scenario import Scenario, build_scenario
from support.golden_factory import make_case, make_golden

from pytest_screeneval.cli.main import main
from pytest_screeneval.report.audit import build_audit
from pytest_screeneval.report.datasheet import datasheet
from pytest_screeneval.report.html.page import render_html

BUNDLED = Path(__file__).resolve().parents[2] / "cases"


def test_datasheet_of_the_bundled_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json = tmp_path / "sheet.json"
    assert main(["cases", "datasheet", str(BUNDLED), "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    sheet = json.loads(out_json.read_text(encoding="utf-8"))
    files = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in BUNDLED.glob("*/*.yaml")]
    cases = [c for c in files if "input_text" in c and not c.get("retired_at")]
    assert sheet["counts"]["active"] == len(cases) == 56
    for dimension in ("sex", "race", "age"):
        expected = Counter(str(c["demographics"].get(dimension) or "unknown") for c in cases)
        assert sheet["counts"]["by_category"][dimension] == dict(sorted(expected.items()))
    assert sheet["counts"]["by_category"]["age"] == {"40 and over": 28, "under 40": 28}
    by_slice = {r["slice"]: r["cases"] for r in sheet["counts"]["by_slice"]}
    assert by_slice == dict(Counter(c["label"] for c in cases))
    raters = Counter(r for c in cases for by in c["ratings"].values() for r in by)
    assert {r["rater"]: r["ratings"] for r in sheet["raters"]["raters"]} == dict(raters)
    assert 0.5 < sheet["raters"]["alpha_ordinal"] <= 1
    assert sheet["pii_screen"]["cases_screened"] == 56 and sheet["pii_screen"]["found"] == []
    setters = Counter(e["set_by"] for c in cases for e in c["expected"].values())
    assert {e["set_by"]: e["expectations"] for e in sheet["expectations_by"]} == dict(setters)
    assert sum(s["cases"] for s in sheet["provenance"]["sources"]) == 56
    for heading in ("## Provenance", "## Raters and their agreement", "## PII screen",
                    "## Expectations: by whom and when", "## Retirements"):  # fmt: skip
        assert heading in printed
    assert "Krippendorff's alpha, all criteria pooled: ordinal " in printed


def test_the_pii_screen_names_a_case_that_carries_pii() -> None:
    leaky = make_case("leak-1", text="Ilona Varga\nReach me at ilona@example.org\nSkills: sql\n")
    sheet = datasheet(make_golden([leaky, make_case("ok-1")]), {})
    assert sheet["pii_screen"]["found"] == [{"case_id": "leak-1", "kind": "an e-mail address"}]


@pytest.fixture
def scenario(store_url: str) -> Iterator[Scenario]:
    built = build_scenario(store_url)
    try:
        yield built
    finally:
        built.store.close()


def test_the_audit_page_carries_the_datasheet(
    scenario: Scenario, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = build_audit(scenario.store, scenario.runs["third"], final_decision_by="Jo Park")
    sheet = doc["datasheet"]
    assert sheet["retired"][0]["case_id"] == "ret-002"
    assert sheet["retired"][0]["retired_by"] == "Curator Vale"
    assert sheet["provenance"]["frozen_first"] == "2024-06-01T09:00:00+00:00"
    page = render_html(doc)
    assert '<section id="datasheet"' in page and "Datasheet of the golden set" in page
    assert "Curator Vale" in page and "nothing found" in page
    # from the store as well as from a folder
    assert main(["--db", store_url, "cases", "datasheet"]) == 0
    assert "ret-002 (returner): retired 2024-09-30" in capsys.readouterr().out
