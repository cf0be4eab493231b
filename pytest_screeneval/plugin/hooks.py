"""pytest glue, kept thin: options, collection of the golden set, the run, summary, exit status.

Everything with logic lives in :mod:`pytest_screeneval.session` and the pure parts; this module
and the nodes (``plugin.nodes``) adapt pytest objects to their plain values and back. Heavy
imports (SQLAlchemy, openai) happen only when ``--screeneval`` is on.
"""

from __future__ import annotations

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
from pytest_screeneval.plugin.signals import StopSignals
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
from pytest_screeneval.settings.controls import CONTROLS, ControlSpec, controls_from
from pytest_screeneval.settings.options import OPTIONS, OptionSpec, SettingError, settings_from

if TYPE_CHECKING:
    from pytest_screeneval.session.closing import RunEnd
    from pytest_screeneval.session.core import ScreenevalSession
    from pytest_screeneval.session.summary import RunSummary

__all__ = ["SESSION_KEY"]

PROGRESS_KEY = pytest.StashKey["Progress"]()
COMPLETENESS_KEY = pytest.StashKey[Completeness]()
TALLY_KEY = pytest.StashKey[ItemTally]()
RUN_END_KEY = pytest.StashKey["RunEnd"]()  # how the run closed: what the terminal summary shows
GOLDEN_ONLY_KEY = pytest.StashKey[bool]()  # no paths given: only the golden set is collected
SIGNALS_KEY = pytest.StashKey[StopSignals]()


def _extra_options() -> tuple[OptionSpec, ...]:
    """Options of the built-in scorers, registered in the same group (cheap imports only)."""
    from pytest_screeneval.scoring.openai.options import OPTIONS as OPENAI_OPTIONS

    return OPENAI_OPTIONS


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_screeneval.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("screeneval", "screeneval: regression tests for AI resume screeners")
    for control in CONTROLS:  # what this invocation asks for (settings/controls.py)
        if control.kind == "ini" or control.flag is None:
            parser.addini(control.name, control.help, default=control.default)
        elif control.kind == "switch":
            group.addoption(control.flag, action="store_true", default=False, help=control.help)
        else:
            group.addoption(
                control.flag, metavar=control.metavar, default=control.default, help=control.help
            )
    # the settings a run is judged by (settings/options.py, and the openai scorer's own)
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


def _control_getter(config: pytest.Config) -> Callable[[ControlSpec], object]:
    def get(control: ControlSpec) -> object:
        if control.kind == "ini":
            return config.getini(control.name)
        return config.getoption(control.name)

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
        # a contradictory combination is refused now, not after the whole run has been scored
        controls = controls_from(_control_getter(config), repeat=settings.repeat)
    except (SettingError, ScreenevalError) as exc:
        raise pytest.UsageError(terminal_safe(str(exc))) from None

    if not is_worker(config):
        # every file the run will write, checked before anything is scored
        from pytest_screeneval.plugin.outputs import unwritable_outputs

        problem = unwritable_outputs(
            (
                ("--screeneval-json", settings.json),
                ("--screeneval-markdown", settings.markdown),
                ("--junitxml", getattr(config.option, "xmlpath", None)),
            ),
            Path.cwd(),
        )
        if problem is not None:
            raise pytest.UsageError(problem)

    from pytest_screeneval.session.core import ScreenevalSession

    def scorer_from_hook(rubric: Any) -> Any:
        return config.hook.pytest_screeneval_scorer(config=config, rubric=rubric)

    session = ScreenevalSession(
        settings,
        config.rootpath,
        scorer_override=scorer_from_hook,
        controls=controls,
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
    stop_signals = config.stash[SIGNALS_KEY] = StopSignals()
    stop_signals.install()
    config.add_cleanup(stop_signals.restore)
    from pytest_screeneval.plugin.outcomes import OutcomeCollector

    config.pluginmanager.register(
        OutcomeCollector(session.note_item_outcome), "screeneval-outcomes"
    )
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
        config.stash[GOLDEN_ONLY_KEY] = True


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
    if session is not None and collection_path in session.golden.loops:
        return True  # a symlink looping back: walking into it would never end
    if session is None or not config.stash.get(GOLDEN_ONLY_KEY, False):
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
        screeneval.start(
            [item.need for item in items],
            _selection(session.config),
            progress,
            announce=progress.announce,
        )
        if screeneval.controls.plan_only:
            del session.items[:]  # the plan only: no item runs, no run is opened
    except ScreenevalError as exc:
        screeneval.close_interrupted()
        raise pytest.UsageError(terminal_safe(str(exc))) from None
    except BaseException:
        screeneval.close_interrupted()
        raise
    session.config.add_cleanup(gc_policy.widen_young_passes())
    try:
        outcome = yield
    except BaseException:
        _stop_on_scorer_failure(screeneval)
        raise
    _stop_on_scorer_failure(screeneval)
    return outcome


def _stop_on_scorer_failure(screeneval: ScreenevalSession) -> None:
    """A scorer that cannot work, or an async scorer blocking the loop, stops the run: the
    session closes it interrupted and pytest exits with that one sentence."""
    fatal = screeneval.stop_on_scorer_failure()
    if fatal is not None:
        raise pytest.UsageError(terminal_safe(fatal)) from None


@pytest.hookimpl(tryfirst=True)  # before junitxml writes its report
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    screeneval = session_of(config)
    if screeneval is None or not screeneval.has_open_run:
        return
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
    # session gates wait for every queued text; after -x, --maxfail or Ctrl-C, scoring what
    # will not run is cancelled and only what was answered is kept
    screeneval.stop_scoring(stopped=bool(session.shouldfail or session.shouldstop) or interrupted)
    progress = config.stash.get(PROGRESS_KEY, None)
    if progress is not None:
        progress.done(screeneval)
    if is_worker(config):
        send_to_controller(config, screeneval.worker_output())
        return
    completeness = config.stash[COMPLETENESS_KEY]
    if not screeneval.store_last_rows(rebuild=is_controller(config)):
        completeness.write_errors.append("the last score rows could not be stored")
    for clause in screeneval.store_clauses():  # rows waiting in the spool
        completeness.write_error(clause)
    stop_signals = config.stash.get(SIGNALS_KEY, None)
    completeness.stopped_by = stop_signals.sentence() if stop_signals is not None else None
    # complete only when every selected item ran and every row it produced is stored
    end = screeneval.conclude(
        interrupted=interrupted,
        missing=completeness.missing(session),
        items=config.stash[TALLY_KEY].document(),
    )
    config.stash[RUN_END_KEY] = end
    if end.summary is None:  # the summary's own re-scoring could not be stored
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        return
    if screeneval.settings.json:
        from pytest_screeneval.report.json import write_json

        write_json(end.summary, Path(screeneval.settings.json), screeneval, end.artefact_fields())
    end.summary.warnings.extend(write_markdown_summaries(screeneval, end.close_error))
    _junit_properties(config, end.summary, end)
    gc_policy.freeze_survivors()  # the run's reports and results too, before exit's passes
    config.hook.pytest_screeneval_run_finished(config=config, summary=end.summary)
    if end.close_error is not None:
        # the summary is still printed; the run stays 'running' until the next session marks
        # it interrupted, its stored rows kept
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    elif session.exitstatus == pytest.ExitCode.OK and end.failed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _junit_properties(config: pytest.Config, summary: RunSummary, end: RunEnd) -> None:
    """The run id and the gate table as testsuite properties of ``--junitxml``."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    xml.add_global_property("screeneval.run_id", summary.run_id)
    xml.add_global_property("screeneval.status", summary.status)
    if end.missing:
        xml.add_global_property("screeneval.missing", end.missing)
    if end.chain_head is not None:
        # an anchor outside the database: `screeneval verify --expect-head SEQ:HASH`
        head = end.chain_head
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

    end = config.stash.get(RUN_END_KEY, None)
    if screeneval.summary is None:
        if end is not None and end.close_error is not None:
            error = f"ERROR: {end.close_error}"
            terminalreporter.write_line(terminal_safe(error), red=True, bold=True)
        return

    for line in render(screeneval.summary, screeneval, verbose=config.get_verbosity() > 0):
        # case ids, slices and scorer text are data: they must not drive the terminal
        terminalreporter.write_line(terminal_safe(line))
    if end is None:
        return
    if end.missing:
        terminalreporter.write_line(
            terminal_safe(
                f"partial: run {screeneval.summary.run_id} is not complete: {end.missing}"
            )
        )
    if end.chain_head is not None:
        head = end.chain_head
        terminalreporter.write_line(
            terminal_safe(
                f"chain head: {head.seq}:{head.hash}"
                + (f" (keyed {head.key_id})" if head.key_id else "")
                + " (keep it: screeneval verify --expect-head SEQ:HASH)"
            )
        )
    if end.close_error is not None:
        terminalreporter.write_line(terminal_safe(f"ERROR: {end.close_error}"), red=True, bold=True)
