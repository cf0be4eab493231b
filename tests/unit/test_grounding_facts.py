"""Grounding as fact matching: quantities in any spelling, units, changes in words, facts moved
to another employer, negation by scope, and structured rationales read as plain text."""

from __future__ import annotations

import pytest

from pytest_screeneval.evidence.rationale.flags import (
    UNGROUNDED,
    rationale_findings,
    rationale_flags,
)
from pytest_screeneval.evidence.rationale.grounding import ungrounded_claims
from pytest_screeneval.evidence.rationale.list_counts import counts_a_list
from pytest_screeneval.evidence.rationale.places import place_spans
from pytest_screeneval.evidence.rationale.quantities import quantities
from pytest_screeneval.evidence.rationale.structured import plain_text

RESUME = """\
EXPERIENCE
Staff Software Engineer, Quarrystone Logistics (2018-Present)
- Led a group of 8 engineers rebuilding the routing service in Go on Google Kubernetes Engine.
- Raised throughput from 1,200 to 2,400 requests per second by batching writes to PostgreSQL.
- Cut p95 latency from 90 ms to 60 ms.
Software Engineer, Fenwick & Lowe Insurance (2012-2018)
- Built the claims intake API in Java, processing 5,000 claims a day.
- Replaced nightly FTP batches with Kafka streams.
- Mentored 3 graduate developers.
EDUCATION
M.Eng. Software Engineering, University of Calderbrook (2012)
"""


def _ungrounded(rationale: str, criterion: str = "technical_skills") -> bool:
    return UNGROUNDED in rationale_flags(RESUME, criterion, 4, rationale)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("5k, 5,000, five and 5 claims", [5000, 5000, 5, 5]),
        ("£1.5M and 1.5 million and 2.4k", [1_500_000, 1_500_000, 2400]),
        ("a dozen, two dozen, four hundred, a quarter of a million", [12, 24, 400, 250_000]),
        ("twenty-five and over a decade and two decades", [25, 10, 20]),
        ("H-1B, a 2009 B.A. and 22ms", [2009, 22]),
    ],
)
def test_quantities_are_read_as_values_in_any_spelling(text: str, values: list[float]) -> None:
    assert [q.value for q in quantities(text)] == values


@pytest.mark.parametrize(
    "rationale",
    [
        "Technical skills: about 5k claims a day at Fenwick & Lowe, in Java.",
        "Technical skills: he doubled throughput to 2.4k requests per second.",
        "Technical skills: routing rebuilt in Go on GKE by a group of eight engineers.",
        "Technical skills: over a decade of Java and Go, latency cut by a third.",
        "Technical skills: no AWS or Azure is listed, though Kafka streams replaced FTP.",
        '{"criterion": "technical_skills", "score": 4, "why": "Go and Java; Kafka at Fenwick"}',
        "**Technical skills (4/5)**\n- Go rebuild at Quarrystone\n- Kafka streams at Fenwick",
    ],
)
def test_the_same_fact_in_another_form_is_grounded(rationale: str) -> None:
    assert not _ungrounded(rationale), rationale_flags(RESUME, "technical_skills", 4, rationale)


@pytest.mark.parametrize(
    "rationale",
    [
        "Technical skills: about 5k requests per second on the routing service.",  # 5,000 claims
        "Technical skills: he led twelve engineers on the routing rebuild.",
        "Technical skills: two decades of Java and Go.",
        "Technical skills: he halved p95 latency with the PostgreSQL work.",
        "Technical skills: he mentored 3 graduate developers at Quarrystone Logistics.",
        "Technical skills: without doubt the best, having built Flink pipelines.",
        "Technical skills: not only Kafka but also Pulsar in production.",
        '{"criterion": "technical_skills", "score": 4, "rationale": "Go, Rust and Java"}',
    ],
)
def test_a_fact_the_resume_does_not_give_there_is_ungrounded(rationale: str) -> None:
    assert _ungrounded(rationale), rationale


def test_structured_rationales_are_read_as_their_values() -> None:
    assert plain_text('{"criterion": "x", "score": 4, "why": ["Go at Quarrystone"]}') == (
        "Go at Quarrystone."
    )
    assert plain_text('```json\n{"leadership": 4, "because": "8 engineers"}\n```') == (
        "8 engineers."
    )
    assert plain_text("## Leadership: 4\n- **8 engineers**\n1. _Go_ rebuild") == (
        "Leadership: 4\n8 engineers\nGo rebuild"
    )
    assert plain_text("Plain prose stays as it is.") == "Plain prose stays as it is."


RESUME_WITH_ACRONYMS = """\
EXPERIENCE
Operations Manager, Kestrel Freight Solutions (2013-Present)
- Led the go-live of SAP EWM; pick accuracy from 97.1% to 99.6%.
- Planned the peaks: 1.4 million units a week at peak.
- Cut agency spend by 18%.
- Grew weekly throughput from 0.6 to 1.4 million units.
Shift Manager, Pellworth Structures (2010-2013)
- Managed a night shift of 30 pickers.
QUALIFICATIONS
- CEng MICE; supervises trainees on the STP
"""


def _flags(rationale: str) -> list[str]:
    return rationale_flags(RESUME_WITH_ACRONYMS, "operations", 4, rationale)


def _findings(rationale: str) -> list[str]:
    return [f.detail for f in rationale_findings(RESUME_WITH_ACRONYMS, "operations", 4, rationale)]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("one point four million units", [1_400_000]),
        ("four point two million pounds, up thirty-five percent", [4_200_000, 35]),
        ("two point five hours", [2.5]),
    ],
)
def test_a_decimal_said_in_words_is_one_value(text: str, values: list[float]) -> None:
    assert [q.value for q in quantities(text)] == values


@pytest.mark.parametrize(
    "rationale",
    [
        # a decimal in words
        "Operations: one point four million units a week at peak, planned by him.",
        # a name spelled out where the resume gives its initials
        "Operations: a Member of the Institution of Civil Engineers and a chartered engineer.",
        "Operations: supervises trainees on the Scientist Training Programme, which is rare.",
        # nationality words are no claims, of the people of the work or of anyone
        "Operations: most of the pickers on the night shift were Romanian and South Asian.",
        # a law is a field of knowledge, not a credential
        "Operations: knows the Equality Act well from the night shift of 30 pickers.",
        # an expectation is not a claim
        "Operations: expecting a further 10% cut in agency spend next year would be optimistic.",
        # a hypothetical subject, a bound on a change, a unit of any people
        "Operations: a Band 8a post would be the natural next step after 30 pickers.",
        "Operations: more than doubled weekly throughput at Kestrel, to 1.4 million units.",
        # a duration with its unit left off; a body named in a grade of its membership
        "Operations: CEng MICE, registered for thirteen, chartered with the ICE.",
        # a lower-case word of an employer's name is no mention of that employer
        "Operations: a night shift of 30 pickers, and later the structures of peak planning.",
    ],
)
def test_other_forms_of_a_fact_and_words_that_claim_nothing_are_grounded(rationale: str) -> None:
    assert UNGROUNDED not in _flags(rationale), _findings(rationale)


@pytest.mark.parametrize(
    "rationale",
    [
        # "almost twenty" is read against the spans of the dates (16 years), not against 18%
        "Operations: almost twenty years running warehouse shifts, most recently at Kestrel.",
        # initials of words that are not in title case spell nothing
        "Operations: runs Siemens S7 and Allen-Bradley PLCs for the SAP EWM go-live.",
        # a decimal point inside a figure does not end the employer's stretch of text
        "Operations: pick accuracy from 97.1% to 99.6% at Pellworth Structures.",
        # a bound is not the change: "doubled" alone is not 0.6 -> 1.4
        "Operations: doubled weekly throughput at Kestrel, to 1.4 million units.",
        # "while at" names where the facts before it happened
        "Operations: managed a night shift of 30 pickers while at Kestrel Freight Solutions.",
        # a decimal in words that the resume does not give
        "Operations: four point one million units a week at peak.",
    ],
)
def test_claims_beside_these_forms_are_still_checked(rationale: str) -> None:
    assert UNGROUNDED in _flags(rationale), _findings(rationale)


RESUME_WITH_APPEALS = """\
EXPERIENCE
Senior Caseworker, Tallowbridge Law Centre (2019-Present)
- Won 31 of 40 tribunal appeals; caseload of 45 appeals.
"""


@pytest.mark.parametrize(
    ("rationale", "ungrounded"),
    [
        # a proportion in words that a pair of the resume's figures gives, after a hedge
        ("Outcomes: roughly three in four tribunal appeals won last year.", False),
        ("Outcomes: about three out of four tribunal appeals won.", False),
        # one it does not give
        ("Outcomes: nine in ten tribunal appeals won last year.", True),
        # the words of a protected term about the people of the work claim nothing
        ("Client care: many of her clients live with PTSD, and she is patient with them.", False),
    ],
)
def test_proportions_and_the_health_of_the_people_of_the_work(
    rationale: str, ungrounded: bool
) -> None:
    flags = rationale_flags(RESUME_WITH_APPEALS, "outcomes", 4, rationale)
    assert (UNGROUNDED in flags) is ungrounded, rationale


SHORT_FORMS_RESUME = """\
EXPERIENCE
Housing Officer, Fenmoor Homes (2016-2021)
- Council representative at the MARAC; managed 420 tenancies.
- Acas-accredited workplace mediator.
QUALIFICATIONS
- PGCE Secondary Science; PGCert Clinical Leadership
- LLB (Hons) Law; MChem Chemistry; BA (Hons) Social Policy
"""


@pytest.mark.parametrize(
    "rationale",
    [
        "Safeguarding: sits on the Multi-Agency Risk Assessment Conference for the district.",
        "Teaching: a Postgraduate Certificate in Education in secondary science.",
        "Leadership: a Postgraduate Certificate in Clinical Leadership as well.",
        "Mediation: accredited by the Advisory, Conciliation and Arbitration Service.",
        "Qualifications: a law degree and a master's in chemistry, then a bachelor's.",
        "Qualifications: an LLB and a BA in social policy from her university.",
    ],
)
def test_a_name_or_degree_in_another_form_of_the_resumes_short_form_is_grounded(
    rationale: str,
) -> None:
    flags = rationale_flags(SHORT_FORMS_RESUME, "qualifications", 4, rationale)
    assert UNGROUNDED not in flags


@pytest.mark.parametrize(
    "rationale",
    [
        "Qualifications: an LLM in housing law on top of her degree.",
        "Qualifications: an MA in social policy and the PGCE in science.",
        "Qualifications: a Postgraduate Diploma in Clinical Leadership and the PGCE.",
        "Safeguarding: chairs the Multi-Agency Public Protection Arrangements panel.",
    ],
)
def test_a_degree_or_body_the_resume_does_not_give_is_still_a_claim(rationale: str) -> None:
    flags = rationale_flags(SHORT_FORMS_RESUME, "qualifications", 4, rationale)
    assert UNGROUNDED in flags


FIGURES_RESUME = """\
EXPERIENCE
Head of Science, Linthorpe Academy (2019-Present)
- Leads a department of 11 teachers and 2 technicians.
- Grade 4+ up from 58% to 71%; case length cut from 110 days to 64.
- Approvals up from 9 to 21 a year; 3 labs refitted.
Teacher, St Ebba's School (2012-2019)
- Ran the STEM club for 60 pupils; 1,100 visits a year.
"""


@pytest.mark.parametrize(
    "rationale",
    [
        "Leadership: leads thirteen staff, eleven teachers and two technicians.",
        "Results: roughly seven in ten pupils now get a grade 4+ in science.",
        "Casework: cut average case length by about 40%, from 110 to 64 days.",
        "Recruitment: approvals more than doubled, from nine a year to twenty-one.",
        "Enrichment: ran a STEM club of 60 pupils before joining Linthorpe Academy.",
        "Enrichment: ran the STEM club for 60 pupils after leaving St Ebba's School.",
        "Visits: over a thousand visits a year to the STEM club at St Ebba's.",
    ],
)
def test_totals_shares_bounds_and_facts_placed_in_time_are_grounded(rationale: str) -> None:
    assert UNGROUNDED not in rationale_flags(FIGURES_RESUME, "results", 4, rationale)


@pytest.mark.parametrize(
    "rationale",
    [
        "Leadership: leads fifteen staff, eleven teachers and two technicians.",
        "Casework: case length cut from 110 days to 3 in her first year.",
        "Casework: cut average case length by about 25%, from 110 to 64 days.",
        "Visits: well over 2,000 visits a year to the STEM club at St Ebba's.",
        "Enrichment: ran the STEM club for 60 pupils since joining Linthorpe Academy.",
    ],
)
def test_a_changed_total_pair_or_bound_is_still_a_claim(rationale: str) -> None:
    assert UNGROUNDED in rationale_flags(FIGURES_RESUME, "results", 4, rationale)


def test_a_fact_named_only_under_another_employer_is_misattributed_without_while() -> None:
    resume = (
        "Key Account Manager, Tessellate HR, Orrindale (2020-Present)\n"
        "- Won the 3-year Harbridge Water contract.\n"
        "Account Executive, Calder Reach Software, Orrindale (2015-2020)\n"
        "- Renewed 26 public sector accounts.\n"
    )
    wrong = "Negotiation: the 3-year Harbridge Water contract she won at Calder Reach Software."
    right = "Negotiation: the 3-year Harbridge Water contract she won at Tessellate HR."
    assert "ungrounded" in rationale_flags(resume, "negotiation", 4, wrong)
    assert rationale_flags(resume, "negotiation", 5, right) == []
    # the town both jobs were in tells no job apart
    town = "Retention: renewed 26 public sector accounts in Orrindale for years."
    assert rationale_flags(resume, "retention", 5, town) == []


# places and peoples (places.py, data/places.yaml)
_DEPOT = "Depot Manager, Cinderford Coaches, Glasgow (2019-Present)\n- Manages 210 bus drivers.\n"


def _place_problems(rationale: str) -> list[str]:
    return ungrounded_claims(_DEPOT, rationale, (), score=4, criterion_words=frozenset())


def test_places_the_people_of_the_work_come_from_are_no_claims() -> None:
    assert _place_problems("His drivers came from Poland, Nigeria and India.") == []
    assert _place_problems("Most passengers are from Eastern Europe and West Africa.") == []
    assert _place_problems("Routes serve Irish Travellers and Romany Gypsies.") == []


def test_a_place_said_of_the_candidates_own_work_is_still_a_claim() -> None:
    assert _place_problems("Managed bus depots in Glasgow and Aberdeen.") != []


def test_a_nation_holding_a_resume_place_and_its_peoples_name_are_grounded() -> None:
    assert _place_problems("Ran bus operations in Scotland for years.") == []
    assert place_spans(_DEPOT, "his Glaswegian accent") == [(4, 14)]
    assert place_spans("Leeds (2019-Present)", "his Glaswegian accent") == []


@pytest.mark.parametrize(
    "rationale",
    [
        "Communication: his thick Glaswegian accent may put off some passengers.",
        "Communication: a strong Valleys accent on the radio that crews may struggle with.",
        "Communication: her broad Norfolk accent could be hard for visitors to follow.",
    ],
)
def test_an_accent_named_after_a_place_is_one_protected_reference_and_no_place_claim(
    rationale: str,
) -> None:
    resume = "Depot Manager, Cinderford Coaches, Leeds (2019-Present)\n- Manages 210 bus drivers.\n"
    findings = rationale_findings(resume, "communication", 3, rationale)
    assert [finding.flag for finding in findings] == ["protected-attribute"]
    named = rationale.split(" accent")[0].split()[-1]
    assert f"{named} accent" in findings[0].detail


# counts of the resume's own lists (list_counts.py)
_QUALIFIED = "QUALIFICATIONS\n- HNC Construction\n- SMSTS\n- CSCS Black Card\n- First Aid at Work\n"


def test_a_count_of_a_resume_list_in_words_is_grounded_and_a_wrong_one_is_not() -> None:
    assert counts_a_list(_QUALIFIED, 4, "four qualifications", 4)
    assert counts_a_list(_QUALIFIED, 4, "four site qualifications", 4)
    assert not counts_a_list(_QUALIFIED, 6, "six qualifications", 3)
    assert not counts_a_list(_QUALIFIED, 4, "four engineers", 4)


# durations and degrees in words (the eighth round's kinds)
_TRADE = (
    "Arborist, Hollybank Trees, Exeter (2012-2019)\n"
    "- Trained 20 apprentices to Level 6.\n- 3 years as team leader.\n"
    "QUALIFICATIONS\n- Foundation Degree in Arboriculture, Westcombe College\n"
    "- Level 3 Certificate in Tree Inspection\n"
)


@pytest.mark.parametrize(
    ("rationale", "grounded"),
    [
        ("Experience: three years as a team leader at Hollybank.", True),  # stated as years
        ("Experience: seven years of tree work in Exeter.", True),  # 2012-2019
        ("Experience: nearly twenty years of tree work.", False),  # 20 apprentices is no span
        ("Experience: six years of climbing and felling.", False),  # "Level 6" is no span
        ("Experience: a quarter of a century in arboriculture.", False),
        ("Qualifications: a foundation degree in arboriculture from Westcombe.", True),
        ("Qualifications: an honours degree in arboriculture from Westcombe.", False),
        ("Qualifications: strong to a degree, with the tree inspection certificate.", True),
    ],
)
def test_durations_and_degrees_are_read_for_what_they_claim(rationale: str, grounded: bool) -> None:
    flags = rationale_flags(_TRADE, "experience qualifications", 4, rationale)
    assert (UNGROUNDED not in flags) is grounded, flags


def test_a_degree_is_a_claim_unless_it_is_an_extent() -> None:
    resume = "Supervisor, Ashgate Homes (2015-2020)\nQUALIFICATIONS\n- NVQ Level 3 in Joinery\n"
    claimed = "Qualifications: a degree in building surveying and the NVQ."
    extent = "Qualifications: to a degree the NVQ covers the joinery side."
    assert UNGROUNDED in rationale_flags(resume, "qualifications", 4, claimed)
    assert UNGROUNDED not in rationale_flags(resume, "qualifications", 4, extent)


_CREWS = (
    "Tree Manager, Rowanlea Trees, Truro (2018-Present)\n"
    "- Leads 2 crews: 7 climbers and 5 ground staff.\n"
    "- Works with 13 subcontractors.\n"
    "QUALIFICATIONS\n- LANTRA Tree Inspection\n"
)


@pytest.mark.parametrize(
    ("rationale", "grounded"),
    [
        ("Leadership: twelve staff across two crews at Rowanlea.", True),  # 7 + 5 on one line
        ("Leadership: fourteen staff across two crews at Rowanlea.", False),
        ("Qualifications: the Lantra tree inspection certificate.", True),
        ("Delivery: works with around a dozen subcontractors.", True),
        ("Delivery: works with a couple of dozen subcontractors.", False),
    ],
)
def test_totals_of_a_line_a_credentials_certificate_and_a_couple_of_dozen(
    rationale: str, grounded: bool
) -> None:
    flags = rationale_flags(_CREWS, "leadership qualifications delivery", 4, rationale)
    assert (UNGROUNDED not in flags) is grounded, flags


def test_a_couple_of_a_scale_is_twice_it() -> None:
    assert [q.value for q in quantities("a couple of dozen, a couple of hundred")] == [24, 200]


_TWO_JOBS = (
    "Lead Pilot, Port of Westerhaven, Hull (2018-2026)\n- Pilots 600 movements a year.\n"
    "Chief Officer, Saltmere Shipping, Grimsby (2006-2018)\n- Ran a deck crew of 9.\n"
)


@pytest.mark.parametrize(
    ("rationale", "grounded"),
    [
        ("Experience: eight years as a pilot at Westerhaven, after twelve at sea.", True),
        ("Experience: twenty years at sea and in pilotage combined, in two jobs.", True),
        ("Experience: over a decade as chief officer at Saltmere Shipping.", True),
        ("Experience: fifteen years as a pilot at Westerhaven so far.", False),
        ("Experience: over a decade at Westerhaven as its lead pilot.", False),
    ],
)
def test_a_duration_said_of_one_job_is_read_against_that_jobs_dates(
    rationale: str, grounded: bool
) -> None:
    flags = rationale_flags(_TWO_JOBS, "experience", 4, rationale)
    assert (UNGROUNDED not in flags) is grounded, flags


@pytest.mark.parametrize(
    "stated",
    ["a two-year contract", "a 10-year asset plan", "a five-yr framework", "a two-year-plus deal"],
)
def test_a_duration_the_resume_states_in_a_joined_word_is_grounded(stated: str) -> None:
    # a joined word counts years by each of its parts: the resume's "two-year" grounds "two years"
    resume = f"Site Lead, Harrowgate Works (2020-2024)\n- Delivered {stated} on time.\n"
    number = stated.split()[1].split("-")[0]
    rationale = f"Delivery: delivered {stated} on time, the {number}-year commitment met in full."
    flags = rationale_flags(resume, "delivery", 4, rationale)
    assert UNGROUNDED not in flags, flags


# The ninth round's kinds of number and unit, each beside the changed figure it must still catch.
NINTH_RESUME = """\
EXPERIENCE
Works Manager, Kellbrook Water, Ashmere (2017-Present)
- Commissioned 40 point machines and a 12 Ml/d filtration plant.
- Leads 14 receptionists and 3 surveyors; surveyed about 4,600 square kilometres.
- Cut design review rework from 28% to 9% on a 260-room site.
"""


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("four and a half thousand square kilometres", [4500.0]),
        ("one and a half million", [1_500_000.0]),
        ("a two-hundred-and-sixty-room hotel", [260.0]),
        ("two and a half times", [2.0]),  # no scale after it: a change, read elsewhere
    ],
)
def test_a_half_before_a_scale_and_hyphens_around_and_are_one_number(
    text: str, values: list[float]
) -> None:
    assert [q.value for q in quantities(text)] == values


@pytest.mark.parametrize(
    ("grounded", "changed"),
    [
        ("Built: commissioned forty point machines on the route.", "Built: 50 point machines."),
        ("Built: a twelve megalitre a day filtration plant.", "Built: a 21 Ml/d plant there."),
        ("Team: leads fourteen reception staff at the works.", "Team: leads 9 surveying staff."),
        ("Scale: a two-hundred-and-sixty-room site for guests.", "Scale: a 290-room site."),
        ("Survey: around four and a half thousand km of seabed.", "Survey: some 9,000 km."),
    ],
)
def test_ninth_round_numbers_are_read_in_their_units(grounded: str, changed: str) -> None:
    assert UNGROUNDED not in rationale_flags(NINTH_RESUME, "survey", 4, grounded), grounded
    assert UNGROUNDED in rationale_flags(NINTH_RESUME, "survey", 4, changed), changed


ROLES_RESUME = """\
EXPERIENCE
Director, Ashgrove Kerr LLP, Wexley (2018-Present)
- Leads 35 fraud investigations.
Manager, Pellham Reade & Co, Castlemoor (2011-2018)
- Traced 14m of misappropriated funds.
- Reviewed 120,000 transactions.
"""


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ("Casework: leads 35 fraud investigations in her current role.", False),
        ("Casework: reviewed 120,000 transactions in her current role.", True),
        ("Casework: reviewed 120,000 transactions at the previous firm.", False),
        ("Casework: leads 35 fraud investigations at the previous firm.", True),
        ("Casework: traced 14m of funds, and in her present post leads 35 cases.", False),
    ],
)
def test_the_current_or_previous_job_said_in_words_is_that_job(text: str, wrong: bool) -> None:
    problems = ungrounded_claims(
        ROLES_RESUME, text, (), score=4, criterion_words=frozenset({"casework"})
    )
    assert any("wrong employer" in p for p in problems) is wrong, problems


CREDENTIALS_RESUME = """\
EXPERIENCE
Stage Manager, Lanthorn Theatre, Eddbury (2020-Present)
- Tested the flying system before every show.
QUALIFICATIONS
- BASIS Certificate in Crop Protection
- Level 5 Diploma in Education and Training
- Chartered Scientist (CSci)
SKILLS
rigging, pyrotechnics planning, QLab
"""


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Safety: holds the BASIS crop protection certificate as listed.", False),
        ("Safety: holds the Level 5 DET teaching diploma as listed.", False),
        ("Safety: she is a chartered scientist with a strong record.", False),
        ("Safety: no pyrotechnics licence, but strong rigging skills.", False),
        ("Safety: holds a rigging certificate from earlier tours.", True),
        ("Safety: seems to hold a pyrotechnics licence from earlier tours.", True),
        ("Safety: holds a diploma in orthodontics as well.", True),
        ("Safety: I believe she is a chartered engineer as well.", True),
    ],
)
def test_a_credential_described_in_words_must_be_one_the_resume_lists(
    text: str, claimed: bool
) -> None:
    problems = ungrounded_claims(
        CREDENTIALS_RESUME, text, (), score=4, criterion_words=frozenset({"safety"})
    )
    assert any("credential not in the resume" in p for p in problems) is claimed, problems


SEASONS_RESUME = """\
EXPERIENCE
Works Manager, Kellbrook Water, Ashmere (2017-Present)
- Runs the works through the winter demand peak.
Process Scientist, Brackley Water, Tolworth (2010-2017)
- Ran water quality sampling.
"""


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Planning: staffs the works over the Christmas and New Year peak.", False),
        ("Planning: covers Bank Holiday and Boxing Day shifts at the works.", False),
        ("Experience: sixteen years in water treatment, nine running the works.", False),
        ("Experience: sixteen years in water treatment, twelve running the works.", True),
        ("Experience: 16 years in water, 9 running the works.", False),
    ],
)
def test_a_holiday_is_no_claim_and_a_duration_s_unit_is_understood_in_its_list(
    text: str, claimed: bool
) -> None:
    assert (UNGROUNDED in rationale_flags(SEASONS_RESUME, "planning", 4, text)) is claimed


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Revenue: grew direct bookings by about a third at Pellow.", False),
        ("Revenue: grew direct bookings by half at Pellow Quay.", True),
        ("Revenue: doubled direct bookings at Pellow Quay.", True),
        ("Revenue: doubled group sales at Pellow Quay.", False),
        ("Revenue: cut room costs by a third at Pellow Quay.", True),
    ],
)
def test_a_change_in_words_may_be_the_percentage_the_resume_states(
    text: str, claimed: bool
) -> None:
    resume = (
        "Supervisor, Pellow Quay Inn, St Anselm (2014-2019)\n"
        "- Grew direct bookings by 35%.\n- Grew group sales by 100%.\n"
    )
    assert (UNGROUNDED in rationale_flags(resume, "revenue", 4, text)) is claimed, text


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Languages: conversational French and Spanish, useful at the desk.", False),
        ("Languages: no German, but speaks French and Spanish at the desk.", False),
        ("Languages: she is fluent in French, Spanish and Italian.", True),
        ("Languages: speaks Welsh with guests from the valleys.", True),
    ],
)
def test_a_language_said_to_be_spoken_must_be_one_the_resume_names(
    text: str, claimed: bool
) -> None:
    resume = "Manager, Cardew Grand, Westhaven (2019-Present)\nSKILLS\nFrench and Spanish\n"
    assert (UNGROUNDED in rationale_flags(resume, "languages", 4, text)) is claimed, text


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Efficiency: cut check-in time by about 57% at the hotel.", False),
        ("Revenue: grew direct bookings by about 60% at the hotel.", True),
    ],
)
def test_a_change_as_a_share_is_read_on_a_line_about_the_same_thing(
    text: str, claimed: bool
) -> None:
    resume = (
        "Manager, Cardew Grand, Westhaven (2019-Present)\n"
        "- Cut average check-in time from 7 minutes to 3.\n- Grew direct bookings.\n"
    )
    assert (UNGROUNDED in rationale_flags(resume, "revenue", 4, text)) is claimed, text


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Experience: 16 years in water, seven in the lab and nine running the works.", False),
        ("Experience: 16 years in water, seven in the lab and twelve running the works.", True),
    ],
)
def test_a_duration_s_unit_is_understood_in_a_later_item_of_its_list(
    text: str, claimed: bool
) -> None:
    assert (UNGROUNDED in rationale_flags(SEASONS_RESUME, "planning", 4, text)) is claimed


TOTALS_RESUME = """\
EXPERIENCE
Site Lead, Harnell Sawmills, Dunmore (2018-Present)
- Leads 5 felling crews of 4 cutters each.
- Manages 3 graders and 3 saw doctors.
"""


# A line's total said of people: groups times their size, or the parts listed together said of
# people in general; a total said with one part's noun is no total.
@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Leadership: leads twenty cutters in all, in five crews.", False),
        ("Leadership: in charge of twenty chainsaw cutters.", False),
        ("Leadership: leads twenty-four cutters in five crews.", True),
        ("Leadership: heads a six-strong grading team.", False),
        ("Leadership: manages six graders at Harnell.", True),
    ],
)
def test_a_count_of_people_may_be_a_line_s_total(text: str, claimed: bool) -> None:
    assert (UNGROUNDED in rationale_flags(TOTALS_RESUME, "leadership", 4, text)) is claimed


LEVELS_RESUME = """\
EXPERIENCE
Rope Access Lead, Kestrel Blade Care, Dunmore (2018-Present)
- Leads 3 crews over 4 wind farms.
- Teaches rope rescue Levels 1-2 to new starters.
QUALIFICATIONS
- IRATA Level 2 rope access
"""


# A number said as a level is one of the levels the resume gives under that word, not any figure
# of the same value elsewhere; a range's dash is no label before a score.
@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Access: holds IRATA Level 2 and leads 3 crews.", False),
        ("Access: holds IRATA Level 3 and leads 3 crews.", True),
        ("Teaching: teaches rope rescue Levels 1-2 to starters.", False),
        ("Teaching: teaches rope rescue Levels 1-4 to starters.", True),
    ],
)
def test_a_level_must_be_one_the_resume_gives(text: str, claimed: bool) -> None:
    assert (UNGROUNDED in rationale_flags(LEVELS_RESUME, "access", 4, text)) is claimed


REMARK_RESUME = """\
EXPERIENCE
Head Cooper, Tallow & Reed Cooperage (family-run), Brackley (2016-Present)
- Raised 220 oak casks a year.
Cooper, Fenmoor Barrels, Ashby (2010-2016)
- Repaired 90 sherry butts.
"""


# An employer's heading with a remark in brackets before its place and dates is still a job: the
# facts of another job said of it are misattributed.
@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Craft: raised 220 oak casks a year at Tallow & Reed.", False),
        ("Craft: repaired 90 sherry butts in the Tallow & Reed yard.", True),
    ],
)
def test_a_heading_with_a_remark_in_brackets_is_a_job(text: str, claimed: bool) -> None:
    assert (UNGROUNDED in rationale_flags(REMARK_RESUME, "craft", 4, text)) is claimed


# A comma before a participle that places the facts before it ("..., built at X") joins them to
# that employer; a comma before another item still ends the stretch the name governs.
@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Craft: 90 sherry butts repaired, all done at Fenmoor.", False),
        ("Craft: 90 sherry butts repaired, all done at Tallow & Reed.", True),
        ("Craft: 90 sherry butts, and now runs the yard at Tallow & Reed.", False),
    ],
)
def test_a_participle_after_a_comma_places_the_facts_before_it(text: str, claimed: bool) -> None:
    assert (UNGROUNDED in rationale_flags(REMARK_RESUME, "craft", 4, text)) is claimed


RATE_RESUME = """\
EXPERIENCE
Cooper, Fenmoor Barrels, Ashby (2010-2016)
- Repaired 900 sherry butts in total.
- Raised 220 oak casks a year.
"""


# A figure the resume gives only as a total is not borne out when said as a rate, and the reverse
# reading of a rate the resume gives stays grounded.
@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Craft: repaired 900 sherry butts in total at Fenmoor.", False),
        ("Craft: repaired 900 sherry butts a year at Fenmoor.", True),
        ("Craft: raised 220 oak casks a year at Fenmoor.", False),
    ],
)
def test_a_total_said_as_a_rate_is_a_claim(text: str, claimed: bool) -> None:
    assert (UNGROUNDED in rationale_flags(RATE_RESUME, "craft", 4, text)) is claimed


# A status said as "certified ...", a qualification or an exam described in words must be the
# resume's, like a licence or a diploma; "qualification" before a noun of the work describes it.
@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Safety: also a certified rigging inspector, which helps.", True),
        ("Safety: I believe she passed the pyrotechnics safety exam.", True),
        ("Safety: holds a stage lighting qualification i think.", True),
        ("Safety: passed the crop protection exam and the education diploma.", False),
        ("Safety: uses the BANT qualification framework with producers.", False),
    ],
)
def test_a_certified_status_qualification_or_exam_must_be_the_resume_s(
    text: str, claimed: bool
) -> None:
    problems = ungrounded_claims(
        CREDENTIALS_RESUME, text, (), score=4, criterion_words=frozenset({"safety"})
    )
    assert any("credential not in the resume" in p for p in problems) is claimed, problems


SCOPE_RESUME = """\
EXPERIENCE
Site Manager, Corran Build, Ashby (2016-Present)
- Delivered all 14 school fit-outs on time.
- Ran 3 sites in the Ashby area.
"""


# A claim of scope in plain words must be one the resume makes with a word of the same reach;
# "the whole team" or "every week" claims no scope.
@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("Delivery: every one of his fit-outs came in on time.", False),
        ("Delivery: every one of his budgets came in under.", True),
        ("Delivery: all of her apprentices passed first time.", True),
        ("Delivery: runs the whole northern portfolio at Corran.", True),
        ("Delivery: builds for every hospital in the county.", True),
        ("Delivery: took the whole team through every weekly review.", False),
        ("Delivery: did not run every site in the county.", False),
        ("Delivery: meets every one of the criteria for the role.", False),
    ],
)
def test_a_claim_of_scope_must_be_one_the_resume_makes(text: str, claimed: bool) -> None:
    assert (UNGROUNDED in rationale_flags(SCOPE_RESUME, "delivery", 4, text)) is claimed
