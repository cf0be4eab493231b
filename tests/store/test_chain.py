"""The audit chain on SQLite and PostgreSQL: every finish, acceptance and review is chained, and
``verify`` names the first run, acceptance or review whose rows were changed by hand."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from support.golden_factory import make_golden, make_identity, make_rows

from pytest_screeneval.cli.main import main
from pytest_screeneval.errors import GoldenSetError, StoreError
from pytest_screeneval.golden.model import Expectation, canonical_json, sha256_text
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import golden as golden_chain
from pytest_screeneval.store.chain import queries as chain_queries
from pytest_screeneval.store.chain.payloads import (
    CHAIN_KEY_ENV,
    GENESIS_HASH,
    RUN_FIELDS,
    SCORE_FIELDS,
    ChainEntry,
    Current,
    check_entries,
    digest_rows,
    key_id,
    new_entry,
    record_json,
)
from pytest_screeneval.store.database import Store

NOW = "2024-05-02T09:30:00+00:00"


@pytest.fixture
def store(store_url: str) -> Store:
    with Store.open(store_url) as opened:
        opened.sync_golden_set(make_golden(), now=NOW)
        yield opened


def finished_run(
    store: Store,
    case_ids: tuple[str, ...] = ("cc-001", "cc-002"),
    *,
    status: str = "complete",
    **changes: object,
) -> int:
    run_id = store.start_run(
        identity=make_identity(),
        rubric_id="support-engineer",
        golden_sha="g" * 64,
        plugin_version="0.1.0",
        vcs_commit="abc1234",
        **changes,  # type: ignore[arg-type]
    )
    store.write_scores(make_rows(run_id, case_ids))
    store.finish_run(run_id, status=status)
    return run_id


def review(store: Store, run_id: int, baseline: int, note: str = "read it, fine") -> None:
    store.add_review(
        run_id=run_id,
        case_id="cc-001",
        target="skills",
        baseline_run_id=baseline,
        before="3",
        after="4",
        by="Priya Venkat",
        note=note,
    )


def history(store: Store) -> tuple[int, int, int]:
    """A small history: run 1 accepted, run 2 reviewed against it, run 3 interrupted."""
    first = finished_run(store)
    store.accept(first, by="Priya Venkat", note="first baseline")
    second = finished_run(store, baseline_run_id=first)
    review(store, second, first)
    third = finished_run(store, ("cc-001",), status="interrupted")
    return first, second, third


def tamper(store: Store, sql: str, **params: object) -> None:
    with store.engine.begin() as conn:
        changed = conn.execute(sa.text(sql), params).rowcount
    assert changed >= 1, f"the tampering statement changed nothing: {sql}"


def chain_rows(store: Store) -> list[sa.Row[tuple[object, ...]]]:
    with store.engine.connect() as conn:
        return list(conn.execute(sa.select(t.chain).order_by(t.chain.c.seq)))


def broken(store: Store) -> str:
    report = store.verify_chain()
    assert not report.ok
    assert report.first_break is not None and "\n" not in report.first_break
    return report.first_break


# --------------------------------------------------------------------------------------------
# The hashing (pure)
# --------------------------------------------------------------------------------------------


def _row_values(**changes: object) -> tuple[object, ...]:
    [row] = make_rows(1, ["cc-001"], criteria=["skills"])
    values = {name: getattr(row, name) for name in SCORE_FIELDS}
    values["evidence"] = '["Support engineer at Brightwater Logistics"]'
    values.update(changes)
    return tuple(values[name] for name in SCORE_FIELDS)


def test_row_digest_ignores_row_order_and_how_a_driver_returns_numbers() -> None:
    rows = [_row_values(case_id=c, criterion=k) for c in ("b", "a") for k in ("y", "x")]
    assert digest_rows(rows) == digest_rows(list(reversed(rows)))
    # a driver may return 12 for a REAL 12.0; the hash must not depend on it
    assert digest_rows([_row_values(latency_ms=12)]) == digest_rows([_row_values(latency_ms=12.0)])
    digest = digest_rows(rows)
    assert digest.count == 4
    assert sorted(digest.index) == ["a", "b"] and sorted(digest.index["a"]) == ["x", "y"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("case_id", "cc-009"),
        ("variant_key", "name=Tomasz Brenner"),
        ("repeat_index", 1),
        ("criterion", "communication"),
        ("score", 4),
        ("score", None),
        ("score", "3"),  # a text put into a number column by hand
        ("rationale", "Edited."),
        ("evidence", "[]"),
        ("confidence", 0.7500001),
        ("latency_ms", 13.5),
        ("attempts", 2),
        ("error", "timeout"),
        ("input_sha256", "b" * 64),
        ("prompt_tokens", 101),
        ("completion_tokens", 19),
        ("reused_from_run", 7),
    ],
)
def test_every_score_column_is_hashed(field: str, value: object) -> None:
    assert digest_rows([_row_values(**{field: value})]) != digest_rows([_row_values()])


def test_check_entries_walks_the_links_in_order() -> None:
    record = record_json("run", dict.fromkeys(RUN_FIELDS, 1))
    rows = digest_rows([_row_values()])
    first = new_entry(
        seq=1,
        kind="run",
        ref_id=1,
        record=record,
        rows=rows,
        prev_hash=GENESIS_HASH,
        recorded_at=NOW,
    )
    second = new_entry(
        seq=2,
        kind="run",
        ref_id=2,
        record=record,
        rows=rows,
        prev_hash=first.entry_hash,
        recorded_at=NOW,
    )

    def now(entry: ChainEntry) -> Current:
        return Current(record=record, rows=rows)

    intact = check_entries([first, second], now)
    assert (intact.ok, intact.entries, intact.last_hash) == (True, 2, second.entry_hash)
    swapped = check_entries([second, first], now)
    assert swapped.first_break == (
        "chain entry 2 (run 2) starts the chain but does not link to its start: "
        "earlier entries were deleted or entries were re-ordered"
    )
    gone = check_entries([first], lambda entry: Current(record=None))
    assert gone.first_break == "run 1 was deleted from eval_runs, yet chain entry 1 holds it"
    assert check_entries([], now).last_hash == GENESIS_HASH


# --------------------------------------------------------------------------------------------
# Appending
# --------------------------------------------------------------------------------------------


def test_finishes_acceptances_and_reviews_are_chained_in_order(store: Store) -> None:
    first, second, third = history(store)
    running = store.start_run(
        identity=make_identity(),
        rubric_id="support-engineer",
        golden_sha="g" * 64,
        plugin_version="0.1.0",
        vcs_commit=None,
    )
    entries = chain_rows(store)
    assert [(e.seq, e.kind, e.ref_id) for e in entries] == [
        (1, "golden", 1),  # the golden set the fixture stored
        (2, "run", first),
        (3, "acceptance", 1),
        (4, "run", second),
        (5, "review", 1),
        (6, "run", third),
    ]
    assert entries[0].prev_hash == GENESIS_HASH
    assert all(e.prev_hash == before.entry_hash for before, e in itertools.pairwise(entries))
    assert [e.row_count for e in entries] == [None, 6, None, 6, None, 3]
    assert not any(e.backfilled for e in entries)
    # every run records the chain position of the golden set it was scored against
    assert {store.get_run(run_id).golden_seq for run_id in (first, second, third)} == {1}

    report = store.verify_chain()
    assert (report.ok, report.entries, report.first_break) == (True, 6, None)
    assert report.last_hash == entries[-1].entry_hash

    # a run left running by a dead process is chained when it is marked interrupted
    store.write_scores(make_rows(running, ["cc-002"]))
    tamper(store, "UPDATE eval_runs SET pid = 0 WHERE run_id = :run", run=running)
    assert store.mark_abandoned_runs() == [running]
    last = chain_rows(store)[-1]
    assert (last.seq, last.kind, last.ref_id, last.row_count) == (7, "run", running, 3)
    assert store.verify_chain().ok


def test_verify_on_an_empty_store_is_intact(store_url: str) -> None:
    with Store.open(store_url) as empty:
        report = empty.verify_chain()
    assert (report.ok, report.entries, report.last_hash) == (True, 0, GENESIS_HASH)


def test_concurrent_finishes_never_fork_the_chain(store: Store, store_url: str) -> None:
    runs = [
        store.start_run(
            identity=make_identity(),
            rubric_id="support-engineer",
            golden_sha="g" * 64,
            plugin_version="0.1.0",
            vcs_commit=None,
        )
        for _ in range(8)
    ]
    for run_id in runs:
        store.write_scores(make_rows(run_id, ["cc-001", "cc-002", "gap-001"], repeats=20))
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def finish(mine: list[int]) -> None:
        # each thread is its own Store, as two pytest processes would be
        with Store.open(store_url) as own:
            barrier.wait()
            for run_id in mine:
                try:
                    own.finish_run(run_id, status="complete")
                except BaseException as exc:  # reported below, with the run
                    errors.append(exc)

    threads = [threading.Thread(target=finish, args=(runs[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    entries = chain_rows(store)
    assert [e.seq for e in entries] == list(range(1, 10))
    assert sorted(e.ref_id for e in entries if e.kind == "run") == runs
    report = store.verify_chain()
    assert report.ok and report.entries == 9


def test_no_score_can_be_written_to_a_finished_run(store: Store) -> None:
    run_id = finished_run(store)
    with pytest.raises(Exception, match=f"Run {run_id} is complete"):
        store.write_scores(make_rows(run_id, ["gap-001"]))
    assert store.verify_chain().ok


# --------------------------------------------------------------------------------------------
# What verify catches
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "assignment",
    ["score = 5", "rationale = 'It was always a 5.'", "confidence = 0.99", "error = 'timeout'"],
)
def test_a_score_row_edited_by_hand_is_named(store: Store, assignment: str) -> None:
    _, second, _ = history(store)
    tamper(
        store,
        f"UPDATE eval_scores SET {assignment} "
        "WHERE run_id = :run AND case_id = 'cc-002' AND criterion = 'skills'",
        run=second,
    )
    assert broken(store) == (
        f"run {second}: its score rows no longer match the hash recorded when it finished "
        "(the score row for case cc-002 / skills changed)"
    )


def test_a_deleted_score_row_is_named(store: Store) -> None:
    first, _, _ = history(store)
    tamper(
        store,
        "DELETE FROM eval_scores WHERE run_id = :run AND case_id = 'cc-001' "
        "AND criterion = 'experience'",
        run=first,
    )
    assert broken(store) == (
        f"run {first}: its score rows no longer match the hash recorded when it finished "
        "(case cc-001 / experience had 1 score row(s) and has none now: they were deleted)"
    )


def test_a_score_row_added_by_hand_is_named(store: Store) -> None:
    first, _, _ = history(store)
    with store.engine.begin() as conn:
        [row] = make_rows(first, ["cc-001"], criteria=["skills"])
        values = {name: getattr(row, name) for name in ("run_id", *SCORE_FIELDS)}
        values.update(evidence="[]", repeat_index=1)
        conn.execute(t.scores.insert().values(**values))
    assert broken(store) == (
        f"run {first}: its score rows no longer match the hash recorded when it finished "
        "(case cc-001 / skills has 2 score row(s), it had 1: a row was added)"
    )


def test_an_edited_run_record_names_the_field(store: Store) -> None:
    first, _, _ = history(store)
    tamper(store, "UPDATE eval_runs SET model_id = 'keyword-v2' WHERE run_id = :run", run=first)
    assert broken(store) == (
        f"run {first}: its run record no longer matches the hash recorded when it finished "
        "(model_id was 'keyword-v1', now 'keyword-v2')"
    )


def test_an_edited_acceptance_note_is_named(store: Store) -> None:
    first, _, _ = history(store)
    tamper(
        store,
        "UPDATE eval_acceptances SET note = 'checked every case' WHERE run_id = :run",
        run=first,
    )
    assert broken(store) == (
        f"the acceptance of run {first}: it no longer matches the hash recorded when it was "
        "accepted (note was 'first baseline', now 'checked every case')"
    )


def test_an_edited_review_is_named(store: Store) -> None:
    _, second, _ = history(store)
    tamper(store, "UPDATE eval_reviews SET reviewed_by = 'Mallory Vance'")
    assert broken(store) == (
        f"review 1 of run {second} (case cc-001, skills): it no longer matches the hash "
        "recorded when it was made (reviewed_by was 'Priya Venkat', now 'Mallory Vance')"
    )


def test_a_reordered_chain_is_named(store: Store) -> None:
    history(store)
    # swap entries 3 and 4 (through a free seq: the primary key holds at every statement)
    tamper(store, "UPDATE eval_chain SET seq = 100 WHERE seq = 3")
    tamper(store, "UPDATE eval_chain SET seq = 3 WHERE seq = 4")
    tamper(store, "UPDATE eval_chain SET seq = 4 WHERE seq = 100")
    assert broken(store) == (
        "chain entry 3 (run 2) does not link to chain entry 2: entries were re-ordered, "
        "deleted or inserted, or entry 2 was rewritten"
    )


def test_swapped_entry_hashes_are_named(store: Store) -> None:
    history(store)
    with store.engine.connect() as conn:
        hashes = dict(conn.execute(sa.select(t.chain.c.seq, t.chain.c.entry_hash)).all())
    tamper(
        store,
        "UPDATE eval_chain SET entry_hash = CASE seq WHEN 2 THEN :second ELSE :first END "
        "WHERE seq IN (2, 3)",
        first=hashes[2],
        second=hashes[3],
    )
    assert broken(store) == (
        "chain entry 2 (run 1) was edited: its recorded hash is not the hash of its content "
        "(or two entries' hashes were swapped)"
    )


def test_a_deleted_chain_entry_is_named(store: Store) -> None:
    history(store)
    tamper(store, "DELETE FROM eval_chain WHERE seq = 4")
    assert broken(store) == (
        "chain entry 5 (review 1 of run 2 (case cc-001, skills)) does not link to chain entry 3 "
        "(entries jump from 3 to 5): entries were re-ordered, deleted or inserted, "
        "or entry 3 was rewritten"
    )


def test_a_chain_entry_rewritten_to_match_edited_rows_is_named(store: Store) -> None:
    first, _, _ = history(store)
    tamper(store, "UPDATE eval_scores SET score = 1 WHERE run_id = :run", run=first)
    # the tamperer also puts the new rows' hash into the entry, but cannot fix its own hash
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(*[t.scores.c[name] for name in SCORE_FIELDS]).where(
                t.scores.c.run_id == first
            )
        ).all()
    digest = digest_rows(rows)
    tamper(
        store,
        "UPDATE eval_chain SET rows_hash = :hash, rows_index = :index WHERE seq = 2",
        hash=digest.rows_hash,
        index=digest.index_json,
    )
    assert broken(store) == (
        "chain entry 2 (run 1) was edited: its recorded hash is not the hash of its content "
        "(or two entries' hashes were swapped)"
    )


def test_an_acceptance_forged_by_hand_is_named(store: Store) -> None:
    _, second, _ = history(store)
    with store.engine.begin() as conn:
        conn.execute(
            t.acceptances.insert().values(
                run_id=second,
                accepted_by="Mallory Vance",
                accepted_at=NOW,
                note="",
                previous_baseline_run_id=1,
                forced=False,
            )
        )
    assert broken(store) == (
        f"the acceptance of run {second} is recorded but has no chain entry: it was written "
        "outside pytest-screeneval or its entry was deleted"
    )


def test_the_first_break_in_chain_order_is_the_one_named(store: Store) -> None:
    first, second, _ = history(store)
    tamper(store, "UPDATE eval_scores SET score = 1 WHERE run_id = :run", run=second)
    tamper(store, "UPDATE eval_scores SET score = 1 WHERE run_id = :run", run=first)
    report = store.verify_chain()
    assert report.first_break is not None
    assert report.first_break.startswith(f"run {first}: its score rows")
    assert report.entries == 6


# --------------------------------------------------------------------------------------------
# screeneval verify
# --------------------------------------------------------------------------------------------


def test_verify_command_exit_status_and_sentences(
    store: Store, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _, _ = history(store)
    last_hash = chain_rows(store)[-1].entry_hash
    assert main(["verify", "--db", store_url]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (f"chain intact: 6 entries, last hash {last_hash}\n", "")

    tamper(
        store,
        "UPDATE eval_scores SET score = 5 WHERE run_id = :run AND case_id = 'cc-001' "
        "AND criterion = 'communication'",
        run=first,
    )
    assert main(["--db", store_url, "verify"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"screeneval: The audit chain of {store.masked_url} is broken (6 entries): run {first}: "
        "its score rows no longer match the hash recorded when it finished (the score row for "
        "case cc-001 / communication changed).\n"
    )


# --------------------------------------------------------------------------------------------
# The golden set in the chain
# --------------------------------------------------------------------------------------------

GOLDEN_EDITS = {
    "case text and sha": (
        "UPDATE eval_cases SET input_text = 'Edited.', input_sha256 = :sha "
        "WHERE case_id = 'cc-001'",
        "case cc-001 in eval_cases no longer matches the digest chain entry 1 recorded "
        "(changed: input_sha256, input_text): it was edited outside pytest-screeneval",
    ),
    "expectation": (
        "UPDATE eval_expectations SET expected = 1 WHERE case_id = 'cc-001' "
        "AND criterion = 'skills'",
        "the expectation of case cc-001 / skills set by",
    ),
    "rating": (
        "UPDATE eval_ratings SET score = 5 WHERE case_id = 'cc-002' AND rater = 'rater-kt'",
        "the rating of case cc-002 / communication by rater-kt",
    ),
    "rubric": ("UPDATE eval_rubrics SET body = '{}'", "rubric support-engineer (sha"),
    "variants": ("UPDATE eval_variants SET body = '{}'", "the variants (sha"),
    "retirement": (
        "UPDATE eval_cases SET retired_at = :now, retired_by = 'Mallory Vance' "
        "WHERE case_id = 'gap-001'",
        "case gap-001 in eval_cases no longer matches the digest chain entry 1 recorded "
        "(changed: retired_at, retired_by)",
    ),
    "expectation history deleted": (
        "DELETE FROM eval_expectations WHERE case_id = 'cc-002' AND criterion = 'skills'",
        "was deleted from eval_expectations, yet chain entry 1 holds it",
    ),
}


@pytest.mark.parametrize("edit", sorted(GOLDEN_EDITS))
def test_verify_names_every_kind_of_edit_to_the_golden_set(store: Store, edit: str) -> None:
    history(store)
    assert store.verify_chain().ok
    sql, named = GOLDEN_EDITS[edit]
    tamper(store, sql, sha="e" * 64, now=NOW)
    assert named in broken(store)


def test_a_rating_added_by_hand_is_named(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            t.ratings.insert().values(
                case_id="cc-001", criterion="skills", rater="rater-zz", score=1, recorded_at=NOW
            )
        )
    assert broken(store).endswith(
        "is in eval_ratings but in no chain entry: it was added outside pytest-screeneval"
    )


def test_changes_made_by_the_store_keep_the_chain_intact(store: Store) -> None:
    golden = make_golden()
    changed = dataclasses.replace(
        golden.cases[1],
        expected={
            **golden.cases[1].expected,
            "skills": Expectation("skills", 5, "Priya Venkat", "2026-11-30"),
        },
        ratings={"communication": {"rater-ab": 4}},
    )
    store.sync_golden_set(
        dataclasses.replace(golden, cases=(golden.cases[0], changed, golden.cases[2]))
    )
    store.retire_case("cc-001", by="Priya Venkat")
    with store.engine.connect() as conn:
        kinds = [
            row.kind for row in conn.execute(sa.select(t.chain.c.kind).order_by(t.chain.c.seq))
        ]
    assert kinds == ["golden", "golden", "golden"]  # the first sync, the change, the retirement
    assert store.verify_chain().ok
    # syncing the same set again changes nothing and chains nothing
    store.sync_golden_set(
        dataclasses.replace(golden, cases=(golden.cases[0], changed, golden.cases[2]))
    )
    assert store.verify_chain().entries == 3


def test_a_hand_edit_is_not_laundered_by_the_next_sync(store: Store) -> None:
    tamper(store, "UPDATE eval_ratings SET score = 5 WHERE rater = 'rater-kt'")
    store.sync_golden_set(make_golden())  # the file still says 2: a new history row is written
    assert "the rating of case cc-002 / communication by rater-kt" in broken(store)


def test_a_run_records_the_golden_set_position_it_used(store: Store) -> None:
    first = finished_run(store)
    store.retire_case("gap-001", by="Priya Venkat")
    second = finished_run(store)
    golden_seqs = {row.ref_id: row.seq for row in chain_rows(store) if row.kind == "golden"}
    assert store.get_run(first).golden_seq == golden_seqs[1]
    assert store.get_run(second).golden_seq == golden_seqs[2]
    # the position is part of the run's chained record
    tamper(store, "UPDATE eval_runs SET golden_seq = 1 WHERE run_id = :run", run=second)
    assert broken(store).startswith(f"run {second}: its run record no longer matches")


def test_the_store_golden_set_refuses_an_edited_frozen_text(store: Store) -> None:
    assert store.load_golden_set().cases
    tamper(store, "UPDATE eval_cases SET input_text = 'Edited.' WHERE case_id = 'cc-001'")
    with pytest.raises(GoldenSetError) as caught:
        store.load_golden_set()
    assert str(caught.value).startswith(
        f"Case cc-001 in the store at {store.masked_url} was frozen with input sha256 "
    )
    assert "the text was edited in the database, so it is not scored." in str(caught.value)
    # text and sha edited together: the chain still names it
    edited = sha256_text("Edited.")
    tamper(store, "UPDATE eval_cases SET input_sha256 = :sha WHERE case_id = 'cc-001'", sha=edited)
    with pytest.raises(GoldenSetError, match="was changed outside pytest-screeneval") as caught:
        store.load_golden_set()
    assert "case cc-001 in eval_cases" in str(caught.value) and "\n" not in str(caught.value)


# --------------------------------------------------------------------------------------------
# Anchors outside the database and the keyed chain
# --------------------------------------------------------------------------------------------


def reforge(store: Store) -> None:
    """Rewrite the whole chain consistently from the current rows, with the project's own
    functions: what someone with write access to the database and no key can do."""
    with store.engine.begin() as conn:
        conn.execute(t.chain.delete())
        chain_queries.backfill(conn, chain_queries.STORE_TABLES, recorded_at=NOW)
        chain_queries.append_golden(
            conn, chain_queries.STORE_TABLES, before={}, reason="a sync", recorded_at=NOW
        )


def verify_cli(store_url: str, *args: str) -> tuple[int, str, str]:
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["--db", store_url, "verify", *args])
    return code, stdout.getvalue(), stderr.getvalue()


def test_expect_head_detects_truncation_wiping_and_reforging(store: Store, store_url: str) -> None:
    first, _, _ = history(store)
    head = store.chain_head()
    kept = f"{head.seq}:{head.hash}"
    assert verify_cli(store_url, "--expect-head", kept)[0] == 0
    newest = finished_run(store)  # the chain grows past the kept head: still fine
    code, out, _ = verify_cli(store_url, "--expect-head", kept)
    assert code == 0 and "1 entries after it" in out

    # truncated: the newest run deleted with its rows and its entry; verify alone cannot tell
    newest_head = store.chain_head()
    for table in ("eval_chain WHERE kind = 'run' AND ref_id", "eval_scores WHERE run_id"):
        tamper(store, f"DELETE FROM {table} = :run", run=newest)
    tamper(store, "DELETE FROM eval_runs WHERE run_id = :run", run=newest)
    assert verify_cli(store_url)[0] == 0
    code, _, err = verify_cli(store_url, "--expect-head", f"{newest_head.seq}:{newest_head.hash}")
    assert code == 1 and "the chain has 6 entries but the head kept outside" in err
    assert "the newest entries were deleted (truncated)" in err

    # re-forged: a score edited and the chain rebuilt; verify alone cannot tell
    tamper(store, "UPDATE eval_scores SET score = 1 WHERE run_id = :run", run=first)
    reforge(store)
    assert verify_cli(store_url)[0] == 0
    code, _, err = verify_cli(store_url, "--expect-head", kept)
    assert code == 1
    assert "does not match the head kept outside it: entry 6 is not the head kept outside" in err
    assert "re-written (re-forged)" in err and "\n" not in err.rstrip("\n")

    # wiped: everything gone, "0 entries, intact" alone
    with store.engine.begin() as conn:
        for table in (t.chain, t.reviews, t.acceptances, t.scores, t.runs):
            conn.execute(table.delete())
        for table in (t.ratings, t.expectations, t.cases, t.rubrics, t.variants):
            conn.execute(table.delete())
    assert verify_cli(store_url)[0] == 0
    code, _, err = verify_cli(store_url, "--expect-head", head.hash)
    assert code == 1 and "the chain is empty but the head kept outside is" in err
    assert "the chain was wiped" in err


def test_a_keyed_chain_can_be_re_forged_only_with_the_key(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHAIN_KEY_ENV, "correct horse battery staple")
    with Store.open(store_url) as keyed:
        keyed.sync_golden_set(make_golden(), now=NOW)
        first, _, _ = history(keyed)
        report = keyed.verify_chain()
        assert report.ok and report.keyed == report.entries == 6
        assert keyed.chain_head().key_id == key_id(b"correct horse battery staple")

    # without the key: keyed entries cannot be checked, and nothing can be recorded
    monkeypatch.delenv(CHAIN_KEY_ENV)
    with Store.open(store_url) as keyless:
        assert keyless.verify_chain().unchecked == 6
        with pytest.raises(StoreError, match=r"is keyed .* set SCREENEVAL_CHAIN_KEY to record"):
            finished_run(keyless)
    code, _, err = verify_cli(store_url)
    assert code == 1 and "has 6 keyed entries whose HMAC cannot be checked" in err

    # a re-forge without the key (the project's own functions, unkeyed) is named
    monkeypatch.setenv(CHAIN_KEY_ENV, "correct horse battery staple")
    with Store.open(store_url) as keyed:
        tamper(keyed, "UPDATE eval_scores SET score = 1 WHERE run_id = :run", run=first)
        with keyed.engine.begin() as conn:
            conn.execute(t.chain.delete().where(t.chain.c.seq >= 2))
            chain_queries.backfill(conn, chain_queries.STORE_TABLES, recorded_at=NOW)
        assert "is not keyed although entry 1 before it is: the chain was re-written" in broken(
            keyed
        )
    # a wrong key is named as such
    monkeypatch.setenv(CHAIN_KEY_ENV, "another key")
    with Store.open(store_url) as wrong:
        assert "was keyed with another key" in broken(wrong)


def test_anchor_exports_a_signed_head_that_verify_checks(
    store: Store,
    store_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(CHAIN_KEY_ENV, "anchor key")
    with Store.open(store_url) as keyed:
        finished_run(keyed)
        head = keyed.chain_head()
    anchor_file = tmp_path / "head.json"
    assert main(["--db", store_url, "anchor", "--out", str(anchor_file)]) == 0
    assert capsys.readouterr().out == (
        f"anchored entry {head.seq} {head.hash} in {anchor_file}, signed with the chain key\n"
    )
    document = json.loads(anchor_file.read_text())
    assert (document["seq"], document["head"]) == (head.seq, head.hash)
    assert document["signed_with_key_id"] == key_id(b"anchor key") and document["signature"]
    code, out, _ = verify_cli(store_url, "--expect-head", str(anchor_file))
    assert code == 0 and "head kept outside (its signature checked out): entry 2" in out

    # an anchor edited after it was made is refused
    document["seq"] = 1
    anchor_file.write_text(json.dumps(document))
    code, _, err = verify_cli(store_url, "--expect-head", str(anchor_file))
    assert code == 1 and "does not match its signature: it was edited after it was made" in err
    # and without the key a signed anchor cannot be checked
    monkeypatch.delenv(CHAIN_KEY_ENV)
    code, _, err = verify_cli(store_url, "--expect-head", str(anchor_file))
    assert code == 1 and "is signed (key id" in err


def test_an_unusable_expect_head_is_one_sentence(store: Store, store_url: str) -> None:
    code, _, err = verify_cli(store_url, "--expect-head", "not-a-hash")
    assert code == 1
    assert err == (
        "screeneval: --expect-head 'not-a-hash' is neither a chain hash (64 hex digits, "
        "optionally preceded by its entry number and a colon) nor an anchor file.\n"
    )


_COLUMN_VALUES = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=60)
)


@given(row=st.dictionaries(st.text(max_size=20), _COLUMN_VALUES, max_size=8))
def test_a_golden_row_digest_is_that_of_its_canonical_json(row: dict[str, object]) -> None:
    # row_state spells the JSON out for speed; digests already chained must not change
    def sha(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    state = golden_chain.row_state("a row", row)
    assert state.digest == sha(canonical_json(row))[:32]
    assert state.fields == {name: sha(canonical_json({name: v}))[:8] for name, v in row.items()}
    assert canonical_json(row) == json.dumps(
        row, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
