"""The protected-term lexicon as data: the built-in file, a project's additions, its replacement,
and the one-sentence refusal of a bad file (unit level; tests/plugin/test_plugin_protected_terms.py
runs the ini option end to end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.rationale.flags import PROTECTED_ATTRIBUTE, rationale_flags
from pytest_screeneval.evidence.rationale.protected import (
    BUILTIN_FILE,
    ProtectedLexicon,
    builtin_protected_terms,
    find_protected,
    load_protected_terms,
)

# A caste term: in the protected list of some jurisdictions, not in the built-in one.
CASTE_FILE = """\
categories:
  caste: caste or descent
fragments:
  castes: 'dalit|brahmin|kshatriya'
terms:
  - category: caste
    gate: '{castes} caste'
    pattern: '\\b(?:{castes})\\b|\\bcaste\\b'
    unless_after: '\\s+system\\s+design'
  - category: family
    pattern: ['\\bchildless', '\\b']
"""
RATIONALE_AGE = "Leadership is strong, though her age may make the night shifts harder."
RATIONALE_CASTE = "Leadership is strong; as a Dalit candidate she led the regional team well."
RESUME = "Team lead, Brindle Analytics (2019-2024): led a team of 6 analysts.\n"


def _write(tmp_path: Path, text: str, name: str = "terms.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _categories(text: str, lexicon: ProtectedLexicon | None = None) -> set[str]:
    return {match.category for match in find_protected(text, lexicon=lexicon)}


def test_the_builtin_file_is_the_default_and_is_compiled_once() -> None:
    assert BUILTIN_FILE.is_file()
    assert builtin_protected_terms() is builtin_protected_terms()
    text = RATIONALE_AGE.lower()
    assert find_protected(text) == find_protected(text, lexicon=builtin_protected_terms())
    assert _categories(text) == {"age"}


def test_a_project_file_adds_terms_categories_and_fragments(tmp_path: Path) -> None:
    lexicon = load_protected_terms(_write(tmp_path, CASTE_FILE))
    assert len(lexicon.terms) == len(builtin_protected_terms().terms) + 2
    # the added terms, with the category's own words, and the built-in ones still there
    assert _categories(RATIONALE_CASTE, lexicon=lexicon) == {"caste or descent"}
    assert _categories(RATIONALE_AGE, lexicon=lexicon) == {"age"}
    assert _categories("She is childless.", lexicon=lexicon) == {"marital or family status"}
    assert _categories("Led the caste system design review.", lexicon=lexicon) == set()
    # the built-in lexicon alone does not know the term
    assert _categories(RATIONALE_CASTE) == set()


def test_the_added_terms_reach_the_rationale_flags(tmp_path: Path) -> None:
    lexicon = load_protected_terms(_write(tmp_path, CASTE_FILE))
    flags = rationale_flags(RESUME, "leadership", 4, RATIONALE_CASTE, protected_terms=lexicon)
    assert PROTECTED_ATTRIBUTE in flags
    assert PROTECTED_ATTRIBUTE not in rationale_flags(RESUME, "leadership", 4, RATIONALE_CASTE)


def test_gates_never_change_the_answer_of_an_extended_lexicon(tmp_path: Path) -> None:
    lexicon = load_protected_terms(_write(tmp_path, CASTE_FILE))
    for text in (RATIONALE_CASTE, RATIONALE_AGE, "She is childless.", "A brahmin; a dalit."):
        assert find_protected(text, lexicon=lexicon) == find_protected(
            text, lexicon=lexicon, gated=False
        )


def test_replace_true_drops_the_builtin_terms_but_keeps_their_vocabulary(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "replace: true\n"
        "terms:\n"
        "  - category: origin\n"  # a built-in category
        "    gate: '{demonyms}'\n"  # and a built-in fragment, in a gate and a pattern
        "    pattern: '\\b(?:{demonyms})\\s+passport\\b'\n",
    )
    lexicon = load_protected_terms(path)
    assert len(lexicon.terms) == 1
    assert _categories(RATIONALE_AGE, lexicon=lexicon) == set()
    assert _categories("She holds a Kenyan passport.", lexicon=lexicon) == {
        "national origin or nationality"
    }


BAD_FILES = [
    ("terms:\n  - category: age\n    pattern: x: y\n", "line 3", "invalid YAML (mapping values"),
    ("- just\n- a list\n", None, "must be a mapping"),
    ("terms: {}\n", None, "'terms' must be a list"),
    ("replace: sometimes\nterms: []\n", None, "'replace' must be true or false"),
    ("term: []\n", None, "unknown key 'term'"),
    ("terms:\n  - category: caste\n    pattern: 'x'\n", "line 2", "category 'caste'"),
    ("terms:\n  - category: age\n    gate: age\n", "line 2", "needs a 'pattern'"),
    ("terms:\n  - category: age\n    pattern: '(unclosed'\n", "line 2", "not a valid regular"),
    ("terms:\n  - category: age\n    pattern: '{nope}'\n", "line 2", "unknown fragment {nope}"),
    ("terms:\n\n  - category: age\n    gate: A\n    pattern: x\n", "line 3", "gate word 'A'"),
    ("terms:\n  - category: age\n    pattern: x\n    unless: y\n", "line 2", "unknown term key"),
    ("categories:\n  age: years\nterms: []\n", None, "the category 'age' is already built in"),
]


@pytest.mark.parametrize(("text", "line", "problem"), BAD_FILES)
def test_a_bad_file_is_one_sentence_naming_it(
    tmp_path: Path, text: str, line: str | None, problem: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ScreenevalError) as caught:
        load_protected_terms(path, shown_as="ini/terms.yaml")
    message = str(caught.value)
    assert "ini/terms.yaml" in message and problem in message, message
    assert (line is None) == ("line " not in message), message
    if line is not None:
        assert f"ini/terms.yaml, {line}:" in message, message
    assert "\n" not in message and message.endswith("."), message
    assert message.count(". ") == 0, message  # one sentence


def test_a_missing_file_is_one_sentence(tmp_path: Path) -> None:
    missing = r"^Cannot read the protected terms file \S*nope\.yaml \(No such file"
    with pytest.raises(ScreenevalError, match=missing):
        load_protected_terms(tmp_path / "nope.yaml")


# --------------------------------------------------------------------------------------------
# Phrases in context
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("As a late-career engineer he may be slow to adapt.", "age"),
        ("As a late career engineer he may be slow to adapt.", "age"),
        ("She is a bit long in the tooth for this post.", "age"),
        ("With the school run every morning she cannot do earlies.", "marital or family status"),
        ("She stammers a little in meetings.", "disability or health"),
        ("She mentioned a stammering problem.", "disability or health"),
        ("He uses a screen reader, so pairing may be slow.", "disability or health"),
        ("She would need a Skilled Worker visa to start.", "national origin or nationality"),
        ("She will want every Eid off.", "religion"),
        ("He lives on the Marshgate estate, a rough area.", "postcode or neighbourhood"),
        ("She is due in March, so Q2 is at risk.", "pregnancy"),
        ("Her girlfriend works at a competitor.", "sexual orientation"),
        ("She is a good deal older than the staff nurses.", "age"),
        ("Capable, but probably set in her ways at this stage of life.", "age"),
        ("Most of the team are Polish and so is she.", "national origin or nationality"),
    ],
)
def test_coded_phrases_are_found_with_their_variants(text: str, category: str) -> None:
    assert category in _categories(text), find_protected(text)


@pytest.mark.parametrize(
    "text",
    [
        "He dealt with the age of the legacy claims codebase.",
        "She married the payroll and pension systems during the cutover.",
        "She sold the parental leave policy tool to HR directors.",
        "The release is due in March, after the audit.",
        "He built a postcode lookup service for the council.",
        "The server estate was patched within a week.",
        "Each child suite inherits fixtures from a parent conftest.",
        "Screen-reader checks for users with visual impairments.",
        "Many of the customers are elderly, so the macros are slower.",
        "Fault-finding on ageing conveyor systems.",
        "We are expecting a 20% uplift from the launch.",
    ],
)
def test_what_a_term_refers_to_is_read_from_both_sides(text: str) -> None:
    assert find_protected(text) == [], find_protected(text)


# A term said of a thing of the work, an audience described after a comma, a possessive
# audience, things of an age, parts of an assembly: each a kind of look-alike, with the
# candidate's own reference beside it, which must still be found.
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("The old FTP batches disabled once the streams went live.", "She is disabled."),
        ("SSL 3.0 retired across the estate.", "He retired in 2019 and came back."),
        ("She disabled legacy cron jobs on the build servers.", "As a disabled engineer she..."),
        ("Clinics for customers, most of them elderly.", "She is elderly for the role."),
        ("Advice for customers managing diabetes.", "She has diabetes, so shifts are hard."),
        ("Donation forms for a kids' charity.", "Her kids come first, she said."),
        ("A plant of that age needs planned maintenance.", "Her age may be a concern."),
        ("Each child assembly is checked against its parent part.", "She is a single parent."),
        # a thing of the work a few describing words after "ageing"
        ("Replaced the ageing paper pick lists with scanners.", "His ageing parents need him."),
        ("Assessed 140 ageing masonry arch bridges.", "An ageing engineer may slow the team."),
        # a festival named as a trading peak or product event of the work
        ("Planned the Christmas and Diwali trading peaks.", "He will want Diwali off."),
        # an expectation, not a pregnancy
        ("Expecting her to get the lab through UKAS is a big ask.", "She is expecting in May."),
        # a person at an age, then what is said of them
        ("The site at 41 Mill Lane is a depot.", "A career changer at 41 is a gamble."),
        # mental health as the field of the work: a law, a title, a team
        ("Reviews under the Mental Health Act.", "Her mental health may suffer here."),
        ("An Approved Mental Health Professional since 2020.", "She has mental health issues."),
        # the health of the people of the work, described after them
        ("30 adults are mostly living with psychosis or bipolar.", "He is bipolar, so..."),
        ("A clinic for pregnant and postnatal women.", "She is pregnant, so cover is needed."),
        ("Child and adult safeguarding are both covered.", "Her child is unwell."),
        # a degree line copied with its year, and a festival among a product's events
        ("- MSc Advanced Practice (2019)", "She has an MSc from 2019, so she is young."),
        ("The Lunar New Year, Diwali and Easter seasonal in-game events.", "He keeps Diwali."),
        ("Seasonal events such as Diwali and Hanukkah.", "She will want Hanukkah off."),
    ],
)
def test_a_look_alike_is_innocent_and_the_reference_beside_it_is_not(
    innocent: str, protected: str
) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


def test_a_match_inside_a_longer_one_of_its_category_is_one_finding() -> None:
    findings = find_protected("Good, but at his age he may not want it.")
    assert [(m.category, m.text) for m in findings] == [("age", "at his age")]
    flags = rationale_flags(
        RESUME, "leadership", 3, "Leadership is fine, but she is long in the tooth."
    )
    assert PROTECTED_ATTRIBUTE in flags


PHRASES_FILE = """\
categories:
  caste: caste or descent
phrases:
  caste:
    - upper caste|castes
    - {phrase: [of low birth, from a low caste], about: candidate}
  age:
    - digital immigrant
"""


def test_a_project_file_adds_phrases_per_category(tmp_path: Path) -> None:
    lexicon = load_protected_terms(_write(tmp_path, PHRASES_FILE))
    assert _categories("He is from an upper caste family.", lexicon) == {"caste or descent"}
    assert _categories("She is of low birth.", lexicon) == {"caste or descent"}
    # about: candidate -- no person beside it, no reference
    assert _categories("The novel is about a hero of low birth.", lexicon) == set()
    assert "age" in _categories("A digital immigrant like him needs training.", lexicon)
    assert "age" not in _categories("A digital immigrant like him needs training.")


@pytest.mark.parametrize(
    ("body", "line", "problem"),
    [
        ("phrases:\n  age:\n    - fine phrase\n    - 'bad [regex'\n", 4, "must be words"),
        ("phrases:\n  nosuch:\n    - a phrase\n", 3, "is not one of"),
        ("phrases:\n  age:\n    - {phrase: old hand, about: everyone}\n", 3, "'about' must be"),
        ("phrases:\n  age:\n    - {phrase: old hand, colour: red}\n", 3, "unknown phrase key"),
        ("phrases:\n  age: old hand\n", 2, "must be a list"),
    ],
)
def test_a_bad_phrase_is_refused_with_its_file_and_line(
    tmp_path: Path, body: str, line: int, problem: str
) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(ScreenevalError) as refused:
        load_protected_terms(path, shown_as="terms.yaml")
    message = str(refused.value)
    assert message.startswith("Cannot use the protected terms in terms.yaml")
    assert f"line {line}:" in message and problem in message, message


# The rubric's own words are the question asked: the criterion's name, in any case, with spaces or
# hyphens for its underscores, at the start or in the running text, is no reference to the
# candidate; the candidate's own state in the same words ("her own ...", "... struggles",
# "maternity leave") and any other reference beside it still are.
@pytest.mark.parametrize(
    ("criterion", "innocent", "protected"),
    [
        (
            "mental_health",
            "Mental health: her mental health experience spans adults and young people.",
            "Mental health: strong, though he has had his own mental health struggles.",
        ),
        (
            "maternity_care",
            "Maternity care: leads the community maternity care team of 11 midwives.",
            "Maternity care: strong, but she will be on maternity leave herself next year.",
        ),
        (
            "accessibility",
            "Accessibility: her accessibility audits cover 60 public-sector websites.",
            "Accessibility: her own accessibility needs would mean changes to the office.",
        ),
        (
            "lgbtq_youth_work",
            "Her LGBTQ+ youth work is the core of the post, with three weekly groups.",
            "LGBTQ youth work: strong, and being gay himself he will relate to them.",
        ),
        (
            "gender_based_violence",
            "Gender-based violence: runs the gender-based violence outreach clinic.",
            "Gender-based violence: strong, but as a man he may not be accepted here.",
        ),
        (
            "refugee_resettlement",
            "REFUGEE-RESETTLEMENT: her refugee resettlement work helped 260 families.",
            "Refugee resettlement: as a refugee herself she may find it too close to home.",
        ),
    ],
)
def test_the_criterion_own_name_is_the_question_not_the_candidate(
    criterion: str, innocent: str, protected: str
) -> None:
    resume = "EXPERIENCE\nCaseworker, Tallowbridge Trust (2019-Present)\n"
    assert PROTECTED_ATTRIBUTE not in rationale_flags(resume, criterion, 4, innocent), innocent
    assert PROTECTED_ATTRIBUTE in rationale_flags(resume, criterion, 4, protected), protected


# The people of the work with a possessive or after "many of her", described after a comma; a
# graduation year beside another dated fact; a list of describing words before the service noun;
# a number of people; the range of a caseload; a spouse, who is a person and no modifier of a
# thing of the work. Each with the candidate's own reference beside it, which must be found.
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("Many of her pupils live with autism.", "She lives with autism herself."),
        ("Many of her students live with autism or ADHD.", "She has ADHD, so deadlines slip."),
        ("Patients, many of them elderly and living with diabetes.", "She has diabetes."),
        ("Her clients, many of them recently separated mothers.", "She is a single mother."),
        ("Many of her parents in care proceedings live with addiction.", "Her parents are ill."),
        ("Teaching ever since graduating, chartered since 2015.", "She graduated in 2012."),
        ("Runs the antenatal pelvic-health class for the trust.", "She is pregnant herself."),
        ("Advised on asylum, family reunion and visa appeals.", "She is on a spouse visa."),
        ("Key worker for 12 women and their children.", "As one of 3 women on the team she..."),
        ("A caseload that runs from divorce to care proceedings.", "She is recently divorced."),
        ("Advised on spouse visas and naturalisation.", "She and her wife run a bakery."),
        ("Manages eight disability advisers.", "Her disability means some days off."),
        ("Ms Okafor led the ward round.", "Her MS flares up in the winter."),
        ("Set up services for families from every background.", "She is from a Somali family."),
    ],
)
def test_the_people_and_work_of_a_protected_field_are_not_the_candidate(
    innocent: str, protected: str
) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


# One rule for every term of every category: a term that modifies, denotes or is said of a group
# of people of the work describes the work; beside each, the candidate named in the same words.
GROUP_PAIRS = [
    # (a group of the work: nothing found, the candidate: found)
    (
        "Care: runs tablet classes for older people in three care homes.",
        "Team fit: as an older woman she may tire on the night shifts.",
    ),
    (
        "Spiritual care: her Muslim and Hindu patients get rites that fit their faith.",
        "Spiritual care: she is a Muslim herself, which could bias the team.",
    ),
    (
        "Youth work: many of her clients are gay or bi, and the group is a safe space.",
        "Youth work: she is gay, so she will relate to the group.",
    ),
    (
        "Team fit: the clinic's clients are mostly Black African, which shapes the service.",
        "Team fit: the clinic's clients are mostly Black African and so is she.",
    ),
    (
        "Outreach: works with Muslim families across the borough every week.",
        "Availability: his Muslim parents may object to evening work.",
    ),
    (
        "Adoption: placed 26 children with adoptive families over five years.",
        "Availability: she has two young children at home, so evenings are hard.",
    ),
    (
        "Youth work: set up the trans and non-binary young people's support group.",
        "Team fit: as a trans man he may face questions from some parents.",
    ),
    (
        "Volunteers: recruited 25 digital champions, most of them retired, for the classes.",
        "Team fit: she is retired herself, like most of her volunteers.",
    ),
    (
        "Recruitment: ran recruitment for same-sex and single-parent foster carers.",
        "Team fit: she and her wife foster teenagers at weekends.",
    ),
    (
        "Refuge work: her residents live with the effects of abuse, and she keeps them safe.",
        "Team fit: women like her often leave after having children.",
    ),
    (
        "Stakeholders: the board's trustees, many of them women, backed her plan.",
        "Stakeholders: she may struggle with the regional directors, who are all men.",
    ),
    # kin with no owner named: the work's children, or the candidate's at home or had by her
    (
        "Family support: ran parent groups where children and parents played together weekly.",
        "Availability: with two small children at home she may not cover the late shifts.",
    ),
    (
        "Teaching: she has taught children aged five to seven at Fernhill Primary.",
        "Reliability: she has got twins, so the early rota could be hard for her.",
    ),
]

WORK_OBJECT_PAIRS = [
    (
        "Teaching: taught Sikhism and Islam at KS3 and planned the mosque visits.",
        "Availability: she attends the mosque on Fridays, so lunchtime cover is hard.",
    ),
    (
        "Teaching: she teaches Religious Studies to Years 10 and 11.",
        "Team fit: she is religious and may not fit the team's social life.",
    ),
    (
        "Midwifery: led the maternity team's move to continuity of carer.",
        "Availability: she needs disability support at work, so adjustments are due.",
    ),
    (
        "Youth work: runs a weekly group for LGBTQ+ members aged 16-25.",
        "Youth work: she is a lesbian herself and runs the group well.",
    ),
    (
        "Qualifications: OISC level two in immigration and asylum from the clinic.",
        "Right to work: her own visa runs out next year, so she would need sponsorship.",
    ),
]


@pytest.mark.parametrize(("work", "candidate"), GROUP_PAIRS + WORK_OBJECT_PAIRS)
def test_a_group_of_the_work_passes_beside_the_candidate_named_in_its_words(
    work: str, candidate: str
) -> None:
    assert find_protected(work) == [], work
    assert find_protected(candidate), candidate


def test_the_group_rule_gives_the_same_answer_ungated() -> None:
    for work, candidate in GROUP_PAIRS + WORK_OBJECT_PAIRS:
        for text in (work, candidate):
            assert find_protected(text) == find_protected(text, gated=False)


def test_the_names_describing_a_group_of_the_work_are_no_claims_about_the_resume() -> None:
    resume = "Caseworker, Harbourside Clinic (2020-2024)\n- Advice for 60 refugees from Sudan.\n"
    described = (
        "Casework: she works with the Sudanese families at the clinic every week.",
        "Casework: most of her clients are Eritrean or Sudanese, and she works well with them.",
    )
    for text in described:
        assert rationale_flags(resume, "casework", 4, text) == [], text
    claimed = "Casework: she also ran the clinic's Sudanese Welfare Fund at Harbourside."
    assert "ungrounded" in rationale_flags(resume, "casework", 4, claimed)


def test_the_candidates_arrival_or_residence_said_with_a_place_name_is_protected() -> None:
    resume = "Support Worker, Harbourside Clinic (2020-2024)\n- Advice for 60 families.\n"
    mentions = (
        "Team fit: she came to Britain from Eritrea herself, like many clients.",
        "Team fit: lives on the Brookfold Park estate, close to the clinic.",
        "Availability: lives in the Dunmore area, an hour from the office.",
    )
    for text in mentions:
        assert find_protected(text), text
    look_alikes = (
        "Casework: the families she supports came to Britain from Syria and Sudan.",
        "Casework: supports tenants living on the Marsh Lane estate in the city.",
    )
    for text in look_alikes:
        assert find_protected(text) == [], text
    # the named estate is a place the resume does not give: it stays a grounding claim
    flags = rationale_flags(resume, "team_fit", 3, mentions[1])
    assert flags == ["protected-attribute", "ungrounded"], flags
    # the country in an arrival is the protected reference's own words
    assert rationale_flags(resume, "team_fit", 3, mentions[0]) == ["protected-attribute"]


@pytest.mark.parametrize(
    ("fragment", "starts"),
    [
        ("(?:leaders?|engineers?)", ["leader", "engineer"]),  # an optional last letter left out
        ("(?:m[ae]n|wom[ae]n)", ["man", "men", "woman", "women"]),  # a class spelled out
        ("south\\s+african|sri\\s+lankan", ["south", "sri"]),
        ("leader(?:s|ship)?|filipin[oa]", ["leader", "filipino", "filipina"]),  # a group ends it
        ("(?:x|kids)", None),  # one letter to wait for: the term is tried on every text
    ],
)
def test_a_fragment_gates_a_term_by_what_every_match_starts_with(
    fragment: str, starts: list[str] | None
) -> None:
    from pytest_screeneval.evidence.rationale.protected import _literal_starts

    assert _literal_starts(fragment) == starts


# Kinds the eighth round of new fields showed, each with its look-alike: a condition by its short
# name, a possessive with a describing word before the condition, a residence given as a postcode
# district, gendered descriptions, UK immigration status, observances by name, the things a trade
# works on after a term, and a discipline named after a device.
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("A clinic where clients with MS get seating reviews.", "He has MS, so travel is hard."),
        ("Set up MS Teams and SharePoint for the office.", "Back after recovering from ME."),
        ("Audited the cooling condition monitoring.", "Her lung condition may limit site work."),
        ("Treated elderly horses and pregnant mares.", "His kidney condition means time off."),
        ("Replaced the ageing Sage 200 setup in a month.", "Her wrist injury, sadly, slows her."),
        ("Catalogued the Hindu shrine paintings for loan.", "Lives in LS9, close to the office."),
        ("Led the ageing engines overhaul at the base.", "Lives out in the CF3 area by the docks."),
        ("Tenants living in B21 had their kitchens renewed.", "A very motherly way with trainees."),
        ("Renewed the Ramadan menus for the canteen.", "She has pre-settled status, so check it."),
        ("A BSc in prosthetics and orthotics.", "He wears a prosthetic leg, so ladders are out."),
        ("Guided a Purim events programme for the museum.", "Needs Vesak off every year."),
    ],
)
def test_the_new_field_kinds_are_found_beside_their_look_alikes(
    innocent: str, protected: str
) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


def test_a_postcode_district_is_where_the_candidate_lives_and_stays_a_claim() -> None:
    resume = "Conservator, Quayside Trust, Leeds (2019-Present)\n- Surveyed 900 objects.\n"
    # the district is a place the resume does not give: it stays a grounding claim
    district = "Commute: lives in LS27, so the Leeds store is close."
    assert rationale_flags(resume, "commute", 3, district) == ["protected-attribute", "ungrounded"]


# Kinds the ninth round of new fields showed, each with its look-alike: a partner named by a first
# name of the candidate's own sex, a residence given as a named county or region with no pronoun
# beside it, another pregnant person the work looks after, and an installation of a trade said to
# be ageing.
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("He and his partner Laura both work shifts.", "She and her partner Ruth run a choir."),
        ("Her partner firm Kellmoor audits the books.", "Lives with his partner Gareth nearby."),
        ("Clients who live in Dunsfordshire get visits.", "Lives out in Dunsfordshire, far away."),
        ("Practically lives in Excel, which is fine.", "Living in the Fen Hundreds, an hour off."),
        ("Briefed a pregnant passenger on the drill.", "She is pregnant, so touring is hard."),
        ("Renewed ageing relay interlockings on the line.", "She is an ageing engineer now."),
    ],
)
def test_the_ninth_round_kinds_are_found_beside_their_look_alikes(
    innocent: str, protected: str
) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


def test_a_named_county_stays_a_claim_and_a_partner_name_does_not() -> None:
    resume = "Surveyor, Tidemark Surveys, Portleven (2019-Present)\n- Charted 12 harbours.\n"
    county = "Commute: lives out in Dunsfordshire, far from the Portleven base."
    assert rationale_flags(resume, "commute", 3, county) == ["protected-attribute", "ungrounded"]
    partner = "Team fit: lives with his partner Gareth, which the crew may joke about."
    assert rationale_flags(resume, "team_fit", 3, partner) == ["protected-attribute"]


# Kinds the blind set's dev half showed: a protected adjective said of a product, part,
# instrument or animal of a trade named after it, in a list whose next item may open with an
# article; a person after the noun keeps it the person's ("a female line manager").
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("Blended aged vetiver accords for the spring range.", "He is aged 58 and slowing down."),
        ("Swapped male and female quick-release couplings.", "A female line manager would suit."),
        ("Runs both the masculine and the feminine scent lines.", "A very feminine manner."),
        ("Set up a kosher and a halal-certified goat cheese line.", "She keeps kosher at home."),
        ("Restrung the ageing upright pianos at the school.", "An ageing tuner, slower now."),
        ("Weighed the berried female crabs before release.", "The only female on the crew."),
    ],
)
def test_a_term_said_of_a_thing_of_a_trade_is_the_work(innocent: str, protected: str) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


# A term said of the staff or learners of the work with a share in words ("more than half of
# them") or after where they are ("at the Leaton centre, four of them"), a profession or body
# named after the people it serves, and a subject taught: the work, beside the candidate's own.
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("Leads 11 coaches, more than half of them Deaf.", "He is Deaf himself, which helps."),
        ("Runs 6 coaches at Harlow Hall, 4 of them Deaf.", "She is one of the Deaf staff."),
        ("Holds a teacher of the deaf qualification.", "Deaf since birth, she lip-reads."),
        ("Deaf history and BSL poetry anchor his lessons.", "Grew up in her own Deaf culture."),
        ("Teaches Deaf culture to adult learners.", "A candidate of Jewish heritage."),
        ("Jewish history is one of the modules.", "Steeped in Sikh culture from birth."),
    ],
)
def test_a_term_said_of_the_staff_or_subject_of_the_work_is_the_work(
    innocent: str, protected: str
) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


# Places of worship in the plural are the sites or clients of the work unless a person stands
# beside them; a thing of the work raised in a system is no upbringing.
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("Voices organs for schools, chapels and churches.", "Volunteers at St. Jude's Church."),
        ("Surveyed the roofs of six mosques in the city.", "She and her sons attend two mosques."),
        ("Logged faults, with job tickets raised in Maximo.", "He was raised in Ghana, in fact."),
        ("Purchase orders were all raised in Oracle.", "She grew up in Leeds, like the team."),
        ("Families who attend local churches get visits.", "Worships at two mosques weekly."),
    ],
)
def test_plural_places_of_worship_and_things_raised_in_a_system_are_the_work(
    innocent: str, protected: str
) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


# Coded references the blind set's dev half showed, each beside a look-alike of the work: a
# colour before a person of any trade, a health status with when it holds, a marriage in other
# words, a child of Deaf adults, parents who raised the candidate, a commute as where they live,
# an estate one lives "out on", a coded sex noun, a conjunction that no list of people passes.
@pytest.mark.parametrize(
    ("innocent", "protected"),
    [
        ("Published the White Paper on net zero.", "A Black farrier would stand out here."),
        ("Many of her patients are in remission.", "Currently in remission, so pace may vary."),
        ("Wedding cakes for newly wed couples.", "Just wed, so travel may not appeal."),
        ("Runs BSL groups for Deaf parents.", "A CODA, brought up by Deaf parents."),
        ("Drivers who commute in from the coast.", "Commutes in from the coast each day."),
        ("Housing officer for the Elm Vale estate.", "Lives out on the Elm Vale estate."),
        ("Coached the under-14 lasses team for the club.", "A lass on the rigs would suit them."),
        ("Trains native speakers of Welsh.", "A non-native speaker, though clients cope."),
    ],
)
def test_coded_references_are_found_beside_their_look_alikes(innocent: str, protected: str) -> None:
    assert find_protected(innocent) == [], find_protected(innocent)
    assert find_protected(protected), protected


def test_the_place_of_an_origin_said_with_originally_is_the_reference_s_own_words() -> None:
    resume = "Tutor, Kellmere Signing Centre, Harwick (2019-Present)\n- Teaches 40 learners.\n"
    origin = "Team fit: being from Port Elara originally, she may find the team new."
    assert rationale_flags(resume, "team_fit", 3, origin) == ["protected-attribute"]
