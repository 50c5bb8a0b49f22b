"""Named things a memory text mentions, and whether two texts agree on them (pure).

Two notes that differ only in the customer, the version, the e-mail address or the number
they name are about different things, however many words they share ("Kestrel Health renews
on 1 March" / "Oakridge Dental renews on 1 March"). :func:`extract` finds, per kind:

- ``url``: ``http(s)://…`` and bare host names (``status.harbor.example``), host case-folded;
- ``email``: ``name@host``, case-folded;
- ``version``: ``v2.6.0``, ``v3``, ``2.6.0`` (three parts or more), without the ``v``;
- ``id``: ticket and object ids (``SUP-4821``, ``cus_8F2kQ91``, ``#88``), snake_case names
  (``new_billing_ui``), words mixing letters and digits (``argon2``, ``Q1``), UUIDs;
- ``number``: the other numbers (``60``, ``02:30``, ``1,000`` = ``1000``, ``16.4``, dates), and
  Chinese numerals of time and counts (``周三`` = weekday 3, ``十点``);
- ``name``: capitalised words of Latin script, one set of words per text (``Kestrel Health``
  gives ``kestrel`` and ``health``): acronyms (``API``), words with an inner capital
  (``PostgreSQL``, ``iOS``), and capitalised words inside a sentence. A capitalised word that
  opens a sentence is a name only when it appears capitalised inside a sentence somewhere in
  the corpus (``known_names``), so "Use" or "Deploys" at the start are not names, and "Tom" is;
- ``cjk_name``: Chinese person names (a common surname and the next character: ``王磊``,
  ``陈静``), organisation names (two characters before a trade word: ``青山零售``) and
  place names (regions, provinces, large cities: ``华东``, ``上海``);
- ``switch``: the state a note sets, ``on`` or ``off`` ("turn off", "disabled", ``关闭``);
- ``environment``: ``production``, ``staging``, ``sandbox``, ``preview`` (and ``生产``, ``预发``,
  ``测试环境``…): "the staging database" and "the production database" are two things.

Numbers also keep the unit that follows them (the next word, or the next Chinese
character): "10 dashboards" and "10 seats" name the same number but different things, so a
number both texts name with a unit must have the same unit in both.

Each kind is matched on what the kinds before it left, so ``v2.6.0`` is a version and not
three numbers, and ``no-reply@mail.harbor.example`` is one e-mail address.

:func:`agree`: for every kind that both texts name, the things one text names are all named
by the other (one set contains the other). A note that adds a detail agrees with the note it
extends; a note that names another customer, version or number does not.
"""

import re
import unicodedata
from collections.abc import Iterable

KINDS = ("url", "email", "version", "id", "number", "name", "cjk_name", "switch", "environment")

_TRAIL = ".,;:!?)]}'\"”’。，；：！？）"
# NFKC has turned full-width "，；（）" into ASCII; a URL stops there and at CJK text.
_URL = re.compile(r"\bhttps?://[^\s<>\"',;()\u3000-\u303f\u4e00-\u9fff]+", re.IGNORECASE)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_HOST = re.compile(r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,}"
                   r"(?:/[^\s<>\"',;()\u3000-\u303f\u4e00-\u9fff]*)?")
_VERSION = re.compile(r"(?<![\w.])(?:v\d+(?:\.\d+)*|\d+\.\d+\.\d+)(?:[-+][0-9a-z.]+)?(?![\w.]*\w)",
                      re.IGNORECASE)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
                   re.IGNORECASE)
_ID = re.compile(
    r"(?<![\w-])(?:[A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]*\d[A-Za-z0-9_-]*"  # SUP-4821, cus_8F2k
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"                                      # new_billing_ui
    r"|#\d+"                                                               # #88
    r"|(?=[A-Za-z]*\d)(?=\d*[A-Za-z])(?!\d+(?:st|nd|rd|th)\b)[A-Za-z0-9]{2,})(?![\w-])")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_CJK_NUMERAL = re.compile(
    r"(?:周|星期|礼拜)[一二三四五六日天]"
    r"|[零一二三四五六七八九十两百千万]+(?=点|月|日|号|年|天|周|小时|分钟|次|人|岁|元|块)")
# No dot inside a word: "hashing.Hashes" (a missing space) is two words, not a camelCase name.
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_UNIT = re.compile(r" ?([\u4e00-\u9fff])| ([A-Za-z]+)\b")
_PLACES = (
    "华东|华南|华北|华中|华西|西南|西北|北京|上海|天津|重庆|广州|深圳|杭州|南京|苏州|成都|武汉|西安|"
    "长沙|郑州|青岛|厦门|宁波|合肥|福州|济南|沈阳|大连|哈尔滨|长春|昆明|贵阳|南宁|海口|三亚|珠海|东莞|"
    "佛山|无锡|香港|澳门|台北|新加坡|东京|首尔|伦敦|纽约|广东|浙江|江苏|四川|湖北|湖南|河南|河北|山东|"
    "山西|福建|安徽|江西|云南|贵州|陕西|甘肃|辽宁|吉林|黑龙江|广西|海南|内蒙古|新疆|西藏|宁夏|青海|台湾")
_CJK_PLACE = re.compile(_PLACES)
_SWITCH = re.compile(
    r"\b(?:turn(?:s|ed|ing)?|switch(?:es|ed|ing)?|toggle[sd]?|flip(?:s|ped)?) (on|off)\b"
    r"|\b(enabl|disabl)(?:e|es|ed|ing)\b|(开启|打开|启用|上线)|(关闭|关掉|停用|禁用|下线)", re.IGNORECASE)
_ENVIRONMENT = re.compile(
    r"\b(production|prod|staging|sandbox|preview)\b|(生产|预发|线上)"
    r"|(测试|开发)(?=环境|数据库|服务器|集群|机房)", re.IGNORECASE)
_ENV_NAMES = {"prod": "production", "生产": "production", "线上": "production",
              "预发": "staging", "测试": "test", "开发": "development"}

# A capitalised function word inside a sentence (after a colon, in a title) is no name.
_FUNCTION_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "he",
    "her", "his", "i", "if", "in", "is", "it", "its", "no", "not", "of", "on", "or", "our",
    "she", "so", "that", "the", "their", "then", "there", "these", "they", "this", "those",
    "to", "was", "we", "were", "when", "where", "which", "who", "with", "you", "your", "after",
    "before", "since", "until", "all", "any", "each", "every"})

# Common single-character surnames that seldom start an ordinary word (so 周 "week",
# 高 "high", 方 as in 方案 "plan", 程 as in 程序 "program" are left out).
_SURNAMES = "王李张刘陈杨黄赵吴徐孙朱胡郭林罗郑梁谢宋唐韩冯邓曹彭肖袁潘蒋蔡杜叶苏魏吕沈姚卢姜崔钟谭陆汪廖贾韦邹孟熊秦邱尹薛闫雷侯陶黎贺郝龚邵覃戴孔"
_NOT_GIVEN = "的了是在和与及或也都就还把被给对说已将会要有这那个们"
_CJK_PERSON = re.compile(rf"[{_SURNAMES}](?=[\u4e00-\u9fff])(?![{_SURNAMES}])[\u4e00-\u9fff]")
_CJK_ORG = re.compile(
    r"[\u4e00-\u9fff]{2}(?:零售|物流|餐饮|医疗|科技|银行|集团|公司|诊所|医院|教育|地产|保险|证券|"
    r"电商|传媒|食品|制造|能源|汽车|航空|酒店|超市|药业|律所|咨询|软件|网络|健康)")


def _clean(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _take(pattern: re.Pattern, text: str, found: set[str], norm=str.casefold) -> str:
    """Add every match (trailing punctuation stripped, normalised) to ``found`` and blank it
    out of ``text`` so later kinds do not match inside it."""
    def blank(m: re.Match) -> str:
        value = m.group(0).rstrip(_TRAIL)
        if value:
            found.add(norm(value))
        return " " * len(m.group(0))
    return pattern.sub(blank, text)


def _number(value: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", value)


def _quantities(text: str, found: set[str]) -> str:
    """Numbers as ``value`` or ``value unit`` (the unit: the next word unless a function
    word, singular; or the next Chinese character), blanked out of ``text``."""
    def blank(m: re.Match) -> str:
        value = _number(m.group(0))
        unit = _UNIT.match(text, m.end())
        word = (unit.group(1) or unit.group(2).casefold()) if unit else ""
        if word in _FUNCTION_WORDS:
            word = ""
        if len(word) > 3 and word.endswith("s"):
            word = word[:-1]
        found.add(f"{value} {word}".strip())
        return " " * len(m.group(0))
    return _NUMBER.sub(blank, text)


def _switches(text: str) -> set[str]:
    found = set()
    for m in _SWITCH.finditer(text):
        on_off, able, on, off = m.groups()
        if on_off:
            found.add(on_off.casefold())
        elif able:
            found.add("on" if able.casefold() == "enabl" else "off")
        else:
            found.add("on" if on else "off")
    return found


def _environments(text: str) -> set[str]:
    found = set()
    for m in _ENVIRONMENT.finditer(text):
        word = next(g for g in m.groups() if g).casefold()
        found.add(_ENV_NAMES.get(word, word))
    return found


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence: nothing but white space before it, a
    line break, or closing punctuation (``.!?。！？``) right before the white space."""
    j = start - 1
    while j >= 0 and text[j].isspace():
        if text[j] == "\n":
            return True
        j -= 1
    return j < 0 or text[j] in ".!?。！？"


def _names(text: str, known_names: Iterable[str] | None) -> set[str]:
    known = set(known_names or ())
    names = set()
    for m in _WORD.finditer(text):
        word = re.sub(r"['’]s$", "", m.group(0)).rstrip(".'’-")
        folded = word.casefold()
        if not word or folded in _FUNCTION_WORDS:
            continue
        acronym = len(word) >= 2 and (word.isupper() or any(c.isupper() for c in word[1:]))
        if not (acronym or word[0].isupper()):
            continue
        if acronym or folded in known or not _opens_sentence(text, m.start()):
            names.add(folded)
    return names


def names_inside_sentences(text: str) -> set[str]:
    """Capitalised words (case-folded) that stand inside a sentence of ``text``: what a
    corpus says are names (feed the union over a namespace to :func:`extract`)."""
    text = _clean(text)
    found = set()
    for m in _WORD.finditer(text):
        word = re.sub(r"['’]s$", "", m.group(0)).rstrip(".'’-")
        if word and word[0].isupper() and not _opens_sentence(text, m.start()):
            found.add(word.casefold())
    return found - _FUNCTION_WORDS


def extract(text: str, known_names: Iterable[str] | None = None) -> dict[str, frozenset[str]]:
    """``{kind: frozenset of normalised values}`` for every kind of :data:`KINDS` (empty
    sets included). ``known_names``: case-folded words seen capitalised inside sentences of
    the corpus (see :func:`names_inside_sentences`)."""
    rest = _clean(text)
    found: dict[str, set[str]] = {kind: set() for kind in KINDS}
    rest = _take(_URL, rest, found["url"], norm=lambda v: v.casefold().rstrip("/"))
    rest = _take(_EMAIL, rest, found["email"])
    rest = _take(_HOST, rest, found["url"], norm=lambda v: v.casefold().rstrip("/"))
    rest = _take(_VERSION, rest, found["version"], norm=lambda v: v.casefold().lstrip("v"))
    rest = _take(_UUID, rest, found["id"])
    rest = _take(_ID, rest, found["id"])
    found["switch"] = _switches(rest)
    found["environment"] = _environments(rest)
    rest = _quantities(rest, found["number"])
    rest = _take(_CJK_NUMERAL, rest, found["number"])
    rest = _take(_CJK_ORG, rest, found["cjk_name"])
    rest = _take(_CJK_PLACE, rest, found["cjk_name"])
    rest = _take(_CJK_PERSON, rest, found["cjk_name"])
    found["name"] = _names(rest, known_names)
    return {kind: frozenset(values) for kind, values in found.items()}


def _split_units(values: frozenset[str]) -> tuple[set[str], dict[str, set[str]]]:
    numbers, units = set(), {}
    for value in values:
        number, _, unit = value.partition(" ")
        numbers.add(number)
        if unit:
            units.setdefault(number, set()).add(unit)
    return numbers, units


def _numbers_agree(x: frozenset[str], y: frozenset[str]) -> bool:
    nx, ux = _split_units(x)
    ny, uy = _split_units(y)
    if nx and ny and not (nx <= ny or ny <= nx):
        return False
    return all(not (ux[n] and uy[n]) or ux[n] & uy[n] for n in ux.keys() & uy.keys())


def conflicts(a: dict[str, frozenset[str]], b: dict[str, frozenset[str]]) -> list[str]:
    """The kinds on which two texts' entities (from :func:`extract`) disagree: both name
    things of that kind and neither set contains the other (for numbers: the values, and
    the units of a value both name with a unit)."""
    out = []
    for kind in KINDS:
        x, y = a.get(kind, frozenset()), b.get(kind, frozenset())
        if x and y and not (_numbers_agree(x, y) if kind == "number" else x <= y or y <= x):
            out.append(kind)
    return out


def agree(a: dict[str, frozenset[str]], b: dict[str, frozenset[str]]) -> bool:
    """Whether two texts' entities agree on every kind (no :func:`conflicts`)."""
    return not conflicts(a, b)
