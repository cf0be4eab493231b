"""Which scorer a session uses: a ``pytest_screeneval_scorer`` hook's, else the configured one.

``screeneval_scorer`` is a built-in name (``keyword``, ``openai``) or ``package.module:factory``
called with the rubric; a factory that raises is one sentence naming it. The ``openai`` scorer
reads its own options and may warn (a model alias, no seed); the warnings come back with it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Rubric
from pytest_screeneval.scoring.protocol import Scorer
from pytest_screeneval.scoring.runner import load_scorer_factory

__all__ = ["ScorerOverride", "resolve_scorer"]

ScorerOverride = Callable[[Rubric], Scorer | None]


def resolve_scorer(
    name: str,
    rubric: Rubric,
    rootdir: Path,
    *,
    override: ScorerOverride | None = None,
    option_getter: Callable[[str], object | None] | None = None,
) -> tuple[Scorer, list[str]]:
    """The scorer, and the warnings it came with. A factory that tries to end the process
    (``sys.exit``) is one sentence too, never a silent exit 0."""
    try:
        return _resolve(name, rubric, rootdir, override, option_getter)
    except (SystemExit, GeneratorExit) as exc:
        code = "" if isinstance(exc, GeneratorExit) else repr(exc.code)
        raise ScreenevalError(
            f"The scorer factory raised {type(exc).__name__}({code}); no run was started."
        ) from None


def _resolve(
    name: str,
    rubric: Rubric,
    rootdir: Path,
    override: ScorerOverride | None,
    option_getter: Callable[[str], object | None] | None,
) -> tuple[Scorer, list[str]]:
    if override is not None:
        scorer = override(rubric)
        if scorer is not None:
            return scorer, []
    if name == "openai":
        return _openai_scorer(rubric, rootdir, option_getter)
    factory = load_scorer_factory(name)
    try:
        return factory(rubric), []
    except ScreenevalError:
        raise
    except Exception as exc:
        raise ScreenevalError(
            f"The scorer factory {name!r} raised {type(exc).__name__}: {exc}."
        ) from None


def _openai_scorer(
    rubric: Rubric, rootdir: Path, option_getter: Callable[[str], object | None] | None
) -> tuple[Scorer, list[str]]:
    from pytest_screeneval.scoring.openai.options import settings_from as openai_settings_from
    from pytest_screeneval.scoring.openai.scorer import make_scorer

    get = option_getter or (lambda name: None)
    scorer = make_scorer(rubric, openai_settings_from(get), root=rootdir)
    return scorer, list(scorer.warnings)
