"""Write a golden set back to YAML that ``golden/load.py`` reads into equal values.

Pure module: no pytest, no database. ``screeneval cases export`` and the bundled set's generator
write through here, so a case read, exported and read again is the same case: same fields, and
an ``input_text`` that is byte-identical (its sha256 is what freezes it).

Resume text is written as a literal block (``|``) whenever YAML can hold it exactly that way, so
the files stay readable and diffable; text that a block cannot hold (trailing spaces, tabs,
control characters, unusual line breaks) is left to PyYAML's quoting, which is exact.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from pytest_screeneval.errors import GoldenSetError
from pytest_screeneval.golden.model import (
    RUBRIC_FILE,
    VARIANTS_FILE,
    Case,
    GapPlacement,
    GoldenSet,
    Rubric,
    Variants,
)

__all__ = [
    "case_relative_path",
    "dump_case",
    "dump_rubric",
    "dump_variants",
    "write_golden_set",
]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_STR_TAG = "tag:yaml.org,2002:str"
# Breaks that YAML folds to "\n" inside blocks and single quotes: only double quotes keep them.
_FRAGILE_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
# Long one-line values (descriptions, reasons) stay on one line rather than fold mid-phrase.
_WIDTH = 1 << 16


class _Block(str):
    """Text to write as a literal block where YAML can represent it that way."""


class _DateText(str):
    """A date kept as text: written bare when it reads as a YAML timestamp (the loader keeps
    timestamps as their exact text), quoted otherwise."""


class _FlowList(list):  # type: ignore[type-arg]
    """A short list written inline: ``[a, b]``."""


class _FlowMap(dict[Any, Any]):
    """A short mapping written inline: ``{rater-ab: 4, rater-kt: 5}``."""


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent lists under their key: easier to read than PyYAML's flush-left default.
        super().increase_indent(flow, False)


def _represent_str(dumper: _Dumper, text: str) -> yaml.ScalarNode:
    if any(mark in text for mark in _FRAGILE_BREAKS):
        return dumper.represent_scalar(_STR_TAG, text, style='"')
    if "\n" in text:
        # The emitter falls back to a quoted style by itself when a block cannot hold the text.
        return dumper.represent_scalar(_STR_TAG, text, style="|")
    return dumper.represent_scalar(_STR_TAG, text)


def _represent_date(dumper: _Dumper, text: str) -> yaml.ScalarNode:
    # types-PyYAML leaves Resolver.resolve unannotated
    tag = dumper.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if tag == _TIMESTAMP_TAG:
        return dumper.represent_scalar(_TIMESTAMP_TAG, text)
    return _represent_str(dumper, str(text))


def _represent_flow_list(dumper: _Dumper, items: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=True)


def _represent_flow_map(dumper: _Dumper, items: dict[Any, Any]) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", items, flow_style=True)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(_Block, _represent_str)
_Dumper.add_representer(_DateText, _represent_date)
_Dumper.add_representer(_FlowList, _represent_flow_list)
_Dumper.add_representer(_FlowMap, _represent_flow_map)


def _dump(document: Mapping[str, Any]) -> str:
    return yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=_WIDTH,
        indent=2,
    )


def _number(value: float) -> int | float:
    """Whole numbers without a trailing ``.0``: the loader reads both as the same float."""
    return int(value) if float(value).is_integer() else value


def _text_list(items: Iterable[str]) -> _FlowList:
    return _FlowList(str(item) for item in items)


# --------------------------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------------------------


def _rubric_document(rubric: Rubric) -> dict[str, Any]:
    criteria: list[dict[str, Any]] = []
    for criterion in rubric.criteria:
        entry: dict[str, Any] = {
            "name": criterion.name,
            "description": criterion.description,
            "weight": _number(criterion.weight),
        }
        if criterion.keywords:
            entry["keywords"] = {
                int(level): _text_list(words) for level, words in sorted(criterion.keywords.items())
            }
        criteria.append(entry)
    return {
        "id": rubric.id,
        "version": rubric.version,
        "scale": _FlowMap(min=rubric.scale.min, max=rubric.scale.max),
        "advance_at": _number(rubric.advance_at),
        "criteria": criteria,
    }


def _variants_document(variants: Variants) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    for name, attribute in variants.attributes.items():
        values: list[Any] = []
        for value in attribute.values:
            if value.groups:
                values.append({"value": value.value, "groups": _FlowMap(value.groups)})
            else:
                values.append(value.value)
        attributes[name] = {"kind": attribute.kind, "values": values}
    return {"attributes": attributes}


def _case_document(case: Case) -> dict[str, Any]:
    # Field order follows how a reviewer reads a case: who it is, the text, then the judgement.
    document: dict[str, Any] = {"id": case.id, "label": case.label}
    if case.slices:
        document["slices"] = _text_list(case.slices)
    document["rubric"] = case.rubric
    if case.source:
        document["source"] = case.source
    document["input_text"] = _Block(case.input_text)
    document["expected"] = {
        criterion: {
            "score": expectation.score,
            "set_by": expectation.set_by,
            "set_at": _DateText(expectation.set_at),
        }
        for criterion, expectation in case.expected.items()
    }
    if case.ratings:
        document["ratings"] = {
            criterion: _FlowMap(by_rater) for criterion, by_rater in case.ratings.items()
        }
    if case.attributes:
        attributes: dict[str, Any] = {}
        for name, value in case.attributes.items():
            if isinstance(value, GapPlacement):
                attributes[name] = {"value": value.value, "after": value.after}
            else:
                attributes[name] = value
        document["attributes"] = attributes
    if case.demographics:
        document["demographics"] = dict(case.demographics)
    if case.xfail:
        document["xfail"] = dict(case.xfail)
    if case.retired_at is not None:
        document["retired_at"] = _DateText(case.retired_at)
    return document


def dump_rubric(rubric: Rubric) -> str:
    """The rubric as the YAML of ``rubric.yaml``."""
    return _dump(_rubric_document(rubric))


def dump_variants(variants: Variants) -> str:
    """The counterfactual attributes as the YAML of ``variants.yaml``."""
    return _dump(_variants_document(variants))


def dump_case(case: Case) -> str:
    """One case as the YAML of ``<label>/<id>.yaml`` (its ``path`` is not written)."""
    return _dump(_case_document(case))


def case_relative_path(case: Case) -> Path:
    """Where a case lives inside a golden set folder: its main slice is the folder."""
    for part, what in ((case.label, "label"), (case.id, "id")):
        if not part or part.startswith(".") or "/" in part or "\\" in part:
            raise GoldenSetError(
                f"case {case.id}: its {what} {part!r} cannot be used as a file or folder name."
            )
    return Path(case.label) / f"{case.id}.yaml"


def write_golden_set(golden: GoldenSet, root: Path, *, force: bool = False) -> list[Path]:
    """Write rubric.yaml, variants.yaml and one ``<label>/<id>.yaml`` per case under ``root``.

    A file already there with the same text is left as it is; one that differs (a person's edit)
    is replaced only with ``force``, else nothing is written and the refusal names it. Nothing is
    ever written through a symlink under ``root``, and each file is replaced whole (written
    beside it, then renamed), so an interrupted export never leaves half a file. Nothing else
    in ``root`` is touched. Returns the paths written or already equal, rubric and variants first.
    """
    root = Path(root)
    planned: list[tuple[Path, str]] = [
        (root / RUBRIC_FILE, dump_rubric(golden.rubric)),
        (root / VARIANTS_FILE, dump_variants(golden.variants)),
    ]
    seen: dict[Path, str] = {}
    for case in golden.cases:
        relative = case_relative_path(case)
        if relative in seen:
            raise GoldenSetError(
                f"case {case.id}: two cases would be written to {relative.as_posix()}."
            )
        seen[relative] = case.id
        planned.append((root / relative, dump_case(case)))
    # Render and check everything before writing anything: a refusal leaves the folder as it was.
    linked = [path for path, _ in planned if _through_symlink(root, path)]
    if linked:
        raise GoldenSetError(
            f"Cannot export to {root}: {_some(linked, root)} is a symlink or lies under one; "
            "the export never writes through a symlink (remove it, or export to another folder)."
        )
    changed = [path for path, text in planned if _differs(path, text)]
    if changed and not force:
        raise GoldenSetError(
            f"Cannot export to {root}: {len(changed)} file(s) there differ from the store "
            f"({_some(changed, root)}); nothing was written. Export to another folder, or "
            "replace them with --force."
        )
    for path, text in planned:
        if path in changed or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            _replace(path, text)
    return [path for path, _ in planned]


def _through_symlink(root: Path, path: Path) -> bool:
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            return True
    return False


def _differs(path: Path, text: str) -> bool:
    if not path.exists():
        return False
    try:
        return path.read_bytes() != text.encode("utf-8")
    except OSError:
        return True


def _some(paths: list[Path], root: Path) -> str:
    shown = ", ".join(path.relative_to(root).as_posix() for path in paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _replace(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
