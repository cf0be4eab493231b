"""A database made by the first released schema (0001), filled, then ``screeneval db upgrade``:
every row is kept unchanged, the audit chain is backfilled in the order things happened, and
``verify`` passes. Until it is upgraded, opening it is refused with the command to run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from support.golden_factory import make_rows

from pytest_screeneval.cli.main import main
from pytest_screeneval.errors import StoreError
from pytest_screeneval.store.connect import make_engine, parse_url, sqlite_path
from pytest_screeneval.store.database import MIGRATIONS_DIR, SCHEMA_REVISION, Store, mask_url

FIRST_RELEASE = "0001"
TABLES_0001 = (
    "eval_rubrics",
    "eval_variants",
    "eval_cases",
    "eval_expectations",
    "eval_ratings",
    "eval_runs",
    "eval_scores",
    "eval_acceptances",
    "eval_reviews",
)


def migrate(url: str, revision: str) -> None:
    """Alembic straight to ``revision``, as an older pytest-screeneval would have left it."""
    parsed = parse_url(url)
    path = sqlite_path(parsed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = make_engine(parsed)
    try:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
    finally:
        engine.dispose()


@pytest.fixture
def engine_of() -> Iterator[Callable[[str], sa.Engine]]:
    engines: list[sa.Engine] = []

    def open_engine(url: str) -> sa.Engine:
        engines.append(make_engine(parse_url(url)))
        return engines[-1]

    yield open_engine
    for engine in engines:
        engine.dispose()


def _run(run_id: int, started: str, finished: str | None, status: str, **more: Any) -> dict:
    return {
        "run_id": run_id,
        "scorer": "keyword",
        "model_id": "keyword-v1",
        "served_model": "keyword-v1" if finished else None,
        "prompt_sha": "p" * 64,
        "rubric_id": "support-engineer",
        "rubric_sha": "r" * 64,
        "temperature": 0.0,
        "golden_sha": "g" * 64,
        "status": status,
        "started_at": started,
        "finished_at": finished,
        "plugin_version": "0.1.0",
        "vcs_commit": "abc1234",
        "notes": "",
        "baseline_run_id": None,
        "selection": "",
        "config": '{"max_gap":10.0}',
        "host": "ci-runner-7",
        "pid": 4242,
        **more,
    }


def _scores(run_id: int, cases: tuple[str, ...], **more: Any) -> list[dict]:
    rows = []
    for row in make_rows(run_id, cases, **more):
        values = {name: getattr(row, name) for name in row.__dataclass_fields__}
        values["evidence"] = '["Support engineer at Brightwater Logistics"]'
        rows.append(values)
    return rows


def fill_0001(engine: sa.Engine) -> None:
    """Rows of every 0001 table, inserted through the reflected 0001 tables.

    Run 2 finished before run 1, so the backfill must follow timestamps, not ids.
    """
    day = "2024-04-0{}T{}:00:00.000000+00:00"
    with engine.begin() as conn:
        meta = sa.MetaData()
        meta.reflect(conn)
        tables = meta.tables

        def insert(name: str, rows: list[dict]) -> None:
            conn.execute(tables[name].insert(), rows)

        stamp = day.format(1, "08")
        insert(
            "eval_rubrics",
            [
                {
                    "rubric_id": "support-engineer",
                    "sha": "r" * 64,
                    "version": "3",
                    "body": '{"id":"support-engineer"}',
                    "stored_at": stamp,
                    "synced_at": stamp,
                }
            ],
        )
        insert(
            "eval_variants",
            [{"sha": "v" * 64, "body": "{}", "stored_at": stamp, "synced_at": stamp}],
        )
        cases = ("cc-001", "cc-002", "gap-001")
        insert(
            "eval_cases",
            [
                {
                    "case_id": case,
                    "label": "career-changer",
                    "slices": '["synthetic"]',
                    "rubric_id": "support-engineer",
                    "input_text": f"Ilona Varga ({case})\nSupport engineer, 2020-2024.\n",
                    "input_sha256": f"{i}" * 64,
                    "source": "written by hand",
                    "attributes": "{}",
                    "demographics": '{"sex":"female"}',
                    "xfail": "{}",
                    "frozen_at": stamp,
                    "retired_at": day.format(3, "09") if case == "gap-001" else None,
                    "retired_by": "Priya Venkat" if case == "gap-001" else None,
                }
                for i, case in enumerate(cases)
            ],
        )
        insert(
            "eval_expectations",
            [
                {
                    "case_id": case,
                    "criterion": criterion,
                    "expected": 4,
                    "set_by": "Rater Quill",
                    "set_at": "2024-03-01",
                    "recorded_at": stamp,
                }
                for case in cases
                for criterion in ("experience", "skills", "communication")
            ],
        )
        insert(
            "eval_ratings",
            [
                {
                    "case_id": "cc-002",
                    "criterion": "skills",
                    "rater": "rater-ab",
                    "score": 4,
                    "recorded_at": stamp,
                },
                {
                    "case_id": "cc-002",
                    "criterion": "skills",
                    "rater": "rater-kt",
                    "score": None,
                    "recorded_at": stamp,
                },
            ],
        )
        insert(
            "eval_runs",
            [
                _run(1, day.format(2, "08"), day.format(2, "10"), "complete"),
                _run(2, day.format(2, "07"), day.format(2, "09"), "complete", temperature=0.2),
                _run(3, day.format(3, "08"), day.format(3, "11"), "interrupted", baseline_run_id=1),
                _run(4, day.format(4, "08"), None, "running", baseline_run_id=1),
            ],
        )
        failed = _scores(1, ("gap-001",), criteria=["skills"])
        failed[0].update(score=None, error="the answer had no score", attempts=3)
        insert(
            "eval_scores",
            _scores(1, ("cc-001", "cc-002"), repeats=2)
            + failed
            + _scores(2, ("cc-001", "cc-002"), score=4)
            + _scores(2, ("cc-001",), variant_key="name=Tomasz Brenner")
            + _scores(3, ("cc-001",))
            + _scores(4, ("cc-002",)),
        )
        insert(
            "eval_acceptances",
            [
                {
                    "run_id": 1,
                    "accepted_by": "Priya Venkat",
                    "accepted_at": day.format(2, "11"),
                    "note": "first baseline",
                    "previous_baseline_run_id": None,
                    "forced": False,
                }
            ],
        )
        insert(
            "eval_reviews",
            [
                {
                    "run_id": 3,
                    "case_id": "cc-001",
                    "target": target,
                    "baseline_run_id": 1,
                    "before": before,
                    "after": after,
                    "reviewed_by": "Priya Venkat",
                    "reviewed_at": day.format(3, hour),
                    "note": "read it",
                }
                for target, before, after, hour in (
                    ("skills", "3", "4", "12"),
                    ("decision", "hold", "advance", "13"),
                )
            ],
        )


def snapshot(
    engine: sa.Engine, columns: dict[str, list[str]] | None = None
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every 0001 table, ordered by primary key; with ``columns``, only those
    columns (a later revision may add a column: the rows of 0001 must keep their values)."""
    with engine.connect() as conn:
        meta = sa.MetaData()
        meta.reflect(conn, only=TABLES_0001)
        result = {}
        for name in TABLES_0001:
            table = meta.tables[name]
            chosen = [table.c[c] for c in columns[name]] if columns else list(table.c)
            query = sa.select(*chosen).order_by(*table.primary_key)
            result[name] = [tuple(row) for row in conn.execute(query)]
        return result


def columns_of(engine: sa.Engine) -> dict[str, list[str]]:
    inspector = sa.inspect(engine)
    return {name: [c["name"] for c in inspector.get_columns(name)] for name in TABLES_0001}


def test_upgrade_from_the_first_release_keeps_every_row_and_backfills_the_chain(
    make_store_url: Callable[[], str],
    engine_of: Callable[[str], sa.Engine],
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = make_store_url()
    masked = mask_url(url)
    migrate(url, FIRST_RELEASE)
    engine = engine_of(url)
    fill_0001(engine)
    before = snapshot(engine)
    columns_0001 = columns_of(engine)
    assert {name: len(rows) for name, rows in before.items()} == {
        "eval_rubrics": 1,
        "eval_variants": 1,
        "eval_cases": 3,
        "eval_expectations": 9,
        "eval_ratings": 2,
        "eval_runs": 4,
        "eval_scores": 12 + 1 + 6 + 3 + 3 + 3,
        "eval_acceptances": 1,
        "eval_reviews": 2,
    }

    # the plugin's store refuses the un-upgraded database, naming the command
    for create in (True, False):
        with pytest.raises(StoreError) as refused:
            Store.open(url, create=create)
        assert str(refused.value) == (
            f"The store at {masked} has schema revision {FIRST_RELEASE}, this pytest-screeneval "
            f"needs {SCHEMA_REVISION}: run `screeneval db upgrade --db {masked}`."
        )
    assert main(["verify", "--db", url]) == 1
    assert "screeneval db upgrade --db" in capsys.readouterr().err

    assert main(["db", "upgrade", "--db", url]) == 0
    assert capsys.readouterr().out == (
        f"upgraded the store at {masked} from schema revision {FIRST_RELEASE} to "
        f"{SCHEMA_REVISION}\n"
    )
    assert snapshot(engine, columns_0001) == before  # nothing lost, nothing changed
    added = {n: sorted(set(c) - set(columns_0001[n])) for n, c in columns_of(engine).items()}
    assert {n: c for n, c in added.items() if c} == {
        "eval_runs": ["golden_seq", "verdict"],
        "eval_scores": ["served_model", "system_fingerprint"],  # revision 0005
    }

    with Store.open(url, create=False) as store:
        with store.engine.connect() as conn:
            entries = conn.exec_driver_sql(
                "SELECT seq, kind, ref_id, backfilled, row_count FROM eval_chain ORDER BY seq"
            ).all()
        # in the order things happened: run 2 finished before run 1; run 4 is still running
        assert [tuple(e) for e in entries] == [
            (1, "run", 2, True, 9),
            (2, "run", 1, True, 13),
            (3, "acceptance", 1, True, None),
            (4, "run", 3, True, 3),
            (5, "review", 1, True, None),
            (6, "review", 2, True, None),
            # revision 0003: the golden set as it was stored at the upgrade
            (7, "golden", 1, True, None),
        ]
        report = store.verify_chain()
        assert (report.ok, report.entries, report.backfilled) == (True, 7, 7)

        assert main(["verify", "--db", url]) == 0
        assert capsys.readouterr().out == (
            "chain intact: 7 entries (7 backfilled at schema upgrades), "
            f"last hash {report.last_hash}\n"
        )

        # the run that was running at the upgrade, finished by this version, extends the chain
        store.finish_run(4, status="complete")
        after = store.verify_chain()
        assert (after.ok, after.entries, after.backfilled) == (True, 8, 7)
        assert main(["db", "upgrade", "--db", url]) == 0
        assert "already at schema revision" in capsys.readouterr().out

        # a backfilled entry still catches a later edit, and says what it vouches for
        with store.engine.begin() as conn:
            conn.exec_driver_sql(
                "UPDATE eval_scores SET score = 5 WHERE run_id = 2 AND case_id = 'cc-002' "
                "AND criterion = 'skills'"
            )
        assert store.verify_chain().first_break == (
            "run 2: its score rows no longer match the hash recorded when the chain was "
            f"backfilled at the upgrade on {entries_recorded_on(store)} (the score row for case "
            "cc-002 / skills changed); a backfilled entry vouches for the rows as they were at "
            "the upgrade"
        )


def entries_recorded_on(store: Store) -> str:
    with store.engine.connect() as conn:
        recorded = conn.exec_driver_sql("SELECT recorded_at FROM eval_chain WHERE seq = 1")
        return str(recorded.scalar())[:10]


def test_upgrade_of_an_empty_first_release_database(make_store_url: Callable[[], str]) -> None:
    url = make_store_url()
    migrate(url, FIRST_RELEASE)
    migrate(url, "head")
    with Store.open(url, create=False) as store:
        assert store.schema_revision() == SCHEMA_REVISION
        report = store.verify_chain()
        assert (report.ok, report.entries, report.backfilled) == (True, 0, 0)
