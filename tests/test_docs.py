"""The documentation stays followable: no pointer to a document outside the repository.

The code once cited a design document and issue numbers that a clone of the repository does not
contain. Every such reference is now the sentence it stood for, or a pointer to a heading of
``docs/design.md``. These tests fail on the next one, and on a pointer to a heading that does not
exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCANNED = ("pytest_screeneval", "tests", "benchmarks", "examples", "scripts", "docs", ".ci")
SCANNED_FILES = ("ARCHITECTURE.md", "README.md", "conftest.py", "pyproject.toml", "tox.ini")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".ini", ".cfg", ".j2", ".html", ""}

# Written in pieces so that this file does not match itself.
OUTSIDE_REFERENCES = {
    "a design-document section": re.compile("DESI" + r"GN\b"),
    "an issue number": re.compile("issues?" + r"\s+#?\d", re.IGNORECASE),
    "a bare section number": re.compile(r"\(" + "§" + r"\d+[a-z]?[),]"),
}
POINTER = re.compile(r'docs/design\.md, "([^"]+)"')


def _scanned_files() -> list[Path]:
    files = [REPO / name for name in SCANNED_FILES if (REPO / name).is_file()]
    for folder in SCANNED:
        root = REPO / folder
        if root.is_dir():
            files += [
                path
                for path in sorted(root.rglob("*"))
                if path.is_file()
                and path.suffix in SUFFIXES
                and "__pycache__" not in path.parts
                and ".egg-info" not in str(path)
            ]
    return files


def _design_headings() -> set[str]:
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    return {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("## ")}


def test_the_scan_sees_the_code() -> None:
    names = {path.relative_to(REPO).as_posix() for path in _scanned_files()}
    assert "pytest_screeneval/plugin/hooks.py" in names
    assert "ARCHITECTURE.md" in names
    assert "docs/design.md" in names


@pytest.mark.parametrize("kind", sorted(OUTSIDE_REFERENCES))
def test_no_reference_to_a_document_outside_the_repository(kind: str) -> None:
    pattern = OUTSIDE_REFERENCES[kind]
    found = []
    for path in _scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, (
        f"{kind} cited where a reader of the repository cannot follow it; write the sentence "
        "it stands for, or point to a heading of docs/design.md:\n" + "\n".join(found)
    )


def test_the_patterns_catch_what_they_are_for() -> None:
    cited = (
        "see DESI" + "GN §5",
        "(" + "issue" + " 14, 7)",
        "Issue" + " 15 item 8",
        "(" + "§7a)",
    )
    assert all(any(p.search(text) for p in OUTSIDE_REFERENCES.values()) for text in cited)
    plain = ("an issue that had", "6 RCNY §5-301", "system design", "Numerical Recipes §6.4")
    assert not any(p.search(text) for p in OUTSIDE_REFERENCES.values() for text in plain)


def test_every_pointer_into_the_design_names_one_of_its_headings() -> None:
    headings = _design_headings()
    pointers = [
        (path.relative_to(REPO).as_posix(), match.group(1))
        for path in _scanned_files()
        for match in POINTER.finditer(path.read_text(encoding="utf-8"))
    ]
    assert pointers, "no pointer found: the pattern no longer matches how the code points"
    broken = [f"{where}: {heading!r}" for where, heading in pointers if heading not in headings]
    assert not broken, f"pointers to headings docs/design.md does not have: {broken}"
