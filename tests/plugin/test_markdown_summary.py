"""CI's view of a run: the Markdown summary, in a file, in the GitHub step summary, and from
``screeneval show RUN --format markdown``; one renderer, so the three are the same text.

The renderer is checked on its own (verdict first, lists cut with a count, hostile text kept in
its cell, a bounded size whatever the run's), the pages are parsed with markdown-it-py (the
CommonMark parser with GitHub's table extension) to show their tables are tables, and the plugin
is run end to end with pytester, under xdist too.
"""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from support.plugin_project import expected_scores, set_scores, write_project

from pytest_screeneval.cli.main import main as screeneval
from pytest_screeneval.report.markdown import (
    MAX_ROWS,
    FairnessFailure,
    MarkdownRun,
    MovedItem,
    ReviewableCrossing,
    render_markdown,
)

pytest_plugins = ["pytester"]

ACCEPT = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")
STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub refuses a step summary over 1 MiB


def gate(name: str, status: str, value: float | None = 1.0, detail: str = "") -> dict[str, object]:
    return {
        "name": name,
        "value": value,
        "limit": "<= 0",
        "n": 5,
        "status": status,
        "detail": detail,
    }


def _cell_text(inline: Token) -> str:
    """A cell as a reader sees it: its text unescaped, code spans in backticks."""
    parts = []
    for child in inline.children or ():
        if child.type == "text":
            parts.append(child.content)
        elif child.type == "code_inline":
            parts.append(f"`{child.content}`")
    return "".join(parts)


def tables(text: str) -> list[list[list[str]]]:
    """Every table of the page as rows of cell texts (header first), as a renderer sees them."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    found: list[list[list[str]]] = []
    row: list[str] = []
    for index, token in enumerate(tokens):
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type in ("th_open", "td_open"):
            row.append(_cell_text(tokens[index + 1]))
        elif token.type == "tr_close":
            found[-1].append(row)
    return found


def headings(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


# --------------------------------------------------------------------------------------------
# The renderer alone
# --------------------------------------------------------------------------------------------


def a_failed_run(**changes: object) -> MarkdownRun:
    fields: dict[str, object] = dict(
        run_id=7,
        status="complete",
        scorer="table",
        model_id="table-v1",
        gates=[gate("moved-share", "PASS"), gate("counterfactual-gap[name]", "FAIL", 4.0)],
        baseline_run_id=3,
        baseline_accepted_by="Ada Quill",
        items={"passed": 10, "failed": 2},
        movements=[MovedItem("al-001", "skills", 4, 1), MovedItem("al-002", "skills", 3, 4)],
        crossings=[ReviewableCrossing("al-001", "58.3 advance", "33.3 hold")],
        fairness_failures=[FairnessFailure("al-003", "counterfactual[name]", 8.3, 3.0)],
        chain_head="12:" + "ab" * 32,
    )
    fields.update(changes)
    return MarkdownRun(**fields)  # type: ignore[arg-type]


def test_the_verdict_comes_first_then_what_needs_a_person() -> None:
    text = render_markdown(a_failed_run())
    assert text.splitlines()[0] == "## screeneval: FAIL · run 7"
    assert "❌ **FAIL**: 1 of 2 gates failed, 2 of 12 items failed." in text
    assert headings(text) == [
        "screeneval: FAIL · run 7",
        "Gates that failed or were inconclusive",
        "Worst movements against run 3 (2 in all, 2 not reviewed)",
        "Crossings to review (1 of 1 not reviewed)",
        "Failed fairness items (1)",
    ]
    gates, moved, crossings, fairness = tables(text)
    assert [row[0] for row in gates] == ["gate", "counterfactual-gap[name]"]  # the PASS left out
    assert moved[1][:5] == ["`al-001`", "skills", "4", "1", "-3"]  # the worst first
    assert crossings[1][3] == "`screeneval review 7 al-001 --by NAME --note TEXT`"
    assert fairness[1] == ["`al-003`", "counterfactual[name]", "8.3", "3"]
    assert text.rstrip().endswith("exposes a store that was truncated or rewritten.")
    assert f"`screeneval verify --expect-head 12:{'ab' * 32}`" in text


def test_a_passing_run_says_so_and_lists_nothing() -> None:
    run = a_failed_run(
        gates=[gate("moved-share", "PASS")],
        items={"passed": 12},
        movements=(),
        crossings=(),
        fairness_failures=[],
    )
    text = render_markdown(run)
    assert "✅ **PASS**: no gate failed, 0 of 12 items failed." in text
    assert headings(text) == ["screeneval: PASS · run 7"]
    assert tables(text) == []


def test_inconclusive_warns_unless_the_run_was_told_to_fail_on_it() -> None:
    gates = [gate("counterfactual-gap[gap]", "INCONCLUSIVE", 2.0, "needs 40 more cases")]
    quiet = a_failed_run(gates=gates, items={"passed": 12}, fairness_failures=[])
    assert "⚠️ **INCONCLUSIVE**: no gate failed, 1 INCONCLUSIVE" in render_markdown(quiet)
    strict = a_failed_run(gates=gates, items={"passed": 12}, inconclusive_fails=True)
    assert render_markdown(strict).startswith("## screeneval: FAIL")
    assert tables(render_markdown(quiet))[0][1][5] == "needs 40 more cases"


def test_a_partial_run_says_what_it_lacks() -> None:
    run = a_failed_run(
        status="partial", gates=[], items={"passed": 3}, missing="4 of 7 items did not run"
    )
    text = render_markdown(run)
    assert text.startswith("## screeneval: PARTIAL · run 7")
    assert "The run is not complete: 4 of 7 items did not run." in text


def test_long_lists_are_cut_with_a_count() -> None:
    moved = [MovedItem(f"c-{i:04}", "skills", 3, 1 + i % 2) for i in range(250)]
    failures = [FairnessFailure(f"c-{i:04}", "perturbation[reformat]", 6.0, 5.0) for i in range(40)]
    text = render_markdown(a_failed_run(movements=moved, fairness_failures=failures))
    assert f"… and {250 - MAX_ROWS} more (`screeneval diff 3 7` lists every one)." in text
    assert f"… and {40 - MAX_ROWS} more." in text
    assert all(len(table) == MAX_ROWS + 1 for table in tables(text)[1:4:2])


def test_hostile_text_stays_in_its_cell() -> None:
    detail = "a | b\nc \x1b[2K `code` <script>alert(1)</script> **bold** [link](http://x)"
    text = render_markdown(a_failed_run(gates=[gate("x|y", "FAIL", 1.0, detail)]))
    header, row = tables(text)[0]
    assert len(row) == len(header) == 6
    assert "\x1b" not in text and "<script>" not in text
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script>" not in rendered and "<strong>bold" not in rendered and "<a " not in rendered


def test_the_size_is_bounded_whatever_the_run() -> None:
    long = "x" * 5_000
    big = a_failed_run(
        gates=[gate(f"agreement-drop[c{i}]", "FAIL", float(i), long) for i in range(5_000)],
        items={"passed": 900_000, "failed": 100_000},
        movements=[MovedItem(f"case-{i:06}", f"criterion-{i % 40}", 5, 1) for i in range(100_000)],
        crossings=[
            ReviewableCrossing(f"case-{i:06}", "90.0 advance", "10.0 hold") for i in range(20_000)
        ],
        fairness_failures=[
            FairnessFailure(f"case-{i:06}", f"counterfactual[{long}]", 50.0, 3.0)
            for i in range(50_000)
        ],
    )
    size = len(render_markdown(big).encode("utf-8"))
    assert size < STEP_SUMMARY_LIMIT / 50, size  # 20 KiB: far under GitHub's limit
    small = len(render_markdown(a_failed_run()).encode("utf-8"))
    assert size < small * 20, (size, small)


# --------------------------------------------------------------------------------------------
# The plugin, end to end
# --------------------------------------------------------------------------------------------


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_project(pytester)
    assert pytester.runpytest("--screeneval", *ACCEPT).ret == 0  # run 1, the baseline
    scores = expected_scores()
    scores["al-001"] = {"skills": 1, "experience": 1, "communication": 1}  # moves and crosses
    set_scores(pytester, scores, gap_penalty=1)  # every case's gap counterfactual fails
    return pytester


def shown(project: pytest.Pytester, capsys: pytest.CaptureFixture[str], run_id: int) -> str:
    capsys.readouterr()
    url = f"sqlite:///{(project.path / 'store.db').as_posix()}"
    assert screeneval(["show", str(run_id), "--format", "markdown", "--db", url]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("dist", [(), ("-n", "2")], ids=["one-process", "n2"])
def test_the_markdown_file_is_what_show_prints(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str], dist: tuple[str, ...]
) -> None:
    result = project.runpytest("--screeneval", *dist, "--screeneval-markdown", "ci/summary.md")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = (project.path / "ci" / "summary.md").read_text(encoding="utf-8")
    assert text.startswith("## screeneval: FAIL · run 2\n")
    counts = result.parseoutcomes()
    failed, total = counts["failed"], sum(counts[k] for k in ("passed", "failed"))
    assert f"{failed} of {total} items failed." in text
    assert "`screeneval review 2 al-001 --by NAME --note TEXT`" in text
    assert "| `al-002` | counterfactual[gap] | 25.0 | 3 |" in "\n".join(
        "| " + " | ".join(row) + " |" for row in tables(text)[-1]
    )
    assert {"unreviewed-crossings", "counterfactual-gap[gap]"} <= {
        row[0] for row in tables(text)[0][1:]
    }
    assert shown(project, capsys, 2) == text


def test_the_step_summary_is_appended_to(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    step = project.path / "step-summary.md"
    step.write_text("## An earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert project.runpytest("--screeneval").ret == pytest.ExitCode.TESTS_FAILED
    text = step.read_text(encoding="utf-8")
    assert text.startswith("## An earlier step\n\n## screeneval: FAIL · run 2\n")
    assert text.removeprefix("## An earlier step\n\n") == shown(project, capsys, 2)


@pytest.mark.parametrize(
    "switch", [("--screeneval-step-summary", "off"), ("-o", "screeneval_step_summary=off")]
)
def test_the_step_summary_can_be_switched_off(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, switch: tuple[str, str]
) -> None:
    step = project.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = project.runpytest("--screeneval", *switch, "--screeneval-markdown", "own.md")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not step.exists()
    assert (project.path / "own.md").read_text(encoding="utf-8").startswith("## screeneval: FAIL")


def test_a_summary_that_cannot_be_written_is_one_sentence(project: pytest.Pytester) -> None:
    # output paths are checked when the run starts: refused before any call, in one sentence
    set_scores(project, expected_scores())
    (project.path / "taken").write_text("a file, not a folder", encoding="utf-8")
    result = project.runpytest("--screeneval", "--screeneval-markdown", "taken/summary.md")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "Cannot write --screeneval-markdown to" in output and "nothing was scored" in output
    assert "Traceback" not in output


def test_a_bad_step_summary_policy_is_refused(project: pytest.Pytester) -> None:
    result = project.runpytest("--screeneval", "-o", "screeneval_step_summary=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*screeneval_step_summary*expected 'auto' or 'off'*"])


def test_show_of_a_run_before_items_were_recorded_still_renders(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    text = shown(project, capsys, 1)  # the baseline, a passing run
    assert text.startswith("## screeneval: PASS · run 1\n")
    assert tables(text) == []
