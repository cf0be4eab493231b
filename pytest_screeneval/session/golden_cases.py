"""The session's golden set: the rubric, the variants and the cases, from YAML or the store.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`. Cases arrive one file at
a time while pytest collects; a duplicate id or a changed frozen text is refused in one sentence.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_screeneval.errors import GoldenSetError
from pytest_screeneval.golden.load import (
    DEFAULT_LIMITS,
    SizeLimits,
    case_files,
    case_id_key,
    check_attributes_used,
    duplicate_id_phrase,
    load_case_file,
    load_rubric,
    load_variants,
)
from pytest_screeneval.golden.model import Case, GoldenSet, Rubric, Variants

if TYPE_CHECKING:
    from pytest_screeneval.store.database import Store

__all__ = ["GoldenCases"]


class GoldenCases:
    """The rubric, the variants and every case read so far, by id."""

    def __init__(
        self,
        source: str,
        cases_dir: Path,
        rootdir: Path,
        limits: SizeLimits = DEFAULT_LIMITS,
    ) -> None:
        self.source = source
        self.limits = limits
        self.cases_dir = cases_dir
        self.rootdir = rootdir
        self.rubric: Rubric
        self.variants: Variants
        self.cases: dict[str, Case] = {}
        self.case_paths: dict[str, str] = {}
        self.case_keys: dict[str, tuple[str, str]] = {}  # case_id_key -> (id, path)
        self.frozen: dict[str, tuple[str, str]] = {}
        self.loops: set[Path] = set()  # symlinks under the cases folder that loop back

    def open(self, store: Store) -> None:
        """Read the rubric and variants (and, from the store, the cases); one sentence on error."""
        if self.source == "db":
            golden = store.load_golden_set()
            self.rubric, self.variants = golden.rubric, golden.variants
            for case in golden.active_cases:
                self.cases[case.id] = case
                self.case_paths[case.id] = f"db:{case.id}"
        else:
            shown = self.shown(self.cases_dir)
            if not self.cases_dir.is_dir():
                raise GoldenSetError(
                    f"{shown}: the golden set folder does not exist (set ini screeneval_cases)."
                )
            self.rubric = load_rubric(self.cases_dir / "rubric.yaml", f"{shown}/rubric.yaml")
            self.variants = load_variants(
                self.cases_dir / "variants.yaml", f"{shown}/variants.yaml"
            )
        self.frozen = store.frozen_cases()

    def shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.rootdir).as_posix()
        except ValueError:
            return str(path)

    def load_case(self, path: Path) -> Case:
        """Load one case file, refusing a duplicate id or a changed frozen text."""
        shown = self.shown(path)
        case = load_case_file(path, self.rubric, shown, self.variants, limits=self.limits)
        first = self.case_keys.get(case_id_key(case.id))
        if first is not None and first[1] != shown:
            raise GoldenSetError(f"{shown}: {duplicate_id_phrase(case.id, *first)}.")
        frozen = self.frozen.get(case.id)
        if frozen is not None and frozen[0] != case.input_sha256:
            raise GoldenSetError(
                f"{shown}: case {case.id} changed its frozen input_text (frozen on "
                f"{frozen[1][:10]} as sha256 {frozen[0][:12]}, now {case.input_sha256[:12]}); "
                "retire it (screeneval cases retire) and add the new text under a new id."
            )
        self.case_paths[case.id] = shown
        self.case_keys[case_id_key(case.id)] = (case.id, shown)
        self.cases[case.id] = case
        return case

    def is_case_file(self, path: Path) -> bool:
        return (
            self.source == "yaml"
            and path.suffix in (".yaml", ".yml")
            and path.parent.parent == self.cases_dir
        )

    def unread_files(self) -> list[tuple[Path, str]]:
        """Entries under the cases folder that will not be read as cases, and why: a YAML file
        not at ``<slice>/<id>.yaml``, a dangling symlink, a symlink looping back to a folder
        above it (which collection must not walk into). Walked without following symlinks, so
        a loop cannot hang it."""
        if self.source != "yaml" or not self.cases_dir.is_dir():
            return []
        found: list[tuple[Path, str]] = []
        top = {self.cases_dir / "rubric.yaml", self.cases_dir / "variants.yaml"}
        for folder, dirs, files in os.walk(self.cases_dir, followlinks=False):
            here = Path(folder)
            for name in sorted(dirs + files):
                path = here / name
                if path.is_symlink():
                    if not path.exists():
                        found.append((path, "a dangling symlink"))
                        continue
                    target = path.resolve()
                    if path.is_dir() and (
                        target == here.resolve() or target in here.resolve().parents
                    ):
                        found.append((path, "a symlink looping back to a folder above it"))
                        continue
                misplaced = path not in top and not self.is_case_file(path)
                if name in files and path.suffix in (".yaml", ".yml") and misplaced:
                    found.append((path, "not at <slice>/<id>.yaml"))
        self.loops = {path for path, why in found if why.startswith("a symlink looping")}
        return found

    def load_all(self) -> None:
        """The xdist controller reads every valid case file (workers report the invalid ones)."""
        if self.source != "yaml":
            return
        for path in case_files(self.cases_dir):
            try:
                self.load_case(path)
            except GoldenSetError:
                continue

    def check_attributes_used(self) -> None:
        """Refuse an attribute of variants.yaml that no case places, once every case file is
        read (a run over one slice or one file may leave some out on purpose)."""
        if self.source != "yaml":
            return
        read = set(self.case_paths.values())
        if all(self.shown(path) in read for path in case_files(self.cases_dir)):
            check_attributes_used(self.golden_set(), f"{self.shown(self.cases_dir)}/variants.yaml")

    def golden_set(self) -> GoldenSet:
        return GoldenSet(
            self.rubric, self.variants, tuple(self.cases.values()), self.shown(self.cases_dir)
        )
