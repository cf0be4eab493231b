"""The boundary package: the one text gate, the one redactor, the one terminal-safe function, the
finite-number check; and that it stays pure (imports nothing of the package), so every layer can
use it. Properties are checked with Hypothesis on any text."""

from __future__ import annotations

import ast
import json
import logging
import math
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pytest_screeneval
from pytest_screeneval.boundary.documents import safe_document
from pytest_screeneval.boundary.logs import redact_log_records
from pytest_screeneval.boundary.numbers import is_finite_number
from pytest_screeneval.boundary.secrets import (
    REDACTED,
    Redactor,
    forget,
    known_secrets,
    mask_urls,
    redact,
    remember,
    url_secrets,
)
from pytest_screeneval.boundary.terminal import terminal_safe
from pytest_screeneval.boundary.text import (
    MAX_ANSWER_CHARS,
    bounded,
    clean_text,
    nfc,
    unsafe_character,
    was_cut,
)
from pytest_screeneval.errors import ScreenevalError

BOUNDARY = Path(pytest_screeneval.__file__).parent / "boundary"
# the characters no store backend or terminal takes as written
UNSAFE = [chr(c) for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, 0x9B)]
SURROGATES = ["\ud800", "\udfff", "\ud83d"]


@pytest.fixture
def secrets() -> Iterator[None]:
    held = remember("k3y", "sk-proj-abcdefghijklmnop", "pg-s3cret")
    yield
    forget(held)


def test_the_boundary_imports_nothing_of_the_package_but_itself() -> None:
    for path in BOUNDARY.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("pytest_screeneval"):
                    assert name.startswith("pytest_screeneval.boundary"), (path.name, name)


@pytest.mark.parametrize("char", UNSAFE + SURROGATES)
def test_every_unsafe_character_is_replaced_and_named(char: str) -> None:
    text = f"before{char}after"
    assert clean_text(text) == "before\ufffdafter"
    problem = unsafe_character(text)
    assert problem is not None and f"U+{ord(char):04X}" in problem and "character 7" in problem


def test_line_breaks_tabs_and_ordinary_unicode_stay() -> None:
    text = "Zoë – 東京 ☕\u2028x\x85y\r\n\tz 👩‍💻 \u202e"
    assert clean_text(text) is text
    assert unsafe_character(text) is None


@settings(max_examples=200, derandomize=True)
@given(st.text())
def test_clean_text_gives_text_every_backend_and_file_can_encode(text: str) -> None:
    cleaned = clean_text(text)
    cleaned.encode("utf-8")  # a lone surrogate would raise here
    assert "\x00" not in cleaned
    assert unsafe_character(cleaned) is None
    assert clean_text(cleaned) == cleaned
    assert len(cleaned) == len(text)


def test_a_text_over_the_limit_is_cut_and_says_so() -> None:
    huge = "x" * (10 * 1024 * 1024)
    cut = bounded(huge)
    assert len(cut) < MAX_ANSWER_CHARS + 60
    assert was_cut(cut) and cut.endswith(f"[cut at {MAX_ANSWER_CHARS:,} of 10,485,760 characters]")
    assert bounded("short") == "short" and not was_cut("short")


def test_nfc_is_the_one_spelling_of_a_name() -> None:
    assert nfc("Jose\u0301") == "José" == nfc("José")


def test_secrets_of_any_length_are_redacted(secrets: None) -> None:
    text = "Incorrect API key provided: k3y. Also sk-proj-abcdefghijklmnop and pg-s3cret!"
    assert (
        redact(text) == f"Incorrect API key provided: {REDACTED}. Also {REDACTED} and {REDACTED}!"
    )


def test_a_short_secret_inside_a_longer_word_is_left(secrets: None) -> None:
    assert redact("k3yboard k3y") == f"k3yboard {REDACTED}"


def test_a_secret_is_redacted_as_url_json_and_html_spell_it() -> None:
    held = remember('p@ss"<word>')
    try:
        for spelled in ("p%40ss%22%3Cword%3E", 'p@ss\\"<word>', "p@ss&quot;&lt;word&gt;"):
            assert "word" not in redact(f"x {spelled} y"), spelled
    finally:
        forget(held)


def test_forgotten_secrets_are_no_longer_known() -> None:
    held = remember("only-this-session")
    assert "only-this-session" in known_secrets()
    forget(held)
    assert "only-this-session" not in known_secrets()


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql+psycopg://app:hunter2@db:5432/x", "postgresql+psycopg://app:***@db:5432/x"),
        ("https://user:p%40ss@proxy.test/v1", "https://user:***@proxy.test/v1"),
        (
            "postgresql://db/x?sslmode=require&password=hunter2",
            "postgresql://db/x?sslmode=require&password=***",
        ),
        ("host=db password=hunter2 user=app", "host=db password=*** user=app"),
        ("Authorization: Bearer abcd1234efgh", f"Authorization: Bearer {REDACTED}"),
        ("https://api.test/v1?api_key=abcdef", f"https://api.test/v1?api_key={REDACTED}"),
        ("sk-ABCDEFGHIJKLMNOPQRSTUV was echoed", f"{REDACTED} was echoed"),
    ],
)
def test_credentials_are_masked_without_being_known(text: str, shown: str) -> None:
    assert mask_urls(text) == shown
    assert "hunter2" not in redact(text)


def test_url_secrets_are_the_userinfo_and_query_passwords() -> None:
    assert set(url_secrets("postgresql://u:p%40ss@h/db?password=q%21")) == {
        "p%40ss",
        "p@ss",
        "q%21",
        "q!",
        "dTpwQHNz",  # base64 of "u:p@ss": how HTTP basic auth sends it
    }
    assert url_secrets("sqlite:///x.db") == ()


def test_the_redactor_class_replaces_its_own_secrets() -> None:
    assert Redactor(("abc",))("key abc. abcd") == f"key {REDACTED}. abcd"


def test_terminal_safe_redacts_and_escapes(secrets: None) -> None:
    shown = terminal_safe("scorer \x1b[2K\rFAKE PASSED k3y \ud83d\nnext\tline")
    assert shown == f"scorer \\x1b[2K\\rFAKE PASSED {REDACTED} \\ud83d\nnext\tline"
    assert terminal_safe(shown) == shown


@settings(max_examples=200, derandomize=True)
@given(st.text())
def test_terminal_safe_never_lets_a_control_character_through(text: str) -> None:
    shown = terminal_safe(text)
    shown.encode("utf-8")
    for char in shown:
        category = unicodedata.category(char)
        assert char in "\n\t" or category not in ("Cc", "Cs"), repr(char)
        assert not 0x202A <= ord(char) <= 0x202E and not 0x2066 <= ord(char) <= 0x2069


def test_exception_text_passes_the_boundary(secrets: None) -> None:
    error = ScreenevalError("The endpoint said: Incorrect API key provided: k3y\x1b[31m.")
    assert str(error) == f"The endpoint said: Incorrect API key provided: {REDACTED}\\x1b[31m."


def test_a_document_is_safe_in_every_string_keys_too(secrets: None) -> None:
    document = {"db": "postgresql://u:pg-s3cret@h/x", "k3y": ["\x00", ("\ud800",)], "n": 1.5}
    safe = safe_document(document)
    assert safe == {"db": "postgresql://u:***@h/x", REDACTED: ["\ufffd", ["\ufffd"]], "n": 1.5}
    json.dumps(safe, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize(
    ("value", "finite"),
    [
        *[(1, True), (0.5, True), (math.nan, False), (math.inf, False), (-math.inf, False)],
        *[(True, False), ("1", False), (None, False)],
    ],
)
def test_only_finite_real_numbers_are_numbers(value: object, finite: bool) -> None:
    assert is_finite_number(value) is finite


def test_log_records_are_redacted_while_a_session_holds_them(
    secrets: None, caplog: pytest.LogCaptureFixture
) -> None:
    logger = logging.getLogger("openai._base_client")
    stop = redact_log_records()
    try:
        with caplog.at_level(logging.DEBUG):
            logger.warning("retrying with key %s on %s", "k3y", "postgresql://u:pg-s3cret@h/x")
            try:
                raise RuntimeError("Incorrect API key provided: k3y")
            except RuntimeError:
                logger.exception("the call failed")
    finally:
        stop()
    assert "retrying with key [redacted] on postgresql://u:***@h/x" in caplog.text
    assert "k3y" not in caplog.text.replace("k3yboard", "")
    assert "Incorrect API key provided: [redacted]" in caplog.text
    with caplog.at_level(logging.DEBUG):
        logger.warning("after: k3y")  # given back: the factory is pytest's own again
    assert "after: k3y" in caplog.text
