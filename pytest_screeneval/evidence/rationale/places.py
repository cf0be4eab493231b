"""Places and peoples in a rationale that are no grounding claims (data in ``data/places.yaml``).

- A people's, faith's or town's people name ("Irish Travellers", "Pentecostal", "Glaswegian")
  says who someone is, never a product, employer or credential: no claim (said of the candidate
  it is the protected-attribute flag's business).
- A country or region named as where the people of the work come from ("families came from
  Syria and Eritrea", "operatives from Poland, Romania and Lithuania", "learners at the prison
  are from West Africa") says nothing about the resume. Said of the candidate's own work
  ("managed depots in Glasgow and Aberdeen") it stays a claim.
- A nation or region that holds a place the resume names ("bus operations in Scotland" for a
  Glasgow job) is grounded.

Pure: text in, spans out; the gazetteer is read once, the resume's places once per resume text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml

from pytest_screeneval.evidence.rationale.work_context import GROUP_NOUNS

__all__ = ["PLACES_FILE", "place_spans"]

PLACES_FILE = Path(__file__).resolve().parent / "data" / "places.yaml"
_CAPITAL = re.compile(r"(?<![\w'’-])[A-Z][\w'’á-]*")
_SENTENCE_EDGE = re.compile(r"[.;!?\n]|\s[-–]\s")
_WINDOW = 140


@dataclass(frozen=True)
class Gazetteer:
    """Names by their first word (longest first), which are peoples, what holds what, the town
    a town's people are named for, and the words before a place the people of the work are from."""

    by_first_word: dict[str, tuple[str, ...]]
    peoples: frozenset[str]
    within: dict[str, str]
    town_people: dict[str, str]
    origin: re.Pattern[str]


@cache
def gazetteer() -> Gazetteer:
    """The gazetteer, read once."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(PLACES_FILE.read_text(encoding="utf-8"), Loader=loader)
    within = {_bare(k): _bare(v) for k, v in data["within"].items()}
    peoples = frozenset(_bare(name) for name in data["peoples"])
    town_people: dict[str, str] = data["town_people"]
    names = {*map(_bare, data["countries"]), *map(_bare, data["regions"]), *within, *peoples}
    names.update(town_people)
    by_first: dict[str, list[str]] = {}
    for name in names:
        by_first.setdefault(name.split()[0], []).append(name)
    staff = "|".join(re.escape(noun) for noun in data["staff_nouns"])
    # a list of names before the place: "from Syria, Eritrea and " / "from Poland or "
    name = r"[A-Z][\w'’-]*(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*"
    names_before = rf"(?:{name}(?:,\s+(?:and\s+|or\s+)?|\s+(?:and|or)\s+))*"
    origin = re.compile(
        rf"\b(?:{GROUP_NOUNS}|{staff})\b(?:['’]s?)?"
        rf"(?:\s+(?!(?:she|he|her|his|herself|himself|i|my)\b)[\w'’-]+){{0,4}}?"
        rf"\s+(?:(?:originally|mostly|mainly|all)\s+)?from\s+(?:the\s+)?{names_before}$",
        re.IGNORECASE,
    )
    return Gazetteer(
        {first: tuple(sorted(group, key=len, reverse=True)) for first, group in by_first.items()},
        peoples,
        within,
        town_people,
        origin,
    )


def _bare(name: str) -> str:
    return name[4:] if name.startswith("the ") else name


@lru_cache(maxsize=256)
def _resume_regions(input_text: str) -> frozenset[str]:
    """The nations and regions that hold a place the resume names ("Scotland" for Glasgow)."""
    within = gazetteer().within
    held: set[str] = set()
    for place in within:
        if place in input_text and re.search(rf"\b{re.escape(place)}\b", input_text):
            parent = within.get(place)
            while parent is not None and parent not in held:
                held.add(parent)
                parent = within.get(parent)
    return frozenset(held)


def place_spans(input_text: str, rationale: str) -> list[tuple[int, int]]:
    """Spans of place and people names in ``rationale`` that are no grounding claims."""
    found = _names(rationale)
    if not found:
        return []
    places = gazetteer()
    regions = _resume_regions(input_text)
    spans: list[tuple[int, int]] = []
    for name, start, end in found:
        town = places.town_people.get(name)
        if town is not None:
            if town in regions or re.search(rf"\b{town}\b", input_text):
                spans.append((start, end))
        elif name in places.peoples or name in regions or _of_the_people(rationale, start):
            spans.append((start, end))
    return spans


def _names(text: str) -> list[tuple[str, int, int]]:
    by_first = gazetteer().by_first_word
    found: list[tuple[str, int, int]] = []
    position = 0
    for word in _CAPITAL.finditer(text):
        if word.start() < position:
            continue
        for name in by_first.get(word.group(0).rstrip("'’s") or word.group(0), ()):
            end = word.start() + len(name)
            if text.startswith(name, word.start()) and not (
                end < len(text) and (text[end].isalnum() or text[end] == "-")
            ):
                found.append((name, word.start(), end))
                position = end
                break
        else:
            name = word.group(0)
            if name in by_first.get(name, ()):
                found.append((name, word.start(), word.end()))
    return found


def _of_the_people(text: str, start: int) -> bool:
    """Whether the place at ``start`` is where the people of the work come from."""
    left = text[max(0, start - _WINDOW) : start]
    edges = [m.end() for m in _SENTENCE_EDGE.finditer(left)]
    clause = left[edges[-1] :] if edges else left
    return gazetteer().origin.search(clause) is not None
