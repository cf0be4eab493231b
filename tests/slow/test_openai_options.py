"""Settings of the openai scorer built from ini texts and parsed flag values."""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from datetime import date

import pytest

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.scoring.openai.options import (
    OPTIONS,
    OpenAISettings,
    api_key_from_env,
    settings_from,
)


def getter(values: dict[str, object]):
    return lambda name: values.get(name)


def test_only_the_model_is_required_and_the_rest_takes_the_documented_defaults():
    settings = settings_from(getter({"screeneval_openai_model": " acme-2025-01-01 "}))
    assert settings == OpenAISettings(model="acme-2025-01-01")
    assert settings.timeout_s == 240.0 and settings.max_retries == 2
    assert settings.response_format == "auto" and settings.max_tokens is None
    assert settings.stop_after_failures == 5
    assert settings.temperature == 0.0 and settings.allow_floating_model is False


def test_every_spec_default_matches_the_settings_default():
    by_field = {f.name: f.default for f in dataclasses.fields(OpenAISettings)}
    assert by_field["model"] is dataclasses.MISSING  # required: no default to match
    for spec in OPTIONS:
        if spec.field == "model":
            continue
        parsed = spec.type(spec.default) if spec.default else by_field[spec.field]
        assert parsed == by_field[spec.field], spec.name


def test_ini_texts_are_parsed_and_flag_values_kept():
    values = {
        "screeneval_openai_model": "acme-2025-01-01",
        "screeneval_openai_base_url": "http://127.0.0.1:8000/v1/",
        "screeneval_openai_prompt_template": "prompts/screen.txt",
        "screeneval_openai_temperature": "0.2",
        "screeneval_openai_seed": "42",
        "screeneval_openai_timeout": 12.5,  # a flag value argparse already parsed
        "screeneval_openai_max_retries": "0",
        "screeneval_openai_allow_floating_model": "yes",
        "screeneval_openai_floating_aliases": ["acme-*", "beta-large"],
        "screeneval_openai_model_retires": "2026-09-30",
    }
    settings = settings_from(getter(values))
    assert settings == OpenAISettings(
        model="acme-2025-01-01",
        base_url="http://127.0.0.1:8000/v1",
        prompt_template="prompts/screen.txt",
        temperature=0.2,
        seed=42,
        timeout_s=12.5,
        max_retries=0,
        allow_floating_model=True,
        floating_aliases=("acme-*", "beta-large"),
        model_retires=date(2026, 9, 30),
    )


@pytest.mark.parametrize(
    ("name", "value", "complaint"),
    [
        ("screeneval_openai_timeout", "soon", "expected a number, got 'soon'"),
        ("screeneval_openai_timeout", "0", "expected a number above 0, got '0'"),
        ("screeneval_openai_max_retries", "-1", "expected a whole number of at least 0"),
        ("screeneval_openai_temperature", "3", "expected a temperature from 0 to 2"),
        ("screeneval_openai_model_retires", "30/09/2026", "expected a date like 2026-01-31"),
        ("screeneval_openai_base_url", "localhost:8000", "expected an http:// or https:// URL"),
        ("screeneval_openai_allow_floating_model", "perhaps", "expected true or false"),
    ],
)
def test_an_invalid_ini_value_is_one_sentence_naming_the_option(name, value, complaint):
    values = {"screeneval_openai_model": "acme-2025-01-01", name: value}
    with pytest.raises(ScreenevalError) as caught:
        settings_from(getter(values))
    message = str(caught.value)
    assert message.startswith(f"The option {name} is invalid:")
    assert complaint in message and message.endswith(".")


def test_a_missing_model_is_refused():
    with pytest.raises(ScreenevalError, match="needs a model id"):
        settings_from(getter({}))


def test_the_specs_register_as_argparse_flags_with_their_validators():
    parser = argparse.ArgumentParser(exit_on_error=False)
    for spec in OPTIONS:
        parser.add_argument(spec.flag, dest=spec.name, type=spec.type, default=None)
    parsed = parser.parse_args(
        ["--screeneval-openai-model", "acme-2025-01-01", "--screeneval-openai-timeout", "5"]
    )
    settings = settings_from(lambda name: getattr(parsed, name))
    assert (settings.model, settings.timeout_s, settings.max_retries) == ("acme-2025-01-01", 5.0, 2)
    with pytest.raises(argparse.ArgumentError):
        parser.parse_args(["--screeneval-openai-max-retries", "many"])


def test_the_api_key_comes_from_the_environment_only():
    assert api_key_from_env({"OPENAI_API_KEY": "sk-a"}) == "sk-a"
    both = {"OPENAI_API_KEY": "sk-a", "SCREENEVAL_OPENAI_API_KEY": "sk-b"}
    assert api_key_from_env(both) == "sk-b"
    assert api_key_from_env({"OPENAI_API_KEY": "  "}) is None
    assert not any("key" in spec.name for spec in OPTIONS)
    assert "key" not in {f.name for f in dataclasses.fields(OpenAISettings)}


def test_the_options_module_does_not_import_openai():
    code = (
        "import sys, pytest_screeneval.scoring.openai.options, "
        "pytest_screeneval.scoring.openai.scorer;"
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_response_format_is_one_of_the_dialects_or_auto():
    model = {"screeneval_openai_model": "acme-2025-01-01"}
    for choice in ("auto", "json_schema", "json_object", "prompt", " JSON_OBJECT "):
        settings = settings_from(getter(model | {"screeneval_openai_response_format": choice}))
        assert settings.response_format == choice.strip().lower()
    with pytest.raises(ScreenevalError) as caught:
        settings_from(getter(model | {"screeneval_openai_response_format": "xml"}))
    assert str(caught.value) == (
        "The option screeneval_openai_response_format is invalid: expected one of auto, "
        "json_schema, json_object, prompt, got 'xml'."
    )
    limited = settings_from(getter(model | {"screeneval_openai_max_tokens": "400"}))
    assert limited.max_tokens == 400
