"""The prompt template of the ``openai`` scorer: load, check and render a system/user pair.

A template file has a free comment header, then a ``=== system ===`` line and a ``=== user ===``
line, each opening its section. Placeholders use :class:`string.Template` syntax (``$name``;
``$$`` is a literal dollar), so braces and dollars in a resume are never interpreted:

==================  ==========================================================================
``$rubric_id``       the rubric's id
``$rubric_version``  the rubric's version
``$scale_min``       the lowest score on the scale
``$scale_max``       the highest score on the scale
``$criteria``        one line per criterion: ``- name: description``
``$criterion_names`` the criterion names, comma separated, in rubric order
``$resume``          the resume text as frozen (required, and only in the user section)
==================  ==========================================================================

The template's sha is the sha256 of the file's bytes: the scorer identity changes with any edit.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from pathlib import Path

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.golden.model import Rubric

__all__ = ["BUILTIN_PROMPT", "PLACEHOLDERS", "PromptTemplate", "load_prompt_template"]

BUILTIN_PROMPT = Path(__file__).with_name("prompt.txt")
PLACEHOLDERS = frozenset(
    {
        "rubric_id",
        "rubric_version",
        "scale_min",
        "scale_max",
        "criteria",
        "criterion_names",
        "resume",
    }
)
_SECTION = re.compile(r"^=== (system|user) ===[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class PromptTemplate:
    path: str
    sha: str  # sha256 of the file's bytes
    system: string.Template
    user: string.Template

    def render(self, rubric: Rubric, resume: str) -> tuple[str, str]:
        """The (system, user) messages for one resume."""
        values = {
            "rubric_id": rubric.id,
            "rubric_version": rubric.version,
            "scale_min": str(rubric.scale.min),
            "scale_max": str(rubric.scale.max),
            "criteria": "\n".join(f"- {c.name}: {c.description}" for c in rubric.criteria),
            "criterion_names": ", ".join(rubric.criterion_names),
            "resume": resume,
        }
        return self.system.substitute(values), self.user.substitute(values)


def load_prompt_template(path: str | Path | None = None) -> PromptTemplate:
    """Read and check a template file (the built-in one when ``path`` is None)."""
    where = Path(path) if path is not None else BUILTIN_PROMPT
    try:
        data = where.read_bytes()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ScreenevalError(f"The prompt template {where} cannot be read: {reason}.") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScreenevalError(f"The prompt template {where} is not UTF-8 text.") from None
    sections = _sections(text, where)
    templates = {name: string.Template(body) for name, body in sections.items()}
    for name, template in templates.items():
        _check_placeholders(template, name, where)
    if "resume" not in templates["user"].get_identifiers():
        raise ScreenevalError(
            f"The prompt template {where} has no $resume placeholder in its user section."
        )
    if "resume" in templates["system"].get_identifiers():
        raise ScreenevalError(
            f"The prompt template {where} puts $resume in its system section; the resume "
            "belongs in the user section only."
        )
    return PromptTemplate(
        path=str(where),
        sha=hashlib.sha256(data).hexdigest(),
        system=templates["system"],
        user=templates["user"],
    )


def _sections(text: str, where: Path) -> dict[str, str]:
    markers = list(_SECTION.finditer(text))
    names = [m.group(1) for m in markers]
    if sorted(names) != ["system", "user"]:
        raise ScreenevalError(
            f"The prompt template {where} needs exactly one '=== system ===' line and one "
            f"'=== user ===' line (found {len(markers)} section lines)."
        )
    sections: dict[str, str] = {}
    for index, marker in enumerate(markers):
        end = markers[index + 1].start() if index + 1 < len(markers) else len(text)
        sections[marker.group(1)] = text[marker.end() : end].strip("\n")
    return sections


def _check_placeholders(template: string.Template, section: str, where: Path) -> None:
    if not template.is_valid():
        line = _bad_dollar_line(template.template)
        raise ScreenevalError(
            f"The prompt template {where} has a malformed placeholder in its {section} section "
            f"near {line!r}; write $$ for a literal dollar sign."
        )
    unknown = sorted(set(template.get_identifiers()) - PLACEHOLDERS)
    if unknown:
        raise ScreenevalError(
            f"The prompt template {where} uses unknown placeholder(s) "
            f"{', '.join('$' + u for u in unknown)} in its {section} section; the known ones "
            f"are {', '.join('$' + p for p in sorted(PLACEHOLDERS))}."
        )


def _bad_dollar_line(text: str) -> str:
    for line in text.splitlines():
        if not string.Template(line).is_valid():
            return line.strip()
    return ""
