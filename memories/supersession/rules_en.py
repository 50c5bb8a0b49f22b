"""English claim rules: subject + attribute + value patterns over one clause.

Each rule is a named pattern; `facts(clause)` returns `[(slot, value)]` with slot
"<subject>|<attribute>" (or "<topic>|<attribute>" for things). The patterns follow the
attribute list of the product issue: residence, employer and role, contact details, favourites
(any "X's <attribute> is V"), relationship status, diet, a habit that stopped, ticket owner,
on-call, versions, configuration values, prices, dates and schedules.
"""

import re

from memories.supersession import attributes, values
from memories.supersession.fact import Fact

# A person or organisation opening the clause: "Maya", "Customer Hiroshi Tanaka", "The user".
_SUBJECT = r"(?P<subj>(?:[Tt]he\s+)?(?:user|customer|client|[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2}))"
_POSSESSIVE = r"(?:'s|’s)"
# The owner of "X's <attribute>": a subject as above or "the <noun phrase>" ("The search team's
# lead", "The mail server's IP"): the whole phrase names the owner.
_OWNER = (r"(?P<subj>[Tt]he\s+[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}"
          r"|(?:[Tt]he\s+)?(?:user|customer|client|[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2}))")
# Up to four lowercase words between subject and verb ("relocated again and now").
_FILLER = r"(?:\s+[a-z][\w-]*){0,4}?"
_NAME = r"[A-Z][\w-]*"
_ROLE_WORDS = re.compile(r"^(?:the\s+)?(?:customer|client|mr|ms|mrs|dr|prof)\.?\s+", re.I)
_TICKET = r"(?P<ticket>[A-Z][A-Z0-9]+-\d+)"
_ENVIRONMENTS = re.compile(r"\b(production|prod|staging|stage|test|testing|dev|qa|sandbox)\b", re.I)
# "Launch review moved to March 10" is a date, not a move to a place called March.
_DATE = re.compile(rf"(?:{values.MONTH}|{values.WEEKDAY})\b", re.I)
_ENVIRONMENT_NAMES = {"prod": "production", "stage": "staging", "testing": "test", "qa": "test"}
_VERSION_CUE = re.compile(
    r"\b(?:running|runs|run|rolled out|deployed|upgraded|downgraded|version|release|released|on)\b",
    re.I)
_VERSION_STOP = frozenset({"to", "is", "on", "running", "runs", "at", "the", "upgraded", "version",
                           "now", "was", "v", "deployed", "release", "of", "from", "back", "we",
                           "rolled", "out", "in", "and", "it", "then", "reverted", "downgraded",
                           "moved", "has", "have", "been"})

RESIDENCE = re.compile(
    rf"^{_SUBJECT}{_FILLER}\s+(?:lives?|is living|is based|moved|has moved|relocated|moved back)"
    rf"(?:\s+from\s+{_NAME}(?:\s+{_NAME})*)?\s+(?:in|to)\s+(?:the\s+)?(?P<val>{_NAME}(?:\s+{_NAME})*)")
REPORTS_TO = re.compile(
    rf"^{_SUBJECT}(?:\s+now)?\s+reports\s+(?:directly\s+)?to\s+(?P<val>{_NAME}(?:\s+{_NAME})?)")
DESK_MOVE = re.compile(
    rf"^{_SUBJECT}{_FILLER}\s+moved\s+(?:desks?|seats?|offices?)\s+to\s+(?P<val>.+)")
EMPLOYER = re.compile(
    rf"^{_SUBJECT}{_FILLER}\s+(?:works?\s+(?:at|for)|joined|is\s+working\s+(?:at|for))\s+"
    rf"(?P<val>{_NAME}(?:\s+{_NAME})*)(?:\s+as\s+(?:an?\s+)?(?P<role>[a-z][\w -]*))?")
ROLE = re.compile(
    rf"^{_SUBJECT}\s+is\s+(?:now\s+)?(?:the|our)\s+(?P<val>(?:[\w-]+\s+){{0,2}}"
    r"(?:lead|manager|head|director|owner|maintainer|architect|cto|ceo|cfo|coo|vp|chair))\b")
RELATIONSHIP = re.compile(
    rf"^{_SUBJECT}{_FILLER}\s+(?:is|got|has been|became|are)\s+(?:now\s+|still\s+|happily\s+)?"
    r"(?P<val>single|dating|engaged|married|divorced|separated|widowed|in a relationship)\b")
DIET = re.compile(
    rf"^{_SUBJECT}\s+is\s+(?:now\s+|strictly\s+|still\s+|fully\s+)?"
    r"(?P<val>vegetarian|vegan|pescatarian|keto|gluten-free|halal|kosher|teetotal)\b")
DIET_EATS = re.compile(
    rf"^{_SUBJECT}\s+(?:eats|started eating|is eating|eats some)\s+(?P<val>fish|meat|chicken|dairy|eggs)\b")
HABIT = re.compile(
    rf"^{_SUBJECT}\s+(?P<act>[a-z]+s)\b(?P<object>[^,;]*?)\b(?P<val>every\s+(?:day|morning|evening|night|week"
    r"|weekend|weekday)|daily|weekly)")
HABIT_STOPPED = re.compile(
    rf"^{_SUBJECT}\s+(?:no longer|stopped|quit|gave up|doesn't|does not)\s+(?P<act>[a-z]+)(?P<object>[^,;]*)")
POSSESSIVE_IS = re.compile(
    rf"^{_OWNER}{_POSSESSIVE}\s+(?P<attr>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,3}}?)\s+"
    r"(?:is|are|was|has been)\s+(?:now\s+|also\s+|still\s+|currently\s+)?(?P<val>.+)")
POSSESSIVE_CHANGED = re.compile(
    rf"^{_OWNER}{_POSSESSIVE}\s+(?P<attr>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,3}}?)\s+"
    r"(?:changed|moved|switched|was changed|has changed)\s+(?:from\s+.+?\s+)?to\s+(?P<val>.+)")
SAYS_HER = re.compile(
    rf"^{_SUBJECT}\s+(?:says|said|mentioned)\s+(?:that\s+)?(?:her|his|their)\s+"
    r"(?P<attr>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)\s+(?:these days\s+|now\s+)?"
    r"(?:is|are)\s+(?:now\s+)?(?P<val>.+)")
CHANGED_HER = re.compile(
    rf"^{_SUBJECT}\s+(?:changed|updated|switched)\s+(?:her|his|their|its)\s+"
    r"(?P<attr>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+to\s+(?P<val>.+)")
TICKET_TO = re.compile(
    rf"{_TICKET}\b.*?\b(?:is\s+|was\s+|has been\s+)?(?:assigned|reassigned|handed(?:\s+over)?|"
    rf"transferred|moved|given)\s+(?:back\s+)?to\s+(?P<val>{_NAME})")
TICKET_BY = re.compile(rf"{_TICKET}\b.*?\b(?:owned|handled|taken)\s+by\s+(?P<val>{_NAME})")
TICKET_VERB_FIRST = re.compile(
    rf"^(?:re)?(?:assigned|handed(?:\s+over)?|transferred|moved|gave)\s+{_TICKET}\s+(?:back\s+)?to\s+(?P<val>{_NAME})",
    re.I)
TICKET_TAKEN = re.compile(
    rf"^(?P<val>{_NAME})\s+(?:now\s+)?(?:owns|took over|picked up|takes over)\s+{_TICKET}")
# The rota's holder; the team it names, when it names one, qualifies the slot "on-call".
ON_CALL = (
    re.compile(rf"^on-?call\b(?:\s+for\s+(?P<team>[\w-]+))?[^:]*:\s*(?P<val>{_NAME})", re.I),
    re.compile(rf"^(?P<val>{_NAME})\s+is\s+(?:now\s+)?(?:the\s+)?on-?call\b(?:\s+for\s+(?P<team>[\w-]+))?"),
    re.compile(rf"^(?P<val>{_NAME})\s+(?:covers|takes|has)\s+(?:the\s+)?(?:(?P<team>[a-z][\w-]*)\s+)?on-?call\b"),
)
# Things: "<topic> is <quantity>", "Raised <topic> to <quantity>", "<topic> pushed to <date>".
_TOPIC = r"(?P<topic>(?:the\s+)?[A-Za-z][\w-]*(?:\s+[A-Za-z0-9][\w-]*){0,6}?)"
_QUANTITY = rf"(?P<val>{values.QUANTITY.pattern})"
_SET_VERBS = (r"raised|increased|lowered|reduced|decreased|changed|set|bumped|updated|rolled back"
              r"|moved|pushed|rescheduled|postponed|reverted|restored|brought forward|cut|dropped")
TOPIC_IS = re.compile(
    rf"^{_TOPIC}\s+(?:now\s+|currently\s+|still\s+)?(?:is|are|costs|=|starts|begins|ends|closes|opens|is due|expires)\s+"
    rf"(?:now\s+|currently\s+|still\s+)?"
    rf"(?:set\s+to\s+|at\s+|on\s+|scheduled\s+for\s+)?{_QUANTITY}", re.I)
VERB_TOPIC_TO = re.compile(rf"^(?:{_SET_VERBS})\s+(?:back\s+)?{_TOPIC}\s+to\s+{_QUANTITY}", re.I)
TOPIC_VERB_TO = re.compile(
    rf"^{_TOPIC}\s+(?:was\s+|has been\s+|is\s+|got\s+)?(?:{_SET_VERBS})\s+(?:back\s+)?(?:to|until)\s+{_QUANTITY}",
    re.I)
# A secret or code set to a token: "The wifi password is tiger42", "… changed to lion77". The token
# must hold a digit or a symbol ("The password is strong" describes it).
CREDENTIAL = re.compile(
    r"^(?:the\s+)?(?P<topic>(?:[A-Za-z][\w-]*\s+){0,3}?)(?P<head>password|passcode|passphrase|pin|"
    r"pin code|access code|door code|gate code|alarm code|ssid)"
    r"(?P<of>\s+(?:for|of|to)\s+(?:the\s+)?[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2}?)?\s+"
    r"(?:is|was|has been|(?:was\s+|has been\s+)?(?:changed|updated|reset|set|switched))\s+"
    r"(?:now\s+|currently\s+)?(?:to\s+)?(?P<val>[^\s,;]*[\d@#$%&*!?+=_][^\s,;]*)$", re.I)
TOPIC_EVERY = re.compile(
    rf"^{_TOPIC}\s+(?:rotates|runs|renews|repeats|happens|is rotated|is renewed|expires|syncs)\s+{_QUANTITY}", re.I)
# Words that name the kind of value rather than the thing ("pro plan price", "password rotation").
_TOPIC_TAIL = re.compile(r"\s+(?:price|cost|fee|rotation|schedule|date|time|renewal)$")
_TOPIC_CUT = re.compile(r"\s+(?:for|with|of|on|at)\s+.*$")
# Words of a topic's complement that name nothing ("the meeting with Acme" adds {acme}).
_QUALIFIER_STOP = frozenset({"the", "a", "an", "our", "its", "their", "for", "with", "of", "on", "at",
                             "to", "in", "and"})


def subject(raw: str) -> str:
    """'Customer Hiroshi Tanaka' -> 'hiroshi tanaka', 'The user' -> 'user', 'The search team' ->
    'search team': the whole name or noun phrase, never a part of it ("Ana Silva" and "Ana Ng"
    are two people; a bare "Ana" is neither of them, since which one it means is unknown)."""
    raw = _ROLE_WORDS.sub("", raw.strip())
    raw = re.sub(r"^the\s+", "", raw, flags=re.I)
    words = raw.lower().split()
    # A clause opener is no name ("Yesterday Ana moved …" names nobody for sure).
    if not words or words[0] in _NOT_SUBJECTS:
        return ""
    return " ".join(words)


def topic(raw: str) -> tuple[str, str, frozenset[str]]:
    """'the Pro plan price' -> ('plan', 'price', {'pro', 'plan'}); 'Max upload size for
    attachments' -> ('size', 'value', {'max', 'upload', 'size', 'attachments'}). The key is the
    head noun (and the environment); the qualifier keeps every word, its complement's too ('shared
    admin password' / 'admin password', 'meeting with Acme' / 'meeting with Initech')."""
    text = raw.lower().strip()
    cut = _TOPIC_CUT.search(text)
    complement = [w for w in re.findall(r"[\w-]+", cut.group(0)) if w not in _QUALIFIER_STOP] if cut else []
    text = text[: cut.start()] if cut else text
    if cut and cut.group(0).lstrip().startswith("of ") and _TOPIC_TAIL.fullmatch(" " + re.sub(
            r"^(?:the|a|an|our|its)\s+", "", text)):
        # "the price of the Premium tier" is "the Premium tier price".
        text, complement = " ".join(complement) + " " + text.split()[-1], []
    text = re.sub(r"^(?:the|a|an|our|its)\s+", "", text)
    attribute = "value"
    tail = _TOPIC_TAIL.search(text)
    if tail:
        word = tail.group(0).strip()
        attribute = "price" if word in ("price", "cost", "fee") else "schedule"
        text = text[: tail.start()]
    words = text.split()
    if not words:
        return "", attribute, frozenset()
    environment = _ENVIRONMENTS.search(text)
    key = words[-1] if not environment or environment.group(1) == words[-1] else \
        f"{_ENVIRONMENT_NAMES.get(environment.group(1), environment.group(1))} {words[-1]}"
    return key, attribute, frozenset(words + complement)


def _lemma(verb: str) -> str:
    for suffix, replacement in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("ing", ""), ("s", "")):
        if verb.endswith(suffix) and len(verb) > len(suffix) + 2:
            return verb[: -len(suffix)] + replacement
    return verb


# Auxiliaries end in -s too; "is really … every day" is no habit of "is".
_NOT_HABITS = frozenset({"is", "was", "has", "does", "says", "thinks", "feels", "seems", "looks"})
_OBJECT_SKIP = re.compile(r"^(?:a|an|the|some|my|his|her|their|in|at|on|to|for|before|after|every|\d.*)$")


def _habit(verb: str, rest: str) -> str:
    """'runs', ' 5 km every morning' -> 'habit:run'; 'drinks', ' a flat white …' ->
    'habit:drink flat': a habit is keyed by its verb and the first word of a named object, so
    tea and coffee stay two habits while a distance or a time of day does not split one."""
    words = [w for w in re.findall(r"[a-z][\w-]*|\d\S*", rest.lower())]
    head = next((w for w in words[:3] if not _OBJECT_SKIP.match(w)), "")
    if head in ("km", "miles", "mornings", "evenings", "morning", "evening", "daily", "weekly"):
        head = ""
    return f"habit:{_lemma(verb.lower())}" + (f" {head}" if head else "")


# Cheap gates: a pattern is tried only when one of its words is in the lowercased text, which
# keeps `claims` near a tenth of a millisecond on chat text where almost nothing matches.
_GATES = {
    "DESK_MOVE": ("moved",), "RESIDENCE": ("live", "based", "moved", "relocated"),
    "EMPLOYER": ("work", "joined"), "REPORTS_TO": ("reports",), "ROLE": (" the ", " our "),
    "RELATIONSHIP": ("single", "dating", "engaged", "married", "divorced", "separated", "widowed",
                     "relationship"),
    "DIET": ("vegetarian", "vegan", "pescatarian", "keto", "gluten", "halal", "kosher", "teetotal"),
    "DIET_EATS": ("eat",), "HABIT_STOPPED": ("no longer", "stopped", "quit", "gave up", "n't",
                                                "does not"),
    "HABIT": ("every", "daily", "weekly"), "POSSESSIVE_CHANGED": ("'s", "’s"),
    "POSSESSIVE_IS": ("'s", "’s"), "SAYS_HER": ("says", "said", "mentioned"),
    "CHANGED_HER": ("changed", "updated", "switched"), "ON_CALL": ("on-call", "on call", "oncall"),
    "CREDENTIAL": ("password", "passcode", "passphrase", "pin", "code", "ssid"),
}
# Lowercase and case-sensitive on purpose: a case-insensitive alternation is several times slower.
_QUANTITY_HINT = re.compile(r"\d|every|noon|midnight|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|day\b")
_TICKET_HINT = re.compile(r"[A-Z][A-Z0-9]+-\d")
# Pronouns and openers are not subjects ("He's real chill", "It's like…", "Let's …").
_NOT_SUBJECTS = frozenset({"i", "he", "she", "it", "we", "they", "you", "this", "that", "there",
                           "here", "what", "who", "let", "everyone", "someone", "nobody", "my",
                           # Determiners and sentence openers capitalised at a clause's start.
                           "the", "a", "an", "our", "your", "his", "her", "their", "its", "these",
                           "those", "today", "yesterday", "tomorrow", "now", "then", "also",
                           "after", "before", "since", "last", "next", "recently", "finally",
                           "meanwhile", "apparently", "actually", "update", "note", "fyi", "btw"})


_GATE_WORDS = {name: frozenset(words) for name, words in _GATES.items()}
_GATE_FINDER = re.compile("|".join(re.escape(w) for w in sorted({w for ws in _GATES.values() for w in ws},
                                                                 key=len, reverse=True)))


class Gates:
    """The gate words present in a lowercased text, found in one regex pass. Computed once per
    memory text and shared by its clauses: a word absent from the text is absent from each."""

    def __init__(self, lower: str):
        self.hits = frozenset(_GATE_FINDER.findall(lower))

    def __call__(self, name: str) -> bool:
        return not self.hits.isdisjoint(_GATE_WORDS[name])


_PLACE_PREPOSITION = re.compile(r"^(in|at|on|near|by|with|under|inside|outside)\s+")
_NAME_LIKE = re.compile(r"^(?:(?:a|an|the)\s+)?(?:[A-Z\d+$€£¥]|\S+@\S+)")


def _attribute_value(attribute: str, raw: str) -> tuple[str, str] | None:
    """(attribute, value) of "X's <attribute> is <raw>", or None when it is a description.

    "Tom's car is red" and "… is old" describe, both true; a single-valued attribute
    (`attributes.single_valued`: status, desk, favourite film) or a name-like value ("a Tesla",
    "555-0101") states one. Where something is ("in the garage") is its own slot ("car in").
    """
    raw = raw.strip()
    place = _PLACE_PREPOSITION.match(raw)
    if attributes.single_valued(attribute):
        pass
    elif place:
        attribute = f"{attribute} {place.group(1)}"
        raw = raw[place.end():]
    elif not _NAME_LIKE.match(raw):
        return None
    value = values.clean_en(raw)
    return (attribute, value) if value else None


def _person_facts(clause: str, gate: Gates) -> list[Fact]:
    found = []

    def add(match, attribute, value):
        who = subject(match.group("subj"))
        if who and value and who not in _NOT_SUBJECTS:
            found.append(Fact(attribute if attribute in attributes.SUBJECTLESS else f"{who}|{attribute}",
                              value))

    if gate("DESK_MOVE") and (m := DESK_MOVE.search(clause)):
        add(m, "desk", values.clean_en(m.group("val")))
    elif (gate("RESIDENCE") and (m := RESIDENCE.search(clause))
          and not _DATE.match(m.group("val"))):
        add(m, "residence", values.clean_en(m.group("val")))
    if gate("EMPLOYER") and (m := EMPLOYER.search(clause)):
        add(m, "employer", values.clean_en(m.group("val")))
        if m.group("role"):
            add(m, "role", values.clean_en(m.group("role")))
    if gate("REPORTS_TO") and (m := REPORTS_TO.search(clause)):
        add(m, "manager", values.clean_en(m.group("val")))
    if gate("ROLE") and (m := ROLE.search(clause)):
        add(m, "role", m.group("val").lower())
    if gate("RELATIONSHIP") and (m := RELATIONSHIP.search(clause)):
        add(m, "relationship", m.group("val").lower())
    if gate("DIET") and (m := DIET.search(clause)):
        add(m, "diet", m.group("val").lower())
    elif gate("DIET_EATS") and (m := DIET_EATS.search(clause)):
        add(m, "diet", "eats " + m.group("val").lower())
    if gate("HABIT_STOPPED") and (m := HABIT_STOPPED.search(clause)):
        add(m, _habit(m.group("act"), m.group("object")), "stopped")
    elif (gate("HABIT") and (m := HABIT.search(clause))
          and m.group("act").lower() not in _NOT_HABITS):
        add(m, _habit(m.group("act"), m.group("object")), m.group("val").lower())
    for name, pattern in (("POSSESSIVE_CHANGED", POSSESSIVE_CHANGED), ("POSSESSIVE_IS", POSSESSIVE_IS),
                          ("SAYS_HER", SAYS_HER), ("CHANGED_HER", CHANGED_HER)):
        if gate(name) and (m := pattern.search(clause)):
            if stated := _attribute_value(attributes.fold(m.group("attr")), m.group("val")):
                add(m, *stated)
            break
    return found


def _thing_facts(clause: str, lower: str, gate: Gates) -> list[Fact]:
    found = []
    if _TICKET_HINT.search(clause):
        for pattern in (TICKET_TO, TICKET_BY, TICKET_VERB_FIRST, TICKET_TAKEN):
            if m := pattern.search(clause):
                found.append(Fact(f"{m.group('ticket').lower()}|assignee", m.group("val").lower()))
                break
    for pattern in ON_CALL if gate("ON_CALL") else ():
        if m := pattern.search(clause):
            team = m.group("team")
            found.append(Fact("on-call", m.group("val").lower(),
                              frozenset({team.lower()}) if team else frozenset()))
            break
    if not found and gate("CREDENTIAL") and (m := CREDENTIAL.search(clause)):
        *_, qualifier = topic(m.group("topic") + m.group("head") + (m.group("of") or ""))
        found.append(Fact(f"{m.group('head').lower()}|value", m.group("val").rstrip(".").lower(),
                          qualifier))
        return found
    if not _QUANTITY_HINT.search(lower):
        return found
    if _VERSION_CUE.search(clause) or re.search(r"(?<![\w.])v\d", clause):
        found += _version_facts(clause)
    if found:
        return found
    for pattern in (TOPIC_IS, VERB_TOPIC_TO, TOPIC_VERB_TO, TOPIC_EVERY):
        if m := pattern.search(clause):
            key, attribute, qualifier = topic(m.group("topic"))
            if pattern is TOPIC_EVERY or m.group("val").lower().startswith("every"):
                attribute = "schedule"
            elif re.search(r"\bcosts\b", m.group(0)):
                attribute = "price"
            if key and key not in _NOT_SUBJECTS and not key[-1].isdigit():
                found.append(Fact(f"{key}|{attribute}", " ".join(m.group("val").lower().split()),
                                  qualifier))
            break
    return found


_VERSION_TOKEN = re.compile(rf"(?<![\w.])(?P<val>{values.VERSION})(?![\w])")


_NAME_WORD = re.compile(r"[A-Za-z][\w.-]*(?:'s|’s)?")
_MAX_NAME_WORDS = 4


def software_name(before: str) -> str:
    """The name of what runs a version, from the text before the version: the run of words that
    ends at its last content word ('The billing service runs version' -> 'billing service',
    "Ana's laptop now runs" -> "ana's laptop", 'Production is running checkout-service' ->
    'checkout-service'). The whole run, never its last word alone: the billing and the search
    service are two services, Ana's and Bob's laptops two laptops."""
    words = [w.replace("’", "'") for w in _NAME_WORD.findall(before)]
    name: list[str] = []
    for word in reversed(words):
        lower = word.lower()
        if lower in _VERSION_STOP or _ENVIRONMENTS.fullmatch(lower):
            if name:
                break
            continue
        name.insert(0, lower)
    return " ".join(name) if 0 < len(name) <= _MAX_NAME_WORDS else ""


def _version_facts(clause: str) -> list[Fact]:
    """'Production is running checkout-service v2.8.1' -> ('checkout-service@production|version',
    'v2.8.1'): one version per software and environment."""
    match = _VERSION_TOKEN.search(clause)
    if not match:
        return []
    name = software_name(clause[: match.start()])
    if not name:
        return []
    environment = _ENVIRONMENTS.search(clause)
    where = environment.group(1).lower() if environment else "any"
    where = _ENVIRONMENT_NAMES.get(where, where)
    return [Fact(f"{name}@{where}|version", match.group("val").lower().lstrip("v"))]


def facts(clause: str, gates: Gates | None = None) -> list[Fact]:
    """The facts an English clause states, slots deduplicated (first wins)."""
    seen, out = set(), []
    # A clause about a person is not also read as a configuration topic ("Nina runs 5 km").
    lower = clause.lower()
    gates = gates or Gates(lower)
    for fact in _person_facts(clause, gates) or _thing_facts(clause, lower, gates):
        if fact.slot not in seen and fact.value:
            seen.add(fact.slot)
            out.append(fact)
    return out
