"""The live summary (terminal and JSON) and the audit report of the same stored run give the same
counterfactual and perturbation figures: both are computed once, by ``evidence.fairness_summary``,
the live one from the run's results, the audit one from the stored rows. A noisy scorer makes the
run re-score (probe and confirmations), so the figures rest on more than the first answers."""

from __future__ import annotations

import json

import pytest
from test_noise_plugin import write_noisy_project

from pytest_screeneval.report.audit import build_audit
from pytest_screeneval.store.database import Store


@pytest.mark.parametrize("flip", ["0", "0.1"])
def test_the_summary_and_the_audit_report_agree_on_every_fairness_figure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, flip: str
) -> None:
    write_noisy_project(pytester)
    monkeypatch.setenv("SCREENEVAL_NOISE_FLIP", flip)
    monkeypatch.setenv("SCREENEVAL_NOISE_SEED", "11")
    monkeypatch.setenv("SCREENEVAL_NOISE_BIAS_NAMES", "Kwame Asante")
    summary_path = pytester.path / "summary.json"
    # a process of its own: in the whole suite, an in-process run here once found its fresh
    # store locked by what earlier in-process runs of the same worker left behind
    result = pytester.runpytest_subprocess("--screeneval", f"--screeneval-json={summary_path}")
    assert result.ret in (0, 1), result.stdout.str()
    live = json.loads(summary_path.read_text(encoding="utf-8"))
    url = f"sqlite:///{(pytester.path / 'store.db').as_posix()}"
    with Store.open(url, create=False, read_only=True) as store:
        audit = build_audit(store, int(live["run_id"]), final_decision_by="Hiring panel")

    attributes = {a["attribute"]: a for a in audit["counterfactual"]["attributes"]}
    assert set(attributes) == set(live["counterfactual"]) == {"name", "gap"}
    for attribute, figures in live["counterfactual"].items():
        stored = attributes[attribute]
        for field in ("n_cases", "worst_case", "worst_values", "per_criterion"):
            assert stored[field] == figures[field], (attribute, field)
        for field in ("mean_gap", "worst_gap"):
            assert stored[field] == pytest.approx(figures[field]), (attribute, field)
    kinds = {k["kind"]: k for k in audit["perturbation"]["kinds"]}
    assert set(kinds) == set(live["perturbation"])
    for kind, figures in live["perturbation"].items():
        stored = kinds[kind]
        assert (stored["cases"], stored["texts"]) == (figures["n_cases"], figures["texts"])
        assert stored["worst_case"] == figures["worst_case"]
        assert stored["worst_shift"] == pytest.approx(figures["worst_shift"])
        assert stored["mean_shift"] == pytest.approx(figures["mean_shift"])
    # the gates the audit shows are the ones the run recorded, value for value
    recorded = {g["name"]: g for g in audit["verdict"]["gates"]}
    for gate in live["gates"]:
        assert recorded[gate["name"]]["status"] == gate["status"]
        assert recorded[gate["name"]]["value"] == gate["value"]
    if flip != "0":  # the noisy run re-scored: the figures rest on more than first answers
        assert live["confirmation"]["extra_calls"] > 0
