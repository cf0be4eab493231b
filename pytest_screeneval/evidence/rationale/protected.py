"""Protected-attribute terms in a rationale: a curated lexicon, matched on words, never substrings.

A rationale must not refer to the candidate's age, graduation year, marital or family status,
pregnancy, disability, national origin or nationality, race or ethnicity, religion, sex, gender or
sexual orientation, or accent (DESIGN §7: such a flag always fails the item). Each term is a
word-bounded pattern with the contexts that make it innocent: "race condition", "white paper",
"Black Friday", "single sign-on", "native apps", "the national sales team", "ageing
infrastructure", "children aged 11-14" (pupils, not the candidate's family).

Two rules cover whole families of look-alikes:

- Terms about people the candidate works for are not about the candidate: a protected word
  followed, within three words, by a product or audience noun ("marriage-counselling app",
  "disability-insurance claims", "blind and low-vision users", "the Southeast Asian market") is
  the domain of the work, not an attribute.
- Demonyms ("Nigerian", "Polish", "Asian") count only in a person context ("is Nigerian", "a
  Nigerian national", "Polish background"), so languages ("speaks Polish") and markets do not.

Decisions a reader may not expect, kept on purpose: a named place of worship ("St. Brendan's
Church") is flagged even when the resume lists it, because the rationale then relies on it; a
career break with no reason given is not flagged (a gap is not an attribute; "parental leave"
is); language skills ("fluent Spanish") are not flagged, "native Spanish speaker" is; a negated
mention ("her age should not count") is still a mention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ProtectedMatch", "find_protected"]


@dataclass(frozen=True)
class ProtectedMatch:
    """One protected-attribute reference: its category, the words matched and where."""

    category: str
    text: str
    start: int
    end: int


AGE = "age"
GRADUATION = "graduation year"
FAMILY = "marital or family status"
PREGNANCY = "pregnancy"
DISABILITY = "disability or health"
ORIGIN = "national origin or nationality"
RACE = "race or ethnicity"
RELIGION = "religion"
SEX = "sex, gender or sexual orientation"
ACCENT = "accent"


@dataclass(frozen=True)
class _Term:
    category: str
    # Word prefixes of which every match contains at least one: a term whose gate words are all
    # absent from the text is not tried (this is what keeps a call well under a millisecond).
    gate: str
    pattern: str
    unless_before: str | None = None  # innocent when the text just before matches this
    unless_after: str | None = None  # innocent when the text just after matches this


# Nouns for what a candidate works on or for: a protected word that modifies one of these
# describes the work ("marriage-counselling app"), not the candidate.
_DOMAIN_NOUNS = (
    r"apps?|platforms?|startups?|products?|marketplaces?|websites?|sites?|services|software"
    r"|tools|portals?|registr(?:y|ies)|charit(?:y|ies)|nonprofits?|non-profits?|clinics?"
    r"|hospitals?|magazines?|publishers?|providers?|compan(?:y|ies)|business(?:es)?|brands?"
    r"|retailers?|insurers?|insurance|claims?|benefits|finance|banking|law|firms?|research"
    r"|datasets?|markets?|sectors?|industr(?:y|ies)|clients|customers|users|patients|students"
    r"|accounts|regions?|segments?|communities|organi[sz]ations|programs?|programmes?|sales"
    r"|operations|offices|expansion|languages|passengers|travell?ers|guests|residents|visitors"
    r"|members|clubs?|camps?|classes|audiences?|shoppers|subscribers|donors|volunteers"
)
_NOT_A_MODIFIER = (
    r"the|a|an|her|his|their|its|to|of|in|for|with|she|he|they|it|is|was|were|are|has|have"
    r"|had|may|might|will|would|should|could|can|which|who|that|this|these|so|because|as|but"
)
_DOMAIN_AFTER = re.compile(
    rf"(?:'s)?(?:[- ](?!(?:{_NOT_A_MODIFIER})\b)[a-z]+){{0,3}}[- ](?:{_DOMAIN_NOUNS})\b",
    re.IGNORECASE,
)

_PEOPLE = (
    r"(?:candidates?|applicants?|engineers?|developers?|professionals?|m[ae]n|wom[ae]n|persons?"
    r"|people|hires?|workers?|employees?|staff|colleagues?|analysts?|nurses?|managers?"
    r"|individuals?|guys?|girls?|boys?|lad(?:y|ies)|mothers?|fathers?|parents?|teachers?"
    r"|drivers?|designers?|testers?|salespeople|reps?|agents?|scientists?|administrators?"
    r"|executives?|leaders?|founders?|students?|graduates?|career\s+changers?|recruits?"
    r"|joiners?|interns?|apprentices?|entrants?|nurses?|doctors?|accountants?|lawyers?)"
)
_CHILDREN = r"(?:children|kids|child|sons?|daughters?|babies|baby|toddlers?|newborns?|twins)"
_KIN = (
    r"(?:parents?|mother|father|mum|mom|dad|child|children|kids|relatives?|family|spouse"
    r"|husband|wife|partner|son|daughter|baby|grandmother|grandfather|grandparents?)"
)
_DEMONYMS = (
    r"nigerian|indian|chinese|mexican|pakistani|filipin[oa]|vietnamese|korean|japanese"
    r"|brazilian|polish|russian|ukrainian|romanian|bulgarian|turkish|iranian|iraqi|syrian"
    r"|afghan|egyptian|moroccan|algerian|ethiopian|eritrean|somali|kenyan|ghanaian|ugandan"
    r"|south\s+african|bangladeshi|sri\s+lankan|nepali|nepalese|indonesian|thai|malaysian"
    r"|colombian|venezuelan|cuban|dominican|haitian|jamaican|puerto\s+rican|salvadoran"
    r"|guatemalan|honduran|peruvian|argentin(?:e|ian)|chilean|ecuadorian|canadian|american"
    r"|british|irish|scottish|welsh|french|german|italian|spanish|portuguese|dutch|greek"
    r"|swedish|norwegian|danish|finnish|israeli|palestinian|lebanese|saudi|emirati"
    r"|jordanian|australian|arab|asian|african|european|eastern\s+european|middle\s+eastern"
    r"|latin\s+american|slavic|balkan|caribbean|west\s+african|east\s+asian|south\s+asian"
    r"|southeast\s+asian|somalian|albanian|serbian|croatian|bosnian|hungarian|czech|slovak"
    r"|lithuanian|latvian|estonian|chechen|kurdish|armenian|georgian|azerbaijani|uzbek"
)
_ORIGIN_NOUNS = (
    r"(?:nationals?|citizens?|origin|background|heritage|descent|ancestry|roots|immigrants?"
    r"|born|passport|nationality|accent|upbringing|ethnicity|expat)"
)
_LANGUAGES = (
    r"(?:english|spanish|french|german|mandarin|cantonese|chinese|hindi|arabic|portuguese"
    r"|russian|japanese|korean|italian|polish|dutch|tagalog|urdu|bengali|punjabi|vietnamese"
    r"|turkish|swahili|yoruba|igbo|hausa|greek|hebrew|farsi|persian|ukrainian|romanian)"
)
_WORD_ORDINALS = r"(?:teens|twenties|thirties|forties|fifties|sixties|seventies|[2-7]0'?s)"
_DEGREE = (
    r"(?:degree|diploma|bachelor'?s?|master'?s?|b\.\s?sc\.?|bsc|b\.a\.?|m\.\s?sc\.?|msc|m\.a\."
    r"|mba|ph\.\s?d\.?|phd|b\.\s?eng\.?|beng|m\.\s?eng\.?|hnd|doctorate)"
)
_YEAR = r"(?:19[4-9]\d|20[0-4]\d)"
_THINGS_THAT_AGE = (
    r"(?:systems?|servers?|hardware|code|codebases?|software|infrastructure|data|skills|tools"
    r"|technolog(?:y|ies)|stacks?|things|products?|assets|models|dependencies|libraries"
    r"|equipment|machines?|platforms?|estates?)"
)
_AGEING_THINGS = (
    r"(?:infrastructure|systems?|code\w*|hardware|fleets?|servers?|stacks?|platforms?|reports?"
    r"|analysis|inventory|receivables|data|equipment|software|applications?|apps?|assets?"
    r"|tech\w*|legacy|networks?|buckets?|schedules?|pipes|plants?|machinery|tools?|products?"
    r"|databases?|estates?|architecture|buildings?|devices?|wine|cheese|whisky)"
)
_AUDIENCE = (
    r"(?:users|people|customers|persons|students|patients|clients|employees|visitors|members"
    r"|children|adults|residents|veterans|travell?ers|passengers|readers|pupils|learners"
    r"|players|kids|teens|teenagers|youths?|boys|girls|participants|respondents)"
)

_DEMONYM_GATE = " ".join(w for w in re.findall(r"[a-z]+", _DEMONYMS) if len(w) >= 3)

_TERMS: tuple[_Term, ...] = (
    # ---------------------------------------------------------------- age
    _Term(
        AGE,
        "age",
        r"\bage[sd]?\b",
        unless_before=(
            rf"(?:(?:golden|stone|ice|bronze|iron|digital|information|internet|modern|machine"
            rf"|space|atomic|new|middle|dark|gilded|jazz|cloud|mobile|ai|industrial)[- ]"
            rf"|\b{_THINGS_THAT_AGE}\s+(?:(?:have|has|had|will|to|can|may)\s+)?"
            rf"|\b{_AUDIENCE}\s+|\b(?:for|in|took|takes?|taking)\s+)$"
        ),
        unless_after=(
            r"-old\b|\s+(?:well|badly|poorly|gracefully|quickly|out)\b"
            r"|\s+of\s+(?:ai|the\s+internet|cloud|automation|llms?|smartphones|social\s+media"
            r"|information|data|computing|remote\s+work|the\s+cloud)\b"
            r"|\s+(?:care|receivables|debt|debtors|inventory|stock|verification|gates?|ratings?)\b"
            r"|-care\b"
            r"|\s+(?:groups?|bands?|brackets?|ranges?|distributions?|cohorts?|segments?|buckets?"
            rf"|profiles?|mix)\s+(?:of|for|among|across|in)\s+(?:the\s+)?{_AUDIENCE}"
            r"|\s*\d{1,2}\s*(?:-|to|and)\s*\d{1,2}\b"
        ),
    ),
    _Term(AGE, "ageis", r"\bage(?:ism|ist)\b"),
    _Term(AGE, "ageing aging", r"\b(?:ageing|aging)\b", unless_after=rf"[- ]{_AGEING_THINGS}\b"),
    _Term(
        AGE,
        "old",
        r"\b(?:years?|yrs?)[- ]old\b",
        unless_after=(
            r"\s+(?:codebase|code|systems?|platform|software|servers?|hardware|process(?:es)?"
            r"|company|firm|business|brand|products?|applications?|apps?|monolith|stack|tools?"
            r"|databases?|infrastructure|estate|library|framework|project|pipeline)\b"
        ),
    ),
    _Term(AGE, "old young", r"\btoo\s+(?:old|young)\b"),
    _Term(
        AGE,
        "older younger",
        r"\b(?:is|are|was|being|seems?|looks?|appears?|somewhat|much|slightly|relatively)"
        r"\s+(?:older|younger)\b",
    ),
    _Term(
        AGE,
        "older younger",
        rf"\b(?:older|younger)\s+(?:than|{_PEOPLE}|generations?|talent|peers?)\b",
    ),
    _Term(
        AGE,
        "oldest youngest",
        r"\b(?:oldest|youngest)\b",
        unless_after=r"\s+(?:\w+\s+)?(?:versions?|releases?|systems?|code|servers?|records?"
        r"|tickets?|entries|items?|data|files?|accounts?|invoices?|debts?|backlog)\b",
    ),
    _Term(
        AGE,
        "he she candidate applicant",
        r"\b(?:he|she|they|the\s+candidate|the\s+applicant)\s+(?:is|are|was|turned|turns)"
        r"\s+(?:about\s+|around\s+|nearly\s+|almost\s+|over\s+|under\s+)?[1-9]\d\b"
        r"(?!\s*(?:%|percent)|\s+(?!(?:and|or|but|so|which|with|yet|now|already)\b)[a-z])",
    ),
    _Term(
        AGE,
        "at",
        r"\bat\s+(?:age\s+|the\s+age\s+of\s+)?[1-9]\d\b"
        r"(?=\s*[,;]|\s+(?:he|she|they|years?\s+old|the\s+candidate)\b)",
    ),
    _Term(
        AGE,
        "young",
        r"\b(?:so|very|quite|relatively|fairly|still)\s+young\b(?!\s+(?:company|startup))",
    ),
    _Term(
        AGE,
        "young",
        rf"\byoung\s+(?:{_PEOPLE}|talent|graduates?|grads?|blood|age)\b",
    ),
    _Term(
        AGE,
        "youthful elderly pensioner citizen old",
        r"\b(?:youthful|elderly|pensioners?|senior\s+citizens?|old[- ]age)\b",
    ),
    _Term(
        AGE,
        "retir",
        r"\bretir(?:e|ed|ee|ees|es|ing|ement)\b",
        unless_after=(
            r"\s+(?:the|a|an|its|their|our|legacy|old|older|outdated|obsolete|deprecated|unused"
            r"|two|three|four|five|\d+)\b"
            r"|[- ](?:plans?|accounts?|savings|funds?|portfolios?|products?|services|platforms?"
            r"|portals?|software|schemes?|income|calculators?)\b"
        ),
        unless_before=(
            r"(?:features?|flags?|services?|systems?|apis?|endpoints?|servers?|products?|tools?"
            r"|versions?|be|been|was|were|is|are|get|got)\s+$"
        ),
    ),
    _Term(
        AGE, "birth", r"\b(?:date|year|place)\s+of\s+birth\b|\bbirth\s?(?:date|day|year|place)s?\b"
    ),
    _Term(AGE, "born", rf"\bborn\s+(?:in|on|around|circa|and\s+raised)\b|\bborn\s+{_YEAR}\b"),
    _Term(AGE, "dob", r"(?-i:\bDOB\b)"),
    _Term(
        AGE,
        "his her their candidate",
        rf"\b(?:in|into)\s+(?:his|her|their|the\s+candidate's)\s+(?:early\s+|mid[- ]?|late\s+)?"
        rf"{_WORD_ORDINALS}\b",
    ),
    _Term(AGE, "something", r"\b(?:twenty|thirty|forty|fifty|sixty|seventy)[- ]something\b"),
    _Term(AGE, "year", r"\b\d{2}[- ]year[- ]olds?\b"),
    _Term(
        AGE,
        "millennial gen boomer zoomer native",
        r"\b(?:millennials?|gen[- ]?[xyz]|genz|(?:baby\s+)?boomers?|zoomers?|digital\s+natives?)\b",
    ),
    # ---------------------------------------------------------------- graduation year
    _Term(GRADUATION, "graduat", rf"\bgraduat(?:ed|es|ing|ion)\b[^.;\n]{{0,40}}?\b{_YEAR}\b"),
    _Term(GRADUATION, "grad alumn", rf"\b{_YEAR}\s+(?:graduate|grad|graduation|alumn\w*)\b"),
    _Term(GRADUATION, "class", r"\bclass\s+of\s+(?:'\d{2}|(?:19|20)\d{2})\b"),
    _Term(GRADUATION, "graduat", r"\bgraduation\s+(?:year|date)s?\b|\byear\s+of\s+graduation\b"),
    _Term(GRADUATION, "graduat", r"\bgraduated\s+(?:\w+\s+){0,2}(?:years|decades)\s+ago\b"),
    _Term(
        GRADUATION,
        "19 20",
        rf"(?<![\w.]){_DEGREE}(?![\w])[^.;\n]{{0,30}}?(?:\bin\s+|\bfrom\s+|\(|,\s*|\s){_YEAR}\b",
    ),
    _Term(GRADUATION, "19 20", rf"\b{_YEAR}\s+(?:[a-z]+\s+)?{_DEGREE}(?![\w])"),
    # ---------------------------------------------------------------- marital / family status
    _Term(
        FAMILY,
        ("marri marit unmarri divorc widow spous husband wife wives fianc newlywed maiden partner"),
        r"\b(?:married|marriage|marital|unmarried|divorced?|divorcee|widow(?:ed|er)?"
        r"|spous(?:e|es|al)|husbands?|wife|wives|fianc[ée]e?|newlyweds?|maiden\s+name"
        r"|domestic\s+partner|life\s+partner)\b",
    ),
    _Term(FAMILY, "mrs", r"(?-i:\bMrs\b)"),
    _Term(FAMILY, "engaged", r"\b(?:engaged\s+to\s+be\s+married|got\s+engaged)\b"),
    _Term(FAMILY, "single", r"\bsingle\s+(?:mother|father|parent|mom|mum|dad)s?\b"),
    _Term(
        FAMILY,
        "single",
        r"\b(?:is|being|as|stays?|still)\s+single\b(?![- ](?:handed\w*|sign|page|point|source"
        r"|tenant|thread\w*|file|node|region|instance|binary|digit|team|product))",
    ),
    _Term(
        FAMILY,
        (
            "mother father mom mum dad parenthood parenting grand step homemaker housewife "
            "househusband stay"
        ),
        r"\b(?:mothers?|fathers?|moms?|mums?|dads?|motherhood|fatherhood|parenthood|parenting"
        r"|grandparents?|grand(?:mother|father)s?|stepmother|stepfather|homemaker|housewife"
        r"|househusband|stay[- ]at[- ]home)\b",
        unless_after=r"\s+tongue\b|board\b|\s+of\s+(?:invention|the\s+project)\b",
    ),
    _Term(
        FAMILY,
        "parent",
        r"\bparents?\b",
        unless_after=(
            r"[- ]?(?:company|companies|class|classes|nodes?|process(?:es)?|directory|folders?"
            r"|elements?|components?|organi[sz]ations?|entit(?:y|ies)|firm|group|tables?"
            r"|records?|theme|span|tasks?|project|ticket|epic|issue|repo|repository|pom"
            r"|objects?|window|categor(?:y|ies)|accounts?|brand|bank|container|module|frame"
            r"|key|id|pipeline|job|workflow|view|route)\b"
        ),
        unless_before=r"(?:for|to|with|helping|serving|support(?:ing)?|by)\s+(?:new\s+)?$",
    ),
    _Term(FAMILY, "parental", r"\bparental\s+(?:leave|duties|responsibilit(?:y|ies)|status)\b"),
    _Term(
        FAMILY,
        "family",
        r"\bfamily\s+(?:status|obligations?|commitments?|responsibilit(?:y|ies)|reasons?"
        r"|situation|circumstances|life|planning|leave|care|caregiving|emergenc(?:y|ies)|man"
        r"|woman|matters|duties|ties|needs|plans|priorities)\b",
    ),
    _Term(
        FAMILY,
        "family",
        r"\b(?:start(?:ing|ed|s)?|rais(?:e|ing|ed|es)|has|have|had|having|support(?:ing|s)?)"
        r"\s+a\s+(?:young\s+)?family\b|\b(?:young|growing|new)\s+family\b"
        r"|\b(?:her|his|their)\s+family\b",
    ),
    _Term(
        FAMILY,
        "children kid child son daughter bab toddler newborn twin",
        rf"\b(?:her|his|their|own|has|have|had|having|raising|raise[sd]?|no)\s+(?:\w+\s+)?"
        rf"{_CHILDREN}\b",
    ),
    _Term(
        FAMILY,
        "children kids child",
        r"\b(?:children|kids|child)\b",
        unless_before=(
            r"(?:to|for|teach\w*|taught|coach\w*|tutor\w*|mentor\w*|train\w*|among|serv\w*"
            r"|help\w*|support\w*|with|educat\w*|engag\w*|of|by)\s+(?:(?:young|local|school"
            r"|primary|secondary|disadvantaged|\d+)\s+)?$"
        ),
        unless_after=(
            r"\s*(?:aged|ages|between|from)\b"
            r"|[- ](?:process(?:es)?|nodes?|elements?|components?|class(?:es)?|tables?"
            r"|records?|themes?|windows?|threads?|spans?|tasks?|objects?|entit(?:y|ies)|items?"
            r"|widgets?|jobs?|pipelines?|workflows?|views?|routes?|resources?|pages?"
            r"|director(?:y|ies)|folders?|keys?|rows?|issues?|tickets?|accounts?)\b"
        ),
    ),
    _Term(
        FAMILY,
        "child nann babysit",
        r"\b(?:child[- ]?care|childminding|nann(?:y|ies)|babysit\w*)\b",
    ),
    _Term(
        FAMILY,
        "baby",
        r"\b(?:a|her|his|their|new|newborn|second|first)\s+baby\b(?!\s+steps)"
        r"|\bbaby\s+(?:arrived|was\s+born|is\s+due|due)\b",
    ),
    _Term(
        FAMILY,
        "care caring look",
        rf"\b(?:car(?:e|es|ed|ing)|look(?:s|ed|ing)?)\s+(?:for|after)\s+(?:an?\s+|her\s+|his\s+"
        rf"|their\s+)?(?:(?:elderly|ageing|aging|sick|ill|ailing|dying|disabled|young|new|"
        rf"newborn|two|three)\s+)?{_KIN}\b",
    ),
    _Term(
        FAMILY,
        "care famil unpaid",
        r"\bcare(?:giving|giver|r)s?\s+(?:responsibilit(?:y|ies)|duties|leave|break|gap)\b"
        r"|\b(?:family|unpaid)\s+care(?:giver|r)s?\b"
        r"|\bcaregiver\s+(?:to|for)\s+(?:a|an|her|his|their)\b",
    ),
    # ---------------------------------------------------------------- pregnancy
    _Term(PREGNANCY, "pregnan", r"\bpregnan(?:t|cy|cies)\b"),
    _Term(PREGNANCY, "maternity paternity", r"\b(?:maternity|paternity)\b"),
    _Term(
        PREGNANCY,
        "prenatal antenatal postnatal postpartum breastfeeding nursing fertility ivf",
        r"\b(?:prenatal|antenatal|postnatal|postpartum|breastfeeding|nursing\s+mother"
        r"|fertility\s+treatments?|ivf)\b",
    ),
    _Term(
        PREGNANCY,
        "expecting",
        r"\bexpecting\s+(?:a|her|their|his)\s+(?:first\s+|second\s+|third\s+)?(?:baby|child|twins)\b",
    ),
    # ---------------------------------------------------------------- disability / health
    _Term(
        DISABILITY,
        "disab",
        r"\bdisab(?:led|ility|ilities)\b",
        unless_after=(
            r"\s+(?:the|a|an|it|them|this|that|by\s+default|feature|features|flags?|caching"
            r"|cache|logging|access|accounts?|endpoints?|legacy|unused|old|ssl|tls|telemetry"
            r"|plugins?|extensions?|jobs?|cron|triggers?|rules?|alerts?|alerting"
            r"|notifications?|in\s+(?:production|prod|config))\b"
        ),
        unless_before=(
            rf"(?:{_AUDIENCE}\s+with\s+(?:a\s+)?(?:\w+\s+)?"
            r"|(?:features?|flags?|accounts?|cache|caching|logging|services?|endpoints?|buttons?"
            r"|options?|settings?|plugins?|checks?|rules?|alerts?|jobs?|ssl|tls)\s+(?:(?:was"
            r"|were|is|are|been|be|got|get|gets|stays?|remain(?:s|ed)?)\s+)?)$"
        ),
    ),
    _Term(DISABILITY, "handicap wheelchair", r"\bhandicap(?:ped|s)?\b|\bwheelchairs?\b"),
    _Term(
        DISABILITY,
        "deaf hard hearing",
        r"\b(?:deaf|deafness|hard\s+of\s+hearing|hearing[- ]impaired|hearing\s+loss"
        r"|hearing\s+aids?)\b",
        unless_after=r"\s+ears?\b",
    ),
    _Term(
        DISABILITY,
        "blind",
        r"\bblind(?:ness)?\b",
        unless_before=r"(?:double|single|triple|colou?r)[- ]?$",
        unless_after=(
            r"(?:\s+|-)(?:spots?|review(?:ing|s)?|test(?:ing|s)?|hiring|screening|auditions?"
            r"|sql|injection|carbon|copy|trust|faith|date|signature|signing|eye|side|alley"
            r"|corner|auction|bidding|relay)\b"
        ),
    ),
    _Term(
        DISABILITY,
        (
            "impair autis asperger adhd dyslexi dyspraxi neurodiver ptsd epilep bipolar "
            "schizophreni diabet sclerosis palsy amputee prosthe chronic chemotherapy cancer"
        ),
        r"\b(?:visually|visual|cognitively|physically)\s+impair\w*|\bimpairments?\b"
        r"|\b(?:autism|autistic|asperger'?s?|adhd|dyslexi[ac]|dyspraxi[ac]|neurodiver\w*"
        r"|neurodivergent|ptsd|epilep\w*|bipolar|schizophreni\w*|diabet\w*|multiple\s+sclerosis"
        r"|cerebral\s+palsy|amputee|prosthe\w*|chronic\s+(?:illness|pain|condition|fatigue)"
        r"|chemotherapy|cancer\s+(?:treatment|survivor|diagnosis))\b",
    ),
    _Term(
        DISABILITY,
        (
            "medical health sick illness mental reasonable diagnos depression anxiety "
            "condition disorder injury"
        ),
        r"\b(?:medical|health)\s+(?:conditions?|issues?|problems?|reasons|history|leave)\b"
        r"|\bsick\s+leave\b|\billness(?:es)?\b|\bmental\s+(?:health|illness)\b"
        r"|\breasonable\s+accommodations?\b|\bdiagnosed\s+with\b"
        r"|\b(?:her|his|their|the\s+candidate's)\s+(?:depression|anxiety|diagnosis|condition"
        r"|illness|disorder|injury)\b",
    ),
    # ---------------------------------------------------------------- national origin
    _Term(ORIGIN, "national", r"\bnationalit(?:y|ies)\b|\bnational\s+origin\b"),
    _Term(
        ORIGIN,
        "foreign",
        r"\bforeign[- ](?:nationals?|born|workers?|accents?|backgrounds?|origins?|names?"
        r"|citizens?|candidates?|applicants?)\b|\bforeigners?\b",
    ),
    _Term(ORIGIN, "citizenship", r"\bcitizenship\b"),
    _Term(
        ORIGIN,
        "citizen",
        r"\bcitizens?\b",
        unless_before=r"(?:first[- ]class|second[- ]class|corporate|digital|global)\s+$",
        unless_after=r"[- ](?:developers?|data|scien\w+|journalism|engagement|portal)\b",
    ),
    _Term(
        ORIGIN,
        "immigr emigr migrant refugee asylum expat",
        r"\b(?:immigrants?|immigrated|immigration|emigrated|emigrants?|migrants?|refugees?"
        r"|asylum|expats?|expatriates?)\b",
    ),
    _Term(
        ORIGIN,
        "visa 1b h1b green work right sponsorship residency immigration",
        r"\bvisas?\s+(?:status|sponsorship|holders?|requirements?|expir\w*|situation|issues?)\b"
        r"|\b(?:work|student|spousal|tourist|skilled\s+worker)\s+visas?\b|\bh-?1b\b"
        r"|\bgreen\s+card\b|\bwork\s+permit\b|\b(?:immigration|residency)\s+status\b"
        r"|\bright\s+to\s+work\b|\b(?:requires?|needs?|needing|requiring)\s+(?:visa\s+)?"
        r"sponsorship\b",
    ),
    _Term(
        ORIGIN,
        "native mother home country non",
        rf"\bnative\s+(?:language|tongue|country|land|speakers?|fluency|proficiency)\b"
        rf"|\bnative\s+(?:\w+\s+)?speakers?\b|\bnative\s+{_LANGUAGES}\b|\bnon[- ]native\b"
        rf"|\bnative[- ]level\b|\bnative\s+of\s+(?-i:[A-Z][\w-]*)"
        rf"|\b(?:as|is)\s+(?:a\s+)?native\b(?:\s+of\s+(?-i:[A-Z][\w-]*)"
        rf"|\s+{_LANGUAGES}(?:\s+speakers?)?|\s+speakers?)?"
        rf"(?!\s+(?:app|ios|android|mobile"
        rf"|cloud|code))|\bmother\s+tongue\b|\bhome\s+country\b|\bcountry\s+of\s+(?:origin|birth)\b",
    ),
    _Term(
        ORIGIN,
        "originally hail grew raised",
        r"\b(?:originally\s+from|hails?\s+from|grew\s+up\s+in|(?:was\s+)?raised\s+in)"
        r"\s+(?-i:[A-Z][\w-]*)",
    ),
    _Term(
        ORIGIN,
        "born",
        r"\b(?!(?:first|new|re|air|water|blood|vector|food|well|high|low|free|still|stubborn)-)"
        r"[a-z]+-born\b",
    ),
    _Term(
        ORIGIN,
        _DEMONYM_GATE,
        rf"\b(?:is|was|being|as\s+an?|an?)\s+(?:{_DEMONYMS})(?:[- ](?:american|canadian|british))?"
        rf"(?=\s*(?:[.,;!?)]|$|(?:{_PEOPLE}|{_ORIGIN_NOUNS}|native|lady|expat|national)\b))",
    ),
    _Term(ORIGIN, _DEMONYM_GATE, rf"\b(?:{_DEMONYMS})[- ]{_ORIGIN_NOUNS}\b"),
    _Term(
        ORIGIN,
        _DEMONYM_GATE,
        rf"\bof\s+(?:{_DEMONYMS})\s+(?:origin|descent|heritage|ancestry|background|extraction"
        rf"|roots)\b",
    ),
    # ---------------------------------------------------------------- race / ethnicity
    _Term(
        RACE,
        "race races",
        r"\brac(?:e|es)\b",
        unless_before=(
            r"(?:data|rat|arms|space|drag|relay|boat|horse|charity|fun|bike|car|foot|road"
            r"|marathon|sack|egg|obstacle|human|ultra|sprint|presidential|leadership|title"
            r"|tight|close)[- ]?$"
        ),
        unless_after=(
            r"[- ](?:conditions?|detectors?|detection|cars?|tracks?|days?|free|bibs?|against"
            r"|results?|times?|windows?)\b|\s+to\s+(?!the\s+candidate)\w"
        ),
    ),
    _Term(
        RACE,
        (
            "racial biracial multiracial mixed ethnic bipoc caucasian hispanic latin native "
            "indigenous aboriginal first pacific skin complexion african"
        ),
        r"\b(?:racial(?:ly)?|(?:bi|multi)racial|mixed[- ]race|ethnic(?:ity|ities|ally)?"
        r"|bipoc|caucasians?|hispanics?|latin[oax]s?|latinx|latine|african[- ]americans?"
        r"|native\s+americans?|indigenous|aboriginal|first\s+nations|pacific\s+islanders?"
        r"|skin\s+(?:colou?r|tone)|complexion)\b",
    ),
    _Term(
        RACE,
        "color colour",
        rf"\b(?:{_PEOPLE}|communities|community)\s+of\s+colou?r\b",
    ),
    _Term(
        RACE,
        "minorit",
        r"\bminorit(?:y|ies)\b",
        unless_after=(
            r"[- ](?:stakes?|shareholders?|shareholdings?|interests?|investors?|owners?"
            r"|ownership|positions?|share|holdings?|report|opinion|language|partner)\b"
        ),
    ),
    _Term(
        RACE,
        "black white brown",
        rf"\b(?:black|white|brown)\s+(?:{_PEOPLE}|males?|females?|americans?|britons?"
        rf"|communit(?:y|ies)|famil(?:y|ies)|background|heritage|skin)\b",
    ),
    _Term(
        RACE,
        "black white brown",
        r"\b(?:is|are|being|as\s+a)\s+(?:black|white|brown)\b"
        r"(?=\s*(?:[.,;:)!?]|$|and\b|or\b))",
    ),
    # ---------------------------------------------------------------- religion
    _Term(RELIGION, "religio", r"\breligio(?:n|ns|us)\b"),
    _Term(
        RELIGION,
        (
            "muslim islam christian catholic protestant jew judaism hindu sikh buddhis atheis "
            "agnostic mormon evangelical baptist methodist lutheran quaker pagan"
        ),
        r"\b(?:muslims?|islam|islamic|christians?|christianity|catholics?|catholicism"
        r"|protestants?|jewish|jews?|judaism|hindus?|hinduism|sikhs?|sikhism|buddhists?"
        r"|buddhism|atheists?|atheism|agnostics?|mormons?|evangelicals?|baptists?|methodists?"
        r"|lutherans?|quakers?|pagans?)\b",
    ),
    _Term(RELIGION, "orthodox", r"(?-i:\bOrthodox\b)"),
    _Term(
        RELIGION,
        (
            "church mosque synagogue chapel parish congregation diocese hijab headscar turban "
            "yarmulke kippah burqa niqab ramadan sabbath shabbat diwali passover yom pray "
            "pastor priest rabbi imam clergy nun monk missionar seminary bible quran koran "
            "torah scripture kosher halal"
        ),
        r"\b(?:church|churches|churchgoer|mosques?|synagogues?|chapel|parish|congregation"
        r"|diocese|hijab|headscarf|headscarves|turban|yarmulke|kippah|burqa|niqab|ramadan"
        r"|sabbath|shabbat|diwali|passover|yom\s+kippur|pray|prays|prayed|praying|prayers?"
        r"|pastor|priest|rabbi|imam|clergy\w*|nun|monk|missionar(?:y|ies)|seminary|bible"
        r"|quran|koran|torah|scripture|kosher|halal)\b",
    ),
    _Term(
        RELIGION,
        "faith",
        r"\b(?:her|his|their|religious)\s+faith\b|\bfaith[- ]based\b"
        r"|\b(?:person|people|man|woman)\s+of\s+faith\b",
    ),
    # ---------------------------------------------------------------- sex / gender
    _Term(
        SEX,
        "gender",
        r"\bgender(?:s|ed)?\b",
        unless_after=r"[- ](?:neutral|inclusive|pay\s+gap|balanced|diverse)\b",
    ),
    _Term(SEX, "sex", r"\bsex(?:es|ual\s+orientation|uality|ism|ist)?\b"),
    _Term(
        SEX,
        "female male feminine masculine womanly manly",
        r"\b(?:females?|males?|feminine|masculine|womanly|manly)\b",
        unless_after=(
            r"[- ](?:connectors?|plugs?|headers?|ports?|pins?|adapters?|jacks?|threads?"
            r"|to-(?:fe)?male)\b"
        ),
    ),
    _Term(
        SEX,
        "woman women",
        r"\b(?:woman|women)\b",
        unless_after=r"(?:'s)?\s+(?:in|who)\s+(?-i:[A-Z])",
    ),
    _Term(
        SEX,
        "man men",
        r"\b(?:an?|the|as\s+a|young|old|older|family|single|married|white|black|gay|straight"
        r"|trans)\s+m[ae]n\b",
        unless_after=r"[- ](?:pages?|hours?|months?|days?|power|in-the-middle)\b",
    ),
    _Term(
        SEX,
        "girl boy lady ladies gentlem",
        r"\b(?:girls?|boys?|lad(?:y|ies)|gentlem[ae]n)\b",
        unless_after=r"\s+who\s+(?-i:[A-Z])",
    ),
    _Term(
        SEX,
        (
            "trans non binary cisgender intersex pronoun lgbt gay lesbian bisexual queer "
            "heterosexual homosexual"
        ),
        r"\b(?:transgender|trans\s+(?:wo)?m[ae]n|non[- ]?binary|cisgender|intersex|pronouns?"
        r"|lgbt\w*|gay|lesbians?|bisexual|queer|heterosexual|homosexual)\b",
    ),
    # ---------------------------------------------------------------- accent
    _Term(
        ACCENT,
        "accent",
        r"\baccent(?:s|ed)?\b",
        unless_after=(
            r"[- ](?:colou?rs?|marks?|characters?|letters?|chars|lighting|tokens?|palettes?"
            r"|borders?|shades?|hues?|styles?|walls?|pieces?|fonts?)\b"
        ),
    ),
)


@dataclass(frozen=True)
class _Compiled:
    category: str
    pattern: re.Pattern[str]
    unless_before: re.Pattern[str] | None
    unless_after: re.Pattern[str] | None


def _compile(term: _Term) -> _Compiled:
    return _Compiled(
        term.category,
        re.compile(term.pattern, re.IGNORECASE),
        re.compile(term.unless_before, re.IGNORECASE) if term.unless_before else None,
        re.compile(term.unless_after, re.IGNORECASE) if term.unless_after else None,
    )


def _gate_index(terms: tuple[_Term, ...]) -> dict[str, tuple[tuple[str, int], ...]]:
    """Gate prefixes by their first two letters, each with the index of its term."""
    index: dict[str, list[tuple[str, int]]] = {}
    for number, term in enumerate(terms):
        for prefix in term.gate.split():
            index.setdefault(prefix[:2], []).append((prefix, number))
    return {key: tuple(entries) for key, entries in index.items()}


_COMPILED = tuple(_compile(term) for term in _TERMS)
_GATES = _gate_index(_TERMS)
_WORDS = re.compile(r"[a-z0-9]+")
_BEFORE_WINDOW = 48


def _innocent(term: _Compiled, text: str, start: int, end: int) -> bool:
    before = term.unless_before
    if before is not None and before.search(text[max(0, start - _BEFORE_WINDOW) : start]):
        return True
    if term.unless_after is not None and term.unless_after.match(text, end):
        return True
    return bool(_DOMAIN_AFTER.match(text, end))


def _candidate_terms(text: str) -> list[int]:
    """Indexes of the terms whose gate words occur in the text, in lexicon order."""
    chosen: set[int] = set()
    for word in set(_WORDS.findall(text.lower())):
        for prefix, number in _GATES.get(word[:2], ()):
            if word.startswith(prefix):
                chosen.add(number)
    return sorted(chosen)


def find_protected(text: str, *, gated: bool = True) -> list[ProtectedMatch]:
    """Every protected-attribute reference in a (normalised) text, in order of position.

    ``gated=False`` tries every term regardless of its gate words: the same answer, slower; the
    tests use it to check the gates.
    """
    numbers = _candidate_terms(text) if gated else range(len(_COMPILED))
    found: dict[tuple[int, int], ProtectedMatch] = {}
    for number in numbers:
        term = _COMPILED[number]
        for match in term.pattern.finditer(text):
            start, end = match.span()
            if (start, end) in found or _innocent(term, text, start, end):
                continue
            found[(start, end)] = ProtectedMatch(term.category, match.group(0), start, end)
    return sorted(found.values(), key=lambda m: (m.start, m.end))
