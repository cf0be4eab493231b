"""Precision and recall of the rationale flags, held-out first, and their speed.

Run from the repository root::

    python benchmarks/rationale_quality.py            # held-out and dev tables, timing
    python benchmarks/rationale_quality.py --misses   # also every dev entry the code gets wrong
    python benchmarks/rationale_quality.py --misses --split held-out   # (after tuning only)
    python benchmarks/rationale_quality.py --misses --dev-only   # while tuning: no held-out table
    python benchmarks/rationale_quality.py --resumes r52-r58   # also those resumes' own tables

The corpus is ``tests/data/rationale_corpus/``: invented resumes and rationales, each with the
flags a careful compliance reviewer gives it, split by resume into a development part (tuned on)
and a held-out part (reported). The figure that counts is the held-out table; the development
table is printed below it, labelled. The older labelled set, ``tests/data/rationales.yaml``
(tuned on in full), is printed last, for reference.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pytest_screeneval.evidence.rationale import corpus
from pytest_screeneval.evidence.rationale.flags import ALL_FLAGS, rationale_flags

__all__ = ["Entry", "FlagScore", "load_entries", "main", "score_flags"]

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "rationales.yaml"
CORPUS = DATA.parent / "rationale_corpus"


@dataclass(frozen=True)
class Entry:
    id: str
    input_text: str
    criterion: str
    score: int
    rationale: str
    evidence: tuple[str, ...]
    expected: frozenset[str]


@dataclass(frozen=True)
class FlagScore:
    flag: str
    positives: int
    tp: int
    fp: int
    fn: int
    false_positives: tuple[str, ...]
    false_negatives: tuple[str, ...]

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def load_entries(path: Path = DATA) -> list[Entry]:
    data: Mapping[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    resumes: Mapping[str, str] = data["resumes"]
    return [
        Entry(
            id=str(raw["id"]),
            input_text=raw["input_text"] if "input_text" in raw else resumes[raw["resume"]],
            criterion=str(raw["criterion"]),
            score=int(raw["score"]),
            rationale=str(raw["rationale"]),
            evidence=tuple(raw.get("evidence") or ()),
            expected=frozenset(raw["expected_flags"]),
        )
        for raw in data["entries"]
    ]


def score_flags(entries: Sequence[Entry]) -> tuple[list[FlagScore], dict[str, frozenset[str]]]:
    """Per-flag confusion counts, and what the code flagged for each entry id."""
    got = {
        e.id: frozenset(
            rationale_flags(e.input_text, e.criterion, e.score, e.rationale, e.evidence)
        )
        for e in entries
    }
    scores = []
    for flag in ALL_FLAGS:
        fps = tuple(e.id for e in entries if flag in got[e.id] and flag not in e.expected)
        fns = tuple(e.id for e in entries if flag not in got[e.id] and flag in e.expected)
        tp = sum(1 for e in entries if flag in got[e.id] and flag in e.expected)
        positives = sum(1 for e in entries if flag in e.expected)
        scores.append(FlagScore(flag, positives, tp, len(fps), len(fns), fps, fns))
    return scores, got


def _table(scores: Sequence[FlagScore], total: int) -> str:
    header = f"{'flag':<22}{'n pos':>7}{'TP':>6}{'FP':>6}{'FN':>6}{'precision':>11}{'recall':>9}"
    lines = [f"{total} labelled rationales", header, "-" * len(header)]
    for s in scores:
        lines.append(
            f"{s.flag:<22}{s.positives:>7}{s.tp:>6}{s.fp:>6}{s.fn:>6}"
            f"{s.precision:>11.3f}{s.recall:>9.3f}"
        )
    return "\n".join(lines)


def _timing(entries: Sequence[Entry], seconds: float = 2.0) -> str:
    """Calls per second over the labelled set, and the slowest single call."""
    # The resume facts are cached per text, as in a run: warm the cache first.
    for e in entries:
        rationale_flags(e.input_text, e.criterion, e.score, e.rationale, e.evidence)
    calls = 0
    slowest = 0.0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for e in entries:
            t0 = time.perf_counter()
            rationale_flags(e.input_text, e.criterion, e.score, e.rationale, e.evidence)
            slowest = max(slowest, time.perf_counter() - t0)
            calls += 1
    elapsed = time.perf_counter() - started
    return (
        f"timing: {calls / elapsed:,.0f} calls/second ({1e6 * elapsed / calls:.0f} us per call, "
        f"slowest {1e6 * slowest:.0f} us), resume facts cached per resume text"
    )


def _corpus_timing(entries: Sequence[corpus.CorpusEntry], seconds: float) -> str:
    """Per-call time over the corpus (its rationales are longer and more varied)."""
    for e in entries:
        _corpus_flags(e)
    calls = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for e in entries:
            _corpus_flags(e)
            calls += 1
    elapsed = time.perf_counter() - started
    return (
        f"timing (corpus, {len(entries)} rationales): {1e6 * elapsed / calls:.0f} us per call "
        f"(target < 500 us), resume facts cached per resume text"
    )


def _first_call_timing(entries: Sequence[Entry], calls: int = 300) -> str:
    """One call on a resume never seen before (nothing cached): the worst case per call."""
    by_id = {e.id: e for e in entries}
    resume = by_id["c01"].input_text + "\n" + by_id["c07"].input_text  # about 40 lines
    rationale = by_id["t03"].rationale  # three sentences
    lines = len(resume.splitlines())
    best = float("inf")
    for attempt in range(3):
        started = time.perf_counter()
        for i in range(calls):
            # a new text each time, so the per-resume cache never helps
            fresh = f"{resume}\nReference {attempt}-{i}"
            rationale_flags(fresh, "product_sense", 5, rationale)
        best = min(best, (time.perf_counter() - started) / calls)
    return (
        f"timing: first call on an unseen {lines}-line resume, 3-sentence rationale: "
        f"{1e6 * best:.0f} us ({1 / best:,.0f} calls/second)"
    )


def _corpus_table(title: str, scores: Sequence[corpus.FlagScore], total: int) -> str:
    header = (
        f"{'flag':<22}{'pos':>5}{'TP':>5}{'FP':>5}{'FN':>5}"
        f"{'precision':>11}{'95% Wilson':>16}{'recall':>9}{'95% Wilson':>16}"
    )
    lines = [f"{title}: {total} labelled rationales", header, "-" * len(header)]
    for s in scores:
        p_low, p_high = s.precision_interval
        r_low, r_high = s.recall_interval
        lines.append(
            f"{s.flag:<22}{s.positives:>5}{s.tp:>5}{s.fp:>5}{s.fn:>5}"
            f"{s.precision:>11.3f}{f'[{p_low:.3f}, {p_high:.3f}]':>16}"
            f"{s.recall:>9.3f}{f'[{r_low:.3f}, {r_high:.3f}]':>16}"
        )
    return "\n".join(lines)


def _corpus_flags(entry: corpus.CorpusEntry) -> frozenset[str]:
    return frozenset(
        rationale_flags(
            entry.input_text, entry.criterion, entry.score, entry.rationale, entry.evidence
        )
    )


def _resume_ids(text: str) -> frozenset[str]:
    """``r52,r54`` or ``r44-r50`` (a range of numbers, ends included), or both, comma-separated."""
    ids: set[str] = set()
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        low, _, high = part.partition("-")
        if not high:
            ids.add(low)
            continue
        first, last = int(low.lstrip("r")), int(high.lstrip("r"))
        ids.update(f"r{number:02d}" for number in range(first, last + 1))
    return frozenset(ids)


def _corpus_report(
    show_misses: str | None, dev_only: bool = False, only: frozenset[str] = frozenset()
) -> list[corpus.CorpusEntry]:
    entries = corpus.load_corpus(CORPUS, ALL_FLAGS)
    got = {e.id: _corpus_flags(e) for e in entries}
    for split, title in (
        (corpus.HELD_OUT, "HELD-OUT (report this)"),
        (corpus.DEV, "DEV (tuned on)"),
    ):
        if dev_only and split != corpus.DEV:
            # while tuning, the held-out figures are not even looked at
            continue
        part = [e for e in entries if e.split == split]
        resumes = len({e.resume_id for e in part})
        scores = corpus.score_flags(part, ALL_FLAGS, got)
        print(_corpus_table(f"{title}, {resumes} resumes", scores, len(part)))
        print()
        chosen = [e for e in part if e.resume_id in only]
        if chosen:
            names = ", ".join(sorted({e.resume_id for e in chosen}))
            chosen_scores = corpus.score_flags(chosen, ALL_FLAGS, got)
            print(_corpus_table(f"{title}, only {names}", chosen_scores, len(chosen)))
            print()
        if show_misses != split:
            continue
        by_id = {e.id: e for e in part}
        for s in scores:
            for kind, ids in (("FP", s.false_positives), ("FN", s.false_negatives)):
                for entry_id in ids:
                    e = by_id[entry_id]
                    print(f"{s.flag} {kind} {entry_id} [{e.kind}]: got {sorted(got[entry_id])}")
                    print(f"  {e.rationale}")
        print()
    return entries


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list every wrong entry")
    parser.add_argument(
        "--split",
        choices=(corpus.DEV, corpus.HELD_OUT),
        default=corpus.DEV,
        help="whose misses --misses lists (dev unless asked: tune on dev only)",
    )
    parser.add_argument(
        "--dev-only",
        action="store_true",
        help="print no held-out figures (for tuning runs, so the held-out part stays unseen)",
    )
    parser.add_argument(
        "--resumes",
        default="",
        help="also print each part's table over these resumes alone: r52,r54 or r44-r50",
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="how long to time (s)")
    args = parser.parse_args(argv)
    if args.dev_only and args.split != corpus.DEV:
        parser.error("--dev-only lists dev misses only")
    try:
        resumes = _resume_ids(args.resumes)
    except ValueError:
        parser.error(f"--resumes: {args.resumes!r} is not like r52,r54 or r44-r50")
    corpus_entries = _corpus_report(args.split if args.misses else None, args.dev_only, resumes)
    entries = load_entries()
    scores, got = score_flags(entries)
    print("OLDER SET (tests/data/rationales.yaml, tuned on in full)")
    print(_table(scores, len(entries)))
    if args.misses:
        by_id = {e.id: e for e in entries}
        for s in scores:
            for kind, ids in (("FP", s.false_positives), ("FN", s.false_negatives)):
                for entry_id in ids:
                    e = by_id[entry_id]
                    print(f"\n{s.flag} {kind} {entry_id}: got {sorted(got[entry_id])}")
                    print(f"  {e.rationale}")
    print(_timing(entries, args.seconds))
    print(_corpus_timing(corpus_entries, args.seconds))
    print(_first_call_timing(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
