"""pytest glue, kept thin: options, collection of the golden set, the run, summary, exit status.

Everything with logic lives in :mod:`pytest_screeneval.session` and the pure parts; this module
and the nodes (``plugin.nodes``) adapt pytest objects to their plain values and back. Heavy
imports (SQLAlchemy, openai) happen only when ``--screeneval`` is on.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_screeneval.boundary.terminal import terminal_safe
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.plugin import gc_policy
from pytest_screeneval.plugin.completeness import Completeness
from pytest_screeneval.plugin.markdown_summary import write_markdown_summaries
from pytest_screeneval.plugin.nodes import CaseFile, ScreenevalItem, StoreCases
from pytest_screeneval.plugin.progress import Progress
from pytest_screeneval.plugin.stash import SESSION_KEY, session_of
from pytest_screeneval.plugin.tally import ItemTally
from pytest_screeneval.plugin.xdist import (
    ControllerPlugin,
    assigned_run,
    is_controller,
    is_worker,
    send_to_controller,
    upcoming_cases,
)
from pytest_screeneval.session.acceptance import verdict_document
from pytest_screeneval.session.plan import parse_price
from pytest_screeneval.settings.options import OPTIONS, OptionSpec, SettingError, settings_from

if TYPE_CHECKING:
    from pytest_screeneval.session.core import ScreenevalSession
    from pytest_screeneval.session.summary import RunSummary

__all__ = ["SESSION_KEY"]

PROGRESS_KEY = pytest.StashKey["Progress"]()
COMPLETENESS_KEY = pytest.StashKey[Completeness]()
TALLY_KEY = pytest.StashKey[ItemTally]()


def _extra_options() -> tuple[OptionSpec, ...]:
    """Options of the built-in scorers, registered in the same group (cheap imports only)."""
    from pytest_screeneval.scoring.openai.options import OPTIONS as OPENAI_OPTIONS

    return OPENAI_OPTIONS


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_screeneval.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("screeneval", "screeneval: regression tests for AI resume screeners")
    group.addoption(
        "--screeneval",
        action="store_true",
        default=False,
        help="Score the golden set, record a run, assert and gate.",
    )
    group.addoption(
        "--screeneval-accept",
        action="store_true",
        default=False,
        help="Make this run the baseline when it completes with every gate passing.",
    )
    group.addoption(
        "--screeneval-accepted-by",
        metavar="NAME",
        default=None,
        help="Who accepts the run (required with --screeneval-accept).",
    )
    group.addoption(
        "--screeneval-accept-note",
        metavar="TEXT",
        default="",
        help="A note recorded with the acceptance.",
    )
    group.addoption(
        "--screeneval-force-accept",
        action="store_true",
        default=False,
        help="Accept despite failed gates or unreviewed crossings (needs a note).",
    )
    group.addoption(
        "--screeneval-reuse",
        action="store_true",
        default=False,
        help="Reuse scores of the latest complete run with the same scorer identity "
        "and input instead of calling the scorer.",
    )
    group.addoption(
        "--screeneval-notes", metavar="TEXT", default="", help="Notes stored on the run row."
    )
    group.addoption(
        "--screeneval-plan",
        action="store_true",
        default=False,
        help="Print the cost plan (texts, calls, tokens, cost) and exit without calling the "
        "scorer or opening a run.",
    )
    parser.addini(
        "screeneval_max_calls",
        "Refuse to start a run whose plan makes more scorer calls than this (empty: no limit).",
        default="",
    )
    parser.addini(
        "screeneval_openai_price",
        "INPUT,OUTPUT price per million tokens, for the cost plan's estimate (e.g. 2.5,10).",
        default="",
    )
    for spec in _all_specs().values():
        parser.addini(spec.name, spec.help, default=spec.default)
        if not spec.flag:
            continue
        if getattr(spec.type, "__name__", "") == "boolean":
            group.addoption(
                spec.flag,
                dest=spec.name,
                action="store_const",
                const="true",
                default=None,
                help=f"{spec.help} (ini: {spec.name})",
            )
        else:
            group.addoption(
                spec.flag,
                dest=spec.name,
                type=spec.type,
                default=None,
                metavar="VALUE",
                help=f"{spec.help} (ini: {spec.name})",
            )


def _all_specs() -> dict[str, OptionSpec]:
    return {spec.name: spec for spec in (*OPTIONS, *_extra_options())}


def _option_getter(config: pytest.Config) -> Callable[[OptionSpec | str], object | None]:
    specs = _all_specs()

    def get(spec: OptionSpec | str) -> object | None:
        if isinstance(spec, str):
            spec = specs[spec]
        if spec.flag:
            value: object = config.getoption(spec.name, default=None)
            if value is not None:
                return value
        ini: object = config.getini(spec.name)
        return ini

    return get


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """`pytest --screeneval` with no paths loads the golden set's conftests, not the test suite's.

    pytest loads the initial conftests of ``testpaths`` before ``pytest_configure`` can point the
    run at the golden set, so a project's ``tests/conftest.py`` (and whatever it imports, such as
    a test-only extra) would load for a run that never collects it. Only the namespace used for
    that early load is changed: ``config.args`` and its source are still decided by pytest.
    """
    namespace = early_config.known_args_namespace
    if not getattr(namespace, "screeneval", False) or namespace.file_or_dir:
        return
    if (early_config.getini("screeneval_source") or "yaml") != "yaml":
        return
    cases_dir = early_config.rootpath / str(early_config.getini("screeneval_cases") or "cases")
    if cases_dir.is_dir():
        namespace.file_or_dir = [str(cases_dir)]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "screeneval: an item generated by pytest-screeneval from the golden set"
    )
    if not config.getoption("screeneval"):
        return
    try:
        settings = settings_from(_option_getter(config))
    except SettingError as exc:
        raise pytest.UsageError(terminal_safe(str(exc))) from None
    accepted_by = config.getoption("screeneval_accepted_by")
    if config.getoption("screeneval_accept") and not (accepted_by or "").strip():
        # refused now, not after the whole run has been scored
        raise pytest.UsageError(
            "--screeneval-accept needs --screeneval-accepted-by NAME (a name, not blank)."
        )
    if config.getoption("screeneval_force_accept") and not config.getoption(
        "screeneval_accept_note"
    ):
        raise pytest.UsageError(
            "--screeneval-force-accept needs --screeneval-accept-note TEXT saying why."
        )
    if config.getoption("screeneval_reuse") and settings.repeat > 1:
        raise pytest.UsageError(
            "--screeneval-reuse cannot be combined with --screeneval-repeat: "
            "reused scores would measure nothing about self-consistency."
        )

    from pytest_screeneval.session.core import ScreenevalSession

    def scorer_from_hook(rubric: Any) -> Any:
        return config.hook.pytest_screeneval_scorer(config=config, rubric=rubric)

    session = ScreenevalSession(
        settings,
        config.rootpath,
        scorer_override=scorer_from_hook,
        reuse=config.getoption("screeneval_reuse"),
        notes=config.getoption("screeneval_notes"),
        option_getter=_option_getter(config),
    )
    try:
        session.open()
        session.prepare_scorer()
    except ScreenevalError as exc:
        message = str(exc)  # redacted while the session still knows its secrets
        session.close()
        raise pytest.UsageError(terminal_safe(message)) from None
    config.stash[SESSION_KEY] = session
    from pytest_screeneval.plugin.outcomes import OutcomeCollector

    config.pluginmanager.register(OutcomeCollector(session.item_outcomes), "screeneval-outcomes")
    if not is_worker(config):
        # the process that owns the run counts which selected items ran (complete or partial)
        completeness = Completeness(distributed=is_controller(config))
        config.stash[COMPLETENESS_KEY] = completeness
        config.pluginmanager.register(completeness, "screeneval-completeness")
        tally = ItemTally(settings.max_gap, settings.max_perturbation_shift)
        config.stash[TALLY_KEY] = tally
        config.pluginmanager.register(tally, "screeneval-tally")
    # A nested run gives back what it froze (gc_policy); registered before pytest's own plugins
    # register theirs, so it runs after their cleanups, which collect garbage several times.
    if gc_policy.nested_in_a_test():
        config.add_cleanup(gc_policy.thaw)
    if is_controller(config):
        # the workers collect and score; the controller owns the run row and the verdict
        session.load_all_cases()
        try:
            session.begin_run(_selection(config))
        except ScreenevalError as exc:
            raise pytest.UsageError(terminal_safe(str(exc))) from None
        config.pluginmanager.register(
            ControllerPlugin(session, completeness), "screeneval-controller"
        )
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # `pytest --screeneval` with no paths runs the golden set, not the project's unit tests.
        config.args = [str(session.cases_dir if settings.source == "yaml" else config.rootpath)]
        session.golden_only = True


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    if session_of(session.config) is None:
        return (yield)
    with gc_policy.collector_paused():  # what it builds lives to the end (gc_policy)
        return (yield)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session_of(session.config) is not None:
        # Thousands of items and their cases live until the end: out of the garbage
        # collector's way, so its passes during the run do not walk them again.
        gc_policy.freeze_survivors()


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.close()
        del config.stash[SESSION_KEY]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    session = session_of(config)
    if session is None or not session.golden_only:
        return None
    if session.settings.source == "db":
        return collection_path != config.rootpath
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    session = session_of(parent.config)
    if session is not None and session.is_case_file(file_path):
        return CaseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    screeneval = session_of(config)
    if screeneval is None or screeneval.settings.source != "db":
        return
    # The store's active cases have no files: they hang under one virtual collector.
    source = StoreCases.from_parent(session, name="screeneval-db", nodeid="screeneval-db")
    for node in source.collect():
        items.extend(node.collect())


def _selection(config: pytest.Config) -> str:
    parts = []
    if config.option.keyword:
        parts.append(f"-k {config.option.keyword}")
    if config.option.markexpr:
        parts.append(f"-m {config.option.markexpr}")
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        parts.append(" ".join(config.args))
    return " ".join(parts) or "all"


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Iterator[None]:
    screeneval = session_of(session.config)
    items = [i for i in session.items if isinstance(i, ScreenevalItem)]
    option = session.config.option
    collection_failed = session.testsfailed and not option.continue_on_collection_errors
    if screeneval is None or not items or collection_failed or option.collectonly:
        return (yield)
    if is_worker(session.config):
        # the controller opened the run; this worker scores each case when it gets it
        run_id, workers = assigned_run(session.config)
        screeneval.attach_run(
            run_id, [item.need for item in items], upcoming=upcoming_cases(session), workers=workers
        )
        session.config.add_cleanup(gc_policy.widen_young_passes())
        return (yield)
    progress = Progress(session.config.pluginmanager.get_plugin("terminalreporter"), screeneval)
    session.config.stash[PROGRESS_KEY] = progress
    try:
        # queues every text in item order, prints the plan, lets the calls go and returns:
        # items run as their case is scored
        config = session.config
        screeneval.start(
            [item.need for item in items],
            _selection(config),
            progress,
            announce=progress.announce,
            plan_only=config.getoption("screeneval_plan"),
            max_calls=_max_calls(config),
            price=parse_price(str(config.getini("screeneval_openai_price"))),
        )
        if config.getoption("screeneval_plan"):
            del session.items[:]  # the plan only: no item runs, no run is opened
    except ScreenevalError as exc:
        screeneval.start_error = str(exc)
        _close_interrupted(screeneval)
        raise pytest.UsageError(terminal_safe(str(exc))) from None
    except BaseException:
        _close_interrupted(screeneval)
        raise
    session.config.add_cleanup(gc_policy.widen_young_passes())
    try:
        outcome = yield
    except BaseException:
        _stop_on_runner_error(screeneval)
        raise
    _stop_on_runner_error(screeneval)
    return outcome


def _max_calls(config: pytest.Config) -> int | None:
    value = str(config.getini("screeneval_max_calls") or "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise ScreenevalError(f"screeneval_max_calls = {value!r} is not a whole number of calls.")
    return int(value)


def _stop_on_runner_error(screeneval: ScreenevalSession) -> None:
    """A scorer that cannot work, or an async scorer blocking the loop, stops the run: the run
    is closed interrupted and pytest exits with that one sentence."""
    fatal = screeneval.runner_error()
    if fatal is None:
        return
    screeneval.start_error = fatal
    with contextlib.suppress(ScreenevalError):
        screeneval.drain(stopped=True)
    _close_interrupted(screeneval)
    raise pytest.UsageError(terminal_safe(fatal)) from None


def _close_interrupted(screeneval: ScreenevalSession) -> None:
    """Mark the run interrupted if the store still answers; if it does not (full, locked), the
    run stays 'running' and the next session marks it interrupted, its rows kept."""
    with contextlib.suppress(ScreenevalError):
        screeneval.finish("interrupted")


@pytest.hookimpl(tryfirst=True)  # before junitxml writes its report
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    screeneval = session_of(session.config)
    if screeneval is None or screeneval.run_id is None or screeneval.start_error:
        return
    # session gates wait for every queued text; after -x, --maxfail or Ctrl-C, scoring what
    # will not run is cancelled and only what was answered is kept
    stopped = bool(session.shouldfail or session.shouldstop)
    with contextlib.suppress(ScreenevalError):
        screeneval.drain(stopped=stopped or exitstatus == pytest.ExitCode.INTERRUPTED)
    progress = session.config.stash.get(PROGRESS_KEY, None)
    if progress is not None:
        progress.done(screeneval)
    if is_worker(session.config):
        send_to_controller(session.config, screeneval.worker_output())
        return
    if is_controller(session.config):
        screeneval.load_results_from_store()
    config = session.config
    completeness = config.stash[COMPLETENESS_KEY]
    try:
        screeneval.flush(force=True)
    except ScreenevalError as exc:
        completeness.close_error = str(exc)
        completeness.write_errors.append("the last score rows could not be stored")
    missing = completeness.missing_now = completeness.missing(session)
    # complete only when every selected item ran and every row it produced is stored
    status = (
        "interrupted"
        if exitstatus == pytest.ExitCode.INTERRUPTED
        else ("partial" if missing else "complete")
    )
    kinds = dict(Counter(need.kind for need in screeneval.needs))
    try:
        summary = screeneval.summarize(kinds, status)
    except ScreenevalError as exc:  # the summary's own re-scoring could not be stored
        completeness.close_error = str(exc)
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        return
    if completeness.close_error is None:
        try:
            items = config.stash[TALLY_KEY].document()
            verdict = verdict_document(summary.gates, summary.crossings, missing, items)
            screeneval.finish(status, verdict)
            completeness.chain_head = _chain_head(screeneval)
        except ScreenevalError as exc:
            completeness.close_error = str(exc)
    if completeness.close_error is not None:
        # the summary is still printed; the run stays 'running' until the next session marks
        # it interrupted, its stored rows kept
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    elif config.getoption("screeneval_accept"):
        screeneval.accept_run(
            by=config.getoption("screeneval_accepted_by"),
            note=config.getoption("screeneval_accept_note"),
            force=config.getoption("screeneval_force_accept"),
        )
        with contextlib.suppress(ScreenevalError):
            completeness.chain_head = _chain_head(screeneval)
    if screeneval.settings.json:
        from pytest_screeneval.report.json import write_json

        head = completeness.chain_head
        write_json(
            summary,
            Path(screeneval.settings.json),
            screeneval,
            {
                "missing": completeness.missing_now,
                "store_error": completeness.close_error,
                # an anchor outside the database: `screeneval verify --expect-head SEQ:HASH`
                "chain_head": head.as_dict() if head is not None else None,
            },
        )
    summary.warnings.extend(write_markdown_summaries(screeneval, completeness.close_error))
    _junit_properties(config, summary)
    gc_policy.freeze_survivors()  # the run's reports and results too, before exit's passes
    config.hook.pytest_screeneval_run_finished(config=config, summary=summary)
    if session.exitstatus == pytest.ExitCode.OK and screeneval.session_failed():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _chain_head(screeneval: ScreenevalSession) -> object:
    """The store's chain head now (after the run's entry, and its acceptance's)."""
    return None if screeneval.store is None else screeneval.store.chain_head()


def _junit_properties(config: pytest.Config, summary: RunSummary) -> None:
    """The run id and the gate table as testsuite properties of ``--junitxml``."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    xml.add_global_property("screeneval.run_id", summary.run_id)
    xml.add_global_property("screeneval.status", summary.status)
    completeness = config.stash.get(COMPLETENESS_KEY, None)
    if completeness is not None and completeness.missing_now:
        xml.add_global_property("screeneval.missing", completeness.missing_now)
    if completeness is not None and completeness.chain_head is not None:
        # an anchor outside the database: `screeneval verify --expect-head SEQ:HASH`
        head = completeness.chain_head
        xml.add_global_property("screeneval.chain_head", f"{head.seq}:{head.hash}")
    for gate in summary.gates:
        value = "-" if gate.value is None else f"{gate.value:.1f}"
        xml.add_global_property(
            f"screeneval.gate.{gate.name}",
            f"{gate.status} value={value} limit={gate.limit} n={gate.n}",
        )


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    screeneval = session_of(config)
    if screeneval is None:
        return
    from pytest_screeneval.report.terminal import render

    if screeneval.summary is None:
        completeness = config.stash.get(COMPLETENESS_KEY, None)
        if completeness is not None and completeness.close_error is not None:
            error = f"ERROR: {completeness.close_error}"
            terminalreporter.write_line(terminal_safe(error), red=True, bold=True)
        return

    for line in render(screeneval.summary, screeneval, verbose=config.get_verbosity() > 0):
        # case ids, slices and scorer text are data: they must not drive the terminal
        terminalreporter.write_line(terminal_safe(line))
    completeness = config.stash.get(COMPLETENESS_KEY, None)
    if completeness is None:
        return
    if completeness.missing_now:
        terminalreporter.write_line(
            terminal_safe(
                f"partial: run {screeneval.summary.run_id} is not complete: "
                f"{completeness.missing_now}"
            )
        )
    if completeness.chain_head is not None:
        head = completeness.chain_head
        terminalreporter.write_line(
            terminal_safe(
                f"chain head: {head.seq}:{head.hash}"
                + (f" (keyed {head.key_id})" if head.key_id else "")
                + " (keep it: screeneval verify --expect-head SEQ:HASH)"
            )
        )
    if completeness.close_error is not None:
        terminalreporter.write_line(
            terminal_safe(f"ERROR: {completeness.close_error}"), red=True, bold=True
        )
