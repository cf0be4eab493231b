"""Generate the bundled example golden set in ``cases/`` (rubric, variants and one file per case).

    python scripts/generate_cases.py [--out cases]

Deterministic: every case has its own seed, nothing depends on today's date or on hash order, so
re-running the script reproduces the files byte for byte (it writes through
``pytest_screeneval.golden.write``). The script owns the case folders it writes: it removes their
``*.yaml`` files first so a renamed case leaves nothing behind.

Every person, employer, college and rater here is invented. Each resume is built from the levels a
keyword reader should see per criterion (``keyword``) and the levels the raters agreed on
(``human``). The script checks the offline keyword scorer against those levels: where they differ
by more than one point the case carries an ``xfail`` with the honest reason (an expired
certification read as current, a skills section mangled by PDF extraction, communication judged
from how the resume reads), and anywhere else the build fails rather than write a misleading case.
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_screeneval.golden.load import find_pii
from pytest_screeneval.golden.model import (
    Case,
    Criterion,
    Expectation,
    GapPlacement,
    GoldenSet,
    Rubric,
    Scale,
    VariantAttribute,
    Variants,
    VariantValue,
)
from pytest_screeneval.golden.write import write_golden_set
from pytest_screeneval.scoring.keyword import KeywordScorer, fold_ocr

__all__ = ["build_golden_set", "main"]

CRITERIA = ("python", "cloud", "databases", "leadership", "communication")
RATERS = ("rater-ab", "rater-kt", "rater-mo")

# --------------------------------------------------------------------------------------------
# The rubric and the counterfactual attributes
# --------------------------------------------------------------------------------------------

RUBRIC = Rubric(
    id="backend-engineer-payments",
    version="2026.1",
    scale=Scale(1, 5),
    advance_at=58.0,
    criteria=(
        Criterion(
            name="python",
            description=(
                "Builds and maintains production Python services: web frameworks, tests, "
                "async code, typing and performance work."
            ),
            weight=6.0,
            keywords={
                2: ("python", "jupyter", "pandas"),
                3: ("django", "flask", "fastapi", "pytest"),
                4: ("asyncio", "sqlalchemy", "celery", "mypy", "type hints"),
                5: ("cpython", "cython", "py-spy"),
            },
        ),
        Criterion(
            name="cloud",
            description=(
                "Runs services on cloud infrastructure: containers, infrastructure as code, "
                "orchestration and resilient multi-region set-ups."
            ),
            weight=5.0,
            keywords={
                2: ("cloud", "linux", "heroku"),
                3: ("aws", "gcp", "azure", "docker"),
                4: ("kubernetes", "terraform", "helm", "cloudformation"),
                5: (
                    "multi-region",
                    "aws certified solutions architect",
                    "certified kubernetes administrator",
                    "service mesh",
                ),
            },
        ),
        Criterion(
            name="databases",
            description=(
                "Designs and operates relational and key-value stores: data models, query "
                "performance, replication and migrations at scale."
            ),
            weight=5.0,
            keywords={
                2: ("sql", "mysql", "sqlite", "ms access"),
                3: ("postgresql", "postgres", "redis", "mongodb", "dynamodb"),
                4: (
                    "query optimization",
                    "query optimisation",
                    "indexing",
                    "replication",
                    "schema design",
                ),
                5: ("sharding", "zero-downtime migrations", "logical replication"),
            },
        ),
        Criterion(
            name="leadership",
            description=(
                "Grows and leads engineers: mentoring, leading a team, managing people, "
                "running an engineering organisation."
            ),
            weight=5.0,
            keywords={
                2: ("mentored", "mentoring", "coached"),
                3: ("tech lead", "team lead", "led a team", "led the team"),
                4: ("engineering manager", "line-managed", "managed a team", "grew the team"),
                5: ("head of engineering", "director of engineering", "vp of engineering"),
            },
        ),
        Criterion(
            name="communication",
            # Deliberately vague, as real rubrics often are: raters disagree here most.
            description="Communicates clearly with colleagues and stakeholders.",
            weight=4.0,
            keywords={
                2: ("documentation", "presented", "presentations"),
                3: ("technical writing", "stakeholders", "cross-functional", "workshops"),
                4: ("design docs", "rfcs", "conference talk", "public speaking"),
                5: ("keynote", "published author", "tutorial series"),
            },
        ),
    ),
)

GAP_VARIANT = "2019 – 2021  Career break (parental leave)"
AGE_YOUNGER = "8 years of professional experience"
AGE_OLDER = "Over 25 years of professional experience"
# The golden set's age bands (invented, like every demographic label here): half and half,
# shuffled with their own seed so they fall across slices and races independently.
AGE_BANDS = ("under 40", "40 and over")
AGE_SEED = 40

VARIANTS = Variants(
    {
        "name": VariantAttribute(
            "name",
            "replace",
            (
                VariantValue("Aisha Bello", {"sex": "female", "race": "black"}),
                VariantValue("Emily Hargreaves", {"sex": "female", "race": "white"}),
                VariantValue("Mei Ling Zhou", {"sex": "female", "race": "asian"}),
                VariantValue("Daniela Ortega", {"sex": "female", "race": "hispanic"}),
                VariantValue("Marcus Boateng", {"sex": "male", "race": "black"}),
                VariantValue("Oliver Pembridge", {"sex": "male", "race": "white"}),
                VariantValue("Ravi Krishnamurthy", {"sex": "male", "race": "asian"}),
                VariantValue("Luis Cabrera", {"sex": "male", "race": "hispanic"}),
            ),
        ),
        "college": VariantAttribute(
            "college",
            "replace",
            (
                VariantValue("Northmere University", {"tier": "selective"}),
                VariantValue("Halvorsen Institute of Technology", {"tier": "selective"}),
                VariantValue("Brightwater Community College", {"tier": "open-access"}),
            ),
        ),
        "gap": VariantAttribute(
            "gap",
            "insert",
            (
                VariantValue(None),
                VariantValue(GAP_VARIANT),
                VariantValue("2020 – 2021  Career break (caring for a parent)"),
            ),
        ),
        # An age proxy: the same resume under a line that says how long the career has been.
        # The roles and dates do not change, so the ideal gap is zero; a scorer that marks
        # down "over 25 years" leans on age (the claim in Mobley v. Workday).
        "age": VariantAttribute(
            "age",
            "insert",
            (
                VariantValue(None),
                VariantValue(AGE_YOUNGER, {"age": "under 40"}),
                VariantValue(AGE_OLDER, {"age": "40 and over"}),
            ),
        ),
    }
)

_SCORER = KeywordScorer(RUBRIC)


def keyword_levels(text: str) -> dict[str, int]:
    """What the offline keyword scorer gives each criterion for a text."""
    return {s.criterion: s.score for s in _SCORER.score(text, RUBRIC)}


# --------------------------------------------------------------------------------------------
# Invented people, places, employers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    name: str
    sex: str
    race: str


PEOPLE = tuple(
    Person(*row)
    for row in (
        ("Amara Nwosu", "female", "black"),
        ("Lena Hartmann", "female", "white"),
        ("Sofia Marquez Ruiz", "female", "hispanic"),
        ("Yuki Tanabe", "female", "asian"),
        ("Grace Oyelaran", "female", "black"),
        ("Ingrid Solberg", "female", "white"),
        ("Valentina Cordero", "female", "hispanic"),
        ("Ha-eun Seo", "female", "asian"),
        ("Meera Iyengar", "female", "asian"),
        ("Chloe Brennan", "female", "white"),
        ("Adaeze Obi", "female", "black"),
        ("Lucia Ferreira", "female", "hispanic"),
        ("Noor Al-Sayegh", "female", "unknown"),
        ("Tamsin Achterberg", "female", "white"),
        ("Zanele Dlamini", "female", "black"),
        ("Camila Ibarra", "female", "hispanic"),
        ("Hyun-joo Park", "female", "asian"),
        ("Rosalind Okafor-Hale", "female", "two-or-more"),
        ("Eleni Papadakis", "female", "white"),
        ("Priscilla Owusu", "female", "black"),
        ("Mariana Quintero", "female", "hispanic"),
        ("Saanvi Kulkarni", "female", "asian"),
        ("Freya Lindgren", "female", "white"),
        ("Jia Wen Lau", "female", "asian"),
        ("Imani Whitfield", "female", "black"),
        ("Nadia Karimi", "female", "unknown"),
        ("Tobias Brandt", "male", "white"),
        ("Kofi Mensah-Darko", "male", "black"),
        ("Mateo Villanueva", "male", "hispanic"),
        ("Hiroshi Kaneda", "male", "asian"),
        ("Emeka Chukwu", "male", "black"),
        ("Lars Eriksen", "male", "white"),
        ("Andrés Montoya", "male", "hispanic"),
        ("Wei Jie Tan", "male", "asian"),
        ("Declan Fitzgerald", "male", "white"),
        ("Tunde Adeyemi", "male", "black"),
        ("Rafael Dominguez Soto", "male", "hispanic"),
        ("Arjun Venkataraman", "male", "asian"),
        ("Oskar Nieminen", "male", "white"),
        ("Malik Jefferson-Boyd", "male", "black"),
        ("Joaquín Herrera", "male", "hispanic"),
        ("Minh Quan Pham", "male", "asian"),
        ("Callum Rourke", "male", "white"),
        ("Samuel Osei", "male", "black"),
        ("Bilal Haddad", "male", "unknown"),
        ("Rowan Kessler", "male", "white"),
        ("Kenji Morales", "male", "two-or-more"),
        ("Vikram Subramanian", "male", "asian"),
        ("Ethan Kowalczyk", "male", "white"),
        ("Dario Benedetti", "male", "white"),
        ("Alex Thornbury", "unknown", "white"),
        ("Jordan Afolabi-Chen", "unknown", "two-or-more"),
        ("Sam Okoro", "unknown", "black"),
        ("Robin Vasquez", "unknown", "hispanic"),
        ("Kai Nakamura-Reid", "unknown", "two-or-more"),
        ("Morgan Ellery", "unknown", "unknown"),
    )
)

CITIES = (
    "Leeds, UK",
    "Manchester, UK",
    "Bristol, UK",
    "Glasgow, UK",
    "Dublin, Ireland",
    "Rotterdam, Netherlands",
    "Berlin, Germany",
    "Lisbon, Portugal",
    "Toronto, Canada",
    "Chicago, IL",
    "Denver, CO",
    "Edinburgh, UK",
    "Cardiff, UK",
    "Birmingham, UK",
    "Austin, TX",
    "London, UK",
)

FINTECH = (
    "Tallyfin Payments",
    "Kestrel Bank",
    "Pennyworth Labs",
    "Ledgerline",
    "Settlewise",
    "Quaypoint Financial",
    "Moneyrail",
    "Harbourpay",
    "Clearmint",
    "Fernbank Credit Union",
)
TECH = (
    "Orbitra Logistics",
    "Bramble Health",
    "Tidewater Travel",
    "Lumen & Finch",
    "Parcelworks",
    "Greystone Insurance",
    "Hollowtree Games",
    "Pinecrest Analytics",
    "Stonebridge Energy",
    "Quillon Software",
)

COLLEGES_SELECTIVE = (
    "Northmere University",
    "Halvorsen Institute of Technology",
    "University of Eastbrook",
)
COLLEGES_OTHER = (
    "Brightwater Community College",
    "Calder Valley College",
    "Westfall Polytechnic",
    "Marlowe State University",
)
DEGREES = (
    "BSc Computer Science",
    "MEng Software Engineering",
    "BSc Mathematics",
    "BEng Electronic Engineering",
    "BSc Physics",
    "BA Economics",
)

# --------------------------------------------------------------------------------------------
# Resume lines, by the criterion and level a keyword reader sees in them
# --------------------------------------------------------------------------------------------

Slots = Mapping[str, Callable[[random.Random], str]]

SLOTS: Slots = {
    "n": lambda r: str(r.randint(3, 9)),
    "n2": lambda r: str(r.randint(12, 40)),
    "pct": lambda r: str(r.randint(12, 48)),
    "pct_small": lambda r: str(r.randint(3, 9)),
    "k": lambda r: f"{r.randint(2, 95)},{r.choice(('000', '500'))}",
    "k2": lambda r: f"{r.randint(60, 240)},000",
    "m": lambda r: str(r.randint(2, 40)),
    "a": lambda r: str(r.randint(38, 61)),
    "b": lambda r: str(r.randint(82, 94)),
    "ms_a": lambda r: str(r.randint(4, 12) * 100),
    "ms_b": lambda r: str(r.randint(6, 30) * 10),
    "s_a": lambda r: str(r.randint(40, 180)),
    "s_b": lambda r: str(r.randint(2, 9)),
    "tb": lambda r: str(r.randint(3, 14)),
    "bn": lambda r: str(r.randint(2, 9)),
    "h": lambda r: str(r.randint(2, 6)),
    "mins": lambda r: str(r.randint(8, 25)),
    "r_a": lambda r: f"0.{r.randint(6, 9)}",
    "r_b": lambda r: f"0.{r.randint(2, 4)}",
    "money": lambda r: f"£{r.randint(2, 9)}{r.choice(('00,000', '50,000'))}",
    "g_a": lambda r: str(r.randint(3, 5)),
    "g_b": lambda r: str(r.randint(11, 18)),
    "mgr": lambda r: str(r.randint(8, 14)),
    "org": lambda r: str(r.randint(25, 60)),
}

BULLETS: dict[str, dict[int, tuple[str, ...]]] = {
    "python": {
        2: (
            "Wrote Python scripts to reconcile {n2} daily settlement files against bank statements",
            "Automated the month-end revenue report in Python and Jupyter, saving {h} hours a week",
            "Cleaned years of merchant records with pandas before the billing-system migration",
            "Kept the Python scripts that chase failed direct debits and alert the finance team",
        ),
        3: (
            "Built REST endpoints in Django for the merchant dashboard, used by {k} merchants",
            "Developed a Flask service that issues refunds through the acquirer's API",
            "Shipped a FastAPI service for payout scheduling that handles {k} requests a day",
            "Raised test coverage of the billing service from {a}% to {b}% with pytest",
            "Ported the invoicing module from a legacy PHP app to Django",
            "Added pytest contract tests for every webhook the platform sends to merchants",
        ),
        4: (
            "Rewrote the webhook dispatcher with asyncio, cutting p99 latency from {ms_a} ms to "
            "{ms_b} ms",
            "Introduced mypy and type hints across a {k2}-line codebase, catching {n2} latent bugs",
            "Moved nightly settlement jobs to Celery workers that process {m} million "
            "transactions a night",
            "Designed the SQLAlchemy data layer of the new ledger service",
            "Built an asyncio consumer for card-network events with back-pressure and clean "
            "shutdown",
        ),
        5: (
            "Profiled the payment router with py-spy and rewrote its hot path in Cython, halving "
            "CPU cost",
            "Upstreamed two fixes to CPython's decimal module found while chasing currency "
            "rounding errors",
            "Wrote the shared service framework every payments team uses, with Cython extensions "
            "for tokenisation",
        ),
    },
    "cloud": {
        2: (
            "Deployed internal tools to Heroku and kept them patched",
            "Looked after the Linux build servers for the QA team",
            "Moved the team's shared drives and backups to a cloud storage provider",
        ),
        3: (
            "Deployed services to AWS (EC2, S3, RDS) with the platform team's templates",
            "Containerised {n} legacy services with Docker and a shared base image",
            "Ran batch jobs on GCP with Pub/Sub and BigQuery",
            "Moved the reporting stack from on-premise servers to Azure",
            "Built a Docker-based local environment that cut laptop set-up from two days to an "
            "hour",
        ),
        4: (
            "Wrote Terraform modules for the payments VPC, replacing hand-built infrastructure",
            "Ran {n2} services on Kubernetes with Helm charts and horizontal autoscaling",
            "Defined the staging and production stacks in CloudFormation",
            "Moved deployments from hand-run scripts to Terraform plans reviewed in pull requests",
        ),
        5: (
            "Designed the multi-region active-active set-up that kept card authorisation at "
            "99.99% availability",
            "Led the move to a service mesh across {n} Kubernetes clusters with mutual TLS "
            "everywhere",
            "Wrote the multi-region failover runbook and ran quarterly region-evacuation drills",
        ),
    },
    "databases": {
        2: (
            "Wrote SQL reports for the finance and operations teams",
            "Maintained the MySQL database behind the booking site",
            "Built a small SQLite tool for tracking test devices and their owners",
        ),
        3: (
            "Built the merchant data model on PostgreSQL",
            "Added a Redis cache in front of the pricing API, cutting median latency by {pct}%",
            "Stored event data in MongoDB for the fraud team's dashboards",
            "Used DynamoDB for idempotency keys on the public payments API",
            "Moved the subscriptions service from MySQL to Postgres without losing a record",
        ),
        4: (
            "Led query optimisation on the ledger tables; the slowest report went from {s_a} s "
            "to {s_b} s",
            "Reworked indexing on the transactions table, reducing p95 read latency by {pct}%",
            "Set up streaming replication for the reporting replica and rehearsed failover",
            "Owned schema design for the disputes and chargebacks service",
        ),
        5: (
            "Planned and ran the sharding of a {tb} TB Postgres cluster by merchant id",
            "Ran zero-downtime migrations on tables holding {bn} billion rows",
            "Moved analytics reads to logical replication, removing a nightly {h}-hour lock",
        ),
    },
    "leadership": {
        2: (
            "Mentored {n} junior engineers through their first on-call rotation",
            "Coached new joiners on the payments domain in their first month",
            "Mentoring two apprentices through their first production releases",
        ),
        3: (
            "Tech lead for a squad of {n} engineers building the payouts product",
            "Led a team of {n} through the strong customer authentication rollout",
            "Team lead for checkout: ran planning, retrospectives and the on-call rota",
            "Led the team that rebuilt merchant statements, shipped two weeks early",
        ),
        4: (
            "Engineering manager for {mgr} engineers across two squads",
            "Line-managed {n} engineers and ran the team's interview loop",
            "Grew the team from {g_a} to {g_b} engineers while keeping weekly releases",
            "Managed a team of {n} engineers and one designer through a full replatforming",
        ),
        5: (
            "Head of Engineering for a {org}-person engineering organisation",
            "Director of Engineering: set technical direction for {n} teams and their managers",
        ),
    },
    "communication": {
        2: (
            "Wrote the documentation for the internal refunds API",
            "Presented the quarterly reliability review to the product group",
            "Gave regular presentations to support staff on new payment methods",
        ),
        3: (
            "Worked with finance and compliance stakeholders to agree settlement cut-off times",
            "Ran cross-functional workshops with risk, legal and support to design the disputes "
            "flow",
            "Brought technical writing standards to incident reviews across engineering",
            "Kept non-technical stakeholders informed with a fortnightly written update",
        ),
        4: (
            "Wrote design docs and RFCs for the ledger rewrite, reviewed by {n} teams",
            "Gave a conference talk on idempotent payment APIs at a regional developer meetup",
            "Runs the engineering RFCs process and its monthly review",
            "Public speaking at company all-hands on reliability and learning from incidents",
        ),
        5: (
            "Keynote at a European payments engineering conference on ledger design",
            "Published author of a {n}-part tutorial series on building payment systems, read by "
            "{k} developers",
        ),
    },
}

NEUTRAL: dict[str, tuple[str, ...]] = {
    "pay": (
        "Cut failed card payments by {pct}% by retrying soft declines with smarter back-off",
        "Reduced the chargeback rate from {r_a}% to {r_b}% by adding 3-D Secure to high-risk "
        "checkouts",
        "Built the refunds flow end to end, from the support tool to the acquirer",
        "On call for the card authorisation path; wrote {n} incident reviews",
        "Integrated two new acquiring banks and {n} local payment methods",
        "Designed idempotency handling for the payments API so client retries never double-charge",
        "Brought reconciliation breaks down from {n2} a week to under {n}",
        "Added fraud rules that stopped {money} of fraudulent orders in their first quarter",
        "Shipped Apple Pay and Google Pay at checkout, lifting mobile conversion by {pct_small}%",
        "Built the payout scheduler that pays {k} sellers every week",
        "Reduced PCI DSS scope by tokenising stored card data",
        "Cut settlement file processing from {h} hours to {mins} minutes",
        "Owned the currency conversion service for {n2} currencies",
        "Built a dunning flow for failed renewals that recovered {pct}% of lapsed revenue",
    ),
    "gen": (
        "Built features for the booking app used by {k} customers a month",
        "Improved page load times by {pct}% by trimming third-party scripts",
        "Took part in the weekly on-call rotation and wrote post-incident reviews",
        "Replaced a nightly batch export with an event stream, so partners see changes in seconds",
        "Added feature flags to the release process, halving rollbacks",
        "Built an internal admin tool that replaced {n} spreadsheets",
        "Worked on the search API for a catalogue of {k} products",
        "Set up structured logging and alerts that cut time-to-detect from hours to minutes",
        "Rebuilt the notifications service to send {m} million messages a day",
    ),
}

SKILL_TOKENS: dict[str, dict[int, tuple[str, ...]]] = {
    "python": {
        2: ("Python", "pandas"),
        3: ("Django", "Flask", "FastAPI", "pytest"),
        4: ("asyncio", "SQLAlchemy", "Celery", "mypy"),
        5: ("Cython",),
    },
    "cloud": {
        2: ("Linux", "Heroku"),
        3: ("AWS", "GCP", "Azure", "Docker"),
        4: ("Kubernetes", "Terraform", "Helm"),
    },
    "databases": {2: ("SQL", "MySQL", "SQLite"), 3: ("PostgreSQL", "Redis", "MongoDB")},
}
NEUTRAL_SKILLS = (
    "Git",
    "REST APIs",
    "gRPC",
    "Kafka",
    "RabbitMQ",
    "Grafana",
    "Prometheus",
    "CI/CD",
    "Go",
    "Java",
    "TypeScript",
    "Bash",
    "OpenAPI",
    "GitHub Actions",
    "Sentry",
    "Kotlin",
)

SUMMARY_OPENERS = (
    "{headline} with {years} years of experience, most of them in payments.",
    "Backend engineer with {years} years in fintech and e-commerce.",
    "{years} years building the unglamorous parts of payment systems: ledgers, refunds and "
    "reconciliation.",
    "Engineer who likes boring, well-tested systems; {years} years in payments and billing.",
    "{headline} who has spent {years} years making money move reliably.",
)
SUMMARY_CLOSERS = (
    "Looking for a team where reliability matters as much as speed.",
    "Happiest close to money movement, where correctness is not optional.",
    "Interested in payment orchestration, fraud and settlement.",
    "Keen on small teams that own what they build end to end.",
    "Values calm on-call rotations and honest incident reviews.",
)

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MONTHS_LONG = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
NOW = (2026, 1)  # the collection date of the set: "Present" means this month

Month = tuple[int, int]


def month_add(month: Month, delta: int) -> Month:
    index = month[0] * 12 + (month[1] - 1) + delta
    return index // 12, index % 12 + 1


def month_text(month: Month, style: str) -> str:
    names = MONTHS_LONG if style == "long" else MONTHS
    return f"{names[month[1] - 1]} {month[0]}"


def span_text(start: Month, end: Month | None, style: str) -> str:
    finish = "Present" if end is None else month_text(end, style)
    return f"{month_text(start, style)} – {finish}"


# --------------------------------------------------------------------------------------------
# A resume before it is laid out
# --------------------------------------------------------------------------------------------


@dataclass
class Role:
    title: str
    company: str
    start: Month
    end: Month | None
    bullets: list[str]


@dataclass
class Resume:
    name: str
    city: str
    headline: str
    summary: list[str]
    roles: list[Role]
    education: list[str]
    skills: list[str]
    certs: list[str] = field(default_factory=list)
    college: str | None = None
    gap_line: str | None = None  # a career-break line shown after roles[0]
    extra: list[tuple[str, list[str]]] = field(default_factory=list)


@dataclass(frozen=True)
class Spec:
    """One case as designed: what a keyword reader sees, what the raters agreed, and why."""

    id: str
    label: str
    template: str
    keyword: str  # levels python, cloud, databases, leadership, communication, e.g. "54443"
    human: Mapping[str, int] = field(default_factory=dict)  # where the raters differ
    contested: tuple[str, ...] = ()
    slices: tuple[str, ...] = ()
    xfail: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, object] = field(default_factory=dict)

    @property
    def levels(self) -> dict[str, int]:
        return {c: int(level) for c, level in zip(CRITERIA, self.keyword, strict=True)}

    @property
    def human_levels(self) -> dict[str, int]:
        return {**self.levels, **self.human}


def _tags(template: str) -> dict[str, int]:
    return keyword_levels(re.sub(r"\{[a-z_0-9]+\}", "7", template))


class Picker:
    """Draws resume lines for one case without going above its keyword levels."""

    def __init__(self, levels: Mapping[str, int], rng: random.Random) -> None:
        self.levels = dict(levels)
        self.rng = rng
        self.used: set[str] = set()

    def fits(self, text: str) -> bool:
        tags = keyword_levels(text)
        return all(tags[c] <= self.levels[c] for c in CRITERIA)

    def fill(self, template: str) -> str:
        names = re.findall(r"\{([a-z_0-9]+)\}", template)
        return template.format(**{name: SLOTS[name](self.rng) for name in names})

    def _draw(self, options: Sequence[str]) -> str | None:
        choices = [t for t in options if t not in self.used and self.fits(_fill_probe(t))]
        if not choices:
            return None
        template = self.rng.choice(choices)
        self.used.add(template)
        return self.fill(template)

    def at(self, criterion: str, offset: int = 0) -> str | None:
        """A line that shows ``criterion`` at the case's level (plus offset), if that is ≥ 2."""
        level = self.levels[criterion] + offset
        if level < 2:
            return None
        return self._draw(BULLETS[criterion][min(level, 5)])

    def neutral(self, kind: str = "pay") -> str:
        line = self._draw(NEUTRAL[kind])
        if line is None:
            line = self._draw(NEUTRAL["gen" if kind == "pay" else "pay"])
        assert line is not None, "neutral pools exhausted"
        return line

    def skills(self, count_neutral: int = 3, top_only: bool = False) -> list[str]:
        """A skills list: one token at each criterion's level where a token exists, some lower."""
        tokens: list[str] = []
        for criterion, by_level in SKILL_TOKENS.items():
            level = self.levels[criterion]
            for at_level in range(min(level, max(by_level)), 1, -1):
                pool = [t for t in by_level.get(at_level, ()) if t not in tokens]
                if not pool:
                    continue
                take = 1 if top_only or at_level < level else self.rng.randint(1, 2)
                tokens.extend(self.rng.sample(pool, min(take, len(pool))))
                if top_only:
                    break
        tokens.extend(self.rng.sample(NEUTRAL_SKILLS, count_neutral))
        return tokens


def _fill_probe(template: str) -> str:
    return re.sub(r"\{[a-z_0-9]+\}", "7", template)


# --------------------------------------------------------------------------------------------
# Career histories
# --------------------------------------------------------------------------------------------


def headline_for(levels: Mapping[str, int], rng: random.Random) -> str:
    if levels["leadership"] >= 5:
        return "Head of Engineering"
    if levels["leadership"] >= 4:
        return "Engineering Manager"
    if levels["python"] >= 5:
        return rng.choice(("Staff Engineer", "Principal Engineer"))
    if levels["leadership"] >= 3 and levels["python"] >= 3:
        return rng.choice(("Tech Lead", "Lead Backend Engineer"))
    if levels["python"] >= 4:
        return rng.choice(("Senior Backend Engineer", "Senior Software Engineer"))
    if levels["python"] >= 3:
        return rng.choice(("Backend Engineer", "Software Engineer", "Python Developer"))
    if levels["python"] >= 2:
        return rng.choice(("Junior Developer", "Software Developer"))
    return "Developer"


_RANKS = (
    ("Head of Engineering",),
    ("Engineering Manager", "Staff Engineer", "Principal Engineer"),
    ("Tech Lead", "Lead Backend Engineer"),
    ("Senior Backend Engineer", "Senior Software Engineer"),
    ("Backend Engineer", "Software Engineer", "Python Developer"),
    ("Junior Developer", "Software Developer", "Developer"),
)


def earlier_title(current: str, step: int, rng: random.Random) -> str:
    """A title ``step`` roles back: a rung or more below the current one, at most senior."""
    rank = next((i for i, titles in enumerate(_RANKS) if current in titles), 4)
    earlier = min(len(_RANKS) - 1, max(rank + step, 3))
    options = [t for t in _RANKS[earlier] if t != "Python Developer"]
    return rng.choice(options)


def timeline(lengths: Sequence[int], rng: random.Random, end: Month = NOW) -> list[Month]:
    """Start months, most recent role first, for roles of the given lengths (in months)."""
    starts: list[Month] = []
    current = end
    for length in lengths:
        start = month_add(current, -length)
        starts.append(start)
        current = month_add(start, -rng.randint(0, 1))
    return starts


def tech_roles(
    pick: Picker,
    rng: random.Random,
    companies: Sequence[str],
    lengths: Sequence[int],
    first_title: str,
    end: Month | None = None,
    neutral: str = "pay",
) -> list[Role]:
    """A run of engineering roles, most recent first, showing each criterion at its level."""
    levels = pick.levels
    per_role: list[list[str | None]] = [[] for _ in lengths]
    # Leadership belongs to the current role; the rest spread over the first two roles.
    per_role[0].append(pick.at("leadership"))
    spread = [c for c in ("python", "cloud", "databases", "communication") if levels[c] >= 2]
    rng.shuffle(spread)
    for index, criterion in enumerate(spread):
        per_role[index % min(2, len(lengths))].append(pick.at(criterion))
    for index in range(1, len(lengths)):
        per_role[index].append(pick.at("python", -index))
        per_role[index].append(pick.at(rng.choice(("databases", "cloud")), -index))
    roles: list[Role] = []
    starts = timeline(lengths, rng, end or NOW)
    for index, start in enumerate(starts):
        bullets = [b for b in per_role[index] if b]
        while len(bullets) < (3 if index == 0 else 2):
            bullets.append(pick.neutral(neutral))
        if index == 0 and len(bullets) < 5 and rng.random() < 0.6:
            bullets.append(pick.neutral(neutral))
        rng.shuffle(bullets)
        title = first_title if index == 0 else earlier_title(first_title, index, rng)
        role_end = end if index == 0 else month_add(starts[index - 1], -1)
        roles.append(Role(title, companies[index], start, role_end, bullets))
    return roles


def summary_for(headline: str, years: int, rng: random.Random) -> list[str]:
    opener = rng.choice(SUMMARY_OPENERS).format(headline=headline, years=years)
    return [opener, rng.choice(SUMMARY_CLOSERS)]


def education_line(rng: random.Random, college: str, year: int, degree: str | None = None) -> str:
    return f"{degree or rng.choice(DEGREES)}, {college}, {year}"


def certs_for(pick: Picker, rng: random.Random) -> list[str]:
    certs: list[str] = []
    if pick.levels["cloud"] >= 5 and rng.random() < 0.5:
        certs.append(
            rng.choice(
                (
                    "AWS Certified Solutions Architect – Professional (2025)",
                    "Certified Kubernetes Administrator (2024)",
                )
            )
        )
    elif pick.levels["cloud"] >= 3 and rng.random() < 0.4:
        certs.append("AWS Certified Developer – Associate (2024)")
    if rng.random() < 0.3:
        certs.append(rng.choice(("PCI Professional (PCIP), 2023", "ISTQB Foundation Level, 2019")))
    return certs


def standard_resume(spec: Spec, person: Person, rng: random.Random) -> Resume:
    """A conventional engineering career: the base of most slices.

    Options: ``lengths`` (months per role, most recent first), ``titles`` and ``companies``
    (override the drawn ones), ``college`` and ``education`` (lines), ``summary`` (sentences).
    """
    options = spec.options
    # Criteria shown only by the skills list (where a PDF extraction can mangle them).
    skills_only: Mapping[str, Sequence[str]] = options.get("skills_only", {})  # type: ignore[assignment]
    pick = Picker({**spec.levels, **{c: 1 for c in skills_only}}, rng)
    lengths = [int(n) for n in options.get("lengths", ())]  # type: ignore[union-attr]
    lengths = lengths or [rng.randint(20, 48) for _ in range(3)]
    companies = rng.sample(FINTECH, 2) + rng.sample(TECH, 2)
    rng.shuffle(companies)
    companies = [*options.get("companies", ()), *companies]  # type: ignore[misc]
    headline = headline_for(spec.levels, rng)
    roles = tech_roles(pick, rng, companies, lengths, headline)
    for role, title in zip(roles, options.get("titles", ()), strict=False):  # type: ignore[call-overload]
        role.title = str(title)
    headline = roles[0].title
    years = max(2, sum(lengths) // 12)
    college = str(options.get("college") or rng.choice(COLLEGES_SELECTIVE + COLLEGES_OTHER))
    education = [str(line) for line in options.get("education", ())]  # type: ignore[union-attr]
    if not education:
        education = [education_line(rng, college, roles[-1].start[0] - rng.randint(0, 1))]
    summary = [str(s) for s in options.get("summary", ())]  # type: ignore[union-attr]
    return Resume(
        name=person.name,
        city=rng.choice(CITIES),
        headline=headline,
        summary=summary or summary_for(headline, years, rng),
        roles=roles,
        education=education,
        skills=[t for tokens in skills_only.values() for t in tokens]
        + pick.skills(rng.randint(2, 4)),
        certs=certs_for(pick, rng),
        college=college,
    )


# --------------------------------------------------------------------------------------------
# Slice templates
# --------------------------------------------------------------------------------------------


def obvious_yes(spec: Spec, person: Person, rng: random.Random) -> Resume:
    return standard_resume(spec, person, rng)


def returner(spec: Spec, person: Person, rng: random.Random) -> Resume:
    """Back after a parental-leave break: a recent role, the break, then the career before.

    Options: ``break_months``, ``recent_months`` (since the return), ``reason`` (the break's
    wording), ``return_title``.
    """
    pick = Picker(spec.levels, rng)
    break_months = int(spec.options["break_months"])  # type: ignore[call-overload]
    recent = int(spec.options.get("recent_months", 10))  # type: ignore[call-overload]
    companies = rng.sample(FINTECH, 2) + rng.sample(TECH, 2)
    headline = headline_for(spec.levels, rng)
    returned = month_add(NOW, -recent)
    break_end = month_add(returned, -1)
    break_start = month_add(break_end, -(break_months - 1))
    before_end = month_add(break_start, -1)
    lengths = [rng.randint(30, 50), rng.randint(20, 36)]
    older = tech_roles(pick, rng, companies[1:], lengths, headline, before_end)
    older[0].end = before_end
    first_title = str(spec.options.get("return_title", "Backend Engineer (returnship)"))
    bullets = [pick.neutral("pay"), pick.neutral("gen"), pick.at("python", -1)]
    current = Role(first_title, companies[0], returned, None, [b for b in bullets if b])
    style = rng.choice(("short", "long"))
    reason = str(spec.options.get("reason", "Career break (parental leave)"))
    gap_line = f"{span_text(break_start, break_end, style)}  {reason}"
    college = str(spec.options.get("college") or rng.choice(COLLEGES_SELECTIVE + COLLEGES_OTHER))
    years = (sum(lengths) + recent) // 12
    return Resume(
        name=person.name,
        city=rng.choice(CITIES),
        headline=first_title,
        summary=summary_for(older[0].title, years, rng),
        roles=[current, *older],
        education=[education_line(rng, college, older[-1].start[0] - 1)],
        skills=pick.skills(rng.randint(2, 3)),
        certs=certs_for(pick, rng),
        college=college,
        gap_line=gap_line,
    )


def contractor(spec: Spec, person: Person, rng: random.Random) -> Resume:
    """Back-to-back contracts with one unexplained six-month gap between two of them."""
    pick = Picker(spec.levels, rng)
    companies = rng.sample(FINTECH, 3) + rng.sample(TECH, 2)
    rng.shuffle(companies)
    lengths = [rng.randint(7, 12), rng.randint(6, 10), rng.randint(9, 14), rng.randint(18, 30)]
    ends: list[Month | None] = [None]
    starts: list[Month] = []
    current: Month = NOW
    for index, length in enumerate(lengths):
        start = month_add(current, -length)
        starts.append(start)
        # The six-month gap sits before the most recent contract.
        current = month_add(start, -7 if index == 0 else -1)
        if index + 1 < len(lengths):
            ends.append(month_add(current, 0))
    headline = headline_for(spec.levels, rng)
    base = tech_roles(pick, rng, companies, lengths, headline)
    roles: list[Role] = []
    for index, role in enumerate(base):
        kind = "Contract" if index < 3 else "Permanent"
        title = (
            f"Contract {role.title}"
            if kind == "Contract" and "Contract" not in role.title
            else role.title
        )
        via = " (via agency)" if index in (1, 2) and rng.random() < 0.6 else ""
        roles.append(Role(title, role.company + via, starts[index], ends[index], role.bullets))
    college = str(spec.options.get("college") or rng.choice(COLLEGES_SELECTIVE + COLLEGES_OTHER))
    summary = [
        f"Contract backend engineer ({sum(lengths) // 12} years), mostly payments and billing "
        "projects of six to twelve months.",
        rng.choice(
            (
                "Outside IR35; available at two weeks' notice.",
                "Prefers hands-on delivery work with a clear finish line.",
                "Now looking for a permanent role.",
            )
        ),
    ]
    return Resume(
        name=person.name,
        city=rng.choice(CITIES),
        headline=headline,
        summary=summary,
        roles=roles,
        education=[education_line(rng, college, starts[-1][0] - 1)],
        skills=pick.skills(rng.randint(2, 4)),
        certs=certs_for(pick, rng),
        college=college,
    )


def expired_cert(spec: Spec, person: Person, rng: random.Random) -> Resume:
    """A career whose cloud level comes from a certification that has lapsed."""
    hands_on = {**spec.levels, "cloud": int(spec.options["hands_on_cloud"])}  # type: ignore[call-overload]
    shadow = Spec(spec.id, spec.label, spec.template, "".join(str(hands_on[c]) for c in CRITERIA))
    resume = standard_resume(shadow, person, rng)
    resume.certs = [str(c) for c in spec.options["certs"]]  # type: ignore[union-attr]
    return resume


def two_column(spec: Spec, person: Person, rng: random.Random) -> Resume:
    return standard_resume(spec, person, rng)


def scripted(spec: Spec, person: Person, rng: random.Random) -> Resume:
    """A history written out in the spec (career changers, wrong-industry titles, no-hires).

    Items in a role's bullets are literal lines, or ``@criterion`` / ``@criterion-1`` to draw a
    line at the case's level (minus one), or ``@pay`` / ``@gen`` for a neutral line.
    """
    pick = Picker(spec.levels, rng)
    options = spec.options
    raw_roles: Sequence[tuple[str, str, int, Sequence[str]]] = options["roles"]  # type: ignore[assignment]
    starts = timeline([length for _, _, length, _ in raw_roles], rng)
    roles: list[Role] = []
    for index, ((title, company, _, items), start) in enumerate(
        zip(raw_roles, starts, strict=True)
    ):
        end = None if index == 0 else month_add(starts[index - 1], -1)
        bullets: list[str] = []
        for item in items:
            if item in ("@pay", "@gen"):
                bullets.append(pick.neutral(item[1:]))
            elif item.startswith("@"):
                criterion, _, minus = item[1:].partition("-")
                line = pick.at(criterion, -int(minus or 0))
                if line:
                    bullets.append(line)
            else:
                bullets.append(item)
        roles.append(Role(title, company, start, end, bullets))
    college = options.get("college")
    education = [str(line) for line in options.get("education", ())]  # type: ignore[union-attr]
    skills = options.get("skills")
    return Resume(
        name=person.name,
        city=rng.choice(CITIES),
        headline=str(options.get("headline", roles[0].title)),
        summary=[str(s) for s in options["summary"]],  # type: ignore[union-attr]
        roles=roles,
        education=education,
        skills=list(skills) if skills is not None else pick.skills(2),  # type: ignore[call-overload]
        certs=[str(c) for c in options.get("certs", ())],  # type: ignore[union-attr]
        college=str(college) if college else None,
    )


TEMPLATES: dict[str, Callable[[Spec, Person, random.Random], Resume]] = {
    "standard": obvious_yes,
    "returner": returner,
    "contractor": contractor,
    "expired-cert": expired_cert,
    "two-column": two_column,
    "scripted": scripted,
}


# --------------------------------------------------------------------------------------------
# Layouts: the same resume written the ways real ones are
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    text: str
    after: str  # the line a career-gap line follows (the last line of the most recent role)
    gap_line: str | None


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.after = ""

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def role_block(self, resume: Resume, index: int, block: list[str]) -> None:
        self.lines.extend(block)
        if index == 0:
            self.after = block[-1]
            if resume.gap_line:
                self.lines.append(resume.gap_line)

    def done(self, resume: Resume) -> Rendered:
        while self.lines and not self.lines[-1]:
            self.lines.pop()
        return Rendered("\n".join(self.lines) + "\n", self.after, resume.gap_line)


def layout_classic(resume: Resume, rng: random.Random) -> Rendered:
    out = Lines()
    style = rng.choice(("short", "long"))
    out.add(resume.name, resume.city, "", "SUMMARY", " ".join(resume.summary), "", "EXPERIENCE")
    for index, role in enumerate(resume.roles):
        block = [f"{role.title}, {role.company}", span_text(role.start, role.end, style)]
        block += [f"- {b}" for b in role.bullets]
        out.role_block(resume, index, block)
    out.add("", "EDUCATION", *resume.education, "", "SKILLS", ", ".join(resume.skills))
    if resume.certs:
        out.add("", "CERTIFICATIONS", *resume.certs)
    for title, lines in resume.extra:
        out.add("", title.upper(), *lines)
    return out.done(resume)


def layout_compact(resume: Resume, rng: random.Random) -> Rendered:
    out = Lines()
    out.add(f"{resume.name} · {resume.city}", resume.headline, "", "Profile")
    out.add(*resume.summary, "", "Work history")
    for index, role in enumerate(resume.roles):
        block = [f"{role.company} | {role.title} | {span_text(role.start, role.end, 'short')}"]
        block += [f"  • {b}" for b in role.bullets]
        out.role_block(resume, index, block)
    out.add("")
    if len(resume.education) == 1:
        out.add(f"Education: {resume.education[0]}")
    else:
        out.add("Education:", *(f"  {line}" for line in resume.education))
    out.add(f"Skills: {', '.join(resume.skills)}")
    if resume.certs:
        out.add(f"Certifications: {'; '.join(resume.certs)}")
    for title, lines in resume.extra:
        out.add(f"{title}: {'; '.join(lines)}")
    return out.done(resume)


def layout_markdown(resume: Resume, rng: random.Random) -> Rendered:
    out = Lines()
    out.add(f"# {resume.name}", f"{resume.city} — {resume.headline}", "", "## Summary")
    out.add(" ".join(resume.summary), "", "## Experience")
    for index, role in enumerate(resume.roles):
        block = [f"### {role.title} — {role.company}", span_text(role.start, role.end, "long")]
        block += [f"* {b}" for b in role.bullets]
        out.role_block(resume, index, block)
    out.add("", "## Skills", ", ".join(resume.skills), "", "## Education")
    out.add(*(f"- {line}" for line in resume.education))
    if resume.certs:
        out.add("", "## Certifications", *(f"- {c}" for c in resume.certs))
    for title, lines in resume.extra:
        out.add("", f"## {title}", *(f"- {line}" for line in lines))
    return out.done(resume)


def layout_skills_first(resume: Resume, rng: random.Random) -> Rendered:
    out = Lines()
    out.add(resume.name, f"{resume.headline} | {resume.city}", "")
    out.add(f"Key skills: {', '.join(resume.skills)}", "", *resume.summary, "", "Career history")
    for index, role in enumerate(resume.roles):
        block = [f"{span_text(role.start, role.end, 'short')}  {role.title}, {role.company}"]
        block += [f"  – {b}" for b in role.bullets]
        out.role_block(resume, index, block)
    out.add("", "Education and training", *resume.education, *resume.certs)
    for title, lines in resume.extra:
        out.add("", title, *lines)
    return out.done(resume)


LAYOUTS: dict[str, Callable[[Resume, random.Random], Rendered]] = {
    "classic": layout_classic,
    "compact": layout_compact,
    "markdown": layout_markdown,
    "skills-first": layout_skills_first,
}


# Two-column PDFs: what a text extractor makes of a sidebar beside the main column.

LEFT_WIDTH = 24
RIGHT_WIDTH = 50
_OCR_SLIPS = (("m", "rn"), ("l", "1"), ("o", "0"))


def wrap_hyphenated(text: str, width: int, breaks: Sequence[str] = ()) -> list[str]:
    """Wrap like a justified PDF column: long words are hyphenated at the line's end, and the
    words in ``breaks`` are always split across two lines (as the PDF had them), at the ``|``
    when the entry has one (``"Postgre|SQL"``), else in the middle."""
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        room = width - len(current) - (1 if current else 0)
        bare = word.strip(",.;:()")
        split_at = {b.replace("|", ""): b.find("|") for b in breaks}
        if bare in split_at:
            cut = split_at[bare] if split_at[bare] > 0 else max(2, len(word) // 2)
            lines.append((current + " " if current else "") + word[:cut] + "-")
            current = word[cut:]
            continue
        if len(word) <= room:
            current = f"{current} {word}" if current else word
            continue
        if len(word) >= 9 and room >= 5:
            lines.append(f"{current} {word[: room - 2]}-" if current else f"{word[: room - 1]}-")
            current = word[room - 2 :] if current else word[room - 1 :]
            continue
        lines.append(current)
        current = word
    if current:
        lines.append(current)
    return [line for line in lines if line]


def ocr_slips(line: str, rng: random.Random, rate: float) -> str:
    words = line.split(" ")
    for index, word in enumerate(words):
        if len(word) < 5 or not word.isalpha() or rng.random() >= rate:
            continue
        seen, slip = rng.choice([s for s in _OCR_SLIPS if s[0] in word] or [("", "")])
        if seen:
            at = word.index(seen)
            words[index] = word[:at] + slip + word[at + 1 :]
    return " ".join(words)


def layout_two_column(resume: Resume, rng: random.Random, breaks: Sequence[str] = ()) -> Rendered:
    left: list[str] = ["SKILLS"]
    left += wrap_hyphenated(", ".join(resume.skills), LEFT_WIDTH, breaks)
    left += ["", "EDUCATION"]
    for line in resume.education:
        left += wrap_hyphenated(line, LEFT_WIDTH, breaks)
    if resume.certs:
        left += ["", "CERTIFICATIONS"]
        for line in resume.certs:
            left += wrap_hyphenated(line, LEFT_WIDTH, breaks)
    left += ["", "LANGUAGES", "English (fluent)", rng.choice(("German (B1)", "Spanish (B2)"))]
    right: list[str] = ["PROFILE"]
    right += wrap_hyphenated(" ".join(resume.summary), RIGHT_WIDTH, breaks)
    right += ["", "EXPERIENCE"]
    for role in resume.roles:
        right += wrap_hyphenated(f"{role.title}, {role.company}", RIGHT_WIDTH, breaks)
        right.append(span_text(role.start, role.end, "short"))
        for bullet in role.bullets:
            wrapped = wrap_hyphenated(bullet, RIGHT_WIDTH - 2, breaks)
            right += [f"• {wrapped[0]}", *(f"  {w}" for w in wrapped[1:])]
    right = [ocr_slips(line, rng, 0.05) for line in right]
    body: list[str] = []
    for index in range(max(len(left), len(right))):
        l_part = left[index] if index < len(left) else ""
        r_part = right[index] if index < len(right) else ""
        body.append((l_part.ljust(LEFT_WIDTH + 3) + r_part).rstrip())
    lines = [resume.name, f"{resume.headline} · {resume.city}", "", *body]
    return Rendered("\n".join(lines) + "\n", "", None)


# --------------------------------------------------------------------------------------------
# The cases, as designed
# --------------------------------------------------------------------------------------------

XF_TEACHING = (
    "keyword scorer finds only 'presented'; raters scored seven years of classroom teaching and "
    "this resume's clear writing as strong communication (4)"
)
XF_VAGUE = (
    "communication here shows in how clearly the resume is written, which raters scored 3; none "
    "of the rubric's communication keywords appear, so the keyword scorer gives 1"
)


def _expired(cert: str, year: str, human: int) -> str:
    return (
        f"keyword scorer cannot see that the {cert} certification expired in {year}; raters "
        f"scored the hands-on cloud work shown in the roles ({human})"
    )


SPECS: tuple[Spec, ...] = (
    # ---- obvious-yes: strong, conventional payments engineers --------------------------------
    Spec("oy-001", "obvious-yes", "standard", "54443", slices=("senior",)),
    Spec("oy-002", "obvious-yes", "standard", "45434", slices=("senior",)),
    Spec("oy-003", "obvious-yes", "standard", "55534", human={"leadership": 4}, slices=("staff",)),
    Spec("oy-004", "obvious-yes", "standard", "44353", slices=("manager",)),
    Spec("oy-005", "obvious-yes", "standard", "44444", slices=("senior",)),
    Spec(
        "oy-006",
        "obvious-yes",
        "standard",
        "54343",
        human={"communication": 4},
        contested=("communication",),
        slices=("senior",),
    ),
    Spec("oy-007", "obvious-yes", "standard", "45445", slices=("senior", "public-speaker")),
    # ---- obvious-no: no backend engineering at all --------------------------------------------
    Spec(
        "on-001",
        "obvious-no",
        "scripted",
        "11142",
        slices=("retail-background", "no-tech-experience"),
        options={
            "summary": (
                "Retail manager with ten years on the shop floor.",
                "Looking to move into a head-office operations role.",
            ),
            "roles": (
                (
                    "Store Manager",
                    "Marigold Retail Group",
                    50,
                    (
                        "Managed a team of 14 sales staff across two shifts",
                        "Presented weekly sales figures to the area manager",
                        "Grew like-for-like sales by 9% in 2024",
                        "Cut staff turnover from 40% to 22% with a fairer rota",
                    ),
                ),
                (
                    "Assistant Store Manager",
                    "Marigold Retail Group",
                    36,
                    (
                        "Ran stock control and deliveries for a 6,000-item store",
                        "Opened and closed the store and balanced the tills",
                    ),
                ),
                (
                    "Sales Assistant",
                    "Pellow & Lowe",
                    30,
                    ("Top seller in the menswear department two years running",),
                ),
            ),
            "education": ("BTEC Level 3 Business, Calder Valley College, 2014",),
            "college": "Calder Valley College",
            "skills": (
                "Team management",
                "Rota planning",
                "Stock control",
                "Microsoft Office",
                "Customer service",
            ),
        },
    ),
    Spec(
        "on-002",
        "obvious-no",
        "scripted",
        "11112",
        slices=("design-background", "no-tech-experience"),
        options={
            "summary": (
                "Graphic designer with eight years in agencies.",
                "Strong eye for layout, type and brand consistency.",
            ),
            "roles": (
                (
                    "Senior Graphic Designer",
                    "Foxglove Media",
                    44,
                    (
                        "Designed print and digital campaigns for 30 clients a year",
                        "Presented concepts to clients and art directors",
                        "Built the studio's brand guidelines template",
                    ),
                ),
                (
                    "Graphic Designer",
                    "Lumen & Finch",
                    40,
                    (
                        "Designed packaging for a range of 60 food products",
                        "Prepared print-ready artwork and checked proofs",
                        "Art-directed two product photo shoots a year",
                    ),
                ),
            ),
            "education": ("BA Graphic Communication, Westfall Polytechnic, 2015",),
            "college": "Westfall Polytechnic",
            "skills": ("Adobe Illustrator", "InDesign", "Photoshop", "Figma", "Typography"),
        },
    ),
    Spec(
        "on-003",
        "obvious-no",
        "scripted",
        "12212",
        slices=("junior", "web-agency"),
        options={
            "summary": (
                "Junior web developer building WordPress sites for small businesses.",
                "Keen to learn backend development properly.",
            ),
            "roles": (
                (
                    "Junior Web Developer",
                    "Lumen & Finch",
                    20,
                    (
                        "Built WordPress themes in PHP for 20 small-business sites",
                        "Looked after the MySQL databases behind client sites",
                        "Deployed sites to Linux shared hosting over FTP",
                        "Wrote documentation for clients editing their own pages",
                    ),
                ),
                (
                    "Web Content Assistant",
                    "Greystone Insurance",
                    14,
                    (
                        "Updated product pages and fixed broken links across the public site",
                        "Resized and compressed images for faster pages",
                    ),
                ),
            ),
            "education": ("HND Computing, Brightwater Community College, 2023",),
            "college": "Brightwater Community College",
            "skills": ("PHP", "WordPress", "HTML", "CSS", "jQuery", "MySQL"),
        },
    ),
    Spec(
        "on-004",
        "obvious-no",
        "scripted",
        "11122",
        slices=("no-tech-experience",),
        options={
            "summary": (
                "Customer service advisor with six years in insurance and retail.",
                "Calm on difficult calls and quick with systems.",
            ),
            "roles": (
                (
                    "Customer Service Advisor",
                    "Greystone Insurance",
                    40,
                    (
                        "Handled 60 to 80 customer calls a day on claims and renewals",
                        "Coached new advisors during their first two weeks on the phones",
                        "Presented monthly complaint themes to the team leader",
                    ),
                ),
                (
                    "Retail Assistant",
                    "Marigold Retail Group",
                    30,
                    (
                        "Served customers and handled returns and exchanges",
                        "Trained as a key holder after six months",
                    ),
                ),
            ),
            "education": ("GCSEs including Maths and English, Ashcombe Academy, 2016",),
            "skills": ("Customer service", "Complaint handling", "Microsoft Office", "Typing"),
        },
    ),
    Spec(
        "on-005",
        "obvious-no",
        "scripted",
        "12113",
        human={"cloud": 1, "communication": 4},
        contested=("communication",),
        slices=("marketing-background", "no-tech-experience"),
        options={
            "summary": (
                "Marketing coordinator with five years in travel and business software.",
                "Writes clearly and on deadline.",
            ),
            "roles": (
                (
                    "Marketing Coordinator",
                    "Tidewater Travel",
                    36,
                    (
                        "Ran email campaigns to 200,000 subscribers through a cloud-based CRM",
                        "Worked with sales, product and agency stakeholders on seasonal campaigns",
                        "Grew newsletter click-through from 2.1% to 3.4% in a year",
                    ),
                ),
                (
                    "Marketing Assistant",
                    "Pinecrest Analytics",
                    24,
                    (
                        "Wrote blog posts and case studies for the company website",
                        "Organised stands at four trade shows a year",
                    ),
                ),
            ),
            "education": ("BA Marketing, Marlowe State University, 2019",),
            "college": "Marlowe State University",
            "skills": ("Copywriting", "Email marketing", "Web analytics", "CRM tools"),
        },
    ),
    Spec(
        "on-006",
        "obvious-no",
        "scripted",
        "11131",
        human={"communication": 3},
        xfail={"communication": XF_VAGUE},
        slices=("logistics-background", "no-tech-experience"),
        options={
            "summary": (
                "Warehouse supervisor who keeps a night shift of twenty people safe and on target.",
                "Clear, steady and reliable.",
            ),
            "roles": (
                (
                    "Night Shift Supervisor",
                    "Meridian Freight",
                    48,
                    (
                        "Team lead for 20 pickers and packers on the night shift",
                        "Ran a ten-minute safety and targets briefing at the start of every shift",
                        "Raised pick accuracy from 97.2% to 99.5%",
                        "Wrote the step-by-step guides new starters use on the scanners",
                    ),
                ),
                (
                    "Warehouse Operative",
                    "Meridian Freight",
                    40,
                    (
                        "Picked and packed orders for next-day delivery",
                        "Trained on forklift and reach truck",
                    ),
                ),
            ),
            "education": ("NVQ Level 3 in Warehousing and Storage, Calder Valley College, 2017",),
            "college": "Calder Valley College",
            "skills": ("Warehouse systems", "Forklift licence", "Health and safety", "Rotas"),
        },
    ),
    Spec(
        "on-007",
        "obvious-no",
        "scripted",
        "21211",
        slices=("science-background",),
        options={
            "summary": (
                "Laboratory technician with six years in clinical and industrial labs.",
                "Writes small scripts to take the tedium out of lab work.",
            ),
            "roles": (
                (
                    "Laboratory Technician",
                    "Bramble Health",
                    42,
                    (
                        "Ran 300 blood-chemistry samples a day on automated analysers",
                        "Wrote Python scripts that collect readings from the plate readers",
                        "Kept sample records in an MS Access database",
                    ),
                ),
                (
                    "Laboratory Assistant",
                    "Stonebridge Energy",
                    30,
                    ("Prepared fuel samples and logged results for the quality team",),
                ),
            ),
            "education": ("BSc Biomedical Science, Marlowe State University, 2017",),
            "college": "Marlowe State University",
            "skills": ("Laboratory quality control", "Python", "Microsoft Excel", "LIMS"),
        },
    ),
    # ---- career-changer: a whole first career elsewhere ----------------------------------------
    Spec(
        "cc-001",
        "career-changer",
        "scripted",
        "32332",
        human={"communication": 4},
        contested=("communication",),
        xfail={"communication": XF_TEACHING},
        slices=("bootcamp", "teacher"),
        options={
            "headline": "Junior Backend Developer",
            "summary": (
                "Former secondary-school maths teacher, now a backend developer.",
                "Seven years of explaining hard ideas to teenagers and parents; two years of "
                "shipping production code.",
            ),
            "roles": (
                (
                    "Junior Backend Developer",
                    "Parcelworks",
                    26,
                    (
                        "@python",
                        "@databases",
                        "@cloud",
                        "@gen",
                        "Pairs with senior engineers on code review every day",
                    ),
                ),
                (
                    "Mathematics Teacher",
                    "Ashcombe Academy",
                    84,
                    (
                        "Taught maths to classes of up to 32 students aged 11 to 16",
                        "Led a team of 5 maths teachers as second in department",
                        "Presented termly progress data to parents and governors",
                        "Built a homework tracker in a spreadsheet that the whole school adopted",
                    ),
                ),
            ),
            "education": (
                "Software Engineering Immersive (14 weeks), Codeharbor Academy, 2023",
                "PGCE Secondary Mathematics, University of Eastbrook, 2016",
                "BSc Mathematics, University of Eastbrook, 2015",
            ),
            "college": "University of Eastbrook",
        },
    ),
    Spec(
        "cc-002",
        "career-changer",
        "scripted",
        "43433",
        contested=("leadership",),
        slices=("finance-background",),
        options={
            "summary": (
                "Chartered accountant turned backend engineer.",
                "Four years building reconciliation and ledger services at a payments company, "
                "after eight years closing other people's books.",
            ),
            "roles": (
                (
                    "Backend Engineer",
                    "Settlewise",
                    40,
                    ("@python", "@databases", "@cloud", "@leadership", "@communication"),
                ),
                (
                    "Finance Systems Analyst",
                    "Settlewise",
                    22,
                    (
                        "@python-2",
                        "Moved month-end close from five days to two by automating journal imports",
                        "Built the first automated bank reconciliation, matching 96% of lines "
                        "without a person",
                    ),
                ),
                (
                    "Management Accountant",
                    "Harlow & Daughters Accountants",
                    60,
                    (
                        "Closed the monthly books for 14 client companies",
                        "Prepared VAT returns and year-end accounts for owner-managed businesses",
                    ),
                ),
            ),
            "education": ("BA Accounting and Finance, Marlowe State University, 2010",),
            "college": "Marlowe State University",
            "certs": ("Chartered Management Accountant (CIMA), 2013",),
        },
    ),
    Spec(
        "cc-003",
        "career-changer",
        "scripted",
        "33223",
        human={"communication": 4},
        contested=("communication",),
        slices=("healthcare-background",),
        options={
            "summary": (
                "Registered nurse for seven years before moving into health software.",
                "Knows what a clinical system feels like at 3 a.m. on a busy ward.",
            ),
            "roles": (
                (
                    "Software Developer",
                    "Bramble Health",
                    30,
                    ("@python", "@cloud", "@leadership", "@gen"),
                ),
                (
                    "Clinical Systems Analyst",
                    "Bramble Health",
                    34,
                    (
                        "@communication",
                        "@python-1",
                        "@databases",
                        "Configured e-prescribing rules for 14 hospital wards",
                    ),
                ),
                (
                    "Staff Nurse, Surgical Ward",
                    "Riverside General Hospital",
                    78,
                    (
                        "Cared for up to 8 patients a shift on a 28-bed surgical ward",
                        "Became the ward's super-user for the new e-rostering system and trained "
                        "colleagues on it",
                        "Cut handover time by 15 minutes with a structured handover sheet",
                    ),
                ),
            ),
            "education": (
                "BSc Adult Nursing, Calder Valley College, 2012",
                "Introduction to Programming (evening course), Calder Valley College, 2018",
            ),
            "college": "Calder Valley College",
        },
    ),
    Spec(
        "cc-004",
        "career-changer",
        "scripted",
        "52225",
        human={"python": 3, "communication": 4},
        contested=("communication",),
        xfail={
            "python": (
                "keyword scorer reads 'Cython' in research simulation code as expert "
                "production Python (5); raters saw no production service work and scored 3"
            )
        },
        slices=("research-background", "phd"),
        options={
            "summary": (
                "Physicist moving from research into software engineering.",
                "Comfortable with numerical code, large data sets and long-running jobs.",
            ),
            "roles": (
                (
                    "Data Engineer",
                    "Pinecrest Analytics",
                    20,
                    (
                        "@databases",
                        "Built nightly pipelines that load 40 million meter readings",
                        "@gen",
                    ),
                ),
                (
                    "Postdoctoral Researcher, Plasma Physics",
                    "University of Eastbrook",
                    58,
                    (
                        "Wrote simulation code in Python and Cython for plasma turbulence studies",
                        "Ran parameter sweeps of up to 2,000 jobs on the university's Linux "
                        "cluster",
                        "Mentored 3 PhD students through their first papers",
                        "Published author of 6 peer-reviewed papers and a review of edge "
                        "turbulence",
                    ),
                ),
            ),
            "education": (
                "PhD Physics, University of Eastbrook, 2017",
                "MPhys Physics, Northmere University, 2013",
            ),
            "college": "Northmere University",
            "skills": ("Python", "Cython", "NumPy", "SQL", "Linux", "LaTeX", "MPI"),
        },
    ),
    Spec(
        "cc-005",
        "career-changer",
        "scripted",
        "32211",
        human={"leadership": 3},
        contested=("leadership",),
        xfail={
            "leadership": (
                "keyword scorer finds no leadership keyword; raters counted six years running a "
                "kitchen brigade of 12 as leadership (3)"
            )
        },
        slices=("bootcamp", "hospitality-background"),
        options={
            "summary": (
                "Ten years in professional kitchens, the last six as head chef; now a junior "
                "developer.",
                "Used to pressure, tight deadlines and getting a team through a busy service.",
            ),
            "roles": (
                (
                    "Junior Python Developer",
                    "Foxglove Media",
                    18,
                    ("@python", "@cloud", "@databases", "@gen"),
                ),
                (
                    "Head Chef",
                    "The Copper Kettle",
                    72,
                    (
                        "Ran a kitchen brigade of 12 across two services a day",
                        "Cut food waste by 30% by reworking ordering and prep lists",
                        "Trained four commis chefs who went on to run their own sections",
                        "Kept the top food-hygiene rating through six inspections",
                    ),
                ),
                (
                    "Sous Chef",
                    "Harbour Street Bistro",
                    36,
                    ("Planned weekly menus and ordering for a 70-cover restaurant",),
                ),
            ),
            "education": (
                "Full-Stack Web Development bootcamp (16 weeks), Codeharbor Academy, 2024",
                "Level 3 Diploma in Professional Cookery, Westfall Polytechnic, 2011",
            ),
            "college": "Westfall Polytechnic",
        },
    ),
    Spec(
        "cc-006",
        "career-changer",
        "scripted",
        "44342",
        slices=("support-background",),
        options={
            "summary": (
                "Came up through payments support: agent, team manager, support engineer, now "
                "backend engineer.",
                "Knows which failures merchants actually notice.",
            ),
            "roles": (
                (
                    "Backend Engineer",
                    "Harbourpay",
                    32,
                    ("@python", "@cloud", "@communication", "@pay"),
                ),
                (
                    "Support Engineer",
                    "Harbourpay",
                    24,
                    (
                        "@python-1",
                        "@databases",
                        "Wrote runbooks that let support resolve 40% of payment incidents "
                        "without engineering",
                    ),
                ),
                (
                    "Support Team Manager",
                    "Harbourpay",
                    38,
                    (
                        "Line-managed 6 support agents across two time zones",
                        "Brought first-response time from 9 hours to under 2",
                    ),
                ),
                (
                    "Customer Support Agent",
                    "Tidewater Travel",
                    22,
                    ("Answered booking and refund queries by phone and chat",),
                ),
            ),
            "education": ("BA Modern Languages, Marlowe State University, 2012",),
            "college": "Marlowe State University",
        },
    ),
    Spec(
        "cc-007",
        "career-changer",
        "scripted",
        "33332",
        contested=("python",),
        slices=("creative-background",),
        options={
            "summary": (
                "Sound engineer for eight years, software developer for six.",
                "Good at debugging systems live, with an audience.",
            ),
            "roles": (
                (
                    "Backend Developer",
                    "Tidewater Travel",
                    30,
                    ("@databases", "@cloud", "@python", "@gen"),
                ),
                (
                    "Audio Tools Developer",
                    "Hollowtree Games",
                    40,
                    (
                        "@python-1",
                        "Built the tool that batch-converts 30,000 sound files for each release",
                        "@communication",
                    ),
                ),
                (
                    "Live Sound Engineer (freelance)",
                    "Touring and festivals",
                    70,
                    (
                        "Mixed front-of-house sound for tours of up to 40 dates",
                        "Led a team of 4 stage technicians on festival stages",
                        "Designed speaker layouts for venues of 200 to 3,000 people",
                    ),
                ),
            ),
            "education": ("BSc Music Technology, Westfall Polytechnic, 2010",),
            "college": "Westfall Polytechnic",
        },
    ),
    # ---- returner: a parental-leave break ----------------------------------------------------
    Spec(
        "rt-001",
        "returner",
        "returner",
        "44333",
        slices=("parental-leave", "long-gap", "returnship"),
        options={"break_months": 29, "recent_months": 9},
    ),
    Spec(
        "rt-002",
        "returner",
        "returner",
        "54432",
        slices=("parental-leave",),
        options={"break_months": 18, "recent_months": 14, "return_title": "Senior Engineer"},
    ),
    Spec(
        "rt-003",
        "returner",
        "returner",
        "33322",
        slices=("parental-leave", "long-gap", "returnship"),
        options={"break_months": 36, "recent_months": 6},
    ),
    Spec(
        "rt-004",
        "returner",
        "returner",
        "43343",
        slices=("parental-leave", "long-gap"),
        options={"break_months": 24, "recent_months": 12, "return_title": "Backend Engineer"},
    ),
    Spec(
        "rt-005",
        "returner",
        "returner",
        "34232",
        human={"cloud": 3},
        slices=("parental-leave", "long-gap", "returnship"),
        options={"break_months": 40, "recent_months": 5},
    ),
    Spec(
        "rt-006",
        "returner",
        "returner",
        "44444",
        human={"cloud": 3},
        contested=("cloud",),
        slices=("parental-leave", "long-gap"),
        options={
            "break_months": 48,
            "recent_months": 8,
            "reason": "Career break (parental leave, two children)",
        },
    ),
    # ---- contractor-gap: contracts with one six-month gap ------------------------------------
    Spec("cg-001", "contractor-gap", "contractor", "44333", slices=("contractor", "six-month-gap")),
    Spec("cg-002", "contractor-gap", "contractor", "43322", slices=("contractor", "six-month-gap")),
    Spec("cg-003", "contractor-gap", "contractor", "54423", slices=("contractor", "six-month-gap")),
    Spec(
        "cg-004",
        "contractor-gap",
        "contractor",
        "33321",
        human={"communication": 3},
        xfail={"communication": XF_VAGUE},
        slices=("contractor", "six-month-gap"),
    ),
    Spec("cg-005", "contractor-gap", "contractor", "45432", slices=("contractor", "six-month-gap")),
    Spec(
        "cg-006",
        "contractor-gap",
        "contractor",
        "34321",
        contested=("python",),
        slices=("contractor", "six-month-gap"),
    ),
    # ---- title-wrong-industry: a title that means something else where it was held ----------
    Spec(
        "tw-001",
        "title-wrong-industry",
        "scripted",
        "15142",
        human={"cloud": 1},
        xfail={
            "cloud": (
                "keyword scorer reads 'Multi-Region' in a retail operations job title as "
                "multi-region cloud architecture (5); raters saw no cloud experience at all (1)"
            )
        },
        slices=("retail-background", "misleading-keyword"),
        options={
            "summary": (
                "Retail operations manager responsible for 11 stores.",
                "Looking to move into operations at a technology company.",
            ),
            "roles": (
                (
                    "Multi-Region Operations Manager",
                    "Marigold Retail Group",
                    40,
                    (
                        "Managed a team of 9 store managers across the north and the midlands",
                        "Presented quarterly performance reviews to the retail board",
                        "Delivered a 6% rise in regional sales while cutting labour cost by 4%",
                    ),
                ),
                (
                    "Store Manager",
                    "Marigold Retail Group",
                    54,
                    (
                        "Ran a 40-person flagship store with a £12m turnover",
                        "Opened two new stores on time and under budget",
                    ),
                ),
            ),
            "education": ("BA Business Management, Marlowe State University, 2011",),
            "college": "Marlowe State University",
            "skills": ("Retail operations", "P&L ownership", "People management", "Excel"),
        },
    ),
    Spec(
        "tw-002",
        "title-wrong-industry",
        "scripted",
        "21412",
        human={"databases": 1},
        xfail={
            "databases": (
                "keyword scorer reads back-of-book 'indexing' as database indexing (4); raters "
                "saw no database work (1)"
            )
        },
        slices=("publishing-background", "misleading-keyword"),
        options={
            "summary": (
                "Professional book indexer with ten years in publishing.",
                "Meticulous with structure, cross-references and consistency.",
            ),
            "roles": (
                (
                    "Senior Indexer",
                    "Larkspur Press",
                    60,
                    (
                        "Back-of-book indexing for 40 non-fiction titles a year",
                        "Wrote Python scripts that check index cross-references against proofs",
                        "Wrote the house style documentation for freelance indexers",
                    ),
                ),
                (
                    "Library Assistant",
                    "Elmsworth Public Library",
                    36,
                    ("Catalogued new stock and ran the weekly children's reading hour",),
                ),
            ),
            "education": (
                "MA Library and Information Studies, University of Eastbrook, 2014",
                "BA English, University of Eastbrook, 2013",
            ),
            "college": "University of Eastbrook",
            "skills": ("Indexing software", "Controlled vocabularies", "Python", "Proofreading"),
        },
    ),
    Spec(
        "tw-003",
        "title-wrong-industry",
        "scripted",
        "32213",
        human={"cloud": 1},
        contested=("communication",),
        slices=("research-background", "misleading-keyword"),
        options={
            "summary": (
                "Atmospheric scientist who writes and tests numerical weather code.",
                "Exploring a move into software engineering.",
            ),
            "roles": (
                (
                    "Cloud Physics Scientist",
                    "Coldharbour Weather Service",
                    52,
                    (
                        "Maintains the Python code of the cloud microphysics scheme in the "
                        "national forecast model",
                        "Added pytest regression tests that compare forecasts against 5 years of "
                        "radar data",
                        "Ran training workshops for forecasters on new model output",
                    ),
                ),
                (
                    "Research Assistant",
                    "University of Eastbrook",
                    30,
                    ("Analysed aircraft measurements of cloud droplets with SQL and Fortran",),
                ),
            ),
            "education": (
                "PhD Atmospheric Physics, University of Eastbrook, 2017",
                "BSc Physics, Northmere University, 2013",
            ),
            "college": "Northmere University",
            "skills": ("Python", "pytest", "Fortran", "NumPy", "SQL"),
        },
    ),
    Spec(
        "tw-004",
        "title-wrong-industry",
        "scripted",
        "44433",
        slices=("misleading-title",),
        options={
            "summary": (
                "My title says analyst; for three years the job has been building and running "
                "the backend services behind billing.",
                "Looking for a role whose title matches the work.",
            ),
            "roles": (
                (
                    "Data Analyst",
                    "Kittiwake Telecom",
                    44,
                    (
                        "@python",
                        "@databases",
                        "@cloud",
                        "@leadership",
                        "Built the billing-dispute service that customer care uses for every "
                        "refund",
                    ),
                ),
                (
                    "Junior Data Analyst",
                    "Kittiwake Telecom",
                    26,
                    ("@python-1", "@communication", "@gen"),
                ),
            ),
            "education": ("BSc Mathematics, Halvorsen Institute of Technology, 2017",),
            "college": "Halvorsen Institute of Technology",
        },
    ),
    Spec(
        "tw-005",
        "title-wrong-industry",
        "scripted",
        "11133",
        slices=("property-background", "misleading-title", "no-tech-experience"),
        options={
            "summary": (
                "Property development manager: land, planning, build and sale.",
                "Considering a move into product roles at property-technology companies.",
            ),
            "roles": (
                (
                    "Development Manager",
                    "Ashgrove Homes",
                    48,
                    (
                        "Led a team of 6 site and project managers on three housing schemes",
                        "Worked with planners, investors and local stakeholders from land "
                        "purchase to handover",
                        "Delivered 180 homes on time across two phases",
                    ),
                ),
                (
                    "Assistant Development Manager",
                    "Ashgrove Homes",
                    30,
                    (
                        "Prepared planning applications and feasibility studies",
                        "Tracked build costs against budget for two sites",
                    ),
                ),
            ),
            "education": ("BSc Real Estate, Marlowe State University, 2016",),
            "college": "Marlowe State University",
            "skills": ("Project management", "Planning", "Negotiation", "Cost control"),
        },
    ),
    Spec(
        "tw-006",
        "title-wrong-industry",
        "scripted",
        "23214",
        slices=("pre-sales", "misleading-title"),
        options={
            "summary": (
                "Pre-sales solutions engineer in payments: demos, integrations and the hard "
                "technical questions.",
                "Wants to build the product rather than sell it.",
            ),
            "roles": (
                (
                    "Solutions Engineer",
                    "Clearmint",
                    36,
                    (
                        "Gave a conference talk on open banking integrations at a fintech meetup",
                        "Ran live demos of the payments API on AWS sandboxes for 60 prospects a "
                        "year",
                        "Built demo integrations in Python for client pitches",
                        "Wrote SQL queries to size prospects' transaction volumes",
                    ),
                ),
                (
                    "Implementation Consultant",
                    "Quaypoint Financial",
                    30,
                    ("Configured the payments platform for 25 bank clients", "@pay"),
                ),
            ),
            "education": ("BA Economics, Northmere University, 2016",),
            "college": "Northmere University",
            "skills": ("Python", "SQL", "AWS", "Postman", "Solution design"),
        },
    ),
    # ---- expired-cert: the cloud level a keyword reader sees comes from a lapsed cert --------
    Spec(
        "ec-001",
        "expired-cert",
        "expired-cert",
        "45333",
        human={"cloud": 3},
        contested=("cloud",),
        xfail={"cloud": _expired("AWS Certified Solutions Architect – Professional", "2021", 3)},
        slices=("certification",),
        options={
            "hands_on_cloud": 3,
            "certs": ("AWS Certified Solutions Architect – Professional (2018, expired 2021)",),
        },
    ),
    Spec(
        "ec-002",
        "expired-cert",
        "expired-cert",
        "35222",
        human={"cloud": 2},
        xfail={"cloud": _expired("Certified Kubernetes Administrator", "2022", 2)},
        slices=("certification",),
        options={
            "hands_on_cloud": 2,
            "certs": (
                "Certified Kubernetes Administrator (2019, lapsed 2022)",
                "ISTQB Foundation Level, 2016",
            ),
        },
    ),
    Spec(
        "ec-003",
        "expired-cert",
        "expired-cert",
        "45443",
        human={"cloud": 4},
        slices=("certification",),
        options={
            "hands_on_cloud": 4,
            "certs": ("AWS Certified Solutions Architect – Associate (2017, expired 2020)",),
        },
    ),
    Spec(
        "ec-004",
        "expired-cert",
        "expired-cert",
        "35322",
        human={"cloud": 3},
        xfail={"cloud": _expired("AWS Certified Solutions Architect – Associate", "2019", 3)},
        slices=("certification",),
        options={
            "hands_on_cloud": 3,
            "certs": ("AWS Certified Solutions Architect – Associate (2016, not renewed in 2019)",),
        },
    ),
    Spec(
        "ec-005",
        "expired-cert",
        "expired-cert",
        "45332",
        human={"cloud": 2},
        xfail={"cloud": _expired("AWS Certified Solutions Architect – Professional", "2020", 2)},
        slices=("certification",),
        options={
            "hands_on_cloud": 2,
            "certs": (
                "AWS Certified Solutions Architect – Professional (2017; expired 2020)",
                "PCI Professional (PCIP), 2023",
            ),
        },
    ),
    # ---- non-traditional-education ---------------------------------------------------------
    Spec(
        "nt-001",
        "non-traditional-education",
        "standard",
        "43332",
        slices=("bootcamp",),
        options={
            "lengths": (22, 18),
            "education": (
                "Software Engineering Immersive (12 weeks), Codeharbor Academy, 2021",
                "BA English Literature, Calder Valley College, 2018",
            ),
            "college": "Calder Valley College",
        },
    ),
    Spec(
        "nt-002",
        "non-traditional-education",
        "standard",
        "44433",
        slices=("community-college", "lesser-known-college"),
        options={
            "lengths": (36, 30, 18),
            "education": (
                "Associate of Applied Science, Computer Programming, Brightwater Community "
                "College, 2016",
            ),
            "college": "Brightwater Community College",
        },
    ),
    Spec(
        "nt-003",
        "non-traditional-education",
        "standard",
        "53324",
        contested=("leadership",),
        slices=("self-taught", "no-degree", "open-source"),
        options={
            "lengths": (40, 36, 24),
            "education": (
                "A levels in Mathematics, Physics and Music, Westbury Sixth Form College, 2012",
            ),
            "college": "Westbury Sixth Form College",
            "summary": (
                "Self-taught engineer: no degree, ten years of production code and open-source "
                "work.",
                "Happiest deep in a profiler or a payments incident.",
            ),
        },
    ),
    Spec(
        "nt-004",
        "non-traditional-education",
        "standard",
        "33222",
        slices=("apprenticeship", "no-university"),
        options={
            "lengths": (28, 48),
            "titles": ("Software Engineer", "Software Engineering Apprentice"),
            "companies": ("Kestrel Bank", "Kestrel Bank"),
            "education": (
                "BSc Digital and Technology Solutions (degree apprenticeship), Calder Valley "
                "College, 2023",
            ),
            "college": "Calder Valley College",
        },
    ),
    Spec(
        "nt-005",
        "non-traditional-education",
        "standard",
        "44343",
        slices=("distance-learning", "lesser-known-college"),
        options={
            "education": (
                "BSc Computing and IT (part-time, distance learning), Open Meadow University, 2019",
            ),
            "college": "Open Meadow University",
        },
    ),
    Spec(
        "nt-006",
        "non-traditional-education",
        "standard",
        "32211",
        slices=("bootcamp", "junior"),
        options={
            "summary": (
                "Office manager turned backend developer after a 2024 bootcamp.",
                "Likes tidy data, small well-tested changes and clear handovers.",
            ),
            "lengths": (14, 40),
            "titles": ("Junior Backend Developer", "Office Manager"),
            "education": (
                "Backend Web Development bootcamp (16 weeks), Codeharbor Academy, 2024",
                "HND Business, Westfall Polytechnic, 2015",
            ),
            "college": "Westfall Polytechnic",
        },
    ),
    # ---- two-column-pdf: text as a PDF extractor returns it ---------------------------------
    Spec(
        "tc-001",
        "two-column-pdf",
        "two-column",
        "54443",
        slices=("mangled-skills", "ocr-garbled"),
        options={
            "skills_only": {"cloud": ("Kubernetes", "Terraform")},
            "breaks": ("Kubernetes", "Terraform"),
        },
    ),
    Spec("tc-002", "two-column-pdf", "two-column", "44333", slices=("ocr-garbled",)),
    Spec(
        "tc-003",
        "two-column-pdf",
        "two-column",
        "33332",
        slices=("mangled-skills", "ocr-garbled"),
        options={"skills_only": {"databases": ("PostgreSQL",)}, "breaks": ("Postgre|SQL",)},
    ),
    Spec(
        "tc-004",
        "two-column-pdf",
        "two-column",
        "45434",
        slices=("hyphenation", "ocr-garbled"),
        options={"breaks": ("Kubernetes", "Terraform")},
    ),
    Spec("tc-005", "two-column-pdf", "two-column", "22211", slices=("ocr-garbled", "junior")),
    Spec(
        "tc-006",
        "two-column-pdf",
        "two-column",
        "43343",
        slices=("mangled-skills", "ocr-garbled"),
        options={
            "skills_only": {"python": ("asyncio", "SQLAlchemy")},
            "breaks": ("asyncio", "SQLAlchemy"),
        },
    ),
)


# --------------------------------------------------------------------------------------------
# Building the cases
# --------------------------------------------------------------------------------------------

_RATING_PATTERNS = ((0, 0, 0), (0, 0, 0), (0, 0, 1), (-1, 0, 0), (0, 0), (0, 0, 0))
_CONTESTED_PATTERNS = ((-1, 0, 1), (0, 0, 2), (-2, 0, 0), (-1, 1))


def make_ratings(
    rng: random.Random, human: int, keyword: int, contested: bool, xfail: bool
) -> dict[str, int]:
    """Two or three raters whose median is the agreed score; spread ≥ 2 where contested.

    An item the keyword scorer is expected to get right keeps its score inside the raters'
    range; an xfail item keeps it outside, so it cannot pass by accident.
    """
    scale = RUBRIC.scale
    fitting = []
    for pattern in _CONTESTED_PATTERNS if contested else _RATING_PATTERNS:
        scores = [human + step for step in pattern]
        if not all(scale.contains(s) for s in scores):
            continue
        inside = min(scores) <= keyword <= max(scores)
        if xfail == inside:
            continue
        if contested and max(scores) - min(scores) < 2:
            continue
        fitting.append(scores)
    if not fitting:
        raise SystemExit(f"no rating pattern fits human {human}, keyword {keyword}")
    scores = list(rng.choice(fitting))
    rng.shuffle(scores)
    raters = rng.sample(RATERS, len(scores))
    ratings = dict(sorted(zip(raters, scores, strict=True)))
    assert statistics.median(ratings.values()) == human
    return ratings


def _name_clashes(text: str, name: str) -> list[str]:
    """Parts of the name that also stand alone elsewhere in the text."""
    rest = text.replace(name, " ")
    return [
        part
        for part in re.split(r"[\s-]+", name)
        if re.search(rf"(?<!\w){re.escape(part)}(?!\w)", rest, flags=re.IGNORECASE)
    ]


def _period_blind(text: str) -> bool:
    """True when a keyword the reader can see is hidden from the scorer by punctuation."""
    return keyword_levels(text) != keyword_levels(re.sub(r"[./]", " ", text))


def _broken_keywords(clean: str, mangled: str, criterion: str, above: int) -> list[str]:
    folded_clean, folded_mangled = fold_ocr(clean), fold_ocr(mangled)
    lost: list[str] = []
    keywords = RUBRIC.criterion(criterion).keywords
    for level in sorted(keywords, reverse=True):
        if level <= above:
            continue
        for keyword in keywords[level]:
            folded = fold_ocr(keyword)
            if folded in folded_clean and folded not in folded_mangled:
                lost.append(keyword)
    return lost


def build_case(spec: Spec, person: Person, seed: int, age_band: str) -> Case:
    rng = random.Random(seed)
    resume = TEMPLATES[spec.template](spec, person, rng)
    intended = spec.levels
    human = spec.human_levels
    problems: list[str] = []
    if spec.template == "two-column":
        clean = layout_classic(resume, random.Random(seed)).text
        if keyword_levels(clean) != intended:
            problems.append(f"clean text reads {keyword_levels(clean)}, designed {intended}")
        breaks = tuple(spec.options.get("breaks", ()))  # type: ignore[call-overload]
        rendered = layout_two_column(resume, rng, breaks)
        seen = keyword_levels(rendered.text)
    else:
        layout = str(spec.options.get("layout") or rng.choice(sorted(LAYOUTS)))
        rendered = LAYOUTS[layout](resume, rng)
        clean = rendered.text
        seen = keyword_levels(rendered.text)
        if seen != intended:
            problems.append(f"text reads {seen}, designed {intended}")
        if _period_blind(rendered.text):
            problems.append("a keyword sits against punctuation the scorer does not split on")
    text = rendered.text

    xfail: dict[str, str] = {}
    for criterion in CRITERIA:
        off = abs(seen[criterion] - human[criterion])
        reason = spec.xfail.get(criterion)
        if off >= 2 and spec.template == "two-column":
            lost = _broken_keywords(clean, text, criterion, seen[criterion])
            shown = ", ".join(repr(k) for k in lost) or "its keywords"
            reason = (
                f"the two-column PDF extraction broke {shown} apart, so the keyword scorer sees "
                f"{criterion} at {seen[criterion]} where raters scored {human[criterion]}"
            )
        if off >= 2 and not reason:
            problems.append(f"{criterion}: keyword {seen[criterion]} vs human {human[criterion]}")
        if off < 2 and reason:
            problems.append(f"{criterion}: xfail given but the keyword scorer is within 1")
        if off >= 2 and reason:
            xfail[criterion] = reason

    line_count = len(text.splitlines())
    if not 15 <= line_count <= 40:
        problems.append(f"{line_count} lines")
    if find_pii(text):
        problems.append(f"PII-like text {find_pii(text)}")
    clashes = _name_clashes(text, person.name)
    if person.name not in text or clashes:
        problems.append(f"name {person.name!r} missing or its parts recur: {clashes}")
    overall = RUBRIC.overall(seen)
    if abs(overall - RUBRIC.advance_at) <= 2:
        problems.append(f"keyword overall {overall:.1f} sits within 2 of advance_at")
    if problems:
        raise SystemExit(f"{spec.id}: " + "; ".join(problems))

    set_at = f"2026-{rng.randint(1, 3):02d}-{rng.randint(2, 27):02d}"
    expected: dict[str, Expectation] = {}
    ratings: dict[str, dict[str, int]] = {}
    for criterion in CRITERIA:
        ratings[criterion] = make_ratings(
            rng,
            human[criterion],
            seen[criterion],
            criterion in spec.contested,
            criterion in xfail,
        )
        expected[criterion] = Expectation(
            criterion, human[criterion], rng.choice(sorted(ratings[criterion])), set_at
        )

    attributes: dict[str, str | GapPlacement] = {"name": person.name}
    if resume.college and resume.college in text:
        attributes["college"] = resume.college
    if spec.template != "two-column":
        attributes["gap"] = GapPlacement(rendered.gap_line, rendered.after)
    # the age line goes under the first line (the name heading), in every layout
    attributes["age"] = GapPlacement(None, text.splitlines()[0])
    detail = f" breaks {', '.join(spec.options['breaks'])}," if "breaks" in spec.options else ""  # type: ignore[arg-type]
    return Case(
        id=spec.id,
        label=spec.label,
        rubric=RUBRIC.id,
        input_text=text,
        expected=expected,
        slices=spec.slices,
        ratings=ratings,
        attributes=attributes,
        demographics={"sex": person.sex, "race": person.race, "age": age_band},
        xfail=xfail,
        source=(
            f"synthetic: scripts/generate_cases.py template {spec.template},{detail} seed {seed}; "
            "invented person, employers and raters"
        ),
    )


def check_variants() -> None:
    """Counterfactual values must carry no rubric keyword, so the reference scorer's gaps are 0."""
    for attribute in VARIANTS.attributes.values():
        for value in attribute.values:
            if value.value and any(level > 1 for level in keyword_levels(value.value).values()):
                raise SystemExit(f"variant value {value.value!r} contains a rubric keyword")


def check_pools() -> None:
    """Every pooled line shows its criterion at exactly the level it is filed under."""
    for criterion, by_level in BULLETS.items():
        for level, templates in by_level.items():
            for template in templates:
                tags = _tags(template)
                if tags[criterion] != level:
                    raise SystemExit(
                        f"{template!r} reads {criterion} {tags[criterion]}, not {level}"
                    )
    for templates in NEUTRAL.values():
        for template in templates:
            if any(level > 1 for level in _tags(template).values()):
                raise SystemExit(f"neutral line {template!r} contains a rubric keyword")


def _interleaved(people: Sequence[Person], rng: random.Random) -> list[Person]:
    """People dealt round-robin by race (each group shuffled), then alternating sex.

    The specs come grouped by slice, so dealing this way gives every slice a mix of groups: the
    demographic labels are invented, and clustering a group in one slice (all of it in obvious-no,
    say) would put a spurious adverse-impact finding in every audit report of the example.
    """
    by_race: dict[str, list[Person]] = {}
    for person in people:
        by_race.setdefault(person.race, []).append(person)
    for group in by_race.values():
        rng.shuffle(group)
        group.sort(key=lambda p: {"female": 0, "male": 1}.get(p.sex, 2))
        females = [p for p in group if p.sex == "female"]
        others = [p for p in group if p.sex != "female"]
        group[:] = [p for pair in itertools.zip_longest(females, others) for p in pair if p]
    order = sorted(by_race, key=lambda race: (-len(by_race[race]), race))
    dealt: list[Person] = []
    while any(by_race.values()):
        for race in order:
            if by_race[race]:
                dealt.append(by_race[race].pop(0))
    return dealt


def build_golden_set() -> GoldenSet:
    check_pools()
    check_variants()
    people = _interleaved(PEOPLE, random.Random(2026))
    if len(people) < len(SPECS):
        raise SystemExit("more cases than invented people")
    bands = [AGE_BANDS[i % 2] for i in range(len(SPECS))]
    random.Random(AGE_SEED).shuffle(bands)
    cases = tuple(
        build_case(spec, person, seed=11 + 7 * index, age_band=bands[index])
        for index, (spec, person) in enumerate(zip(SPECS, people, strict=False))
    )
    return GoldenSet(rubric=RUBRIC, variants=VARIANTS, cases=cases)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "cases")
    args = parser.parse_args(argv)
    golden = build_golden_set()
    out: Path = args.out
    for label in sorted({case.label for case in golden.cases}):
        for stale in (out / label).glob("*.yaml"):
            stale.unlink()
    written = write_golden_set(golden, out)
    print(f"wrote {len(written)} files ({len(golden.cases)} cases) to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
