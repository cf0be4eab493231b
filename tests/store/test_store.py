"""The run store on SQLite and PostgreSQL: freeze rule, history, runs, acceptance, errors."""

from __future__ import annotations

import dataclasses
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from support.golden_factory import CRITERIA, make_case, make_golden, make_identity, make_rows

from pytest_screeneval.errors import GoldenSetError, StoreError
from pytest_screeneval.golden.model import Expectation
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.database import SCHEMA_REVISION, Store, default_url, mask_url

NOW = "2024-05-02T09:30:00+00:00"


@pytest.fixture
def store(store_url: str) -> Store:
    with Store.open(store_url) as opened:
        yield opened


def start(store: Store, **changes: object) -> int:
    arguments: dict[str, object] = {
        "identity": make_identity(),
        "rubric_id": "support-engineer",
        "golden_sha": "g" * 64,
        "plugin_version": "0.1.0",
        "vcs_commit": "abc1234",
    }
    arguments.update(changes)
    return store.start_run(**arguments)  # type: ignore[arg-type]


def complete_run(store: Store, case_ids: tuple[str, ...] = ("cc-001",), **changes: object) -> int:
    run_id = start(store, **changes)
    store.write_scores(make_rows(run_id, case_ids))
    store.finish_run(run_id, status="complete")
    return run_id


def table_rows(store: Store, table: sa.Table) -> list[tuple[object, ...]]:
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.select(table).order_by(*table.primary_key))]


def one_line(error: BaseException) -> str:
    message = str(error)
    assert "\n" not in message and "Traceback" not in message
    return message


# --------------------------------------------------------------------------------------------
# Opening
# --------------------------------------------------------------------------------------------


def test_open_creates_the_schema_once_and_reopens(store_url: str) -> None:
    with Store.open(store_url) as store:
        assert store.schema_revision() == SCHEMA_REVISION
        assert store.dialect in ("sqlite", "postgresql")
        store.sync_golden_set(make_golden(), now=NOW)
    with Store.open(store_url, create=False) as again:
        assert set(again.frozen_cases()) == {"cc-001", "cc-002", "gap-001"}


def test_default_url_folder_is_created_lazily(tmp_path: Path) -> None:
    url = default_url(tmp_path)
    assert url == f"sqlite:///{tmp_path.resolve().as_posix()}/.screeneval/screeneval.db"
    assert not (tmp_path / ".screeneval").exists()
    with Store.open(url) as store:
        assert store.list_runs() == []
    assert (tmp_path / ".screeneval" / "screeneval.db").is_file()


def test_sqlite_store_uses_wal_and_foreign_keys(tmp_path: Path) -> None:
    with Store.open(default_url(tmp_path)) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL


def test_mask_url_hides_the_password() -> None:
    masked = mask_url("postgresql+psycopg://screener:s3cret@db.example.test:5433/evals")
    assert "s3cret" not in masked
    assert masked == "postgresql+psycopg://screener:***@db.example.test:5433/evals"
    assert mask_url("sqlite:////tmp/x.db") == "sqlite:////tmp/x.db"


def test_open_without_create_refuses_an_empty_database(store_url: str) -> None:
    if store_url.startswith("sqlite"):
        with pytest.raises(StoreError, match="There is no SQLite store at"):
            Store.open(store_url, create=False)
        return
    with pytest.raises(StoreError, match="has no screeneval schema yet") as caught:
        Store.open(store_url, create=False)
    assert "screeneval db upgrade --db" in one_line(caught.value)


def test_an_older_schema_revision_is_refused_with_the_upgrade_command(store_url: str) -> None:
    with Store.open(store_url) as store, store.engine.begin() as conn:
        conn.execute(t.alembic_version.update().values(version_num="0002"))
    with pytest.raises(StoreError) as caught:
        Store.open(store_url)
    message = one_line(caught.value)
    assert message == (
        f"The store at {mask_url(store_url)} has schema revision 0002, this "
        f"pytest-screeneval needs {SCHEMA_REVISION}: run "
        f"`screeneval db upgrade --db {mask_url(store_url)}`."
    )


@pytest.mark.parametrize("revision", ["0099", "0000feedface"])
def test_a_newer_schema_revision_does_not_send_the_user_to_db_upgrade(
    store_url: str, revision: str
) -> None:
    # `db upgrade` fails on a revision it does not know: the sentence must not advise it
    from pytest_screeneval.store.database import upgrade

    with Store.open(store_url) as store, store.engine.begin() as conn:
        conn.execute(t.alembic_version.update().values(version_num=revision))
    with pytest.raises(StoreError) as caught:
        Store.open(store_url)
    assert one_line(caught.value) == (
        f"The store at {mask_url(store_url)} has schema revision {revision}, which this "
        f"pytest-screeneval (schema {SCHEMA_REVISION}) does not know: a newer "
        "version wrote it, so `screeneval db upgrade` cannot help; install that version "
        "(pip install -U pytest-screeneval) or use another store."
    )
    with pytest.raises(StoreError):  # and indeed it cannot
        upgrade(store_url)


def test_tables_without_a_revision_are_refused(store_url: str) -> None:
    with Store.open(store_url) as store, store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE alembic_version"))
    with pytest.raises(StoreError, match="has screeneval tables but no schema revision"):
        Store.open(store_url)


def test_opening_does_not_import_alembic(store_url: str) -> None:
    Store.open(store_url).close()
    code = (
        "import sys\n"
        "from pytest_screeneval.store.database import Store\n"
        f"Store.open({store_url!r}).close()\n"
        "print('alembic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------------------------
# Golden set: freeze rule, history, retirement
# --------------------------------------------------------------------------------------------


def test_sync_adds_new_cases_then_reports_them_unchanged(store: Store) -> None:
    golden = make_golden()
    first = store.sync_golden_set(golden, now=NOW)
    assert first.added == ("cc-001", "cc-002", "gap-001")
    assert first.unchanged == () and first.retired == ()
    assert store.frozen_cases()["cc-002"] == (golden.cases[1].input_sha256, NOW)

    second = store.sync_golden_set(golden, now="2024-06-01T00:00:00+00:00")
    assert second.added == ()
    assert second.unchanged == ("cc-001", "cc-002", "gap-001")
    assert second.expectations_changed == () and second.ratings_changed == ()
    assert second.updated == ()
    # frozen_at is the first sync's, never moved by a later one
    assert store.frozen_cases()["cc-001"][1] == NOW


def test_load_golden_set_rebuilds_what_was_synced(store: Store) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    loaded = store.load_golden_set()
    assert loaded.rubric == golden.rubric
    assert loaded.rubric.sha == golden.rubric.sha
    assert loaded.variants == golden.variants
    assert list(loaded.variants.attributes) == list(golden.variants.attributes)
    assert {c.id: c for c in loaded.cases} == {c.id: c for c in golden.cases}
    assert loaded.sha == golden.sha
    assert loaded.root == store.masked_url


def test_changed_text_is_refused_naming_case_hashes_and_date_and_nothing_is_written(
    store: Store,
) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    before = {name: table_rows(store, table) for name, table in t.metadata.tables.items()}
    changed = dataclasses.replace(golden.cases[0], input_text=golden.cases[0].input_text + "!")
    newer_expectation = dataclasses.replace(
        golden.cases[1],
        expected={**golden.cases[1].expected, "skills": Expectation("skills", 5, "R. Quill", "x")},
    )
    attempt = make_golden([changed, newer_expectation, golden.cases[2], make_case("new-001")])

    with pytest.raises(GoldenSetError) as caught:
        store.sync_golden_set(attempt, now="2024-07-01T00:00:00+00:00")

    message = one_line(caught.value)
    assert "case cc-001" in message
    assert golden.cases[0].input_sha256[:12] in message
    assert changed.input_sha256[:12] in message
    assert "2024-05-02" in message
    assert "retire" in message and "new id" in message
    after = {name: table_rows(store, table) for name, table in t.metadata.tables.items()}
    assert after == before


def test_expectation_history_adds_a_row_per_change(store: Store) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    case = golden.cases[0]
    raised = dataclasses.replace(
        case,
        expected={**case.expected, "skills": Expectation("skills", 5, "Rater Oduya", "2024-06-10")},
    )
    report = store.sync_golden_set(make_golden([raised, *golden.cases[1:]]))
    assert report.expectations_changed == ("cc-001",)
    assert store.load_golden_set().cases[0].expected["skills"] == Expectation(
        "skills", 5, "Rater Oduya", "2024-06-10"
    )
    # same score, new person and date: still a new row (who decided is part of the record)
    again = Expectation("skills", 5, "Rater Lind", "2024-07-01")
    reconfirmed = dataclasses.replace(raised, expected={**raised.expected, "skills": again})
    store.sync_golden_set(make_golden([reconfirmed, *golden.cases[1:]]))
    store.sync_golden_set(make_golden([reconfirmed, *golden.cases[1:]]))  # no change, no row

    history = [
        row
        for row in table_rows(store, t.expectations)
        if row[1] == "cc-001" and row[2] == "skills"
    ]
    assert [(row[3], row[4], row[5]) for row in history] == [
        (3, "Rater Quill", "2024-03-01"),
        (5, "Rater Oduya", "2024-06-10"),
        (5, "Rater Lind", "2024-07-01"),
    ]


def test_rating_history_and_withdrawn_raters(store: Store) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    case = golden.cases[1]
    assert store.load_golden_set().cases[1].ratings == {
        "communication": {"rater-ab": 4, "rater-kt": 2}
    }
    changed = dataclasses.replace(case, ratings={"communication": {"rater-ab": 3}})
    report = store.sync_golden_set(make_golden([golden.cases[0], changed, golden.cases[2]]))
    assert report.ratings_changed == ("cc-002",)
    loaded = {c.id: c for c in store.load_golden_set().cases}
    assert loaded["cc-002"].ratings == {"communication": {"rater-ab": 3}}
    assert not loaded["cc-002"].is_contested("communication")
    scores = [(row[3], row[4]) for row in table_rows(store, t.ratings) if row[1] == "cc-002"]
    assert scores == [("rater-ab", 4), ("rater-kt", 2), ("rater-ab", 3), ("rater-kt", None)]


def test_corrected_metadata_is_updated_in_place(store: Store) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    case = dataclasses.replace(golden.cases[0], xfail={"all": "model drifts on this one"})
    report = store.sync_golden_set(make_golden([case, *golden.cases[1:]]))
    assert report.updated == ("cc-001",)
    assert store.load_golden_set().cases[0].xfail == {"all": "model drifts on this one"}


def test_retire_case_keeps_it_retired(store: Store) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    store.retire_case("cc-002", by="Dana Okafor", at="2024-06-01T10:00:00+00:00")

    loaded = store.load_golden_set()
    assert [c.id for c in loaded.active_cases] == ["cc-001", "gap-001"]
    retired = {c.id: c for c in loaded.cases}["cc-002"]
    assert retired.retired_at == "2024-06-01T10:00:00+00:00"

    with pytest.raises(StoreError, match="already retired on 2024-06-01 by Dana Okafor"):
        store.retire_case("cc-002", by="Dana Okafor")
    with pytest.raises(StoreError, match="There is no case nope-404"):
        store.retire_case("nope-404", by="Dana Okafor")
    with pytest.raises(StoreError, match="needs the name"):
        store.retire_case("cc-001", by=" ")

    # the YAML still lists it, even with a new text: reported retired, not refused or revived
    edited = dataclasses.replace(golden.cases[1], input_text="Tomasz Brenner\nRewritten.\n")
    report = store.sync_golden_set(make_golden([golden.cases[0], edited, golden.cases[2]]))
    assert report.retired == ("cc-002",)
    assert "cc-002" not in report.unchanged
    assert store.frozen_cases()["cc-002"][0] == golden.cases[1].input_sha256
    assert [c.id for c in store.load_golden_set().active_cases] == ["cc-001", "gap-001"]


def test_a_case_file_marked_retired_retires_the_stored_case(store: Store) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    gone = dataclasses.replace(golden.cases[0], retired_at="2024-08-01", path="cases/cc-001.yaml")
    report = store.sync_golden_set(make_golden([gone, *golden.cases[1:], make_case("new-1")]))
    assert report.retired == ("cc-001",)
    assert report.added == ("new-1",)
    with store.engine.connect() as conn:
        row = conn.execute(sa.select(t.cases).where(t.cases.c.case_id == "cc-001")).one()
    assert (row.retired_at, row.retired_by) == ("2024-08-01", "case file cases/cc-001.yaml")


def test_cases_missing_from_the_folder_are_reported_not_retired(store: Store) -> None:
    golden = make_golden()
    store.sync_golden_set(golden, now=NOW)
    report = store.sync_golden_set(make_golden(list(golden.cases[:2])))
    assert report.missing == ("gap-001",)
    assert len(store.load_golden_set().active_cases) == 3


def test_load_golden_set_of_an_empty_store_says_what_to_do(store: Store) -> None:
    with pytest.raises(GoldenSetError, match="holds no golden set yet") as caught:
        store.load_golden_set()
    assert "screeneval cases import" in one_line(caught.value)


# --------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------


def test_run_lifecycle(store: Store) -> None:
    run_id = start(
        store,
        notes="nightly",
        selection="-k career-changer (12 items)",
        config={"repeat": 2, "max_gap": 3.0},
    )
    run = store.get_run(run_id)
    assert run.status == "running" and run.finished_at is None and run.accepted is None
    assert run.identity == make_identity()
    assert (run.notes, run.selection, run.config) == (
        "nightly",
        "-k career-changer (12 items)",
        {"max_gap": 3.0, "repeat": 2},
    )
    assert run.started_at.endswith("+00:00")

    rows = make_rows(run_id, ["cc-002", "cc-001"], repeats=2)
    store.write_scores(rows)
    store.finish_run(run_id, status="complete", served_model="keyword-v1-2024-05")

    done = store.get_run(run_id)
    assert done.status == "complete" and done.served_model == "keyword-v1-2024-05"
    assert done.finished_at is not None and done.finished_at >= done.started_at
    read = store.scores(run_id)
    key = lambda r: (r.case_id, r.variant_key, r.repeat_index, r.criterion)  # noqa: E731
    assert read == sorted(rows, key=key)

    with pytest.raises(StoreError, match=f"Run {run_id} is complete, so no more scores"):
        store.write_scores(make_rows(run_id, ["cc-009"]))
    with pytest.raises(StoreError, match="already complete"):
        store.finish_run(run_id, status="interrupted")
    with pytest.raises(StoreError, match="already complete"):  # another close, not a retry
        store.finish_run(run_id, status="complete", served_model="keyword-v2-2024-06")
    # the same close again (a retry after its answer was lost) is done once: one chain entry
    head = store.chain_head()
    store.finish_run(run_id, status="complete", served_model="keyword-v1-2024-05")
    assert store.get_run(run_id).finished_at == done.finished_at
    assert store.chain_head() == head and store.verify_chain().ok
    with pytest.raises(StoreError, match="not 'done'"):
        store.finish_run(run_id, status="done")


def test_score_rows_round_trip_every_field(store: Store) -> None:
    run_id = start(store)
    row = dataclasses.replace(
        make_rows(run_id, ["cc-001"], criteria=["skills"])[0],
        score=None,
        rationale="",
        evidence=("quote with “curly” marks", "line\nbreak"),
        confidence=None,
        latency_ms=1234.0625,
        attempts=3,
        error="the answer had no score for 'skills'",
        reused_from_run=None,
    )
    reused = dataclasses.replace(row, variant_key="name=Tomasz Brenner", reused_from_run=run_id)
    store.write_scores([row, reused])
    assert store.scores(run_id) == [row, reused]


def test_missing_run_is_one_sentence(store: Store) -> None:
    with pytest.raises(StoreError) as caught:
        store.get_run(99)
    assert one_line(caught.value) == f"There is no run 99 in {store.masked_url}."
    assert "no run 99 in" in str(caught.value)


def test_batches_are_atomic_and_nothing_committed_is_lost(store: Store) -> None:
    run_id = start(store)
    case_ids = [f"bulk-{i:03d}" for i in range(400)]
    for first in range(0, 400, 100):
        store.write_scores(make_rows(run_id, case_ids[first : first + 100]))
    assert len(store.scores(run_id)) == 1200

    # a row the database refuses refuses its own case only: the batch's other case is stored
    late, broken = make_rows(run_id, ["late-001"]), make_rows(run_id, ["late-002"])
    broken[0] = dataclasses.replace(broken[0], rationale=None)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="refused the score rows of case") as caught:
        store.write_scores(late + broken)
    assert "late-002" in one_line(caught.value) and "late-001" not in str(caught.value)
    assert len(store.scores(run_id)) == 1203
    assert {r.case_id for r in store.scores(run_id)} >= {"late-001"}
    assert not [r for r in store.scores(run_id) if r.case_id == "late-002"]


def test_writes_are_idempotent_per_item(store: Store) -> None:
    # a crashed xdist worker's case is re-run on another worker; its rows collided
    # with the dead worker's (UNIQUE constraint failed) and the whole batch, another case's
    # rows too, was refused
    run_id = start(store)
    store.write_scores(make_rows(run_id, ["cc-001"], score=2, criteria=["skills"]))  # dead worker
    store.write_scores(make_rows(run_id, ["cc-001", "cc-002"], score=4))  # the re-run, and cc-002
    rows = store.scores(run_id)
    assert len(rows) == 6  # no duplicate, nothing lost
    assert {(r.case_id, r.criterion, r.score) for r in rows} == {
        (case, criterion, 4)
        for case in ("cc-001", "cc-002")
        for criterion in ("skills", "experience", "communication")
    }
    # the same item twice in one batch: the last one wins
    store.write_scores(make_rows(run_id, ["cc-003"], score=1) + make_rows(run_id, ["cc-003"]))
    assert {r.score for r in store.scores(run_id) if r.case_id == "cc-003"} == {3}


def test_list_runs_newest_first(store: Store) -> None:
    ids = [start(store) for _ in range(3)]
    assert [r.run_id for r in store.list_runs()] == ids[::-1]
    assert [r.run_id for r in store.list_runs(limit=2)] == ids[:0:-1]


def test_mark_abandoned_runs(store: Store) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    mine = start(store)
    orphan = start(store)
    far_old = start(store)
    far_recent = start(store)
    long_ago = (datetime.now(UTC) - timedelta(hours=30)).isoformat()
    with store.engine.begin() as conn:
        conn.execute(t.runs.update().where(t.runs.c.run_id == orphan).values(pid=dead.pid))
        for run_id, started in ((far_old, long_ago), (far_recent, datetime.now(UTC).isoformat())):
            conn.execute(
                t.runs.update()
                .where(t.runs.c.run_id == run_id)
                .values(host="other-host.example.test", started_at=started)
            )

    assert store.mark_abandoned_runs() == [orphan, far_old]
    assert store.get_run(orphan).status == "interrupted"
    assert store.get_run(orphan).finished_at is not None
    assert store.get_run(mine).status == "running"
    assert store.get_run(far_recent).status == "running"
    assert store.mark_abandoned_runs() == []


# --------------------------------------------------------------------------------------------
# Acceptance, baselines, immutability
# --------------------------------------------------------------------------------------------


def test_accept_records_who_when_why_and_the_previous_baseline(store: Store) -> None:
    assert store.baseline() is None
    first = complete_run(store)
    accepted = store.accept(first, by="Priya Venkat", note="first baseline")
    assert accepted.previous_baseline_run_id is None and accepted.forced is False
    second = complete_run(store, baseline_run_id=first)
    forced = store.accept(second, by="Priya Venkat", note="gap gate known, see ticket", forced=True)
    assert forced.previous_baseline_run_id == first and forced.forced is True

    record = store.get_run(second)
    assert record.accepted == forced
    assert store.baseline() == record
    assert store.baseline("support-engineer") == record
    assert store.baseline("another-rubric") is None


def test_baseline_is_per_rubric_and_latest_by_acceptance(store: Store) -> None:
    c = complete_run(store)
    a = complete_run(store, baseline_run_id=c)
    b = complete_run(store, rubric_id="sales-rep")
    store.accept(c, by="Lena Frost")
    store.accept(b, by="Lena Frost")
    store.accept(a, by="Lena Frost")
    assert store.baseline().run_id == a
    assert store.baseline("support-engineer").run_id == a
    assert store.baseline("sales-rep").run_id == b
    assert store.get_run(a).accepted.previous_baseline_run_id == c


def test_accept_refusals(store: Store) -> None:
    running = start(store)
    interrupted = start(store)
    store.finish_run(interrupted, status="interrupted")
    done = complete_run(store)

    with pytest.raises(StoreError) as caught:
        store.accept(interrupted, by="Priya Venkat")
    assert one_line(caught.value) == (
        f"run {interrupted} was interrupted and can never become a baseline."
    )
    with pytest.raises(StoreError, match=f"run {running} is still running"):
        store.accept(running, by="Priya Venkat")
    with pytest.raises(StoreError, match="There is no run 404"):
        store.accept(404, by="Priya Venkat")
    with pytest.raises(StoreError, match="needs the name"):
        store.accept(done, by="")
    store.accept(done, by="Priya Venkat")
    with pytest.raises(StoreError, match=f"Run {done} was already accepted by Priya Venkat"):
        store.accept(done, by="Someone Else")
    # an interrupted run stays unacceptable even after it is finished again
    with pytest.raises(StoreError):
        store.finish_run(interrupted, status="complete")
    assert store.baseline().run_id == done


def test_acceptance_is_compare_and_swap_against_the_judged_baseline(store: Store) -> None:
    # once, a run replaced a baseline it was never compared against
    first = complete_run(store)
    store.accept(first, by="Priya Venkat", note="first baseline")
    judged, stale = (complete_run(store, baseline_run_id=first) for _ in range(2))
    store.accept(judged, by="Priya Venkat", note="judged against run 1")
    with pytest.raises(StoreError) as caught:
        store.accept(stale, by="Lena Frost", note="also judged against run 1", forced=True)
    assert one_line(caught.value) == (
        f"Run {stale} was not accepted: it was judged against baseline run {first}, but the "
        f"baseline is now run {judged} (accepted by Priya Venkat); run it again against the "
        "current baseline."
    )
    assert store.baseline().run_id == judged


def test_a_partial_run_is_accepted_only_when_forced_with_a_note(store: Store) -> None:
    partial = start(store)
    store.write_scores(make_rows(partial, ["cc-001"]))
    store.finish_run(partial, status="partial")
    assert store.get_run(partial).status == "partial"
    for forced, note in ((False, "looks fine"), (True, "")):
        with pytest.raises(StoreError, match=f"run {partial} is partial") as caught:
            store.accept(partial, by="Priya Venkat", note=note, forced=forced)
        one_line(caught.value)
    accepted = store.accept(partial, by="Priya Venkat", note="-x on purpose", forced=True)
    assert accepted.forced and store.baseline().run_id == partial
    assert store.verify_chain().ok


def test_concurrent_acceptances_judged_against_one_baseline_let_exactly_one_win(
    store: Store, store_url: str
) -> None:
    first = complete_run(store)
    store.accept(first, by="Priya Venkat", note="first baseline")
    candidates = [complete_run(store, baseline_run_id=first) for _ in range(4)]
    barrier = threading.Barrier(len(candidates))
    outcomes: dict[int, str] = {}

    def accept(run_id: int) -> None:
        with Store.open(store_url) as own:  # its own connection, as another process would
            barrier.wait()
            try:
                own.accept(run_id, by="Lena Frost", note="concurrent")
                outcomes[run_id] = "accepted"
            except StoreError as exc:
                outcomes[run_id] = str(exc)

    threads = [threading.Thread(target=accept, args=(run_id,)) for run_id in candidates]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [run_id for run_id, outcome in outcomes.items() if outcome == "accepted"]
    assert len(winners) == 1, outcomes
    for run_id in set(candidates) - set(winners):
        assert "was judged against baseline run" in outcomes[run_id], outcomes[run_id]
    assert store.baseline().run_id == winners[0]
    assert store.baseline().accepted.previous_baseline_run_id == first
    assert store.verify_chain().ok


def test_ids_no_column_can_hold_are_no_run_in_one_sentence(store: Store) -> None:
    # show|report|accept 99999999999999999999 was an OverflowError traceback
    huge = 99999999999999999999
    for call in (
        lambda: store.get_run(huge),
        lambda: store.scores(huge),
        lambda: store.accept(huge, by="Priya Venkat"),
    ):
        with pytest.raises(StoreError) as caught:
            call()
        assert one_line(caught.value) == f"There is no run {huge} in {store.masked_url}."


def test_an_accepted_run_is_never_modified(store: Store) -> None:
    store.sync_golden_set(make_golden(), now=NOW)
    run_id = complete_run(store, ("cc-001", "cc-002"))
    store.accept(run_id, by="Priya Venkat", note="baseline")
    snapshot = {
        "runs": table_rows(store, t.runs),
        "scores": table_rows(store, t.scores),
        "acceptances": table_rows(store, t.acceptances),
    }

    with pytest.raises(StoreError, match="accepted as a baseline and cannot be changed"):
        store.finish_run(run_id, status="interrupted")
    with pytest.raises(StoreError):
        store.write_scores(make_rows(run_id, ["cc-003"]))
    with pytest.raises(StoreError):
        store.accept(run_id, by="Mallory Vance")
    later = complete_run(store, baseline_run_id=run_id)
    store.add_review(
        run_id=later,
        case_id="cc-001",
        target="skills",
        baseline_run_id=run_id,
        before="3",
        after="4",
        by="Priya Venkat",
        note="read it",
    )
    store.accept(later, by="Priya Venkat")
    store.mark_abandoned_runs(stale_hours=0)
    store.sync_golden_set(make_golden(), now=NOW)
    store.retire_case("cc-002", by="Priya Venkat")

    assert table_rows(store, t.runs)[: len(snapshot["runs"])] == snapshot["runs"]
    assert [r for r in table_rows(store, t.scores) if r[1] == run_id] == snapshot["scores"]
    assert table_rows(store, t.acceptances)[:1] == snapshot["acceptances"]


# --------------------------------------------------------------------------------------------
# Reviews and reuse
# --------------------------------------------------------------------------------------------


def test_reviews_are_found_by_the_exact_movement(store: Store) -> None:
    base = complete_run(store)
    store.accept(base, by="Priya Venkat")
    run_id = complete_run(store, baseline_run_id=base)
    review = store.add_review(
        run_id=run_id,
        case_id="cc-001",
        target="decision",
        baseline_run_id=base,
        before="advance (68.8)",
        after="hold (56.2)",
        by="Dana Okafor",
        note="the new model reads the gap year as missing experience; agreed with the team",
    )
    assert review.reviewed_at.endswith("+00:00")
    found = store.find_review(
        case_id="cc-001",
        target="decision",
        baseline_run_id=base,
        before="advance (68.8)",
        after="hold (56.2)",
    )
    assert found == review
    assert (
        store.find_review(
            case_id="cc-001",
            target="decision",
            baseline_run_id=base,
            before="advance (68.8)",
            after="hold (50.0)",
        )
        is None
    )
    assert store.reviews(baseline_run_id=base) == [review]
    assert store.reviews(run_id=run_id) == [review]
    assert store.reviews(run_id=base) == []
    with pytest.raises(StoreError, match="needs the name"):
        store.add_review(
            run_id=run_id,
            case_id="cc-001",
            target="skills",
            baseline_run_id=base,
            before="3",
            after="4",
            by="",
            note="",
        )
    with pytest.raises(StoreError, match="There is no run 77"):
        store.add_review(
            run_id=run_id,
            case_id="cc-001",
            target="skills",
            baseline_run_id=77,
            before="3",
            after="4",
            by="Dana Okafor",
            note="",
        )


def test_latest_complete_run_matches_the_whole_identity(store: Store) -> None:
    older = complete_run(store)
    newer = complete_run(store)
    complete_run(store, identity=make_identity(temperature=0.7))
    complete_run(store, identity=make_identity(model_id="keyword-v2"))
    interrupted = start(store)
    store.finish_run(interrupted, status="interrupted")
    start(store)  # running

    found = store.latest_complete_run(identity=make_identity())
    assert found is not None and found.run_id == newer != older
    assert store.latest_complete_run(identity=make_identity(prompt_sha="q" * 64)) is None
    hot = store.latest_complete_run(identity=make_identity(temperature=0.7))
    assert hot is not None and hot.temperature == 0.7


# --------------------------------------------------------------------------------------------
# Database trouble: one sentence, nothing lost
# --------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_postgresql_is_one_sentence() -> None:
    port = _free_port()
    with pytest.raises(StoreError) as caught:
        Store.open(f"postgresql://screener:hunter2@127.0.0.1:{port}/evals")
    message = one_line(caught.value)
    assert message.startswith(f"Cannot reach the PostgreSQL store at 127.0.0.1:{port}")
    assert "connection refused" in message
    assert "hunter2" not in message


def test_only_sqlite_and_postgresql_are_stores() -> None:
    with pytest.raises(StoreError) as caught:
        Store.open("mysql://screener:pw@db.example.test/evals")
    assert one_line(caught.value) == (
        "The store URL mysql://screener:***@db.example.test/evals names mysql, but "
        "pytest-screeneval keeps its runs in SQLite or PostgreSQL only."
    )


@pytest.mark.postgres
def test_a_missing_postgresql_database_is_named() -> None:
    base = os.environ.get("SCREENEVAL_TEST_PG_URL")
    if not base:
        pytest.skip("PostgreSQL tests need SCREENEVAL_TEST_PG_URL (CI sets it)")
    url = sa.engine.make_url(base).set(database="screeneval_no_such_db")
    with pytest.raises(StoreError) as caught:
        Store.open(url.render_as_string(hide_password=False))
    message = one_line(caught.value)
    assert "database 'screeneval_no_such_db' does not exist" in message
    assert message.endswith("create it or fix the database name in the URL.")


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_bytes(b"these are meeting notes, not a database\n" * 200)
    with pytest.raises(StoreError) as caught:
        Store.open(f"sqlite:///{bogus}")
    assert one_line(caught.value) == (
        f"The file {bogus} is not a SQLite database; point the store at another file."
    )


def test_not_a_url() -> None:
    with pytest.raises(StoreError, match="is not a database URL"):
        Store.open("definitely not a url")


def test_locked_sqlite_store_is_one_sentence_and_keeps_rows(tmp_path: Path) -> None:
    url = default_url(tmp_path)
    with Store.open(url, busy_timeout=0.2) as store:
        run_id = start(store)
        store.write_scores(make_rows(run_id, ["cc-001", "cc-002"]))

        other = sqlite3.connect(tmp_path / ".screeneval" / "screeneval.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            with pytest.raises(StoreError) as caught:
                store.write_scores(make_rows(run_id, ["cc-003"]))
            message = one_line(caught.value)
            assert message.startswith(
                f"The SQLite store {tmp_path / '.screeneval' / 'screeneval.db'} is locked by "
                "another process;"
            )
            assert "0.2 s" in message
            # readers are not blocked by the writer (WAL)
            assert len(store.scores(run_id)) == 6
        finally:
            other.execute("ROLLBACK")
            other.close()
        store.write_scores(make_rows(run_id, ["cc-003"]))
        assert [r.case_id for r in store.scores(run_id)].count("cc-003") == 3
        assert len(store.scores(run_id)) == 9


def test_full_disk_is_one_sentence_and_keeps_committed_rows(tmp_path: Path) -> None:
    url = default_url(tmp_path)
    with Store.open(url) as store:
        run_id = start(store)
        store.write_scores(make_rows(run_id, ["cc-001"]))
        with store.engine.connect() as conn:
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        store.engine.dispose()

        # SQLite's own page cap gives the same SQLITE_FULL error as a full disk
        @sa.event.listens_for(store.engine, "connect")
        def cap(dbapi_connection: sqlite3.Connection, _record: object) -> None:
            dbapi_connection.execute(f"PRAGMA max_page_count={pages + 1}")

        big = [
            dataclasses.replace(row, rationale="x" * 20_000)
            for row in make_rows(run_id, [f"big-{i}" for i in range(20)])
        ]
        with pytest.raises(StoreError) as caught:
            store.write_scores(big)
        message = one_line(caught.value)
        assert message.startswith(f"The store {tmp_path / '.screeneval' / 'screeneval.db'}")
        assert "out of space" in message
        assert len(store.scores(run_id)) == len(CRITERIA)


def test_errors_never_leak_tracebacks_from_methods(store: Store) -> None:
    store.close()
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE eval_reviews"))
    with pytest.raises(StoreError) as caught:
        store.reviews()
    assert one_line(caught.value).startswith("The store ")


def test_two_stores_can_open_the_same_empty_database_at_once(
    make_store_url: Callable[[], str],
) -> None:
    url = make_store_url()
    code = (
        "import sys\nfrom pytest_screeneval.store.database import Store\n"
        "Store.open(sys.argv[1]).close()\n"
    )
    children = [subprocess.Popen([sys.executable, "-c", code, url]) for _ in range(3)]
    assert [child.wait(timeout=60) for child in children] == [0, 0, 0]
    with Store.open(url) as store:
        assert store.schema_revision() == SCHEMA_REVISION


_OPEN_AT = """\
import sys, time
from pytest_screeneval.errors import StoreError
from pytest_screeneval.store.database import Store
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))  # all start opening at one instant
try:
    Store.open(sys.argv[1]).close()
except StoreError as exc:
    print(exc)
    sys.exit(3)
"""


def _open_at_once(url: str, openers: int) -> list[str]:
    """Open one store from several processes at once; what each refusal said."""
    at = str(time.time() + 1.5)  # after every interpreter has started and imported
    command = [sys.executable, "-c", _OPEN_AT, url, at]
    processes = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(openers)
    ]
    said = [process.communicate(timeout=120)[0] for process in processes]
    return [out.strip() for out, p in zip(said, processes, strict=True) if p.returncode != 0]


# PostgreSQL: its catalog is read statement by statement, which is where the race was; SQLite
# serialises whole transactions (BEGIN IMMEDIATE), so it never saw tables without their revision
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_stores_opened_at_once_on_a_fresh_database_all_open(
    make_store_url: Callable[[], str],
) -> None:
    """The first to take the lock creates the schema; the others wait for it and then see the
    schema whole. Read before the lock, one could see the new tables but not yet the revision
    stamped with them, and refuse the store as another tool's (about one round in eight did,
    before the check moved under the lock)."""
    for _ in range(3):
        url = make_store_url()
        assert _open_at_once(url, 5) == []
        store = Store.open(url)
        try:
            assert store.schema_revision() == SCHEMA_REVISION
        finally:
            store.close()
