"""The ``screeneval`` data commands end to end on SQLite and PostgreSQL: exit 0, 1 or 2."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.golden_factory import make_golden, make_identity, make_rows, make_rubric

from pytest_screeneval.cli.main import build_parser, main
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.load import load_golden_set
from pytest_screeneval.golden.write import write_golden_set
from pytest_screeneval.session.acceptance import accept_run
from pytest_screeneval.store.database import ScoreRow, Store

RUBRIC = make_rubric()


@pytest.fixture
def cases_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "cases"
    write_golden_set(make_golden(), folder)
    return folder


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def scored_run(
    store: Store,
    scores: dict[str, dict[str, int | None]],
    *,
    baseline: int | None = None,
    status: str = "complete",
    verdict: dict[str, object] | None = None,
) -> int:
    run_id = store.start_run(
        identity=make_identity(rubric_sha=RUBRIC.sha),
        rubric_id=RUBRIC.id,
        golden_sha="g" * 64,
        plugin_version="0.1.0",
        vcs_commit=None,
        baseline_run_id=baseline,
    )
    rows: list[ScoreRow] = []
    for case_id, by_criterion in scores.items():
        for criterion, score in by_criterion.items():
            [row] = make_rows(run_id, [case_id], criteria=[criterion], score=score or 1)
            if score is None:
                row = dataclasses.replace(row, score=None, error="the answer had no score")
            rows.append(row)
    store.write_scores(rows)
    store.finish_run(run_id, status=status, verdict=verdict or {"gates": [], "crossings": []})
    return run_id


def all_three(score: int | None) -> dict[str, int | None]:
    return {"experience": score, "skills": score, "communication": score}


# --------------------------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------------------------


def test_cases_import_freezes_then_reports_unchanged(
    store_url: str, cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "cases", "import", str(cases_dir), "--db", store_url)
    assert (code, err) == (0, "")
    assert "imported 3 cases" in out and "3 added" in out

    code, out, _ = run_cli(capsys, "--db", store_url, "cases", "import", str(cases_dir))
    assert code == 0 and "0 added, 3 unchanged" in out
    with Store.open(store_url) as store:
        assert sorted(store.frozen_cases()) == ["cc-001", "cc-002", "gap-001"]


def test_cases_import_refuses_a_changed_text_in_one_sentence(
    store_url: str, cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", store_url, "cases", "import", str(cases_dir)]) == 0
    capsys.readouterr()
    path = cases_dir / "career-changer" / "cc-001.yaml"
    path.write_text(path.read_text().replace("ticket triage", "ticket triage, sql tuning"))

    code, out, err = run_cli(capsys, "--db", store_url, "cases", "import", str(cases_dir))
    assert code == 1 and out == ""
    assert err.startswith("screeneval: ") and err.count("\n") == 1
    assert "case cc-001 was frozen on" in err and "cases/career-changer/cc-001.yaml" in err


def test_cases_import_of_a_broken_folder_names_file_and_line(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "broken"
    write_golden_set(make_golden(), folder)
    (folder / "career-gap" / "gap-001.yaml").write_text("id: gap-001\nlabel: [unclosed\n")
    code, _, err = run_cli(capsys, "--db", store_url, "cases", "import", str(folder))
    assert code == 1
    assert err.startswith("screeneval: broken/career-gap/gap-001.yaml, line ")


def test_cases_export_writes_what_was_imported(
    store_url: str, cases_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["--db", store_url, "cases", "import", str(cases_dir)])
    main(["--db", store_url, "cases", "retire", "cc-002", "--by", "Dana Okafor"])
    capsys.readouterr()
    exported = tmp_path / "exported"
    code, out, _ = run_cli(capsys, "--db", store_url, "cases", "export", str(exported))
    assert code == 0 and "3 cases (1 retired)" in out

    original = load_golden_set(cases_dir)
    again = load_golden_set(exported)
    assert again.rubric == original.rubric and again.variants == original.variants
    strip = {c.id: dataclasses.replace(c, path="", retired_at=None) for c in again.cases}
    assert strip == {c.id: dataclasses.replace(c, path="") for c in original.cases}
    assert {c.id for c in again.active_cases} == {"cc-001", "gap-001"}


def test_cases_export_of_an_empty_store_is_refused(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Store.open(store_url).close()
    code, _, err = run_cli(capsys, "--db", store_url, "cases", "export", str(tmp_path / "out"))
    assert code == 1 and "holds no golden set yet" in err


def test_cases_retire(store_url: str, cases_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--db", store_url, "cases", "import", str(cases_dir)])
    capsys.readouterr()
    code, out, _ = run_cli(
        capsys, "--db", store_url, "cases", "retire", "cc-001", "--by", "Dana Okafor"
    )
    assert code == 0 and "retired case cc-001" in out
    code, _, err = run_cli(
        capsys, "--db", store_url, "cases", "retire", "cc-001", "--by", "Dana Okafor"
    )
    assert code == 1 and "already retired" in err
    code, _, err = run_cli(capsys, "--db", store_url, "cases", "retire", "cc-001")
    assert code == 2 and "--by" in err


# --------------------------------------------------------------------------------------------
# runs, show, accept
# --------------------------------------------------------------------------------------------


def test_runs_table_and_show(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    Store.open(store_url).close()
    code, out, _ = run_cli(capsys, "--db", store_url, "runs")
    assert (code, out) == (0, "no runs yet\n")

    with Store.open(store_url) as store:
        first = scored_run(store, {"cc-001": all_three(3)})
        store.accept(first, by="Priya Venkat", note="first baseline")
        second = scored_run(
            store,
            {"cc-001": {**all_three(4), "skills": None}},
            baseline=first,
            status="interrupted",
        )

    code, out, _ = run_cli(capsys, "runs", "--db", store_url)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == [
        "id",
        "status",
        "gates",
        "scorer",
        "model",
        "started",
        "finished",
        "accepted",
        "by",
    ]
    assert lines[1].split()[:5] == [str(second), "interrupted", "none", "keyword", "keyword-v1"]
    assert lines[2].split()[:2] == [str(first), "complete"]
    assert lines[2].endswith("Priya Venkat") and lines[1].endswith("-")

    code, out, _ = run_cli(capsys, "--db", store_url, "show", str(second))
    assert code == 0
    assert out.startswith(f"run {second}: interrupted\n")
    assert f"baseline     run {first}" in out
    assert "3 rows: 1 cases, 0 variants, 1 repeat(s), 1 errors" in out
    assert "accepted     no" in out
    assert "cc-001 skills (repeat 0): the answer had no score" in out

    code, out, _ = run_cli(capsys, "--db", store_url, "show", str(first))
    assert "accepted     by Priya Venkat at " in out and out.rstrip().endswith("first baseline")

    code, _, err = run_cli(capsys, "--db", store_url, "show", "99")
    assert (
        code == 1
        and err == f"screeneval: There is no run 99 in {Store.open(store_url).masked_url}.\n"
    )


def test_accept(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with Store.open(store_url) as store:
        first = scored_run(store, {"cc-001": all_three(3)})
        stale = scored_run(store, {"cc-001": all_three(3)})

    code, out, _ = run_cli(
        capsys, "--db", store_url, "accept", str(first), "--by", "Priya Venkat", "--note", "ok"
    )
    assert code == 0 and out == f"run {first} is the baseline now (accepted by Priya Venkat)\n"
    # compare-and-swap: a run judged against no baseline cannot replace the one accepted since
    code, _, err = run_cli(
        capsys, "--db", store_url, "accept", str(stale), "--by", "Lena Frost", "--note", "v2"
    )
    assert code == 1 and "it was judged against" in err
    with Store.open(store_url) as store:
        second = scored_run(store, {"cc-001": all_three(3)}, baseline=first)
        broken = scored_run(store, {"cc-001": all_three(3)}, status="interrupted", baseline=first)
    code, out, _ = run_cli(
        capsys, "--db", store_url, "accept", str(second), "--by", "Lena Frost", "--note", "v2"
    )
    assert code == 0 and f"replacing run {first}" in out

    code, _, err = run_cli(
        capsys, "--db", store_url, "accept", str(broken), "--by", "Lena Frost", "--note", "x"
    )
    assert (code, err) == (
        1,
        f"screeneval: run {broken} was interrupted and can never become a baseline.\n",
    )
    code, _, err = run_cli(capsys, "--db", store_url, "accept", str(second), "--note", "x")
    assert code == 2 and "--by" in err
    code, _, err = run_cli(capsys, "--db", store_url, "accept", "seven", "--by", "x", "--note", "")
    assert code == 2


def test_accept_refuses_a_recorded_failed_gate_or_unreviewed_crossing(
    store_url: str, cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["--db", store_url, "cases", "import", str(cases_dir)])
    failed_gate = {
        "name": "counterfactual-gap[name]",
        "status": "FAIL",
        "value": 4.0,
        "limit": "<= 3",
        "n": 3,
        "detail": "",
    }
    crossing = {"case_id": "cc-001", "before": "advance", "after": "hold"}
    with Store.open(store_url) as store:
        first = scored_run(store, {"cc-001": all_three(4)})
        store.accept(first, by="Lena Frost", note="first")
        gated = scored_run(
            store,
            {"cc-001": all_three(4)},
            baseline=first,
            verdict={"gates": [failed_gate], "crossings": []},
        )
        crossed = scored_run(
            store,
            {"cc-001": all_three(2)},
            baseline=first,
            verdict={"gates": [], "crossings": [crossing]},
        )
    code, _, err = run_cli(
        capsys, "--db", store_url, "accept", str(gated), "--by", "Ola Berg", "--note", "x"
    )
    assert code == 1 and "failed gate counterfactual-gap[name]" in err
    code, _, err = run_cli(
        capsys, "--db", store_url, "accept", str(crossed), "--by", "Ola Berg", "--note", "x"
    )
    assert code == 1 and "unreviewed crossing cc-001 (advance → hold)" in err
    code, _, _ = run_cli(
        capsys,
        "--db",
        store_url,
        "review",
        str(crossed),
        "cc-001",
        "--by",
        "Ola Berg",
        "--note",
        "read it: weaker on every criterion",
    )
    assert code == 0
    code, _, _ = run_cli(
        capsys,
        "--db",
        store_url,
        "accept",
        str(crossed),
        "--by",
        "Ola Berg",
        "--note",
        "crossing reviewed",
    )
    assert code == 0
    forced = ("--by", "Ola Berg", "--note", "name gap known, ticket 12", "--force")
    # judged against run `first`, which is no longer the baseline: --force does not lift that
    code, _, err = run_cli(capsys, "--db", store_url, "accept", str(gated), *forced)
    assert code == 1 and "it was judged against" in err
    with Store.open(store_url) as store:
        regated = scored_run(
            store,
            {"cc-001": all_three(4)},
            baseline=crossed,
            verdict={"gates": [failed_gate], "crossings": []},
        )
    code, _, _ = run_cli(capsys, "--db", store_url, "accept", str(regated), *forced)
    assert code == 0
    with Store.open(store_url) as store:
        assert store.get_run(regated).accepted.forced  # type: ignore[union-attr]
        assert not store.get_run(crossed).accepted.forced  # type: ignore[union-attr]
        assert store.get_run(gated).accepted is None


def test_accept_run_respects_the_pre_check(store_url: str) -> None:
    def blockers(store: Store, run: object) -> list[str]:
        return ["gate counterfactual-gap[name] failed (4.1 > 3)", "1 unreviewed crossing"]

    with Store.open(store_url) as store:
        run_id = scored_run(store, {"cc-001": all_three(3)})
        with pytest.raises(ScreenevalError, match="was not accepted: gate counterfactual"):
            accept_run(store, run_id, by="Lena Frost", note="", check=blockers)
        with pytest.raises(ScreenevalError, match="needs a note"):
            accept_run(store, run_id, by="Lena Frost", note=" ", force=True, check=blockers)
        assert store.get_run(run_id).accepted is None
        acceptance, overridden = accept_run(
            store, run_id, by="Lena Frost", note="gap known, ticket 88", force=True, check=blockers
        )
        assert acceptance.forced and len(overridden) == 2
        assert store.get_run(run_id).accepted == acceptance


# --------------------------------------------------------------------------------------------
# review
# --------------------------------------------------------------------------------------------


def test_review_of_a_criterion_and_of_a_decision(
    store_url: str, cases_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["--db", store_url, "cases", "import", str(cases_dir)])
    with Store.open(store_url) as store:
        base = scored_run(store, {"cc-001": all_three(3), "cc-002": all_three(3)})
        store.accept(base, by="Priya Venkat", note="")
        # cc-001: skills 3 -> 4 (overall 56.25, still hold); cc-002: 50 -> 100, hold -> advance
        run_id = scored_run(
            store,
            {"cc-001": {**all_three(3), "skills": 4}, "cc-002": all_three(5)},
            baseline=base,
        )
        unbased = scored_run(store, {"cc-001": all_three(3)})
    capsys.readouterr()
    db = ["--db", store_url]
    who = ["--by", "Dana Okafor", "--note", "read the rationale; the new score is fair"]

    code, out, _ = run_cli(capsys, *db, "review", str(run_id), "cc-001", "skills", *who)
    assert code == 0 and "cc-001 skills 3 -> 4 against baseline run" in out
    code, out, _ = run_cli(capsys, *db, "review", str(run_id), "cc-002", *who)
    assert code == 0 and "cc-002 decision hold -> advance" in out

    with Store.open(store_url) as store:
        found = store.find_review(
            case_id="cc-002",
            target="decision",
            baseline_run_id=base,
            before="hold",
            after="advance",
        )
        assert found is not None and found.reviewed_by == "Dana Okafor"
        assert store.find_review(
            case_id="cc-001", target="skills", baseline_run_id=base, before="3", after="4"
        )

    refusals = {
        (
            "review",
            str(run_id),
            "cc-001",
            *who,
        ): "Nothing moved: the decision for case cc-001 is hold",
        (
            "review",
            str(run_id),
            "cc-001",
            "experience",
            *who,
        ): "Nothing moved: case cc-001 scored 3",
        ("review", str(run_id), "cc-001", "charisma", *who): "has no criterion 'charisma'",
        ("review", str(run_id), "gap-001", *who): f"Run {run_id} has no score for case gap-001",
        ("review", str(unbased), "cc-001", *who): "was not compared with a baseline",
    }
    for argv, expected in refusals.items():
        code, _, err = run_cli(capsys, *db, *argv)
        assert code == 1 and expected in err, (argv, err)
        assert err.count("\n") == 1
    code, _, err = run_cli(capsys, *db, "review", str(run_id), "cc-001", "--by", "Dana Okafor")
    assert code == 2 and "--note" in err


# --------------------------------------------------------------------------------------------
# db upgrade, the store URL, usage
# --------------------------------------------------------------------------------------------


def test_db_upgrade(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "db", "upgrade", "--db", store_url)
    assert code == 0 and "from schema revision (empty) to 0006" in out
    code, out, _ = run_cli(capsys, "db", "upgrade", "--db", store_url)
    assert code == 0 and "already at schema revision 0006" in out
    code, out, _ = run_cli(capsys, "--db", store_url, "runs")
    assert (code, out) == (0, "no runs yet\n")


def test_db_upgrade_of_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SCREENEVAL_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "db", "upgrade")
    assert (code, err) == (0, "")
    assert out == (
        f"upgraded the store at sqlite:///{tmp_path.resolve().as_posix()}/.screeneval/"
        "screeneval.db from schema revision (empty) to 0006\n"
    )
    monkeypatch.setenv("SCREENEVAL_DB", f"sqlite:///{tmp_path / 'env.db'}")
    assert main(["db", "upgrade"]) == 0
    assert (tmp_path / "env.db").is_file()


def test_store_url_from_env_and_default(
    tmp_path: Path,
    cases_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("SCREENEVAL_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "runs")
    assert code == 1 and "There is no SQLite store at" in err
    assert main(["cases", "import", "cases"]) == 0
    assert (tmp_path / ".screeneval" / "screeneval.db").is_file()

    elsewhere = tmp_path / "team.db"
    monkeypatch.setenv("SCREENEVAL_DB", f"sqlite:///{elsewhere}")
    assert main(["cases", "import", "cases"]) == 0
    assert elsewhere.is_file()


def test_unreachable_database_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, err = run_cli(capsys, "--db", f"postgresql://x:pw@127.0.0.1:{port}/evals", "runs")
    assert code == 1 and out == ""
    assert err.startswith(f"screeneval: Cannot reach the PostgreSQL store at 127.0.0.1:{port}")
    assert err.count("\n") == 1 and "pw@" not in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["frobnicate"], ["cases"], ["show"], ["show", "-3"], ["runs", "--limit", "x"]):
        assert main(argv) == 2, argv
    assert main(["--help"]) == 0
    capsys.readouterr()
    assert {"runs", "show", "accept", "review", "cases", "db"} <= set(
        build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    )


def test_the_installed_script(store_url: str, cases_dir: Path) -> None:
    script = shutil.which("screeneval") or ""
    command = [script] if script else [sys.executable, "-m", "pytest_screeneval.cli"]
    done = subprocess.run(
        [*command, "--db", store_url, "cases", "import", str(cases_dir)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "3 added" in done.stdout
    refused = subprocess.run(
        [*command, "--db", store_url, "accept", "5", "--by", "Lena Frost", "--note", "x"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1
    assert refused.stderr.startswith("screeneval: There is no run 5 in ")
    assert "Traceback" not in refused.stderr
    usage = subprocess.run([*command, "accept"], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage: screeneval accept" in usage.stderr
    quick = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, pytest_screeneval.cli; print('sqlalchemy' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert quick.stdout.strip() == "False"
