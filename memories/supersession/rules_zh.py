"""Chinese claim rules: subject + attribute + value patterns over one clause (，。；-separated).

`facts(clause, carried)` returns `[(slot, value)]`; `carried` is the subject of the text's
earlier clause, used when a clause has none ("曹磊又搬家了，现在住在昆明"). The attribute list is
the product issue's, as for English: 住址, 工作单位与职位, 联系方式, 最喜欢的…, 感情状态, 饮食,
停止的习惯, 工单负责人, 值班, 版本, 配置值, 价格, 日期与周期, 称呼.
"""

import re

from memories.supersession import attributes, values
from memories.supersession.fact import Fact

_HAN = r"\u4e00-\u9fff"
# A subject: a short run without clause punctuation or negation, cut to the name by `subject`.
_SUBJECT = r"(?P<subj>[^，。；,;没不的]{0,12}?)"
# Person rules accept "马丽的同事高峰" as a subject (the colleague is the subject).
_SUBJECT_OF = r"(?P<subj>[^，。；,;没不]{0,14}?)"
_VALUE = r"(?P<val>[^，。；,;]+)"
# Time words, adverbs and linking words that follow a name ("张伟上个月", "李娜说她现在").
_AFTER_NAME = re.compile(
    r"随后|后来|曾经|当时|可以|毕业|上个?月|上周|下周|本周|这周|今年|去年|年初|年底|最近|现在|目前|已经|又|也|还|都|再|说|和|跟|与"
    r"|每天|每周|最|希望|以后|这个|今天|昨天|刚")
_ROLE_PREFIX = re.compile(r"^(?:客户|本周|这周|今天|目前|现在)")
_RELATION = re.compile(r"^(?:同事|朋友|妈妈|爸爸|母亲|父亲|女儿|儿子|丈夫|妻子|老公|老婆|男朋友|女朋友|哥哥|姐姐|弟弟|妹妹|室友|邻居)")
_NOT_A_NAME_START = frozenset("他她它我你您咱这那就但而于因所并又在从对被把将是有其该此各每另当若")
# Attributes holding one value at a time by their last characters (名字, 微信号, 客户经理, 负责人).
_SINGLE_VALUED_END = re.compile(r"(?:名|名字|号|号码|地址|邮箱|经理|负责人|领导|状态|职位|价格|版本|生日|日期|工位|座位|人)$")
_FAVOURITE = re.compile(r"最(?:喜欢|爱|喜爱)")
# Rules are tried only when one of their words is in the memory text (checked once per text).
_GATES = {
    "DESK": ("工位", "座位"), "RESIDENCE": ("住", "搬", "迁", "定居"),
    "EMPLOYER": ("做", "当", "任", "工作", "上班"), "EMPLOYER_JOINED": ("跳槽", "入职", "加入"),
    "RELATIONSHIP": ("单身", "恋爱", "订婚", "结婚", "离婚", "分手"), "DIET": ("素",),
    "DIET_AGAIN": ("开始吃",), "HABIT": ("每",), "HABIT_STOPPED": ("不", "没"),
    "NICKNAME": ("称呼", "叫", "改名"), "POSSESSIVE": ("的",), "TICKET": ("-",), "ON_CALL": ("值班",),
    "TOPIC_SET": ("是", "为", "定在", "改", "推迟", "提前", "调", "恢复", "升级", "降", "涨", "从"),
    "TOPIC_EVERY": ("每",), "CREDENTIAL": ("密码", "口令", "门禁码", "验证码", "PIN码"),
}


def gates(text: str) -> frozenset[str]:
    """The names of the rules worth trying on this text's clauses."""
    return frozenset(name for name, words in _GATES.items() if any(w in text for w in words))


_TICKET = r"(?P<ticket>[A-Z][A-Z0-9]+-\d+)"
_PERSON = rf"(?P<val>[{_HAN}A-Za-z]{{1,4}}?)"

RESIDENCE = re.compile(rf"^{_SUBJECT_OF}(?:住在|居住在|定居在?|搬到了?|搬去了?|搬回了?|搬家到|迁居到?){_VALUE}")
DESK = re.compile(rf"^{_SUBJECT_OF}(?:换到了?|搬到了?|调到了?)(?P<val>[^，。]+?)的(?:工位|座位)")
EMPLOYER = re.compile(
    rf"^{_SUBJECT_OF}(?:在|入职了?|加入了?|跳槽到了?)(?P<val>[^，。做当任工在]{{1,12}}?)"
    r"(?:做|当|任|担任|工作|上班)(?P<role>[^，。；]*)")
# "方圆跳槽到了美团": a change of employer stated without a verb of working after it.
EMPLOYER_JOINED = re.compile(rf"^{_SUBJECT_OF}(?:跳槽到了?|跳槽去了?|入职了?|加入了?)(?P<val>[^，。；]{{1,12}})$")
RELATIONSHIP = re.compile(rf"^{_SUBJECT_OF}(?P<val>单身|恋爱中|在谈恋爱|谈恋爱了|订婚|结婚|离婚|分手)")
_RELATIONSHIP_VALUES = {"单身": "single", "恋爱中": "dating", "在谈恋爱": "dating", "谈恋爱了": "dating",
                        "订婚": "engaged", "结婚": "married", "离婚": "divorced", "分手": "single"}
DIET = re.compile(rf"^{_SUBJECT_OF}(?:吃素|吃全素|是素食者|只吃素)")
DIET_AGAIN = re.compile(rf"^{_SUBJECT_OF}开始吃(?P<val>鱼|肉|海鲜|荤)")
HABIT = re.compile(rf"^{_SUBJECT_OF}(?P<val>每天|每周[一二三四五六日天]?|每晚|每早)[^，。]*?去(?P<act>[^，。了的]{{1,6}}?)(?=了|练|锻炼|跑|游|打|，|。|$)")
HABIT_STOPPED = re.compile(rf"^{_SUBJECT_OF}(?:已经不再?|不再|没再|已经没有?再?)去(?P<act>[^，。了]{{1,6}})")
POSSESSIVE = re.compile(
    rf"^{_SUBJECT}的(?P<attr>[^，。的是为在]{{1,8}}?)(?:现在|目前|已经|也|还)?"
    rf"(?P<verb>是|为|改为|改成|换成了?|变成了?|变为|调整为|更新为|在|(?:换|搬|调|挪)到了?){_VALUE}")
CHANGED_NEW = re.compile(
    rf"^{_SUBJECT}(?:换了|更换了|改了)(?:新的?)?(?P<attr>[^，。,]{{1,5}}?)[，,]\s*新(?:的)?[^，。是]{{0,4}}是{_VALUE}")
NICKNAME = re.compile(
    rf"^{_SUBJECT_OF}(?:希望被称呼为|希望大家叫(?:她|他)|说以后叫(?:她|他)|以后叫(?:她|他)|改名为|改名叫|让大家叫(?:她|他))"
    rf"(?P<val>[{_HAN}A-Za-z]{{1,4}})")
TICKET = re.compile(rf"{_TICKET}[^，。]*?(?:由|交给|转给|分配给|指派给|改由){_PERSON}(?:负责|处理|跟进|$)")
ON_CALL = (
    re.compile(rf"(?:由|改由){_PERSON}(?:负责)?值班"),
    re.compile(rf"值班(?:人)?(?:改由|改为|换成|是){_PERSON}(?:负责|值班|$)"),
)
PRICE_CHANGE = re.compile(
    rf"^(?P<topic>[^，。]{{2,12}}?)(?:涨价|降价|调价|提价)了?[，,]?\s*(?:现在|目前)?(?:是|为|变成|涨到|降到)?\s*"
    rf"(?P<val>{values.NUMBER_ZH})")
# Things: "<topic>是 30 秒", "<topic>从 30 秒改为 60 秒", "<topic>定在 4 月 18 日", "<topic>每周五轮换".
_QUANTITY = rf"(?P<val>{values.DATE_ZH}|{values.VERSION}|{values.NUMBER_ZH}|{values.NUMBER_EN})"
TOPIC_SET = re.compile(
    rf"^(?P<topic>[^，。]{{2,24}}?)(?:的)?(?:现在|目前|已经|已|也)?"
    rf"(?:是|为|设为|设置为|定在|改到|改期到|推迟到|提前到|改为|改成|调整为|调为|调到|恢复为|恢复到|升级到|升级为|降到|涨到|"
    rf"从\s*[^，。]+?\s*(?:改为|改成|调整为|调到|升级到))\s*{_QUANTITY}")
# A secret or code set to a token holding a digit or a symbol: "无线网密码是 tiger42", "门禁密码改成了 4821#".
CREDENTIAL = re.compile(
    r"^(?P<topic>[^，。；,;]{0,16}?)(?:的)?(?P<head>密码|口令|门禁码|验证码|PIN码)(?:现在|目前|已经|已|也)?"
    r"(?:是|为|改成了?|改为|换成了?|更新为|重置为|设为|设置为)\s*"
    r"(?P<val>[A-Za-z0-9_@.!#$%^&*+=-]*[\d@!#$%^&*+=_][A-Za-z0-9_@.!#$%^&*+=-]*)\s*(?:了)?$")
TOPIC_EVERY = re.compile(
    rf"^(?P<topic>[^，。]{{2,24}}?)(?P<val>{values.DATE_ZH})[^，。]*?(?:轮换|更换|执行|进行|备份|运行|举行|开)")
_VERSION_CUE = re.compile(r"版本|升级|部署|上线|回滚|运行")
_ENVIRONMENTS = (("生产", "production"), ("线上", "production"), ("测试", "test"), ("预发", "staging"),
                 ("开发", "dev"))
# Head nouns of configuration topics: two timeouts of one namespace are one slot only if the
# head noun and the system name agree ("订单服务调用库存接口的超时时间" / "库存接口超时时间").
_HEADS = ("超时时间", "保留时间", "过期时间", "最大连接数", "连接数", "密码", "价格", "上限", "大小", "限额",
          "频率", "端口", "数量", "时间", "地址", "超时", "版本")
_TOPIC_TAIL = re.compile(r"(?:轮换|更换|备份|的)$")
_TOPIC_LEAD = re.compile(r"^(?:现在|目前|本周|这周|今天|已经)+")


def subject(raw: str) -> str:
    """'客户刘女士' -> '刘女士', '张伟上个月' -> '张伟', '马丽的同事高峰' -> '高峰'."""
    raw = re.sub(r"\s+", "", raw)
    if re.search(r"\d", raw):
        return ""
    if "的" in raw:
        owner, tail = raw.rsplit("的", 1)
        raw = _RELATION.sub("", tail)
        if not raw and (relation := _RELATION.match(tail)) and relation.end() == len(tail):
            # "陈静的妈妈" is her mother, a subject of her own; never 陈静 and never any mother.
            owner = subject(owner)
            return f"{owner}的{tail}" if owner and "的" not in owner else ""
    raw = _ROLE_PREFIX.sub("", raw)
    cut = _AFTER_NAME.search(raw)
    if cut and cut.start() > 0:
        raw = raw[: cut.start()]
    elif cut:
        raw = ""
    # A name or an organisation is short and does not open with a pronoun or a conjunction
    # ("他在校时…", "但张世昌…", "就那一刻…" are not subjects).
    if not raw or len(raw) > 5 or raw[0] in _NOT_A_NAME_START:
        return ""
    return raw


def topic(raw: str) -> tuple[str, frozenset[str]]:
    """A configuration topic's key and qualifier: capitalised system names plus the head noun
    (or the last three characters) as key, every character and name as qualifier:
    'Kafka 消息保留时间' -> ('kafka 保留时间', {kafka, 消, 息, 保, 留, 时, 间})."""
    raw = _TOPIC_LEAD.sub("", _TOPIC_TAIL.sub("", raw.strip()))
    if not raw or raw[0] in _NOT_A_NAME_START:
        return "", frozenset()
    systems = [w.lower() for w in re.findall(r"[A-Z][\w.-]*", raw)]
    systems += [env for word, env in _ENVIRONMENTS if word in raw]
    han = re.sub(rf"[^{_HAN}]|的|环境", "", raw)
    for word, _ in _ENVIRONMENTS:
        han = han.replace(word, "")
    head = next((h for h in _HEADS if han.endswith(h)), han[-3:])
    if len(head) < 2 and not systems:
        return "", frozenset()
    return " ".join(systems + [head]).strip(), frozenset(systems) | frozenset(han)


_VERSION_TOKEN = re.compile(rf"(?<![\w.])(?P<val>{values.VERSION})(?![\w])")
# An owner longer than this is a clause, not a name: no claim.
_MAX_OWNER = 8
# Where the noun after a software's name ends, and the words that name no other thing.
_NAME_TAIL_CUT = re.compile(r"现在|目前|已经|已|也|还|是|为|升级|降级|部署|运行|上线|回滚|从|改|调|的|在")
_GENERIC_TAIL = re.compile(r"系统版本|版本号?|系统$")
_V_PREFIXED = re.compile(r"(?<![\w.])v\d")


def _software(raw: str) -> str:
    """'订单服务的版本' -> '订单服务': what a version is of, environments and time words aside; ''
    when nothing or a clause is left."""
    name = _TOPIC_LEAD.sub("", re.sub(r"[\s的]|环境|版本|系统版本", "", raw))
    for word, _ in _ENVIRONMENTS:
        name = name.replace(word, "")
    if not name or len(name) > _MAX_OWNER or name[0] in _NOT_A_NAME_START or re.search(r"\d", name):
        return ""
    return name.lower()


def _version_facts(clause: str) -> list[Fact]:
    """'生产环境 Redis 已升级到 7.2' -> ('redis@production|version', '7.2')."""
    match = _VERSION_TOKEN.search(clause)
    if not match:
        return []
    names = list(re.finditer(r"[A-Za-z][\w-]*", clause[: match.start()]))
    if not names:
        return []
    # Whose or which the software is: the words before its name ("支付服务的 Redis",
    # "张伟的 MacBook"), environments and time words aside ("生产环境 Redis" is Redis).
    owner = _TOPIC_LEAD.sub("", re.sub(r"[\s的]|环境", "", clause[: names[-1].start()]))
    for word, _ in _ENVIRONMENTS:
        owner = owner.replace(word, "")
    if len(owner) > _MAX_OWNER or re.search(r"\d", owner):
        return []
    # …and the noun right after it: "SSO 服务" and "SSO 网关" are two things ("Redis 版本" is Redis).
    kind = _NAME_TAIL_CUT.split(clause[names[-1].end(): match.start()].strip(), maxsplit=1)[0]
    kind = _GENERIC_TAIL.sub("", kind) if re.fullmatch(rf"[{_HAN}]{{1,6}}", kind) else ""
    where = next((env for word, env in _ENVIRONMENTS if word in clause), "any")
    name = " ".join(w for w in (owner, names[-1].group(0).lower(), kind) if w)
    return [Fact(f"{name}@{where}|version", match.group("val").lower().lstrip("v"))]


# "在…做" also reads "在校时有个绰号叫…", "在那一刻他决定要做…": an organisation's name holds no
# pronoun, particle or digit.
_NOT_IN_ORGANISATION = re.compile(r"[他她我你了的那这个是有在被把将就都也时后\d、，]")


def _organisation(name: str) -> bool:
    return 1 < len(name.strip()) <= 10 and not _NOT_IN_ORGANISATION.search(name)


def _attribute_value(match) -> tuple[str, str] | None:
    """(attribute, value) of "X的<attribute>是<value>", or None when it describes.

    "车是白色的" describes (是…的) and "车在修理厂" says where: neither is a single-valued
    attribute. Single-valued: a folded attribute (phone, manager), a place (工位), a favourite
    ("最喜欢的颜色"), one ending in 名/号/经理/负责人…, or a value with Latin letters or digits.
    """
    attribute, value = attributes.fold(match.group("attr")), values.clean_zh(match.group("val"))
    if not value or value.endswith("的"):
        return None
    if match.group("verb") == "在" or match.group("verb").endswith(("到", "到了")):
        # Where something is, or was moved to: a fact only of a place's attribute (工位, 办公室).
        return (attribute, value) if attribute in attributes.LOCATIONAL else None
    if _FAVOURITE.search(match.group("subj")):
        return f"favourite:{attribute}", value
    if (attributes.single_valued(attribute) or _SINGLE_VALUED_END.search(attribute)
            or re.search(r"[A-Za-z0-9]", value)):
        return attribute, value
    return None


def facts(clause: str, carried: str = "", present: frozenset[str] | None = None) -> list[Fact]:
    """The facts a Chinese clause states, slots deduplicated (first wins). `present`: the rules
    worth trying (`gates` of the whole text), all when None."""
    found = []
    present = gates(clause) if present is None else present

    def add(match, attribute, value):
        who = subject(match.group("subj")) or carried
        if attribute in attributes.SUBJECTLESS:
            # The rota's team, if named ("支付系统的值班人"), qualifies the subjectless slot.
            found.append(Fact(attribute, value, frozenset(who) if who else frozenset()))
        elif who and value:
            found.append(Fact(f"{who}|{attribute}", value))

    if "DESK" in present and (m := DESK.search(clause)):
        add(m, "desk", values.clean_zh(m.group("val")))
    elif "RESIDENCE" in present and (m := RESIDENCE.search(clause)):
        add(m, "residence", values.clean_zh(m.group("val")))
    if "EMPLOYER" in present and (m := EMPLOYER.search(clause)) and _organisation(m.group("val")):
        add(m, "employer", values.clean_zh(m.group("val")))
        if 2 <= len(m.group("role")) <= 8 and not re.search(r"\d", m.group("role")):
            add(m, "role", values.clean_zh(m.group("role")))
    elif ("EMPLOYER_JOINED" in present and (m := EMPLOYER_JOINED.search(clause))
          and _organisation(m.group("val"))):
        add(m, "employer", values.clean_zh(m.group("val")))
    if "RELATIONSHIP" in present and (m := RELATIONSHIP.search(clause)):
        add(m, "relationship", _RELATIONSHIP_VALUES[m.group("val")])
    if "DIET" in present and (m := DIET.search(clause)):
        add(m, "diet", "vegetarian")
    elif "DIET_AGAIN" in present and (m := DIET_AGAIN.search(clause)):
        add(m, "diet", "eats " + m.group("val"))
    if "HABIT_STOPPED" in present and (m := HABIT_STOPPED.search(clause)):
        add(m, "habit:" + m.group("act"), "stopped")
    elif "HABIT" in present and (m := HABIT.search(clause)):
        add(m, "habit:" + m.group("act"), m.group("val"))
    if "NICKNAME" in present and (m := NICKNAME.search(clause)):
        add(m, "name", m.group("val"))
    if (not found and "POSSESSIVE" in present and (m := POSSESSIVE.search(clause))
            and not _VERSION_TOKEN.search(m.group("val")) and (stated := _attribute_value(m))):
        add(m, *stated)
    person = bool(found)
    if "TICKET" in present and (m := TICKET.search(clause)):
        found.append(Fact(f"{m.group('ticket').lower()}|assignee", m.group("val")))
    for pattern in ON_CALL if "ON_CALL" in present else ():
        if m := pattern.search(clause):
            found.append(Fact("on-call", m.group("val")))
            break
    if not found and "CREDENTIAL" in present and (m := CREDENTIAL.search(clause)):
        key, qualifier = topic(m.group("topic") + m.group("head"))
        if key:
            found.append(Fact(f"{key}|value", m.group("val").lower(), qualifier))
            return found
    versions = _version_facts(clause) if _VERSION_CUE.search(clause) or _V_PREFIXED.search(clause) else []
    found += versions
    topics = () if (person or versions) else (("TOPIC_SET", TOPIC_SET, "value"),
                                              ("TOPIC_EVERY", TOPIC_EVERY, "schedule"))
    for name, pattern, attribute in topics:
        if name in present and (m := pattern.search(clause)):
            key, qualifier = topic(m.group("topic"))
            if (name == "TOPIC_SET" and _VERSION_CUE.search(clause)
                    and _VERSION_TOKEN.fullmatch(m.group("val").strip())):
                # "网关服务的版本是 1.8" / "网关服务已升级到 1.9 版本": the version of 网关服务.
                if software := _software(m.group("topic")):
                    where = next((env for word, env in _ENVIRONMENTS if word in clause), "any")
                    found.append(Fact(f"{software}@{where}|version", m.group("val").strip().lstrip("v")))
                break
            if key.endswith("价格"):
                (key, qualifier), attribute = topic(m.group("topic")[:-2]), "price"
            elif m.group("val").startswith("每"):
                attribute = "schedule"
            if key:
                found.append(Fact(f"{key}|{attribute}", values.clean_zh(m.group("val")), qualifier))
            break
    seen, out = set(), []
    for fact in found:
        if fact.slot not in seen and fact.value:
            seen.add(fact.slot)
            out.append(fact)
    return out


def sentence_facts(sentence: str) -> list[Fact]:
    """Rules whose evidence spans a comma: '刘女士换了手机号，新号码是 139…', '年度会员涨价了，现在是 328 元'."""
    found = []
    if m := CHANGED_NEW.search(sentence):
        who = subject(m.group("subj"))
        if who:
            found.append(Fact(f"{who}|{attributes.fold(m.group('attr'))}", values.clean_zh(m.group("val"))))
    if m := PRICE_CHANGE.search(sentence):
        key, qualifier = topic(m.group("topic"))
        if key:
            found.append(Fact(f"{key}|price", values.clean_zh(m.group("val")), qualifier))
    return found
