"""``screeneval report RUN --html PATH``: the audit document as one self-contained HTML page.

No network, no script, no external font or image: CSS is inline, charts are inline SVG drawn by
``svg.py``, and a Content-Security-Policy forbids the page from fetching anything. Every chart
has a table with the same figures beside it, so the page reads the same printed, in a screen
reader, or with images off. The page skeleton is ``templates/audit.html`` (``string.Template``).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from pytest_screeneval.report.audit_noise import noise_html
from pytest_screeneval.report.html import evidence as evidence
from pytest_screeneval.report.html import sections as sections
from pytest_screeneval.report.html.datasheet import datasheet
from pytest_screeneval.report.html.historical import historical
from pytest_screeneval.report.html.parts import text, when
from pytest_screeneval.report.html.svg import DEFS

__all__ = ["SECTIONS", "render_html", "write_html"]

Doc = Mapping[str, Any]

# (id, title) of every section, in page order
SECTIONS = (
    ("decides", "Who decides"),
    ("summary", "At a glance"),
    ("gates", "Gates"),
    ("noise", "Noise of the scorer"),
    ("run", "The run"),
    ("acceptance", "Acceptance chain"),
    ("criteria", "Agreement by criterion"),
    ("slices", "Agreement by slice"),
    ("movement", "Movement against the baseline"),
    ("counterfactual", "Counterfactual gaps"),
    ("perturbation", "Perturbations"),
    ("rates", "Rates by group on test data"),
    ("historical", "Bias audit on historical data"),
    ("raters", "Rater agreement"),
    ("provenance", "How the golden set was built"),
    ("datasheet", "Datasheet of the golden set"),
    ("method", "Method and limits"),
)


def _template() -> Template:
    source = resources.files("pytest_screeneval.report.html").joinpath("templates/audit.html")
    return Template(source.read_text(encoding="utf-8"))


def render_html(document: Doc) -> str:
    """The whole page for an audit document made by ``build_audit``."""
    run = document["run"]
    title = f"Audit report — run {run['run_id']}"
    subtitle = (
        f"<p>Scorer {text(run['scorer'])} · model {text(run['model_requested'])} · rubric "
        f"{text(run['rubric_id'])} · status {text(run['status'])}</p>"
        f"<p>Generated {text(when(document['generated_at']))} from the run store.</p>"
    )
    who = document["final_decision"]["by"]
    decider = (
        f"<strong>Who decides:</strong> {text(who)}. The screener never decides about a "
        "candidate; this report is evidence for the people who do."
    )
    nav = "".join(f'<a href="#{ident}">{text(name)}</a>' for ident, name in SECTIONS)
    body = [
        sections.decides(document),
        sections.summary(document),
        sections.gates(document),
        noise_html(document),
        sections.run(document),
        sections.acceptance(document),
        sections.criteria(document),
        sections.slices(document),
        sections.movement(document),
        evidence.counterfactual(document),
        evidence.perturbation(document),
        evidence.rates(document),
        historical(document),
        evidence.raters(document),
        evidence.provenance(document),
        datasheet(document),
        sections.method(document),
    ]
    footer = (
        f"pytest-screeneval {text(run['plugin_version'])} · document format "
        f"{text(document['format'])} · this page is self-contained and loads nothing from the "
        "network."
    )
    return _template().substitute(
        title=text(title),
        plugin_version=text(run["plugin_version"]),
        subtitle=subtitle,
        decider=decider,
        nav=nav,
        defs=DEFS,
        sections="\n".join(body),
        footer=footer,
    )


def write_html(document: Doc, path: Path) -> None:
    from pytest_screeneval.boundary.documents import safe_document

    path.parent.mkdir(parents=True, exist_ok=True)
    # made safe before rendering: the page escapes what it shows, the document carries no secret
    path.write_text(render_html(safe_document(document)), encoding="utf-8")
