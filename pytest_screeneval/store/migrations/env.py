"""Alembic environment for the run store.

Run through ``screeneval db upgrade --db URL`` (``pytest_screeneval.store.upgrade``), which hands
Alembic an open connection in ``config.attributes["connection"]``. Standalone use with a
``sqlalchemy.url`` main option works too.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from pytest_screeneval.store.schema import metadata

config = context.config
target_metadata = metadata


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=True
        )
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as own_connection:
        context.configure(
            connection=own_connection, target_metadata=target_metadata, render_as_batch=True
        )
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
