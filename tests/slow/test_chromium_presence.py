"""A machine without Chromium skips the browser tests with the reason, unless
``CI`` is set, where the same absence fails them."""

from __future__ import annotations

import pytest
from support.cdp import chromium_or_skip

NOWHERE = ("/nonexistent/screeneval-chromium",)


def test_missing_chromium_is_a_skip_with_the_reason_outside_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"Chromium is missing.*CI is not set"):
        chromium_or_skip(NOWHERE)


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_missing_chromium_fails_when_ci_is_set(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        chromium_or_skip(NOWHERE)


def test_a_present_chromium_is_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert chromium_or_skip(("sh",)).endswith("/sh")
