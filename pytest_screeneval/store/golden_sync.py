"""The golden set in the store: synced from the YAML folder, frozen by text, loaded back.

Pure module (no pytest). A case's text is frozen by its sha256 the first time it is stored; a
changed text under the same id is refused as a whole (nothing written) and the user retires the id
instead. Expectations and ratings are history: a change is a new row, the latest row is current.
Every change appends a golden-set entry to the audit chain in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from pytest_screeneval.errors import GoldenSetError, StoreError
from pytest_screeneval.golden.model import (
    Case,
    Expectation,
    GoldenSet,
    Rubric,
    Variants,
    canonical_json,
    sha256_text,
)
from pytest_screeneval.store import schema as t
from pytest_screeneval.store.chain import queries as store_chain
from pytest_screeneval.store.connect import write_transaction
from pytest_screeneval.store.docs import (
    attributes_from_doc,
    case_fields,
    rubric_from_doc,
    shown_date,
    to_json,
    variants_doc,
    variants_from_doc,
)
from pytest_screeneval.store.lifecycle import (
    StoreBase,
    guarded,
    utc_now,
)
from pytest_screeneval.store.values import SyncReport

__all__ = ["GoldenSetRecords"]


class GoldenSetRecords(StoreBase):
    """Syncing, loading and retiring the golden set (a part of ``Store``)."""

    @guarded
    def sync_golden_set(self, golden: GoldenSet, *, now: str | None = None) -> SyncReport:
        """Store the golden set; refuse it whole if any frozen case's text changed."""
        now = now or utc_now()
        synced_at = utc_now()
        with write_transaction(self.engine) as conn:
            self._lock(conn)
            self._refuse_unkeyed_append(conn)
            before = store_chain.golden_state(conn, store_chain.STORE_GOLDEN_TABLES)
            stored = {row.case_id: row for row in conn.execute(sa.select(t.cases))}
            _refuse_changed_texts(golden.cases, stored)

            self._store_rubric(conn, golden.rubric, synced_at)
            self._store_variants(conn, golden.variants, synced_at)

            added: list[str] = []
            unchanged: list[str] = []
            retired: list[str] = []
            updated: list[str] = []
            new_cases: list[dict[str, Any]] = []
            tracked: list[Case] = []  # cases whose expectations and ratings are kept current
            for case in golden.cases:
                row = stored.get(case.id)
                if row is None:
                    new_cases.append(
                        {
                            "case_id": case.id,
                            "rubric_id": case.rubric,
                            "input_text": case.input_text,
                            "input_sha256": case.input_sha256,
                            "frozen_at": now,
                            "retired_at": case.retired_at,
                            "retired_by": _file_retirer(case) if case.retired_at else None,
                            **case_fields(case),
                        }
                    )
                    added.append(case.id)
                    if case.retired_at:
                        retired.append(case.id)
                    tracked.append(case)
                    continue
                if row.retired_at is not None:
                    retired.append(case.id)  # stays retired whatever the file says
                    continue
                if case.retired_at is not None:
                    conn.execute(
                        t.cases.update()
                        .where(t.cases.c.case_id == case.id)
                        .values(retired_at=case.retired_at, retired_by=_file_retirer(case))
                    )
                    retired.append(case.id)
                    continue
                unchanged.append(case.id)
                tracked.append(case)
                fields = case_fields(case)
                if any(getattr(row, name) != value for name, value in fields.items()):
                    conn.execute(
                        t.cases.update().where(t.cases.c.case_id == case.id).values(**fields)
                    )
                    updated.append(case.id)
            if new_cases:
                conn.execute(t.cases.insert(), new_cases)
            new_ids = set(added)
            expectations_changed = self._sync_expectations(conn, tracked, new_ids, synced_at)
            ratings_changed = self._sync_ratings(conn, tracked, new_ids, synced_at)
            synced_ids = {case.id for case in golden.cases}
            missing = sorted(
                case_id
                for case_id, row in stored.items()
                if case_id not in synced_ids and row.retired_at is None
            )
            store_chain.append_golden(
                conn,
                store_chain.STORE_TABLES,
                before=before,
                reason=f"a sync of the golden set {golden.root}".rstrip(),
                recorded_at=synced_at,
                key=self.chain_key,
            )
        return SyncReport(
            added=tuple(added),
            unchanged=tuple(unchanged),
            expectations_changed=tuple(expectations_changed),
            ratings_changed=tuple(ratings_changed),
            retired=tuple(retired),
            updated=tuple(updated),
            missing=tuple(missing),
        )

    def _store_rubric(self, conn: Connection, rubric: Rubric, synced_at: str) -> None:
        key = (t.rubrics.c.rubric_id == rubric.id) & (t.rubrics.c.sha == rubric.sha)
        found = conn.execute(t.rubrics.update().where(key).values(synced_at=synced_at)).rowcount
        if not found:
            conn.execute(
                t.rubrics.insert().values(
                    rubric_id=rubric.id,
                    sha=rubric.sha,
                    version=rubric.version,
                    body=canonical_json(rubric.as_dict()),
                    stored_at=synced_at,
                    synced_at=synced_at,
                )
            )

    def _store_variants(self, conn: Connection, variants: Variants, synced_at: str) -> None:
        body = to_json(variants_doc(variants))
        sha = sha256_text(body)
        found = conn.execute(
            t.variants.update().where(t.variants.c.sha == sha).values(synced_at=synced_at)
        ).rowcount
        if not found:
            conn.execute(
                t.variants.insert().values(
                    sha=sha, body=body, stored_at=synced_at, synced_at=synced_at
                )
            )

    def _sync_expectations(
        self, conn: Connection, tracked: Sequence[Case], new_ids: set[str], recorded_at: str
    ) -> list[str]:
        current = _latest_expectations(conn, [c.id for c in tracked if c.id not in new_ids])
        rows: list[dict[str, Any]] = []
        changed: list[str] = []
        for case in tracked:
            before = len(rows)
            for criterion, expectation in case.expected.items():
                if current.get((case.id, criterion)) != expectation:
                    rows.append(
                        {
                            "case_id": case.id,
                            "criterion": criterion,
                            "expected": expectation.score,
                            "set_by": expectation.set_by,
                            "set_at": expectation.set_at,
                            "recorded_at": recorded_at,
                        }
                    )
            if len(rows) > before and case.id not in new_ids:
                changed.append(case.id)
        if rows:
            conn.execute(t.expectations.insert(), rows)
        return changed

    def _sync_ratings(
        self, conn: Connection, tracked: Sequence[Case], new_ids: set[str], recorded_at: str
    ) -> list[str]:
        current = _latest_ratings(conn, [c.id for c in tracked if c.id not in new_ids])
        rows: list[dict[str, Any]] = []
        changed: list[str] = []
        for case in tracked:
            before = len(rows)
            wanted = {
                (criterion, rater): score
                for criterion, raters in case.ratings.items()
                for rater, score in raters.items()
            }
            stored = current.get(case.id, {})
            for (criterion, rater), score in wanted.items():
                if stored.get((criterion, rater)) != score:
                    rows.append(_rating_row(case.id, criterion, rater, score, recorded_at))
            for criterion, rater in stored:
                if (criterion, rater) not in wanted:  # withdrawn from the file: a NULL row
                    rows.append(_rating_row(case.id, criterion, rater, None, recorded_at))
            if len(rows) > before and case.id not in new_ids:
                changed.append(case.id)
        if rows:
            conn.execute(t.ratings.insert(), rows)
        return changed

    @guarded
    def frozen_cases(self) -> dict[str, tuple[str, str]]:
        """Every stored case (retired too): case id → (input sha256, frozen at)."""
        with self.engine.connect() as conn:
            return {
                row.case_id: (row.input_sha256, row.frozen_at)
                for row in conn.execute(
                    sa.select(t.cases.c.case_id, t.cases.c.input_sha256, t.cases.c.frozen_at)
                )
            }

    @guarded
    def load_golden_set(self) -> GoldenSet:
        """The golden set as the store holds it: the latest rubric and variants, every case of
        that rubric (retired ones keep ``retired_at``), with current expectations and ratings."""
        with self.engine.connect() as conn:
            body = conn.execute(
                sa.select(t.rubrics.c.body)
                .order_by(t.rubrics.c.synced_at.desc(), t.rubrics.c.stored_at.desc())
                .limit(1)
            ).scalar()
            if body is None:
                raise GoldenSetError(
                    f"The store at {self.masked_url} holds no golden set yet; run "
                    f"`screeneval cases import DIR --db {self.masked_url}` first."
                )
            rubric = rubric_from_doc(json.loads(body))
            variants_body = conn.execute(
                sa.select(t.variants.c.body)
                .order_by(t.variants.c.synced_at.desc(), t.variants.c.id.desc())
                .limit(1)
            ).scalar()
            variants = variants_from_doc(json.loads(variants_body)) if variants_body else Variants()
            case_rows = conn.execute(
                sa.select(t.cases).where(t.cases.c.rubric_id == rubric.id)
            ).all()
            ids = [row.case_id for row in case_rows]
            expected = _latest_expectations(conn, ids)
            ratings = _latest_ratings(conn, ids)
            # a golden set edited in the database is refused before anything is scored with it
            edited = store_chain.golden_break(conn)
        for row in case_rows:
            if sha256_text(row.input_text) != row.input_sha256:
                raise GoldenSetError(
                    f"Case {row.case_id} in the store at {self.masked_url} was frozen with input "
                    f"sha256 {row.input_sha256[:12]} but its stored text now has sha256 "
                    f"{sha256_text(row.input_text)[:12]}: the text was edited in the database, "
                    "so it is not scored."
                )
        if edited is not None:
            raise GoldenSetError(
                f"The golden set in the store at {self.masked_url} was changed outside "
                f"pytest-screeneval, so it is not scored: {edited}."
            )
        cases: list[Case] = []
        for row in sorted(case_rows, key=lambda r: (r.label, r.case_id)):
            case_expected: dict[str, Expectation] = {}
            for name in rubric.criterion_names:
                expectation = expected.get((row.case_id, name))
                if expectation is None:
                    if row.retired_at is None:
                        raise GoldenSetError(
                            f"Case {row.case_id} in the store at {self.masked_url} has no "
                            f"expected score for {name!r}; import its case file again."
                        )
                    continue
                case_expected[name] = expectation
            case_ratings: dict[str, dict[str, int]] = {}
            for (criterion, rater), score in ratings.get(row.case_id, {}).items():
                if criterion in case_expected:
                    case_ratings.setdefault(criterion, {})[rater] = score
            cases.append(
                Case(
                    id=row.case_id,
                    label=row.label,
                    rubric=row.rubric_id,
                    input_text=row.input_text,
                    expected=case_expected,
                    slices=tuple(json.loads(row.slices)),
                    ratings=case_ratings,
                    attributes=attributes_from_doc(json.loads(row.attributes)),
                    demographics=json.loads(row.demographics),
                    xfail=json.loads(row.xfail),
                    retired_at=row.retired_at,
                    source=row.source,
                )
            )
        return GoldenSet(rubric=rubric, variants=variants, cases=tuple(cases), root=self.masked_url)

    def case_records(self) -> dict[str, dict[str, Any]]:
        """Every stored case's freeze and retirement (who, when), for the datasheet."""
        columns = (
            t.cases.c.case_id,
            t.cases.c.frozen_at,
            t.cases.c.retired_at,
            t.cases.c.retired_by,
        )
        try:
            with self.engine.connect() as conn:
                found = conn.execute(sa.select(*columns)).all()
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(
                f"Cannot read the case records of the store at {self.masked_url} "
                f"({type(exc).__name__})."
            ) from None
        return {
            row.case_id: {
                "frozen_at": row.frozen_at,
                "retired_at": row.retired_at,
                "retired_by": row.retired_by,
            }
            for row in found
        }

    @guarded
    def get_rubric(self, rubric_id: str, sha: str | None = None) -> Rubric | None:
        """A stored rubric by id and sha (the latest synced one of that id without a sha)."""
        query = sa.select(t.rubrics.c.body).where(t.rubrics.c.rubric_id == rubric_id)
        if sha is not None:
            query = query.where(t.rubrics.c.sha == sha)
        query = query.order_by(t.rubrics.c.synced_at.desc(), t.rubrics.c.stored_at.desc())
        with self.engine.connect() as conn:
            body = conn.execute(query.limit(1)).scalar()
        return rubric_from_doc(json.loads(body)) if body is not None else None

    @guarded
    def retire_case(self, case_id: str, *, by: str, at: str | None = None) -> None:
        """Take a case out of service for good (its rows and past scores stay)."""
        if not by.strip():
            raise StoreError(f"Retiring case {case_id} needs the name of who retires it.")
        with write_transaction(self.engine) as conn:
            self._refuse_unkeyed_append(conn)
            before = store_chain.golden_state(conn, store_chain.STORE_GOLDEN_TABLES)
            row = conn.execute(
                sa.select(t.cases.c.retired_at, t.cases.c.retired_by).where(
                    t.cases.c.case_id == case_id
                )
            ).first()
            if row is None:
                raise StoreError(f"There is no case {case_id} in the store at {self.masked_url}.")
            if row.retired_at is not None:
                raise StoreError(
                    f"Case {case_id} was already retired on {shown_date(row.retired_at)} "
                    f"by {row.retired_by or 'its case file'}."
                )
            conn.execute(
                t.cases.update()
                .where(t.cases.c.case_id == case_id)
                .values(retired_at=at or utc_now(), retired_by=by)
            )
            store_chain.append_golden(
                conn,
                store_chain.STORE_TABLES,
                before=before,
                reason=f"the retirement of case {case_id} by {by}",
                recorded_at=utc_now(),
                key=self.chain_key,
            )


def _refuse_changed_texts(cases: Iterable[Case], stored: Mapping[str, Any]) -> None:
    changed = [
        case
        for case in cases
        if (row := stored.get(case.id)) is not None
        and row.retired_at is None
        and case.retired_at is None
        and row.input_sha256 != case.input_sha256
    ]
    if not changed:
        return
    first = changed[0]
    row = stored[first.id]
    where = f"{first.path}: " if first.path else ""
    more = ""
    if len(changed) > 1:
        others = ", ".join(c.id for c in changed[1:6]) + (", ..." if len(changed) > 6 else "")
        more = f" ({len(changed) - 1} more changed case(s): {others})"
    raise GoldenSetError(
        f"{where}case {first.id} was frozen on {shown_date(row.frozen_at)} with input sha256 "
        f"{row.input_sha256[:12]} but its text now has sha256 {first.input_sha256[:12]}; "
        f"retire it (screeneval cases retire {first.id} --by NAME) and add the new text "
        f"under a new id{more}."
    )


def _file_retirer(case: Case) -> str:
    return f"case file {case.path}" if case.path else "case file"


def _latest_expectations(conn: Connection, case_ids: Sequence[str]) -> dict[Any, Expectation]:
    latest: dict[tuple[str, str], Expectation] = {}
    for chunk in _chunks(case_ids):
        rows = conn.execute(
            sa.select(t.expectations)
            .where(t.expectations.c.case_id.in_(chunk))
            .order_by(t.expectations.c.id)
        )
        for row in rows:
            latest[(row.case_id, row.criterion)] = Expectation(
                criterion=row.criterion, score=row.expected, set_by=row.set_by, set_at=row.set_at
            )
    return latest


def _latest_ratings(
    conn: Connection, case_ids: Sequence[str]
) -> dict[str, dict[tuple[str, str], int]]:
    latest: dict[str, dict[tuple[str, str], int | None]] = {}
    for chunk in _chunks(case_ids):
        rows = conn.execute(
            sa.select(t.ratings).where(t.ratings.c.case_id.in_(chunk)).order_by(t.ratings.c.id)
        )
        for row in rows:
            latest.setdefault(row.case_id, {})[(row.criterion, row.rater)] = row.score
    return {
        case_id: {key: score for key, score in by_key.items() if score is not None}
        for case_id, by_key in latest.items()
    }


def _chunks(values: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    # bounded IN lists: SQLite limits the number of bound parameters per statement
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _rating_row(
    case_id: str, criterion: str, rater: str, score: int | None, recorded_at: str
) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "criterion": criterion,
        "rater": rater,
        "score": score,
        "recorded_at": recorded_at,
    }
