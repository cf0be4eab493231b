"""A labelled rationale corpus: load it, split it by resume, and score a checker against it.

The corpus is a folder of YAML files (``tests/data/rationale_corpus/`` in the repository): one
``corpus.yaml`` that records the split rule, and one file per invented resume holding the resume
text and its labelled rationales. The split is by resume, never by rationale, so a rule tuned on
the development part has never seen the held-out part's resumes or their phrasing.

Scoring is per flag: true and false positives and negatives, precision and recall, each with a
95% Wilson interval. Pure: YAML in, numbers out; the benchmark and ``screeneval judge-check``
print them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.metrics import wilson_interval

__all__ = [
    "DEV",
    "HELD_OUT",
    "CorpusEntry",
    "FlagScore",
    "load_corpus",
    "score_flags",
    "split_of",
]

DEV = "dev"
HELD_OUT = "held-out"
_RESUME_ID = re.compile(r"^r(\d+)$")
_ENTRY_KEYS = frozenset({"criterion", "score", "flags", "kind", "text", "evidence"})


@dataclass(frozen=True)
class CorpusEntry:
    """One labelled rationale, with its resume and the split that resume is in."""

    id: str
    resume_id: str
    split: str
    input_text: str
    criterion: str
    score: int
    rationale: str
    evidence: tuple[str, ...]
    expected: frozenset[str]
    kind: str


@dataclass(frozen=True)
class FlagScore:
    """One flag's confusion counts on a set of entries, and the ids it got wrong."""

    flag: str
    tp: int
    fp: int
    fn: int
    false_positives: tuple[str, ...]
    false_negatives: tuple[str, ...]

    @property
    def positives(self) -> int:
        return self.tp + self.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def precision_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the precision, as fractions."""
        return _fractions(wilson_interval(self.tp, self.tp + self.fp))

    @property
    def recall_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the recall, as fractions."""
        return _fractions(wilson_interval(self.tp, self.tp + self.fn))


def _fractions(interval: tuple[float, float]) -> tuple[float, float]:
    return interval[0] / 100, interval[1] / 100


def split_of(resume_id: str) -> str:
    """The split a resume is in: an even resume number is held-out, an odd one development.

    The rule was fixed before any rule was tuned on the corpus; ``corpus.yaml`` records it.
    """
    match = _RESUME_ID.match(resume_id)
    if match is None:
        raise ScreenevalError(f"Resume id {resume_id!r} is not of the form r<number>.")
    return HELD_OUT if int(match.group(1)) % 2 == 0 else DEV


def load_corpus(folder: Path, flags: Iterable[str]) -> list[CorpusEntry]:
    """Every labelled rationale in ``folder``, in file order; ``flags`` are the known flags.

    A malformed file is one :class:`ScreenevalError` sentence naming the file and entry.
    """
    known = frozenset(flags)
    meta = _read(folder / "corpus.yaml")
    rule = meta.get("split") if isinstance(meta, dict) else None
    if not isinstance(rule, dict) or rule.get("held_out") != "even":
        raise ScreenevalError(
            f"{folder / 'corpus.yaml'} must record the split rule (split: held_out: even)."
        )
    entries: list[CorpusEntry] = []
    for path in sorted(folder.glob("r*.yaml")):
        entries.extend(_entries(path, _read(path), known))
    return entries


def _read(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScreenevalError(f"Cannot read the rationale corpus file {path}: {exc}.") from None


def _entries(path: Path, data: Any, known: frozenset[str]) -> list[CorpusEntry]:
    if not isinstance(data, dict) or not isinstance(data.get("rationales"), list):
        raise ScreenevalError(f"{path} must hold id, resume and a list of rationales.")
    resume_id = str(data.get("id"))
    if resume_id != path.stem:
        raise ScreenevalError(f"{path} says id {resume_id!r}; it must match the file name.")
    resume = data.get("resume")
    if not isinstance(resume, str) or not resume.strip():
        raise ScreenevalError(f"{path} has no resume text.")
    split = split_of(resume_id)
    found: list[CorpusEntry] = []
    for number, raw in enumerate(data["rationales"], start=1):
        where = f"{path}, rationale {number}"
        if not isinstance(raw, dict) or set(raw) - _ENTRY_KEYS:
            raise ScreenevalError(f"{where} must be a mapping of {', '.join(sorted(_ENTRY_KEYS))}.")
        expected = frozenset(raw.get("flags") or ())
        if expected - known:
            raise ScreenevalError(f"{where} has the unknown flag {sorted(expected - known)[0]!r}.")
        evidence = raw.get("evidence") or ()
        found.append(
            CorpusEntry(
                id=f"{resume_id}-{number:02d}",
                resume_id=resume_id,
                split=split,
                input_text=resume,
                criterion=str(raw["criterion"]),
                score=int(raw["score"]),
                rationale=str(raw["text"]),
                evidence=tuple(str(quote) for quote in evidence),
                expected=expected,
                kind=str(raw.get("kind", "")),
            )
        )
    return found


def score_flags(
    entries: Sequence[CorpusEntry],
    flags: Sequence[str],
    flagged: Mapping[str, frozenset[str]] | Callable[[CorpusEntry], frozenset[str]],
) -> list[FlagScore]:
    """Per-flag counts of what a checker flagged (by entry id, or a function of the entry)."""
    got = (
        {entry.id: flagged(entry) for entry in entries}
        if callable(flagged)
        else {entry.id: flagged[entry.id] for entry in entries}
    )
    scores: list[FlagScore] = []
    for flag in flags:
        fps = tuple(e.id for e in entries if flag in got[e.id] and flag not in e.expected)
        fns = tuple(e.id for e in entries if flag not in got[e.id] and flag in e.expected)
        tp = sum(1 for e in entries if flag in got[e.id] and flag in e.expected)
        scores.append(FlagScore(flag, tp, len(fps), len(fns), fps, fns))
    return scores
