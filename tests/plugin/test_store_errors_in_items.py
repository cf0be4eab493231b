"""A store that refuses writes mid-run (a lock taken by another process) fails a perturbation
item with one sentence, not a Hypothesis FlakyFailure traceback, and its rows wait in the spool."""

from __future__ import annotations

import pytest
from support.plugin_project import write_project

pytest_plugins = ["pytester"]

LOCKED = (
    "The SQLite store store.db is locked by another process; waited 5 s for it, try again "
    "when the other run has finished."
)
# the lock "taken" exactly when perturbed texts are written, whatever the order of writes
LOCK_ON_PERTURBED_ROWS = f"""
import pytest_screeneval.store.database as _db
from pytest_screeneval.errors import StoreError as _StoreError

_write_scores = _db.Store.write_scores


def _locked_for_perturbations(self, rows):
    if any(r.variant_key.startswith("perturb:") for r in rows):
        raise _StoreError({LOCKED!r})
    return _write_scores(self, rows)


_db.Store.write_scores = _locked_for_perturbations
"""


def test_a_lock_mid_run_is_one_sentence_in_the_perturbation_item(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + LOCK_ON_PERTURBED_ROWS)
    result = pytester.runpytest(
        "--screeneval",
        "-o",
        "screeneval_perturbation_examples=3",
        "-k",
        "perturbation and al-001",
    )
    out = result.stdout.str()
    assert result.ret == 1
    assert "FlakyFailure" not in out and "Traceback" not in out
    failures = out[out.index("= FAILURES =") : out.index("screeneval ==")]
    blocks = [b for b in failures.split("\n_") if "perturbation[" in b]
    assert blocks
    for block in blocks:
        body = []
        for line in block.splitlines()[1:]:
            if line.startswith("====="):  # the next section (warnings, the summary)
                break
            if line.strip():
                body.append(line)
        # the rows are not lost: they wait in the spool, and the item says so
        [sentence] = body
        assert sentence.startswith(f"The score rows of case al-001 are not stored: {LOCKED} ")
        assert sentence.endswith("import them with `screeneval db recover`.")
    assert "failed because their score rows could not be stored (the first: " in out
    assert "score rows wait in the spool" in out
