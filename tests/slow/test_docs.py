"""The documentation stays followable: no pointer to a document outside the repository.

The code once cited a design document and issue numbers that a clone of the repository does not
contain. Every such reference is now the sentence it stood for, or a pointer to a heading of
``docs/design.md``. These tests fail on the next one, and on a pointer to a heading that does not
exist.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("pytest_screeneval", "tests", "benchmarks", "examples", "scripts", "docs", ".ci")
SCANNED_FILES = ("ARCHITECTURE.md", "README.md", "conftest.py", "pyproject.toml", "tox.ini")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".ini", ".cfg", ".j2", ".html", ""}

# Written in pieces so that this file does not match itself.
OUTSIDE_REFERENCES = {
    # the outside design document by its name, its file or a section sign (a resume in the
    # corpus may well say "mechanical design engineer" in capitals)
    "a design-document section": re.compile(
        r"\b" + "DESI" + r"GN(?:\.md\b|\s*§|\s*\(|[.,;:]?$|\s+(?:says|sections?|doc)\b)"
    ),
    "an issue number": re.compile("issues?" + r"\s+#?\d", re.IGNORECASE),
    "a bare section number": re.compile(r"\(" + "§" + r"\d+[a-z]?[),]"),
}
# a pointer to a heading, written as a path under docs/ or as a Markdown link, then the heading
POINTER = re.compile(r'(?:\[[^\]]*\]\(([\w./-]+\.md)\)|(docs/[\w-]+\.md)), "([^"]+)"')
LINK = re.compile(r"\]\(([^)\s]+)\)")


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


def _headings(doc: Path) -> set[str]:
    text = doc.read_text(encoding="utf-8")
    return {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")}


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


def _pointers(path: Path) -> Iterator[tuple[Path, str]]:
    """(document, heading) of each pointer in ``path``, the document resolved."""
    for match in POINTER.finditer(path.read_text(encoding="utf-8")):
        linked, plain, heading = match.groups()
        yield (
            (path.parent / linked if linked else REPO / plain).resolve(),
            " ".join(heading.split()),
        )


def test_every_pointer_names_a_heading_of_its_document() -> None:
    pointers = [(path, *pointer) for path in _scanned_files() for pointer in _pointers(path)]
    assert any(doc.name == "design.md" for _, doc, _ in pointers), "the pattern finds no pointer"
    broken = [
        f"{path.relative_to(REPO)}: {doc.name}, {heading!r}"
        for path, doc, heading in pointers
        if not doc.is_file() or heading not in _headings(doc)
    ]
    assert not broken, f"pointers to a heading their document does not have: {broken}"


def test_every_relative_link_of_the_documentation_leads_to_a_file() -> None:
    pages = [REPO / "README.md", REPO / "ARCHITECTURE.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = [
        f"{page.relative_to(REPO)}: {target}"
        for page in pages
        for target in LINK.findall(page.read_text(encoding="utf-8"))
        if "://" not in target and not (page.parent / target.split("#")[0]).exists()
    ]
    assert not broken, f"links to files that do not exist: {broken}"


# a file of the repository named in prose: "`tests/plugin/test_run_ends.py` holds each of these"
NAMED_FILE = re.compile(
    r"(?<![\w/.])((?:tests|benchmarks|pytest_screeneval|examples|scripts)/[\w./-]*\.(?:py|yaml|md))\b"
)


def test_every_file_the_documentation_names_exists() -> None:
    """A page that says which test holds a guarantee must name a test that is there: moved
    tests left three such names pointing at nothing."""
    pages = [REPO / "README.md", REPO / "ARCHITECTURE.md", *sorted((REPO / "docs").glob("*.md"))]
    named = [
        (page, name)
        for page in pages
        for name in NAMED_FILE.findall(page.read_text(encoding="utf-8"))
    ]
    assert len(named) > 20, "the pattern finds (almost) no file names: it is broken"
    missing = [
        f"{page.relative_to(REPO)}: {name}" for page, name in named if not (REPO / name).is_file()
    ]
    assert not missing, f"files named in the documentation that do not exist: {missing}"


# --------------------------------------------------------------------------------------------
# docs/options.md is generated from the option table
# --------------------------------------------------------------------------------------------


def _options_script() -> ModuleType:
    path = REPO / "scripts" / "generate_options_doc.py"
    spec = importlib.util.spec_from_file_location("generate_options_doc", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_options_page_is_what_the_table_generates() -> None:
    script = _options_script()
    written = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    assert written == script.render(), (
        "docs/options.md is stale: run python scripts/generate_options_doc.py"
    )


def test_the_options_page_names_every_setting_and_flag_registered(
    pytester: pytest.Pytester,
) -> None:
    # what pytest --help lists in the plugin's group and its ini section, read as a user sees it
    help_text = pytester.runpytest_subprocess("--help").stdout.str()
    registered = set(re.findall(r"(--screeneval[\w-]*|screeneval_\w+)", help_text))
    assert "--screeneval-accept" in registered and "screeneval_max_gap" in registered
    page = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`(--screeneval[\w-]*|screeneval_\w+)`", page))
    assert registered <= listed, f"registered but not on the page: {sorted(registered - listed)}"


def test_the_check_mode_fails_on_a_stale_page(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _options_script()
    stale = tmp_path / "options.md"
    stale.write_text(script.render().replace("screeneval_max_gap", "screeneval_old_name"))
    monkeypatch.setattr(script, "DOC", stale)
    assert script.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().out
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
