"""The Alembic migrations produce exactly the schema ``Store.open`` creates, on both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from pytest_screeneval.errors import StoreError
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.database import MIGRATIONS_DIR, SCHEMA_REVISION, Store, upgrade


def describe_schema(url: str) -> dict[str, Any]:
    """Everything the inspector can tell about the store's tables, in a comparable form."""
    with Store.open(url, create=False) as store, store.engine.connect() as conn:
        inspector = sa.inspect(conn)
        schema: dict[str, Any] = {}
        for name in sorted(inspector.get_table_names()):
            schema[name] = {
                "columns": [
                    (c["name"], str(c["type"]), c["nullable"], c.get("autoincrement"))
                    for c in inspector.get_columns(name)
                ],
                "pk": inspector.get_pk_constraint(name),
                "fks": sorted(
                    (fk["name"], tuple(fk["constrained_columns"]), fk["referred_table"])
                    for fk in inspector.get_foreign_keys(name)
                ),
                "indexes": sorted(
                    (ix["name"], tuple(ix["column_names"]), bool(ix["unique"]))
                    for ix in inspector.get_indexes(name)
                ),
                "uniques": sorted(
                    (uq["name"], tuple(uq["column_names"]))
                    for uq in inspector.get_unique_constraints(name)
                ),
                "checks": sorted(
                    (ck["name"], " ".join(ck["sqltext"].split()))
                    for ck in inspector.get_check_constraints(name)
                ),
            }
        return schema


def test_migration_head_is_the_revision_the_store_needs() -> None:
    config_dir = ScriptDirectory(str(MIGRATIONS_DIR))
    assert config_dir.get_heads() == [SCHEMA_REVISION]


def test_upgrading_an_empty_database_equals_the_created_schema(
    make_store_url: Callable[[], str],
) -> None:
    migrated, created = make_store_url(), make_store_url()
    assert upgrade(migrated) == (None, SCHEMA_REVISION)
    Store.open(created).close()

    migrated_schema, created_schema = describe_schema(migrated), describe_schema(created)
    assert set(migrated_schema) >= {*t.metadata.tables, "alembic_version"}
    assert migrated_schema == created_schema


def test_migrated_schema_matches_the_tables_module(make_store_url: Callable[[], str]) -> None:
    url = make_store_url()
    upgrade(url)
    with Store.open(url, create=False) as store, store.engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), t.metadata)
    assert differences == []


def test_upgrade_of_a_current_store_changes_nothing(store_url: str) -> None:
    Store.open(store_url).close()
    before = describe_schema(store_url)
    assert upgrade(store_url) == (SCHEMA_REVISION, SCHEMA_REVISION)
    assert describe_schema(store_url) == before


def test_upgrade_refuses_a_revision_it_does_not_know(store_url: str) -> None:
    with Store.open(store_url) as store, store.engine.begin() as conn:
        conn.execute(t.alembic_version.update().values(version_num="9999future"))
    with pytest.raises(StoreError, match="Cannot upgrade the store") as caught:
        upgrade(store_url)
    assert "\n" not in str(caught.value)
    assert "newer pytest-screeneval" in str(caught.value)
