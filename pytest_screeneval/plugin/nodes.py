"""The golden set as pytest nodes: a case file, a case, its items.

``cases/<slice>/<id>.yaml`` is a ``CaseFile``; its ``CaseNode`` yields an item per criterion,
the decision, each counterfactual attribute and each perturbation kind, so node ids read
``file::case::criterion``. An item asks the session for its verdict and raises the readable
block pytest shows when it fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_screeneval.boundary.terminal import terminal_safe
from pytest_screeneval.errors import ScreenevalError, StoreError
from pytest_screeneval.golden.model import DECISION, ItemKind
from pytest_screeneval.plugin.completeness import WRITE_ERROR_PROPERTY
from pytest_screeneval.plugin.stash import session_of

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from pytest_screeneval.golden.model import Case
    from pytest_screeneval.session.core import ItemNeed

__all__ = [
    "PERTURBATION_KINDS",
    "CaseFile",
    "CaseNode",
    "ScorerFault",
    "ScreenevalFailure",
    "ScreenevalItem",
    "StoreCases",
]

PERTURBATION_KINDS = ("reformat", "ocr-noise", "reorder-sections")


class ScreenevalCollector(pytest.Collector):
    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, ScreenevalError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CaseFile(pytest.File, ScreenevalCollector):
    """One case file: ``cases/<slice>/<id>.yaml``."""

    def collect(self) -> Iterator[pytest.Collector]:
        screeneval = session_of(self.config)
        assert screeneval is not None
        case = screeneval.load_case(self.path)
        if case.retired_at is None:
            yield CaseNode.from_parent(self, name=case.id, case=case)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        return ScreenevalCollector.repr_failure(self, excinfo, style)


class StoreCases(ScreenevalCollector):
    """The golden set read from the store (``screeneval_source = db``)."""

    def collect(self) -> Iterator[CaseNode]:
        screeneval = session_of(self.config)
        assert screeneval is not None
        for case in sorted(screeneval.cases.values(), key=lambda c: (c.label, c.id)):
            yield CaseNode.from_parent(self, name=case.id, case=case)


class CaseNode(ScreenevalCollector):
    """One case; its items are its criteria, its decision, its counterfactuals, perturbations."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def collect(self) -> Iterator[pytest.Item]:
        screeneval = session_of(self.config)
        assert screeneval is not None
        case = self.case
        for criterion in screeneval.rubric.criterion_names:
            yield ScreenevalItem.from_parent(
                self, name=criterion, case=case, kind=ItemKind.CRITERION, target=criterion
            )
        yield ScreenevalItem.from_parent(
            self, name=DECISION, case=case, kind=ItemKind.DECISION, target=DECISION
        )
        for attribute in screeneval.variants.attributes:
            if attribute in case.attributes:
                yield ScreenevalItem.from_parent(
                    self,
                    name=f"counterfactual[{attribute}]",
                    case=case,
                    kind=ItemKind.COUNTERFACTUAL,
                    target=attribute,
                )
        if screeneval.settings.perturbation_examples > 0:
            for kind in PERTURBATION_KINDS:
                yield ScreenevalItem.from_parent(
                    self,
                    name=f"perturbation[{kind}]",
                    case=case,
                    kind=ItemKind.PERTURBATION,
                    target=kind,
                )


class _SafeText(Exception):
    """Its text passes the boundary however pytest reads it (``str()`` for the JUnit message,
    ``repr_failure`` for the terminal): a rationale is scorer text."""

    def __str__(self) -> str:
        return terminal_safe(super().__str__())


class ScreenevalFailure(_SafeText):
    """An item failed; the message is the readable block pytest shows."""


class ScorerFault(_SafeText):
    """An item failed because the scorer did not answer as asked: not a ScreenevalFailure, so
    an xfail marker (which expects only ScreenevalFailure) reports it as a failure."""


class ScreenevalItem(pytest.Item):
    def __init__(self, *, case: Case, kind: ItemKind, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.kind = kind
        self.target = target
        self.add_marker(pytest.mark.screeneval)
        # slices, the item's kind and its attribute are keywords: `-k career-changer`,
        # `-k "communication and not contested"`, `-k counterfactual`
        self.extra_keyword_matches.update(case.all_slices)
        self.extra_keyword_matches.add(kind)
        if kind == ItemKind.CRITERION and case.is_contested(target):
            self.extra_keyword_matches.add("contested")
        reason = None
        if kind == ItemKind.CRITERION:
            reason = case.xfail_reason(target)
        elif kind == ItemKind.DECISION:
            reason = case.xfail.get(DECISION)
        if reason:
            # a known drift is expected; a scorer error or outage on the item is not
            self.add_marker(
                pytest.mark.xfail(reason=reason, strict=False, raises=ScreenevalFailure)
            )

    @property
    def need(self) -> ItemNeed:
        from pytest_screeneval.session.core import ItemNeed

        return ItemNeed(self.case.id, self.kind, self.target)

    def runtest(self) -> None:
        screeneval = session_of(self.config)
        assert screeneval is not None
        try:
            screeneval.ensure_scored(self.case.id)
            # the rows this item is judged on are committed before it can pass
            self._store_own_rows()
        except StoreError:
            raise
        except ScreenevalError as exc:
            if screeneval.runner_error() is not None:
                self.session.shouldstop = str(exc)  # the run stops with this sentence
            raise
        verdict = screeneval.verdict(self.need)
        self.user_properties.extend(
            (f"screeneval.{name}", terminal_safe(value) if isinstance(value, str) else value)
            for name, value in verdict.properties
        )
        for note in verdict.notes:
            self.add_report_section("call", "screeneval", terminal_safe(note))
        # and so are the re-scores its verdict made (a confirmation, a shrinking candidate)
        self._store_own_rows()
        if not verdict.passed:
            raise (ScorerFault if verdict.scorer_fault else ScreenevalFailure)(verdict.block)

    def _store_own_rows(self) -> None:
        """Commit this case's queued rows; if the store would not take them (they wait in the
        spool), the item fails with that sentence and the run is partial."""
        screeneval = session_of(self.config)
        assert screeneval is not None
        try:
            screeneval.store_rows_of(self.case.id)
        except StoreError as exc:
            # on the report, so the process that owns the run hears of it from an xdist worker
            # too: the run is then partial
            self.user_properties.append((WRITE_ERROR_PROPERTY, str(exc)))
            raise

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScreenevalFailure | ScorerFault | ScreenevalError):
            # a rationale is scorer text: "\x1b[2K\r... PASSED" in it must not fake a line
            return terminal_safe(str(excinfo.value))
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.case.id}::{self.name}"
