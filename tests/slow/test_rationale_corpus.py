"""The labelled rationale corpus (tests/data/rationale_corpus/): large, varied, synthetic, split
by resume with the rule it records, and covering every kind of trap the checks must meet."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.rationale.corpus import (
    DEV,
    HELD_OUT,
    CorpusEntry,
    load_corpus,
    score_flags,
    split_of,
)
from pytest_screeneval.evidence.rationale.flags import (
    ALL_FLAGS,
    PROTECTED_ATTRIBUTE,
    UNGROUNDED,
    rationale_flags,
)
from pytest_screeneval.golden.pii import find_pii

CORPUS = Path(__file__).parents[1] / "data" / "rationale_corpus"
ENTRIES = load_corpus(CORPUS, ALL_FLAGS)
# The protected categories the corpus must hold coded or plain references to, in both splits:
# each `kind` is protected/<category>[-coded|-visa] (health is counted with disability)
CATEGORIES = (
    "age",
    "graduation",
    "family",
    "pregnancy",
    "disability",
    "origin",
    "race",
    "religion",
    "sex",
    "orientation",
    "postcode",
    "accent",
)
GROUNDING_KINDS = (
    "surface-form",
    "alias",
    "wrong-employer",
    "number-wrong",
    "number-in-words",
    "claim-in-words",
    "duration",
    "certification",
    "tool",
    "degree",
    "negation",
    "negation-idiom",
)


def _split(name: str) -> list[CorpusEntry]:
    return [entry for entry in ENTRIES if entry.split == name]


def test_the_corpus_is_large_and_split_by_resume_with_the_recorded_rule() -> None:
    assert len(ENTRIES) >= 600
    resumes = {entry.resume_id for entry in ENTRIES}
    assert len(resumes) >= 30
    assert len({entry.id for entry in ENTRIES}) == len(ENTRIES)
    for entry in ENTRIES:
        number = int(entry.resume_id[1:])
        assert entry.split == (HELD_OUT if number % 2 == 0 else DEV)
    # every resume's rationales are in one split, and both splits are substantial
    for name in (DEV, HELD_OUT):
        part = _split(name)
        assert len(part) >= 250, name
        assert len({entry.resume_id for entry in part}) >= 15, name


def test_the_resumes_are_synthetic_and_every_entry_is_labelled_with_known_flags() -> None:
    for entry in ENTRIES:
        assert find_pii(entry.input_text) is None, entry.resume_id
        assert entry.expected <= set(ALL_FLAGS), entry.id
        assert 1 <= entry.score <= 5, entry.id
        assert entry.kind, entry.id


@pytest.mark.parametrize("name", [DEV, HELD_OUT])
def test_each_split_covers_every_protected_category_and_every_grounding_kind(name: str) -> None:
    kinds = Counter(entry.kind for entry in _split(name))
    protected = Counter(
        kind.split("/")[1].split("-")[0].replace("health", "disability")
        for kind in kinds.elements()
        if kind.startswith("protected/")
    )
    for category in CATEGORIES:
        assert protected[category] >= 1, f"{name}: no protected/{category} example"
    grounding = Counter(
        kind.split("/")[1] for kind in kinds.elements() if kind.startswith("grounding/")
    )
    for kind in GROUNDING_KINDS:
        assert grounding[kind] >= 3, f"{name}: {grounding[kind]} grounding/{kind} examples"
    lookalikes = sum(count for kind, count in kinds.items() if kind.startswith("lookalike/"))
    structured = sum(count for kind, count in kinds.items() if kind.startswith("structured/"))
    assert lookalikes >= 25 and structured >= 25, (lookalikes, structured)
    # both flags have many positives and many negatives to measure on
    for flag in (PROTECTED_ATTRIBUTE, UNGROUNDED):
        positives = sum(1 for entry in _split(name) if flag in entry.expected)
        assert 50 <= positives <= len(_split(name)) - 100, (flag, positives)


def test_the_labels_say_what_the_kind_says() -> None:
    for entry in ENTRIES:
        if entry.kind.startswith("protected/"):
            assert PROTECTED_ATTRIBUTE in entry.expected, entry.id
        if entry.kind.startswith("lookalike/"):
            assert PROTECTED_ATTRIBUTE not in entry.expected, entry.id
        if entry.kind in ("grounding/negation", "grounding/surface-form", "grounding/alias"):
            assert UNGROUNDED not in entry.expected, entry.id


def test_scoring_counts_true_and_false_positives_with_intervals() -> None:
    part = ENTRIES[:4]
    flagged = {entry.id: entry.expected for entry in part}
    for score in score_flags(part, ALL_FLAGS, flagged):
        assert score.fp == score.fn == 0
        assert score.precision == score.recall == 1.0
    everything = {entry.id: frozenset(ALL_FLAGS) for entry in part}
    (protected,) = [
        s for s in score_flags(part, ALL_FLAGS, everything) if s.flag == PROTECTED_ATTRIBUTE
    ]
    assert protected.tp + protected.fp == len(part)
    low, high = protected.precision_interval
    assert 0.0 <= low <= protected.precision <= high <= 1.0


def test_a_resume_id_outside_the_rule_and_a_folder_without_the_rule_are_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(ScreenevalError, match="r<number>"):
        split_of("backend")
    (tmp_path / "corpus.yaml").write_text("split: {held_out: odd}\n", encoding="utf-8")
    with pytest.raises(ScreenevalError, match="split rule"):
        load_corpus(tmp_path, ALL_FLAGS)


# Floors under the figures measured on the corpus (the held-out part measured many times, see
# the commit history and docs/figures.md): a change that loses precision or recall on either
# part fails here. After round 10 (tuned on the dev half of the blind set r102-r111) the
# held-out part r02-r110 read protected 0.938 / 0.921, ungrounded 0.897 / 0.903. Then two more
# blind sets, r112-r121 and r122-r131 (980 rationales in twenty new fields, written without the
# rules), were measured once with the rules untouched: their held-out half read protected
# 0.807 / 0.670 (100 positives) and ungrounded 0.754 / 0.860 (150), their dev half 0.632 / 0.663
# and 0.804 / 0.804; the whole held-out part (r02-r130) protected 0.907 / 0.854, ungrounded
# 0.864 / 0.892; the whole dev part (r01-r131) 0.889 / 0.910 and 0.948 / 0.920. The floors
# below sit just under those figures. Targets on held-out: protected >= 0.95 and >= 0.85,
# ungrounded >= 0.90 and >= 0.80.
FLOORS = {
    (HELD_OUT, PROTECTED_ATTRIBUTE): (0.90, 0.85),
    (HELD_OUT, UNGROUNDED): (0.86, 0.89),
    (DEV, PROTECTED_ATTRIBUTE): (0.88, 0.91),
    (DEV, UNGROUNDED): (0.94, 0.91),
}


@pytest.mark.parametrize(("name", "flag"), sorted(FLOORS))
def test_the_checks_hold_their_floors_on_each_part(name: str, flag: str) -> None:
    part = _split(name)
    got = {
        entry.id: frozenset(
            rationale_flags(
                entry.input_text, entry.criterion, entry.score, entry.rationale, entry.evidence
            )
        )
        for entry in part
    }
    (score,) = [s for s in score_flags(part, ALL_FLAGS, got) if s.flag == flag]
    min_precision, min_recall = FLOORS[(name, flag)]
    # The held-out part's misses are not named: read while the rules are being changed, they
    # would be tuned on. Dev's are, to tune on.
    wrong = (
        f"{score.fp} false positives, {score.fn} false negatives (read them only after tuning)"
        if name == HELD_OUT
        else f"wrong: {sorted((*score.false_positives, *score.false_negatives))}"
    )
    assert score.precision >= min_precision and score.recall >= min_recall, (
        f"{name} {flag}: precision {score.precision:.3f} (min {min_precision}), recall "
        f"{score.recall:.3f} (min {min_recall}); {wrong}"
    )
