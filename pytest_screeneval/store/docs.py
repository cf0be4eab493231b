"""How the golden set's rubric, variants and case fields are kept in the store as JSON text.

JSON keeps insertion order (no key sorting) so that mappings read back in the order they were
written, and every value reads back equal on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pytest_screeneval.golden.model import (
    AttributeValue,
    Case,
    Criterion,
    GapPlacement,
    Rubric,
    Scale,
    VariantAttribute,
    Variants,
    VariantValue,
)

__all__ = [
    "attributes_doc",
    "attributes_from_doc",
    "case_fields",
    "rubric_from_doc",
    "shown_date",
    "to_json",
    "variants_doc",
    "variants_from_doc",
]


# made once: json.dumps with options builds an encoder on every call (same text)
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def to_json(value: Any) -> str:
    # insertion order is kept (no sort) so mappings read back in the order they were written
    return _JSON.encode(value)


def rubric_from_doc(doc: Mapping[str, Any]) -> Rubric:
    return Rubric(
        id=doc["id"],
        version=str(doc["version"]),
        scale=Scale(int(doc["scale"]["min"]), int(doc["scale"]["max"])),
        advance_at=float(doc["advance_at"]),
        criteria=tuple(
            Criterion(
                name=c["name"],
                description=c["description"],
                weight=float(c["weight"]),
                keywords={int(level): tuple(words) for level, words in c["keywords"].items()},
            )
            for c in doc["criteria"]
        ),
    )


def variants_doc(variants: Variants) -> dict[str, Any]:
    return {
        "attributes": [
            {
                "name": attribute.name,
                "kind": attribute.kind,
                "values": [{"value": v.value, "groups": dict(v.groups)} for v in attribute.values],
            }
            for attribute in variants.attributes.values()
        ]
    }


def variants_from_doc(doc: Mapping[str, Any]) -> Variants:
    return Variants(
        {
            a["name"]: VariantAttribute(
                name=a["name"],
                kind=a["kind"],
                values=tuple(VariantValue(v["value"], dict(v["groups"])) for v in a["values"]),
            )
            for a in doc["attributes"]
        }
    )


def attributes_doc(attributes: Mapping[str, AttributeValue]) -> dict[str, Any]:
    return {
        name: {"value": value.value, "after": value.after}
        if isinstance(value, GapPlacement)
        else value
        for name, value in attributes.items()
    }


def attributes_from_doc(doc: Mapping[str, Any]) -> dict[str, AttributeValue]:
    return {
        name: GapPlacement(value=value["value"], after=value["after"])
        if isinstance(value, dict)
        else value
        for name, value in doc.items()
    }


def case_fields(case: Case) -> dict[str, Any]:
    """The columns of a case that may be corrected in place (the text itself never is)."""
    return {
        "label": case.label,
        "slices": to_json(list(case.slices)),
        "source": case.source,
        "attributes": to_json(attributes_doc(case.attributes)),
        "demographics": to_json(dict(case.demographics)),
        "xfail": to_json(dict(case.xfail)),
    }


def shown_date(timestamp: str) -> str:
    try:
        return datetime.fromisoformat(timestamp).date().isoformat()
    except ValueError:
        return timestamp
