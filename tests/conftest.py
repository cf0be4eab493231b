"""Shared fixtures: a fresh, isolated run store on SQLite and on PostgreSQL.

The PostgreSQL store is the server named by ``SCREENEVAL_TEST_PG_URL`` (CI always sets it); each
test gets its own schema (through ``search_path``), so tests running at once under
``pytest -n 2`` never see each other's rows. When the variable is unset the PostgreSQL case is
skipped with that reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# CI draws each property's examples from a seed fixed by the test, so a run is the same run
# every time: a search that meets a new failure is a finding on a developer's machine (where the
# draws stay random and the failure is saved to replay), never a red CI run on an unrelated change.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")

PG_URL_ENV = "SCREENEVAL_TEST_PG_URL"
BACKENDS = ("sqlite", pytest.param("postgres", marks=pytest.mark.postgres))


@pytest.fixture(autouse=True)
def _no_step_summary_of_the_outer_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's own pytester runs must not append their Markdown summaries to the step
    summary of the CI job running the suite; a test that wants one sets its own file."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def pg_base_url() -> str | None:
    return os.environ.get(PG_URL_ENV) or None


class PgSchemas:
    """Creates throwaway PostgreSQL schemas and drops them again."""

    def __init__(self, base_url: str) -> None:
        import sqlalchemy as sa
        from sqlalchemy.engine import make_url

        self._sa = sa
        self._base = make_url(base_url)
        if self._base.drivername in ("postgresql", "postgres"):
            self._base = self._base.set(drivername="postgresql+psycopg")
        self._engine = sa.create_engine(self._base, isolation_level="AUTOCOMMIT")
        self._created: list[str] = []

    def new_url(self) -> str:
        schema = f"screeneval_test_{uuid.uuid4().hex[:16]}"
        with self._engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        self._created.append(schema)
        url = self._base.update_query_dict({"options": f"-csearch_path={schema}"})
        return url.render_as_string(hide_password=False)

    def drop_all(self) -> None:
        with self._engine.connect() as conn:
            for schema in self._created:
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        self._engine.dispose()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres" and pg_base_url() is None:
        pytest.skip(f"PostgreSQL tests need {PG_URL_ENV} (CI sets it)")
    return str(request.param)


@pytest.fixture
def make_store_url(backend: str, tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A factory of fresh, empty store URLs on the test's backend (cleaned up afterwards)."""
    if backend == "sqlite":
        counter = iter(range(1_000_000))

        def new_sqlite_url() -> str:
            return f"sqlite:///{(tmp_path / f'store-{next(counter)}' / 'screeneval.db').as_posix()}"

        yield new_sqlite_url
        return
    schemas = PgSchemas(pg_base_url() or "")
    try:
        yield schemas.new_url
    finally:
        schemas.drop_all()


@pytest.fixture
def store_url(make_store_url: Callable[[], str]) -> str:
    """One fresh, empty store URL: a SQLite file under tmp_path, or a PostgreSQL schema."""
    return make_store_url()
