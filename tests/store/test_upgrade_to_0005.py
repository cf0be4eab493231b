"""The upgrade from schema 0004 to the head: 0005, which adds each score row's served model and
system fingerprint, then 0006, which adds the rationale judge's verdicts and their chain entries.
Every row is kept as it was, the new columns are NULL on the old rows (the provider's answer was
not kept then), the chain still verifies, and the upgraded store writes and reads both, and
records and chains a judge's verdict. On SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from support.golden_factory import make_rows
from test_upgrade_from_first_schema import columns_of, fill_0001, migrate, snapshot

from pytest_screeneval.cli.main import main
from pytest_screeneval.scoring.protocol import ScorerIdentity
from pytest_screeneval.store.connect import make_engine, parse_url
from pytest_screeneval.store.database import MIGRATIONS_DIR, SCHEMA_REVISION, Store, mask_url
from pytest_screeneval.store.judgements import (
    JudgementRecord,
    find_judgement,
    find_judgements,
    record_judgement,
)

PREVIOUS = "0004"
JUDGEMENT = JudgementRecord(
    run_id=None,
    case_id="cc-001",
    criterion="skills",
    score=3,
    input_sha256="i" * 64,
    rationale_sha256="r" * 64,
    judge_model="judge-2025-01-15",
    served_model="judge-2025-01-15",
    prompt_sha="p" * 64,
    temperature=0.0,
    response_format="json_schema",
    protected=True,
    protected_category="age",
    protected_phrase="late-career",
    ungrounded=False,
    claim="",
    error=None,
    raw="{}",
    prompt_tokens=10,
    completion_tokens=5,
    attempts=1,
    latency_ms=12.5,
    judged_at="2027-01-15T10:00:00+00:00",
)


def migrate_without_foreign_keys(url: str, revision: str) -> None:
    """Alembic to ``revision`` as ``screeneval db upgrade`` runs it: on SQLite with foreign
    keys off (0003 copies eval_runs, which other tables refer to)."""
    engine = make_engine(parse_url(url))
    try:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":  # outside any transaction, as upgrade() does
                conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
            with conn.begin():
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


def test_upgrade_from_0003_keeps_every_row_and_adds_the_served_backend_as_null(
    make_store_url: Callable[[], str],
    engine_of: Callable[[str], sa.Engine],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert SCHEMA_REVISION == "0006"
    url = make_store_url()
    migrate(url, "0001")
    engine = engine_of(url)
    fill_0001(engine)
    if engine.dialect.name == "postgresql":  # the rows were inserted with their ids
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "SELECT setval(pg_get_serial_sequence('eval_runs', 'run_id'), "
                "(SELECT max(run_id) FROM eval_runs))"
            )
    # a store as the previous release left it, its chain backfilled
    migrate_without_foreign_keys(url, PREVIOUS)
    before = snapshot(engine)
    columns_before = columns_of(engine)

    assert main(["db", "upgrade", "--db", url]) == 0
    assert capsys.readouterr().out == (
        f"upgraded the store at {mask_url(url)} from schema revision {PREVIOUS} to 0006\n"
    )
    assert snapshot(engine, columns_before) == before
    added = {n: sorted(set(c) - set(columns_before[n])) for n, c in columns_of(engine).items()}
    assert {n: c for n, c in added.items() if c} == {
        "eval_scores": ["served_model", "system_fingerprint"]
    }

    with Store.open(url, create=False) as store:
        report = store.verify_chain()
        assert report.ok, report.first_break
        old_rows = store.scores(1)
        assert old_rows
        assert {(r.served_model, r.system_fingerprint) for r in old_rows} == {(None, None)}

        identity = ScorerIdentity("openai[json_schema]", "m-2024-06-01", "p" * 64, "r" * 64)
        run_id = store.start_run(
            identity=identity,
            rubric_id="support-engineer",
            golden_sha="g" * 64,
            plugin_version="0.2.0",
            vcs_commit=None,
        )
        rows = [
            replace(row, served_model="m-2024-06-01", system_fingerprint=fingerprint)
            for row, fingerprint in zip(
                make_rows(run_id, ("cc-001", "cc-002"), criteria=("skills",)),
                ("fp_alpha", "fp_beta"),
                strict=True,
            )
        ]
        store.write_scores(rows)
        read = {r.case_id: (r.served_model, r.system_fingerprint) for r in store.scores(run_id)}
        assert read == {
            "cc-001": ("m-2024-06-01", "fp_alpha"),
            "cc-002": ("m-2024-06-01", "fp_beta"),
        }
        store.finish_run(run_id, status="complete")
        assert store.verify_chain().ok
        # revision 0006: a judge's verdict is recorded, chained and found again
        recorded = record_judgement(store, JUDGEMENT)
        assert recorded.id is not None
        assert find_judgement(store, JUDGEMENT.key) == recorded
        # one query for a batch: only the same judge and question, never a failed judgement
        failed = record_judgement(
            store, replace(JUDGEMENT, criterion="communication", error="no answer")
        )
        assert failed.id is not None
        other = [
            replace(JUDGEMENT.key, temperature=0.7),
            replace(JUDGEMENT.key, rationale_sha256="s" * 64),
            replace(JUDGEMENT.key, prompt_sha="q" * 64),
            replace(JUDGEMENT.key, criterion="communication"),
        ]
        assert find_judgements(store, [JUDGEMENT.key, *other]) == {JUDGEMENT.key: recorded}
        assert find_judgements(store, []) == {}
        report = store.verify_chain()
        assert report.ok, report.first_break
        with store.engine.connect() as conn:
            kinds = [k for (k,) in conn.exec_driver_sql("SELECT kind FROM eval_chain ORDER BY seq")]
        assert kinds[-1] == "judgement"
