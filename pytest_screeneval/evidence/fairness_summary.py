"""The one gap and shift summary: counterfactual gaps and perturbation shifts of a run.

Pure module. The live summary (terminal, JSON) and the audit report of a stored run both build
their figures here, from the same input: every answer of every variant text, by case and variant
key, in repeat order (``collect``). The live run reads it from its results, the audit report from
the stored rows; so the two agree on every figure by construction.

A case's gap across an attribute's values is the spread of the values' **mean** overall scores
(every answer of each variant: the first, and any re-score); a perturbation's shift is
``|mean(example) − mean(original)|`` and a case's shift the largest over its examples. For a
deterministic scorer every answer is the first one, so these are the plain first-answer figures.
Ties go to the first case id in sorted order and, within a case, to the values in the order of
``variants.yaml``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean

from pytest_screeneval.golden.model import Rubric

__all__ = [
    "ORIGINAL",
    "PERTURB_PREFIX",
    "AttributeGaps",
    "CounterfactualCase",
    "FairnessCases",
    "KindShifts",
    "PerturbationCase",
    "collect",
    "gap_summary",
    "shift_summary",
    "split_variant_key",
    "spread",
]

ORIGINAL = ""  # the variant key of a case's own text
PERTURB_PREFIX = "perturb:"

Levels = Mapping[str, int]


def split_variant_key(key: str) -> tuple[str, str, str] | None:
    """``("counterfactual", attribute, value)`` or ``("perturbation", kind, sha)``; None for the
    original text or a key of neither shape."""
    if key.startswith(PERTURB_PREFIX):
        kind, _, sha = key[len(PERTURB_PREFIX) :].rpartition(":")
        return ("perturbation", kind, sha) if kind else None
    attribute, sep, value = key.partition("=")
    return ("counterfactual", attribute, value) if sep and attribute else None


def spread(values: Mapping[str, float]) -> tuple[float, str, str]:
    """The largest minus the smallest value, the keys of both (highest first); with a zero
    spread, the first two keys in order."""
    if not values:
        raise ValueError("a spread needs at least one value")
    keys = list(values)
    high = max(keys, key=lambda k: values[k])
    others = [k for k in keys if k != high] or [high]
    low = min(others, key=lambda k: values[k])
    if values[high] - values[low] == 0 and len(keys) > 1:
        high, low = keys[0], keys[1]
    return values[high] - values[low], high, low


@dataclass(frozen=True)
class CounterfactualCase:
    """One case's answers across one attribute's values (values in ``variants.yaml`` order)."""

    case_id: str
    answers: Mapping[str, tuple[float, ...]]  # value → overall of each answer, first first
    first_levels: Mapping[str, Levels] = field(default_factory=dict)  # value → criterion → level
    # value → criterion → the level of each answer, first first (the per-criterion gate's input)
    levels: Mapping[str, Mapping[str, tuple[int, ...]]] = field(default_factory=dict)

    def criterion_answers(self, criterion: str) -> dict[str, tuple[int, ...]]:
        """Each value's levels of ``criterion``, for the values that have one."""
        return {
            value: by_criterion[criterion]
            for value, by_criterion in self.levels.items()
            if by_criterion.get(criterion)
        }

    def means(self) -> dict[str, float]:
        return {value: fmean(xs) for value, xs in self.answers.items() if xs}

    def gap(self) -> tuple[float, str, str]:
        return spread(self.means())

    def first_gap(self) -> tuple[float, str, str]:
        return spread({value: xs[0] for value, xs in self.answers.items() if xs})


@dataclass(frozen=True)
class PerturbationCase:
    """One case's original answers and each perturbation example's answers (one kind)."""

    case_id: str
    original: tuple[float, ...]
    examples: Mapping[str, tuple[float, ...]]  # variant key → overall of each answer

    def shifts(self) -> dict[str, float]:
        base = fmean(self.original)
        return {key: abs(fmean(xs) - base) for key, xs in self.examples.items() if xs}

    def worst(self) -> tuple[float, str]:
        """The largest shift and its example (the first key in sorted order on a tie)."""
        shifts = self.shifts()
        if not shifts:
            return 0.0, ""
        key = min(shifts, key=lambda k: (-shifts[k], k))
        return shifts[key], key


@dataclass(frozen=True)
class AttributeGaps:
    attribute: str
    n_cases: int
    mean_gap: float
    worst_gap: float  # the worst single case's gap
    worst_case: str
    worst_values: tuple[str, str]
    per_criterion: Mapping[str, float]  # each criterion's worst spread of first levels
    case_gaps: Mapping[str, float]

    def as_dict(self) -> dict[str, object]:
        return {
            "n_cases": self.n_cases,
            "mean_gap": self.mean_gap,
            "worst_gap": self.worst_gap,
            "worst_case": self.worst_case,
            "worst_values": list(self.worst_values),
            "per_criterion": dict(self.per_criterion),
        }


@dataclass(frozen=True)
class KindShifts:
    kind: str
    n_cases: int
    texts: int
    mean_shift: float  # over cases, of each case's largest shift
    worst_shift: float  # the worst single case's shift
    worst_case: str
    case_shifts: Mapping[str, float]

    def as_dict(self) -> dict[str, object]:
        return {
            "n_cases": self.n_cases,
            "texts": self.texts,
            "mean_shift": self.mean_shift,
            "worst_shift": self.worst_shift,
            "worst_case": self.worst_case,
        }


def gap_summary(
    by_attribute: Mapping[str, Sequence[CounterfactualCase]],
) -> dict[str, AttributeGaps]:
    """Per attribute (sorted): the mean and the worst case gap, where, and per criterion. A case
    with fewer than two scored values has no gap and is not counted."""
    summary: dict[str, AttributeGaps] = {}
    for attribute in sorted(by_attribute):
        gaps: dict[str, tuple[float, str, str]] = {}
        per_criterion: dict[str, float] = {}
        for case in sorted(by_attribute[attribute], key=lambda c: c.case_id):
            if len(case.means()) < 2:
                continue
            gaps[case.case_id] = case.gap()
            for criterion in sorted({c for lv in case.first_levels.values() for c in lv}):
                seen = [lv[criterion] for lv in case.first_levels.values() if criterion in lv]
                if len(seen) >= 2:
                    width = float(max(seen) - min(seen))
                    per_criterion[criterion] = max(per_criterion.get(criterion, 0.0), width)
        if not gaps:
            continue
        worst_case = min(gaps, key=lambda c: (-gaps[c][0], c))
        worst, high, low = gaps[worst_case]
        summary[attribute] = AttributeGaps(
            attribute,
            len(gaps),
            fmean(g for g, _h, _l in gaps.values()),
            worst,
            worst_case,
            (high, low),
            per_criterion,
            {c: g for c, (g, _h, _l) in gaps.items()},
        )
    return summary


def shift_summary(by_kind: Mapping[str, Sequence[PerturbationCase]]) -> dict[str, KindShifts]:
    """Per kind (sorted): each case's largest shift, their mean, the worst case."""
    summary: dict[str, KindShifts] = {}
    for kind in sorted(by_kind):
        cases = [c for c in by_kind[kind] if c.original and c.shifts()]
        if not cases:
            continue
        shifts = {c.case_id: c.worst()[0] for c in cases}
        worst_case = min(shifts, key=lambda c: (-shifts[c], c))
        summary[kind] = KindShifts(
            kind,
            len(shifts),
            sum(len(c.shifts()) for c in cases),
            fmean(shifts.values()),
            shifts[worst_case],
            worst_case,
            shifts,
        )
    return summary


@dataclass(frozen=True)
class FairnessCases:
    """Every counterfactual and perturbation case of a run, ready for the summary and gates."""

    counterfactual: Mapping[str, tuple[CounterfactualCase, ...]]
    perturbation: Mapping[str, tuple[PerturbationCase, ...]]
    failed_variants: Mapping[str, int]  # attribute → variant texts with no usable answer
    failed_examples: Mapping[str, int]  # kind → example texts with no usable answer


def collect(
    answers: Mapping[tuple[str, str], Sequence[Levels | None]],
    rubric: Rubric,
    value_order: Mapping[str, Sequence[str]] | None = None,
    selected: Callable[[str, str, str], bool] | None = None,
) -> FairnessCases:
    """Group every answer by counterfactual attribute and perturbation kind.

    ``answers``: (case id, variant key) → that text's answers in repeat order, each criterion →
    level (an answer missing a criterion, or None, has no overall score and is left out).
    ``value_order``: attribute → value labels in ``variants.yaml`` order (ties follow it).
    ``selected(kind, target, case_id)``: which items count (the live run: the items that ran).
    """
    names = set(rubric.criterion_names)
    overall: dict[tuple[str, str], tuple[float, ...]] = {}
    first_levels: dict[tuple[str, str], Levels] = {}
    levels: dict[tuple[str, str], dict[str, tuple[int, ...]]] = {}
    failed_variants: Counter[str] = Counter()
    failed_examples: Counter[str] = Counter()
    by_attribute: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    by_kind: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for (case_id, key), given in sorted(answers.items()):
        usable = [a for a in given if a is not None and names <= set(a)]
        parsed = split_variant_key(key)
        if parsed is None:
            if key == ORIGINAL and usable:
                overall[(case_id, key)] = tuple(rubric.overall(a) for a in usable)
            continue
        item_kind, target, label = parsed
        if selected is not None and not selected(item_kind, target, case_id):
            continue
        if not usable:
            (failed_variants if item_kind == "counterfactual" else failed_examples)[target] += 1
            continue
        overall[(case_id, key)] = tuple(rubric.overall(a) for a in usable)
        levels[(case_id, key)] = {c: tuple(a[c] for a in usable) for c in sorted(names)}
        first = given[0]
        if first is not None:
            first_levels[(case_id, key)] = dict(first)
        if item_kind == "counterfactual":
            by_attribute[target][case_id][label] = key
        else:
            by_kind[target][case_id].append(key)
    counterfactual: dict[str, tuple[CounterfactualCase, ...]] = {}
    for attribute, by_case in sorted(by_attribute.items()):
        rank = {v: i for i, v in enumerate((value_order or {}).get(attribute, ()))}
        cases = []
        for case_id, keys in sorted(by_case.items()):
            ordered = sorted(keys, key=lambda label: (rank.get(label, len(rank)), label))
            cases.append(
                CounterfactualCase(
                    case_id,
                    {label: overall[(case_id, keys[label])] for label in ordered},
                    {
                        label: first_levels[(case_id, keys[label])]
                        for label in ordered
                        if (case_id, keys[label]) in first_levels
                    },
                    {label: levels[(case_id, keys[label])] for label in ordered},
                )
            )
        counterfactual[attribute] = tuple(cases)
    perturbation: dict[str, tuple[PerturbationCase, ...]] = {}
    for kind, by_case_keys in sorted(by_kind.items()):
        perturbation[kind] = tuple(
            PerturbationCase(
                case_id,
                overall.get((case_id, ORIGINAL), ()),
                {key: overall[(case_id, key)] for key in sorted(keys)},
            )
            for case_id, keys in sorted(by_case_keys.items())
        )
    return FairnessCases(counterfactual, perturbation, dict(failed_variants), dict(failed_examples))
