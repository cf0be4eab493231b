"""The protected-term lexicon as data: the built-in file, a project's additions, its replacement,
and the one-sentence refusal of a bad file (unit level; tests/test_plugin_protected_terms.py runs
the ini option end to end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.rationale.flags import PROTECTED_ATTRIBUTE, rationale_flags
from pytest_screeneval.evidence.rationale.protected import (
    BUILTIN_FILE,
    ProtectedLexicon,
    builtin_protected_terms,
    find_protected,
    load_protected_terms,
)

# A caste term: in the protected list of some jurisdictions, not in the built-in one.
CASTE_FILE = """\
categories:
  caste: caste or descent
fragments:
  castes: 'dalit|brahmin|kshatriya'
terms:
  - category: caste
    gate: '{castes} caste'
    pattern: '\\b(?:{castes})\\b|\\bcaste\\b'
    unless_after: '\\s+system\\s+design'
  - category: family
    pattern: ['\\bchildless', '\\b']
"""
RATIONALE_AGE = "Leadership is strong, though her age may make the night shifts harder."
RATIONALE_CASTE = "Leadership is strong; as a Dalit candidate she led the regional team well."
RESUME = "Team lead, Brindle Analytics (2019-2024): led a team of 6 analysts.\n"


def _write(tmp_path: Path, text: str, name: str = "terms.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _categories(text: str, lexicon: ProtectedLexicon | None = None) -> set[str]:
    return {match.category for match in find_protected(text, lexicon=lexicon)}


def test_the_builtin_file_is_the_default_and_is_compiled_once() -> None:
    assert BUILTIN_FILE.is_file()
    assert builtin_protected_terms() is builtin_protected_terms()
    text = RATIONALE_AGE.lower()
    assert find_protected(text) == find_protected(text, lexicon=builtin_protected_terms())
    assert _categories(text) == {"age"}


def test_a_project_file_adds_terms_categories_and_fragments(tmp_path: Path) -> None:
    lexicon = load_protected_terms(_write(tmp_path, CASTE_FILE))
    assert len(lexicon.terms) == len(builtin_protected_terms().terms) + 2
    # the added terms, with the category's own words, and the built-in ones still there
    assert _categories(RATIONALE_CASTE, lexicon=lexicon) == {"caste or descent"}
    assert _categories(RATIONALE_AGE, lexicon=lexicon) == {"age"}
    assert _categories("She is childless.", lexicon=lexicon) == {"marital or family status"}
    assert _categories("Led the caste system design review.", lexicon=lexicon) == set()
    # the built-in lexicon alone does not know the term
    assert _categories(RATIONALE_CASTE) == set()


def test_the_added_terms_reach_the_rationale_flags(tmp_path: Path) -> None:
    lexicon = load_protected_terms(_write(tmp_path, CASTE_FILE))
    flags = rationale_flags(RESUME, "leadership", 4, RATIONALE_CASTE, protected_terms=lexicon)
    assert PROTECTED_ATTRIBUTE in flags
    assert PROTECTED_ATTRIBUTE not in rationale_flags(RESUME, "leadership", 4, RATIONALE_CASTE)


def test_gates_never_change_the_answer_of_an_extended_lexicon(tmp_path: Path) -> None:
    lexicon = load_protected_terms(_write(tmp_path, CASTE_FILE))
    for text in (RATIONALE_CASTE, RATIONALE_AGE, "She is childless.", "A brahmin; a dalit."):
        assert find_protected(text, lexicon=lexicon) == find_protected(
            text, lexicon=lexicon, gated=False
        )


def test_replace_true_drops_the_builtin_terms_but_keeps_their_vocabulary(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "replace: true\n"
        "terms:\n"
        "  - category: origin\n"  # a built-in category
        "    gate: '{demonyms}'\n"  # and a built-in fragment, in a gate and a pattern
        "    pattern: '\\b(?:{demonyms})\\s+passport\\b'\n",
    )
    lexicon = load_protected_terms(path)
    assert len(lexicon.terms) == 1
    assert _categories(RATIONALE_AGE, lexicon=lexicon) == set()
    assert _categories("She holds a Kenyan passport.", lexicon=lexicon) == {
        "national origin or nationality"
    }


BAD_FILES = [
    ("terms:\n  - category: age\n    pattern: x: y\n", "line 3", "invalid YAML (mapping values"),
    ("- just\n- a list\n", None, "must be a mapping"),
    ("terms: {}\n", None, "'terms' must be a list"),
    ("replace: sometimes\nterms: []\n", None, "'replace' must be true or false"),
    ("term: []\n", None, "unknown key 'term'"),
    ("terms:\n  - category: caste\n    pattern: 'x'\n", "line 2", "category 'caste'"),
    ("terms:\n  - category: age\n    gate: age\n", "line 2", "needs a 'pattern'"),
    ("terms:\n  - category: age\n    pattern: '(unclosed'\n", "line 2", "not a valid regular"),
    ("terms:\n  - category: age\n    pattern: '{nope}'\n", "line 2", "unknown fragment {nope}"),
    ("terms:\n\n  - category: age\n    gate: A\n    pattern: x\n", "line 3", "gate word 'A'"),
    ("terms:\n  - category: age\n    pattern: x\n    unless: y\n", "line 2", "unknown term key"),
    ("categories:\n  age: years\nterms: []\n", None, "the category 'age' is already built in"),
]


@pytest.mark.parametrize(("text", "line", "problem"), BAD_FILES)
def test_a_bad_file_is_one_sentence_naming_it(
    tmp_path: Path, text: str, line: str | None, problem: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ScreenevalError) as caught:
        load_protected_terms(path, shown_as="ini/terms.yaml")
    message = str(caught.value)
    assert "ini/terms.yaml" in message and problem in message, message
    assert (line is None) == ("line " not in message), message
    if line is not None:
        assert f"ini/terms.yaml, {line}:" in message, message
    assert "\n" not in message and message.endswith("."), message
    assert message.count(". ") == 0, message  # one sentence


def test_a_missing_file_is_one_sentence(tmp_path: Path) -> None:
    missing = r"^Cannot read the protected terms file \S*nope\.yaml \(No such file"
    with pytest.raises(ScreenevalError, match=missing):
        load_protected_terms(tmp_path / "nope.yaml")
