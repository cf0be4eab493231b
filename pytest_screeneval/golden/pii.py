"""The PII screen: e-mail addresses and phone numbers left in golden set text.

A golden set holds de-identified people; a real e-mail or phone number in a case or in a
``variants.yaml`` value means the de-identification missed something, and the set would freeze it.

Phone numbers come in many national formats. With the optional ``phonenumbers`` package
(``pip install pytest-screeneval[pii]``, Google's libphonenumber metadata) every valid number of
the regions below is found; without it, a regex covers the common shapes: North American
``(555) 010-0199``, international ``+44 20 7946 0958``, and national numbers with a trunk 0 as in
the UK, Ireland, Germany, France or Australia (``07700 900123``, ``(020) 7946 0958``,
``01 23 45 67 89``). Both run when the package is there; the regex first, as it is cheaper.

Pure module: no pytest, no database.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["PHONE_REGIONS", "find_pii", "has_phone_library"]

# Regions whose national formats (no +country prefix) the library checks: where the users and
# the candidates of an English-language screener most often are.
PHONE_REGIONS = ("GB", "US", "IE", "AU", "NZ", "IN", "DE", "FR", "NL", "ES", "IT", "ZA", "SG")

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_NORTH_AMERICAN = (
    r"(?<![\w-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{3}\)|\d{3})[\s.-]?\d{3}[\s.-]?\d{4}(?![\w-])"
)
_INTERNATIONAL = r"(?<![\w-])\+\d{1,3}(?:[\s.-]?\(?\d{1,4}\)?){2,5}(?![\w-])"
# a trunk 0, then groups: 07700 900123, (020) 7946 0958, 0161 496 0000, 01 23 45 67 89
_NATIONAL = r"(?<![\w.,-])(?:\(0\d{1,4}\)|0\d{1,4})(?:[\s.-]?\d{2,6}){1,4}(?![\w-])"
_PHONE = re.compile(f"{_NORTH_AMERICAN}|{_INTERNATIONAL}|{_NATIONAL}")
# digits a phone number has, counted without the country code's '+'
_MIN_DIGITS, _MAX_DIGITS = 9, 15
# a national number with a trunk 0 needs this many digits, so dates (01.02.2020) stay apart
_MIN_NATIONAL_DIGITS = 10
# What the library could report, found cheaply first (its 13 region passes cost ~15 ms a case).
# libphonenumber's matcher joins digit groups with at most 4 punctuation characters (its
# _PUNCTUATION), and a number it reports must hold _MIN_DIGITS digits (see _library_finder): a
# text with no such run of digits cannot yield one. The separators here are a superset of its
# punctuation (anything but a letter, a digit or a line break, and its 'x' and 'ー'). An
# extension ("ext. 12", "x 12", "#") can lift a shorter number over the count: any
# extension-like marker before a digit sends the text to the library too.
_DIGIT_RUN = re.compile(rf"\d(?:(?:[^\w\r\n]|[xXー]){{0,4}}\d){{{_MIN_DIGITS - 1}}}")
_EXTENSION_MARK = re.compile(r"(?i)(?:e?xt|int|ｉｎｔ|доб|anexo|[xｘ#＃~～])\W{0,4}\d|\d[#＃]")


def _regex_phone(text: str) -> str | None:
    for found in _PHONE.finditer(text):
        candidate = found.group(0)
        digits = sum(c.isdigit() for c in candidate)
        national = candidate.lstrip("(").startswith("0")
        if national and digits < _MIN_NATIONAL_DIGITS:
            continue
        if _MIN_DIGITS <= digits <= _MAX_DIGITS:
            return candidate
    return None


def _could_hold_a_phone(text: str) -> bool:
    """Whether the library could report a number in this text (see _DIGIT_RUN): a cheap test."""
    return bool(_DIGIT_RUN.search(text) or _EXTENSION_MARK.search(text))


def _library_matches(text: str) -> str | None:
    """The first number ``phonenumbers`` reports in the text, in any of PHONE_REGIONS."""
    import phonenumbers

    for region in PHONE_REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.VALID
        ):
            raw = str(match.raw_string)
            # short numbers valid somewhere (Italy's 06.2021) and date ranges are not PII
            if "/" not in raw and sum(c.isdigit() for c in raw) >= _MIN_DIGITS:
                return raw
    return None


def _library_finder() -> Callable[[str], str | None] | None:
    try:
        import phonenumbers  # noqa: F401
    except ImportError:
        return None

    def find(text: str) -> str | None:
        return _library_matches(text) if _could_hold_a_phone(text) else None

    return find


# loaded on first use: importing phonenumbers takes a while, and `--help` must not wait for it
_UNLOADED: Callable[[str], str | None] = lambda text: None  # noqa: E731
_LIBRARY: Callable[[str], str | None] | None = _UNLOADED


def _library() -> Callable[[str], str | None] | None:
    global _LIBRARY
    if _LIBRARY is _UNLOADED:
        _LIBRARY = _library_finder()
    return _LIBRARY


def has_phone_library() -> bool:
    """Whether ``phonenumbers`` is installed (the screen then knows every region's formats)."""
    return _library() is not None


def find_pii(text: str) -> tuple[str, str] | None:
    """The first e-mail address or phone number in a text, as (kind, match), or None."""
    email = _EMAIL.search(text)
    if email:
        return "an e-mail address", email.group(0)
    library = _library()
    phone = _regex_phone(text) or (library(text) if library is not None else None)
    if phone:
        return "a phone number", phone
    return None
