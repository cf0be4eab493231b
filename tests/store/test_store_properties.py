"""Property tests: YAML → store → YAML keeps every case exact, and the freeze rule has no gaps.

One store per test (SQLite file or PostgreSQL schema) is shared by all of Hypothesis' examples:
each example uses a case id of its own, so examples never interfere.
"""

from __future__ import annotations

import dataclasses
import itertools
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.golden_factory import CRITERIA, make_rubric, make_variants

from pytest_screeneval.errors import GoldenSetError
from pytest_screeneval.golden.load import find_pii, load_case_file
from pytest_screeneval.golden.model import Case, Expectation, GapPlacement, GoldenSet
from pytest_screeneval.golden.write import dump_case
from pytest_screeneval.store.database import Store

RUBRIC = make_rubric()
VARIANTS = make_variants()
_ids = itertools.count()

# Any text a resume could hold: every script, punctuation, odd line breaks and spacing. NUL is
# left out because PostgreSQL text cannot hold it (and no resume contains one).
# The control characters a case file may not hold (the loader refuses them with their line):
# C0 but tab, newline and carriage return, DEL, C1 but NEL.
REFUSED = "".join(
    chr(c) for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0x85))
) + "".join(chr(c) for c in range(0x86, 0xA0))
resume_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="@" + REFUSED),
    min_size=1,
    max_size=400,
).filter(lambda text: text.strip() != "" and find_pii(text) is None)

word = st.from_regex(r"[a-z][a-z0-9]{0,7}", fullmatch=True)
tag = st.from_regex(r"[a-z][a-z0-9-]{0,11}", fullmatch=True)
person = st.sampled_from(["Rater Quill", "Dana Okafor", "Lena Frost", "Priya Venkat", "T. Brenner"])
day = st.dates().map(lambda d: d.isoformat())
score = st.integers(RUBRIC.scale.min, RUBRIC.scale.max)


def settings_for(store: Store) -> settings:
    return settings(
        max_examples=50 if store.dialect == "sqlite" else 10,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    name = draw(st.sampled_from(["Ilona Varga", "Tomasz Brenner", "Noor Haddad", "Aiyana Roe"]))
    body = draw(resume_text)
    input_text = draw(st.sampled_from([f"{name}\n{body}", f"{body}\n{name}", f"{name} {body}"]))
    attributes: dict[str, object] = {}
    if draw(st.booleans()):
        attributes["name"] = name
    if draw(st.booleans()):
        attributes["career_gap"] = GapPlacement(None, name)
    ratings = draw(
        st.dictionaries(
            st.sampled_from(CRITERIA), st.dictionaries(tag, score, min_size=1, max_size=3)
        )
    )
    return Case(
        id=f"{draw(tag)}-{next(_ids)}",
        label=draw(tag),
        rubric=RUBRIC.id,
        input_text=input_text,
        expected={
            criterion: Expectation(criterion, draw(score), draw(person), draw(day))
            for criterion in CRITERIA
        },
        slices=tuple(draw(st.lists(tag, max_size=3, unique=True))),
        ratings=ratings,
        attributes=attributes,  # type: ignore[arg-type]
        demographics=draw(st.dictionaries(word, word, max_size=3)),
        xfail=draw(
            st.dictionaries(
                st.sampled_from([*CRITERIA, "all"]),
                st.text(st.characters(codec="utf-8", exclude_characters=REFUSED), min_size=1)
                .map(str.strip)
                .filter(bool),
                max_size=2,
            )
        ),
        source=draw(st.sampled_from(["", "rewritten from a synthetic template", "hand-written"])),
    )


def golden_of(*members: Case) -> GoldenSet:
    return GoldenSet(rubric=RUBRIC, variants=VARIANTS, cases=members)


def test_yaml_store_yaml_round_trip_is_exact(store_url: str) -> None:
    with Store.open(store_url) as store, tempfile.TemporaryDirectory() as folder:

        @settings_for(store)
        @given(case=cases())
        def round_trip(case: Case) -> None:
            yaml_text = dump_case(case)
            path = Path(folder) / f"{case.id}.yaml"
            path.write_text(yaml_text, encoding="utf-8", newline="\n")
            loaded = load_case_file(path, RUBRIC, "case.yaml", VARIANTS)
            assert dataclasses.replace(loaded, path="") == case

            report = store.sync_golden_set(golden_of(loaded))
            assert report.added == (case.id,)

            stored = {c.id: c for c in store.load_golden_set().cases}[case.id]
            assert stored == case
            assert stored.input_text.encode("utf-8") == case.input_text.encode("utf-8")
            assert store.frozen_cases()[case.id][0] == case.input_sha256
            assert dump_case(stored) == yaml_text

        round_trip()


@st.composite
def text_and_edit(draw: st.DrawFn) -> tuple[str, str]:
    original = draw(resume_text)
    kind = draw(st.sampled_from(["same", "insert", "delete", "replace", "newline", "other"]))
    at = draw(st.integers(0, len(original)))
    char = st.characters(exclude_characters="@" + REFUSED, exclude_categories=("Cs",))
    if kind == "same":
        return original, original
    if kind == "insert":
        edited = original[:at] + draw(char) + original[at:]
    elif kind == "delete":
        edited = original[:at] + original[at + 1 :]
    elif kind == "replace":
        edited = original[:at] + draw(char) + original[at + 1 :]
    elif kind == "newline":
        edited = original.replace("\n", "\r\n") + "\n"
    else:
        edited = draw(resume_text)
    if not edited.strip() or find_pii(edited) is not None:
        edited = original + " "
    return original, edited


def test_any_changed_text_under_the_same_id_is_refused(store_url: str) -> None:
    with Store.open(store_url) as store:

        @settings_for(store)
        @given(texts=text_and_edit(), case=cases())
        def freeze(texts: tuple[str, str], case: Case) -> None:
            original, edited = texts
            first = dataclasses.replace(case, input_text=original, attributes={})
            store.sync_golden_set(golden_of(first), now="2024-02-29T12:00:00+00:00")
            second = dataclasses.replace(first, input_text=edited)
            if edited == original:
                assert store.sync_golden_set(golden_of(second)).unchanged == (case.id,)
                return
            with pytest.raises(GoldenSetError) as caught:
                store.sync_golden_set(golden_of(second))
            message = str(caught.value)
            assert f"case {case.id} was frozen on 2024-02-29" in message
            assert first.input_sha256[:12] in message and second.input_sha256[:12] in message
            assert store.frozen_cases()[case.id][0] == first.input_sha256

        freeze()
