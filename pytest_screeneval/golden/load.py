"""The golden set on disk: read and validate the YAML folder into the model.

Pure module: no pytest, no database. Every rule is checked with an error that names the file and
the line, so a user can go straight to the mistake.

The YAML read is bounded: a file over :data:`MAX_FILE_BYTES`, nesting deeper than
:data:`MAX_DEPTH` and YAML anchors and aliases are refused before anything is built (a 1.3 KB
case whose aliases multiply to billions of nodes hung the load), and every string passes the
text gate (:mod:`pytest_screeneval.boundary.text`): a NUL, a control character or a lone
surrogate written as an escape is refused with its line. Numbers are finite, names (ids,
criteria, raters, attributes and their values, demographics and group labels) are NFC, and
what a name must be unique among is judged without regard to case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from pytest_screeneval.boundary.numbers import is_finite_number
from pytest_screeneval.boundary.text import nfc, unsafe_character
from pytest_screeneval.errors import GoldenSetError
from pytest_screeneval.golden.model import (
    ALL_CRITERIA,
    DECISION,
    RUBRIC_FILE,
    VARIANTS_FILE,
    AttributeValue,
    Case,
    Criterion,
    Expectation,
    GapPlacement,
    GoldenSet,
    Rubric,
    Scale,
    VariantAttribute,
    Variants,
    VariantValue,
)
from pytest_screeneval.golden.pii import find_pii

__all__ = [
    "DEFAULT_LIMITS",
    "ITEM_KINDS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_LABEL_CHARS",
    "PERTURBATION_KEYWORDS",
    "SizeLimits",
    "case_id_key",
    "check_attributes_used",
    "duplicate_id_phrase",
    "find_pii",
    "item_keywords",
    "load_case_file",
    "load_golden_set",
    "load_rubric",
    "load_variants",
    "today_utc",
]

# --------------------------------------------------------------------------------------------
# YAML with line numbers
# --------------------------------------------------------------------------------------------


class _LineMap(dict[Any, Any]):
    """A mapping loaded from YAML that remembers the line of each key (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]


# libyaml's parser when PyYAML was built with it (about 10x faster on a large golden set); the
# nodes it composes carry the same line marks, so errors still name the line.
# (mypy checks against the C loader's class; the pure-Python fallback has the same interface.)
if TYPE_CHECKING:
    from yaml import CSafeLoader as _SafeLoaderBase
else:
    _SafeLoaderBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SafeLoaderBase):
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _LineMap:
    loader.flatten_mapping(node)
    result = _LineMap()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, list | dict):
            raise _YamlProblem(
                key_node.start_mark.line + 1, f"a key must be a single value, got {_kind_of(key)}"
            )
        if key in result:
            raise _YamlProblem(key_node.start_mark.line + 1, f"duplicate key {key!r}")
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


def _construct_timestamp_as_text(loader: _LineLoader, node: yaml.ScalarNode) -> str:
    # Dates stay text: they are records of when a person decided, not values to compute with.
    return str(loader.construct_scalar(node))


def _construct_text(loader: _LineLoader, node: yaml.ScalarNode) -> str:
    # A "\0" or "\x1b" escape in a quoted string is the only way such a character gets in (the
    # YAML reader refuses them raw): refused here, where the line is known.
    value = str(loader.construct_scalar(node))
    problem = unsafe_character(value)
    if problem is not None:
        raise _YamlProblem(
            node.start_mark.line + 1,
            f"the text holds {problem}, which no report or store keeps as written; remove it",
        )
    return value


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_as_text)
_LineLoader.add_constructor("tag:yaml.org,2002:str", _construct_text)

# A golden-set file is a few kilobytes: these bounds are far above any real one and keep a
# hostile or broken one from hanging the load.
MAX_FILE_BYTES = 5_000_000
MAX_DEPTH = 32


def _check_bounded(text: str) -> None:
    """Refuse anchors and aliases, and nesting deeper than MAX_DEPTH, from the parser's events
    alone (no nodes are built): what is left can only be as large as the file."""
    depth = 0
    for event in yaml.parse(text, Loader=_SafeLoaderBase):
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise _YamlProblem(
                line,
                "YAML anchors and aliases (&name, *name) are not allowed in a golden set "
                "file; write each value out",
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _YamlProblem(line, f"the YAML is nested more than {MAX_DEPTH} deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


class _YamlProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _read_yaml(path: Path, shown: str) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise GoldenSetError(
                f"{shown}: the file has {size:,} bytes, more than the {MAX_FILE_BYTES:,} a "
                "golden set file may have."
            )
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GoldenSetError(
            f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start})."
        ) from None
    except OSError as exc:
        raise GoldenSetError(f"{shown}: cannot be read ({exc.strerror}).") from None
    try:
        if "&" in text or "*" in text or "[" in text or "{" in text:
            _check_bounded(text)  # block-style nesting is bounded by the indentation it costs
        return yaml.load(text, Loader=_LineLoader)
    except RecursionError:
        raise GoldenSetError(f"{shown}: the YAML is nested too deeply to read.") from None
    except _YamlProblem as exc:
        raise GoldenSetError(f"{shown}, line {exc.line}: {exc.message}.") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = (exc.problem or exc.context or "invalid YAML").rstrip(".")
        raise GoldenSetError(f"{shown}, line {line}: malformed YAML, {problem}.") from None
    except yaml.YAMLError as exc:
        raise GoldenSetError(f"{shown}: malformed YAML ({exc}).") from None


class _Fields:
    """Reads one YAML mapping field by field; every error names the file and line."""

    def __init__(self, data: Any, shown: str, what: str, line: int = 0) -> None:
        self.shown = shown
        self.what = what
        if not isinstance(data, dict):
            got = "nothing" if data is None else type(data).__name__
            raise GoldenSetError(
                f"{shown}, line {max(line, 1)}: {what} must be a mapping, got {got}."
            )
        self.data = data
        self.line = getattr(data, "line", line) or line or 1

    def line_of(self, key: object) -> int:
        key_lines: dict[Any, int] = getattr(self.data, "key_lines", {})
        return key_lines.get(key, self.line)

    def fail(self, message: str, key: object = None) -> GoldenSetError:
        line = self.line_of(key) if key is not None else self.line
        return GoldenSetError(f"{self.shown}, line {line}: {message}.")

    def check_known(self, required: Iterable[str], optional: Iterable[str] = ()) -> None:
        required = tuple(required)
        known = set(required) | set(optional)
        for key in self.data:
            if key not in known:
                raise self.fail(
                    f"unknown field {key!r} in {self.what} "
                    f"(known fields: {', '.join(sorted(known))})",
                    key,
                )
        for key in required:
            if key not in self.data:
                raise self.fail(f"missing field {key!r} in {self.what}")

    def text(self, key: str, default: str | None = None, *, allow_empty: bool = False) -> str:
        if key not in self.data:
            if default is None:
                raise self.fail(f"missing field {key!r} in {self.what}")
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.fail(f"{key!r} must be text, got {type(value).__name__}", key)
        value = str(value)
        if not allow_empty and not value.strip():
            raise self.fail(f"{key!r} must not be empty", key)
        return value

    def number(self, key: str, default: float | None = None) -> float:
        if key not in self.data:
            if default is None:
                raise self.fail(f"missing field {key!r} in {self.what}")
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"{key!r} must be a number, got {value!r}", key)
        if not is_finite_number(value):
            # NaN compares false with every limit: a weight of .nan made every overall score NaN
            raise self.fail(f"{key!r} must be a finite number, got {value!r}", key)
        return float(value)

    def integer(self, key: str) -> int:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{key!r} must be a whole number, got {value!r}", key)
        return value

    def mapping(self, key: str, what: str) -> _Fields:
        return _Fields(self.data.get(key), self.shown, what, self.line_of(key))


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------

_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class SizeLimits:
    """How long a case id and how large an input_text may be (ini ``screeneval_max_case_id_chars``
    and ``screeneval_max_input_chars``). Checked here, before anything is stored: a 10,000-character
    id broke ``cases export`` on SQLite and PostgreSQL's index refused it without naming the case;
    a 5 MB text took 86 s and 844 MB to score."""

    max_case_id_chars: int = 100
    max_input_chars: int = 100_000


DEFAULT_LIMITS = SizeLimits()


def today_utc() -> date:
    """Today's date in UTC: what a retirement date is compared with."""
    return datetime.now(UTC).date()


def _date_of(text: str) -> date:
    """The date of an ISO date or date-time (checked by _iso_date first)."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text)
        return (moment.astimezone(UTC) if moment.tzinfo else moment).date()


def _iso_date(text: str) -> bool:
    """Whether ``text`` is an ISO 8601 date (2024-03-01) or date and time."""
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            parse(text)
        except ValueError:
            continue
        return True
    return False


def load_rubric(path: Path, shown: str | None = None) -> Rubric:
    shown = shown or str(path)
    top = _Fields(_read_yaml(path, shown), shown, "the rubric")
    top.check_known(["id", "scale", "advance_at", "criteria"], ["version", "description"])
    scale_fields = top.mapping("scale", "the scale")
    scale_fields.check_known(["min", "max"])
    scale = Scale(scale_fields.integer("min"), scale_fields.integer("max"))
    if scale.max <= scale.min:
        raise scale_fields.fail(f"scale max ({scale.max}) must be above min ({scale.min})")
    advance_at = top.number("advance_at")
    if not 0 <= advance_at <= 100:
        raise top.fail(f"advance_at must be between 0 and 100, got {advance_at:g}", "advance_at")
    raw_criteria = top.data["criteria"]
    if not isinstance(raw_criteria, list) or not raw_criteria:
        raise top.fail("criteria must be a non-empty list", "criteria")
    criteria: list[Criterion] = []
    for raw in raw_criteria:
        item = _Fields(raw, shown, "a criterion", top.line_of("criteria"))
        item.check_known(["name", "description"], ["weight", "keywords"])
        name = nfc(item.text("name"))
        if name.casefold() in (c.name.casefold() for c in criteria):
            raise item.fail(
                f"duplicate criterion {name!r} (names are compared without regard to case)",
                "name",
            )
        if name in (DECISION, ALL_CRITERIA):
            raise item.fail(f"{name!r} is reserved and cannot name a criterion", "name")
        weight = item.number("weight", 1.0)
        if weight <= 0:
            raise item.fail(f"weight of {name!r} must be positive, got {weight:g}", "weight")
        keywords: dict[int, tuple[str, ...]] = {}
        if "keywords" in item.data:
            levels = item.mapping("keywords", f"the keywords of {name!r}")
            for level, words in levels.data.items():
                if isinstance(level, bool) or not isinstance(level, int):
                    raise levels.fail(f"keyword level {level!r} must be a whole number", level)
                if not scale.contains(level):
                    raise levels.fail(
                        f"keyword level {level} of {name!r} is off the scale "
                        f"{scale.min}..{scale.max}",
                        level,
                    )
                if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                    raise levels.fail(f"keywords at level {level} must be a list of text", level)
                keywords[level] = tuple(words)
        criteria.append(
            Criterion(
                name=name, description=item.text("description"), weight=weight, keywords=keywords
            )
        )
    return Rubric(
        id=top.text("id"),
        version=top.text("version", "1"),
        scale=scale,
        advance_at=advance_at,
        criteria=tuple(criteria),
    )


def load_variants(path: Path, shown: str | None = None) -> Variants:
    shown = shown or str(path)
    if not path.exists():
        # Silence here switched the fairness checks off without a word: refuse, and
        # say how to run without counterfactuals on purpose.
        raise GoldenSetError(
            f"{shown}: the golden set has no variants file, so its counterfactual (fairness) "
            "checks cannot run; add it, or write `attributes: {}` in it to run without them."
        )
    top = _Fields(_read_yaml(path, shown), shown, "the variants")
    top.check_known(["attributes"])
    attrs = top.mapping("attributes", "the variant attributes")
    result: dict[str, VariantAttribute] = {}
    for name in attrs.data:
        spec = attrs.mapping(name, f"attribute {name!r}")
        spec.check_known(["values"], ["kind", "description"])
        kind = spec.text("kind", "replace")
        if kind not in ("replace", "insert"):
            raise spec.fail(f"kind of {name!r} must be 'replace' or 'insert', got {kind!r}", "kind")
        raw_values = spec.data["values"]
        if not isinstance(raw_values, list) or len(raw_values) < 2:
            raise spec.fail(f"attribute {name!r} needs a list of at least two values", "values")
        values: list[VariantValue] = []
        for raw in raw_values:
            _refuse_pii_in_value(spec, name, raw)
            if raw is None or isinstance(raw, str):
                values.append(VariantValue(None if raw is None else nfc(raw)))
                continue
            entry = _Fields(raw, shown, f"a value of {name!r}", spec.line_of("values"))
            entry.check_known(["value"], ["groups"])
            value = entry.data["value"]
            if value is not None and not isinstance(value, str):
                raise entry.fail(f"a value of {name!r} must be text or null", "value")
            if value is None and kind == "replace":
                raise entry.fail(
                    f"a value of replace-type attribute {name!r} cannot be null", "value"
                )
            groups: dict[str, str] = {}
            if "groups" in entry.data:
                group_fields = entry.mapping("groups", "the groups")
                groups = _labels(group_fields, f"a group of a value of {name!r}")
            values.append(VariantValue(None if value is None else nfc(value), groups))
        seen = [v.value for v in values]
        if len(set(seen)) != len(seen):
            raise spec.fail(f"attribute {name!r} lists a value twice", "values")
        result[nfc(str(name))] = VariantAttribute(nfc(str(name)), kind, tuple(values))
    return Variants(result)


def _labels(block: _Fields, what: str) -> dict[str, str]:
    """A mapping of names to labels (demographics, a value's groups): each a scalar, as text.

    A list or a mapping here has no meaning as a label (and its ``str()`` could be enormous).
    """
    labels: dict[str, str] = {}
    for key, value in block.data.items():
        if not _is_scalar(key) or not str(key).strip():
            raise block.fail(f"{what}: the name {key!r} must be a non-empty text", key)
        if not _is_scalar(value):
            got = _kind_of(value)
            raise block.fail(f"{what}: {key!r} must be a single value, got {got}", key)
        labels[nfc(str(key))] = nfc(str(value))
    return labels


def _kind_of(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return "nothing" if value is None else type(value).__name__


def _is_scalar(value: object) -> bool:
    return isinstance(value, str | bool | int) or (
        isinstance(value, float) and is_finite_number(value)
    )


def _refuse_pii_in_value(spec: _Fields, name: object, raw: object) -> None:
    value = raw.get("value") if isinstance(raw, dict) else raw
    if not isinstance(value, str):
        return
    pii = find_pii(value)
    if pii is not None:
        kind, found = pii
        raise spec.fail(
            f"a value of attribute {name!r} is {kind} ({found!r}); variants are inserted into "
            "every case, use a made-up value without contact details",
            "values",
        )


_CASE_REQUIRED = ("id", "label", "rubric", "input_text", "expected")
_CASE_OPTIONAL = (
    "slices",
    "ratings",
    "attributes",
    "demographics",
    "xfail",
    "retired_at",
    "source",
)


def load_case_file(
    path: Path,
    rubric: Rubric,
    shown: str | None = None,
    variants: Variants | None = None,
    *,
    limits: SizeLimits = DEFAULT_LIMITS,
) -> Case:
    """Load and validate one case file against its rubric (and the variants, if given)."""
    shown = shown or str(path)
    top = _Fields(_read_yaml(path, shown), shown, "a case")
    top.check_known(_CASE_REQUIRED, _CASE_OPTIONAL)
    case_id = nfc(top.text("id"))
    if len(case_id) > limits.max_case_id_chars:
        raise top.fail(
            f"case id {case_id[:40]!r}... has {len(case_id):,} characters, more than the "
            f"{limits.max_case_id_chars} allowed (ini screeneval_max_case_id_chars)",
            "id",
        )
    if not _ID_PATTERN.match(case_id):
        raise top.fail(f"case id {case_id!r} may hold only letters, digits, '.', '_' and '-'", "id")
    rubric_id = top.text("rubric")
    if rubric_id != rubric.id:
        raise top.fail(
            f"case {case_id} names rubric {rubric_id!r}, but the rubric is {rubric.id!r}", "rubric"
        )
    input_text = top.text("input_text")
    if len(input_text) > limits.max_input_chars:
        raise top.fail(
            f"case {case_id}: input_text has {len(input_text):,} characters, more than the "
            f"{limits.max_input_chars:,} allowed (ini screeneval_max_input_chars); a resume "
            "is rarely a tenth of that",
            "input_text",
        )
    pii = find_pii(input_text)
    if pii is not None:
        kind, found = pii
        raise top.fail(
            f"case {case_id} still contains {kind} ({found!r}) in input_text; de-identify it",
            "input_text",
        )

    criteria = set(rubric.criterion_names)

    def check_criterion(block: _Fields, key: Any, allow_all: bool = False) -> str:
        name = nfc(str(key))
        if name not in criteria and not (allow_all and name == ALL_CRITERIA):
            raise block.fail(
                f"unknown criterion {name!r} in case {case_id} "
                f"(the rubric has: {', '.join(rubric.criterion_names)})",
                key,
            )
        return name

    def check_score(block: _Fields, key: Any, value: Any, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise block.fail(f"{what} must be a whole number, got {value!r}", key)
        if not rubric.scale.contains(value):
            raise block.fail(
                f"{what} {value} is off the scale {rubric.scale.min}..{rubric.scale.max}", key
            )
        return value

    expected_block = top.mapping("expected", "the expected scores")
    expected: dict[str, Expectation] = {}
    for key in expected_block.data:
        criterion = check_criterion(expected_block, key)
        entry = expected_block.mapping(key, f"the expectation for {criterion!r}")
        entry.check_known(["score", "set_by", "set_at"])
        if not _iso_date(entry.text("set_at")):
            raise entry.fail(
                f"set_at of {criterion!r} in case {case_id} must be an ISO date such as "
                f"2024-03-01, got {entry.text('set_at')!r}",
                "set_at",
            )
        expected[criterion] = Expectation(
            criterion=criterion,
            score=check_score(
                entry, "score", entry.data["score"], f"expected score of {criterion!r}"
            ),
            set_by=entry.text("set_by"),
            set_at=entry.text("set_at"),
        )
    missing = [c for c in rubric.criterion_names if c not in expected]
    if missing:
        raise expected_block.fail(
            f"case {case_id} has no expected score for {', '.join(repr(m) for m in missing)}"
        )

    ratings: dict[str, dict[str, int]] = {}
    if "ratings" in top.data:
        block = top.mapping("ratings", "the ratings")
        for key in block.data:
            criterion = check_criterion(block, key)
            raters = block.mapping(key, f"the ratings of {criterion!r}")
            ratings[criterion] = {}
            for rater, value in raters.data.items():
                if (
                    not isinstance(rater, str | int)
                    or isinstance(rater, bool)
                    or not (str(rater).strip())
                ):
                    raise raters.fail(
                        f"case {case_id}: a rater of {criterion!r} has no name ({rater!r}); "
                        "name who rated",
                        rater,
                    )
                who = nfc(str(rater))
                if who.casefold() in (r.casefold() for r in ratings[criterion]):
                    raise raters.fail(
                        f"case {case_id}: rater {who!r} rated {criterion!r} twice", rater
                    )
                ratings[criterion][who] = check_score(
                    raters, rater, value, f"rating by {who} of {criterion!r}"
                )

    xfail: dict[str, str] = {}
    if "xfail" in top.data:
        block = top.mapping("xfail", "the xfail reasons")
        for key, reason in block.data.items():
            name = check_criterion(block, key, allow_all=True) if key != DECISION else DECISION
            if not isinstance(reason, str) or not reason.strip():
                raise block.fail(f"the xfail of {name!r} needs a reason", key)
            xfail[name] = reason

    slices: tuple[str, ...] = ()
    if "slices" in top.data:
        raw = top.data["slices"]
        if not isinstance(raw, list) or not all(isinstance(s, str) and s for s in raw):
            raise top.fail("slices must be a list of text", "slices")
        slices = tuple(nfc(s) for s in raw)
    label = top.text("label")
    if len(label) > MAX_LABEL_CHARS or not _ID_PATTERN.match(label):
        shown_label = label if len(label) <= 40 else label[:37] + "..."
        raise top.fail(
            f"case {case_id}: label {shown_label!r} ({len(label)} characters) must be at most "
            f"{MAX_LABEL_CHARS} letters, digits, '.', '_' or '-': it names a folder and a "
            "pytest keyword",
            "label",
        )
    reserved = item_keywords(rubric, variants)
    for key, name in [("label", top.text("label")), *(("slices", s) for s in slices)]:
        what = reserved.get(name.casefold())
        if what is not None:
            raise top.fail(
                f"case {case_id}: slice {name!r} is also {what}, so `-k {name}` would select "
                "both; rename the slice",
                key,
            )

    attributes: dict[str, AttributeValue] = {}
    if "attributes" in top.data:
        block = top.mapping("attributes", "the attributes")
        for key, raw in block.data.items():
            name = nfc(str(key))
            if variants is not None and name not in variants.attributes:
                defined = ", ".join(sorted(variants.attributes)) or "none"
                raise block.fail(
                    f"case {case_id}: attribute {name!r} is not defined in variants.yaml "
                    f"(it defines: {defined}), so no counterfactual would use it",
                    key,
                )
            kind = (
                variants.attributes[name].kind
                if variants and name in variants.attributes
                else ("insert" if isinstance(raw, dict) else "replace")
            )
            if kind == "insert":
                entry = block.mapping(key, f"the attribute {name!r}")
                entry.check_known(["after"], ["value"])
                after = entry.text("after")
                value = entry.data.get("value")
                if value is not None and not isinstance(value, str):
                    raise entry.fail(f"the value of {name!r} must be text or null", "value")
                value = None if value is None else nfc(value)
                if after not in input_text:
                    raise entry.fail(
                        f"case {case_id}: the line {after!r} that attribute {name!r} goes after "
                        "is not in input_text",
                        "after",
                    )
                if value is not None and value not in input_text:
                    raise entry.fail(
                        f"case {case_id}: attribute {name!r} value {value!r} is not in input_text",
                        "value",
                    )
                attributes[name] = GapPlacement(value=value, after=after)
            else:
                if not isinstance(raw, str) or not raw.strip():
                    raise block.fail(f"attribute {name!r} must be the text as it appears", key)
                raw = nfc(raw)
                if raw not in input_text:
                    raise block.fail(
                        f"case {case_id}: attribute {name!r} value {raw!r} is not in input_text",
                        key,
                    )
                attributes[name] = raw

    demographics: dict[str, str] = {}
    if "demographics" in top.data:
        block = top.mapping("demographics", "the demographics")
        demographics = _labels(block, f"case {case_id}: the demographics")

    retired_at = None
    if top.data.get("retired_at") is not None:
        retired_at = top.text("retired_at")
        if not _iso_date(retired_at):
            raise top.fail(
                f"case {case_id}: retired_at must be an ISO date such as 2024-03-01, got "
                f"{retired_at!r}",
                "retired_at",
            )
        if _date_of(retired_at) > today_utc():
            raise top.fail(
                f"case {case_id}: retired_at {retired_at} is in the future; a case is retired "
                "on the day it stops counting (remove it until then)",
                "retired_at",
            )

    return Case(
        id=case_id,
        label=top.text("label"),
        rubric=rubric_id,
        input_text=input_text,
        expected=expected,
        slices=slices,
        ratings=ratings,
        attributes=attributes,
        demographics=demographics,
        xfail=xfail,
        retired_at=retired_at,
        source=top.text("source", "", allow_empty=True),
        path=shown,
    )


# A label names the case's folder on export and is a pytest keyword: short, and path-safe.
MAX_LABEL_CHARS = 100
# The words the plugin's items carry as pytest keywords besides a case's slices (the kind of an
# item, the perturbation kinds of probes/perturb.py PERTURBATION_KINDS, "contested"); a test holds
# the perturbation kinds equal. Kept here so the golden set does not import the probes.
ITEM_KINDS = ("decision", "counterfactual", "perturbation", "criterion", "contested")
PERTURBATION_KEYWORDS = ("reformat", "ocr-noise", "reorder-sections")


def item_keywords(rubric: Rubric, variants: Variants | None) -> dict[str, str]:
    """Every item keyword a slice name must not equal (case-insensitively), with what it is."""
    reserved = {kind: f"an item kind ({kind})" for kind in ITEM_KINDS}
    reserved |= {kind: "a perturbation kind" for kind in PERTURBATION_KEYWORDS}
    if variants is not None:
        reserved |= {name.casefold(): "a counterfactual attribute" for name in variants.attributes}
    reserved |= {name.casefold(): "a criterion of the rubric" for name in rubric.criterion_names}
    return reserved


def load_golden_set(
    root: Path, *, relative_to: Path | None = None, limits: SizeLimits = DEFAULT_LIMITS
) -> GoldenSet:
    """Load ``root/rubric.yaml``, ``root/variants.yaml`` and every ``root/<slice>/<id>.yaml``."""
    root = Path(root)
    base = relative_to or root.parent

    def shown(path: Path) -> str:
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            return str(path)

    if not root.is_dir():
        raise GoldenSetError(f"{shown(root)}: the golden set folder does not exist.")
    rubric_path = root / RUBRIC_FILE
    if not rubric_path.exists():
        raise GoldenSetError(f"{shown(rubric_path)}: the golden set has no rubric file.")
    rubric = load_rubric(rubric_path, shown(rubric_path))
    variants = load_variants(root / VARIANTS_FILE, shown(root / VARIANTS_FILE))
    cases: list[Case] = []
    first_seen: dict[str, tuple[str, str]] = {}
    for path in case_files(root):
        case = load_case_file(path, rubric, shown(path), variants, limits=limits)
        seen = first_seen.get(case_id_key(case.id))
        if seen is not None:
            # Only on this error path: read the file again for the line of its `id`.
            line = getattr(_read_yaml(path, shown(path)), "key_lines", {}).get("id", 1)
            raise GoldenSetError(
                f"{shown(path)}, line {line}: {duplicate_id_phrase(case.id, *seen)}."
            )
        first_seen[case_id_key(case.id)] = (case.id, shown(path))
        cases.append(case)
    golden = GoldenSet(rubric=rubric, variants=variants, cases=tuple(cases), root=shown(root))
    check_attributes_used(golden, shown(root / VARIANTS_FILE))
    return golden


def case_id_key(case_id: str) -> str:
    """What two case ids must not share: ``AL-001`` and ``al-001`` are one case on a
    case-insensitive file system, in ``-k`` and to a reader."""
    return nfc(case_id).casefold()


def duplicate_id_phrase(case_id: str, first_id: str, first_path: str) -> str:
    if case_id == first_id:
        return f"duplicate case id {case_id!r}, already used in {first_path}"
    return (
        f"case id {case_id!r} differs from {first_id!r} in {first_path} only by case; ids "
        "are compared without regard to case"
    )


def check_attributes_used(golden: GoldenSet, shown: str) -> None:
    """Refuse an attribute of variants.yaml that no case places: its counterfactual would
    silently test nothing (most often a typo on one side)."""
    used = {name for case in golden.cases for name in case.attributes}
    unused = [name for name in golden.variants.attributes if name not in used]
    if unused and golden.cases:
        names = ", ".join(repr(name) for name in unused)
        raise GoldenSetError(
            f"{shown}: attribute {names} is defined but no case places it (add it to the "
            "cases' attributes, or remove it), so its counterfactuals would test nothing."
        )


def case_files(root: Path) -> list[Path]:
    """Every case file of a golden set folder, in a stable order."""
    return sorted(
        p
        for pattern in ("*/*.yaml", "*/*.yml")
        for p in Path(root).glob(pattern)
        if not p.parent.name.startswith(".")
    )
