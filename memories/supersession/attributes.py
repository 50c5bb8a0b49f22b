"""Attribute names: the many words for one single-valued attribute, folded to one key.

Folding makes "callback number" and "phone number" (or 联系电话 and 手机号) the same slot while
"mobile" and "office landline" stay two slots: a landline does not replace a mobile.
"""

import re

_FOLD = (
    ("phone", r"(?:callback|contact|phone|mobile|cell|telephone)(?:\s+(?:phone\s+)?number)?|number"
              r"|联系电话|电话号码|电话|手机号码?|手机|号码|联系方式"),
    ("landline", r"(?:office|desk|home|work)\s+(?:landline|phone)|landline|座机|办公室座机|办公电话|固定电话"),
    ("email", r"e-?mail(?:\s+address)?|邮箱|电子邮箱|邮件地址"),
    ("address", r"(?:home\s+|postal\s+|mailing\s+|shipping\s+)?address|地址|住址|收货地址"),
    ("surname", r"surname|last\s+name|family\s+name|姓氏"),
    ("name", r"(?:first\s+|preferred\s+)?name|nickname|名字|昵称|称呼"),
    ("desk", r"desk|seat|workstation|工位|座位"),
    ("price", r"price|cost|fee|monthly\s+price|价格|售价|定价|费用"),
    ("manager", r"(?:line\s+|direct\s+)?manager|boss|直属领导|领导|上级|经理|老板|主管"),
    ("on-call", r"on-?call(?:\s+engineer)?|值班人|值班|值班人员"),
    ("employer", r"employer|company|公司|单位"),
    ("role", r"role|job|title|position|job\s+title|职位|岗位|职务"),
)
_FOLDERS = [(key, re.compile(rf"^(?:{pattern})$", re.I)) for key, pattern in _FOLD]

# A rota has one holder at a time whatever team it names ("值班人" of "支付系统", or none):
# these attributes are keyed without their subject.
SUBJECTLESS = frozenset({"on-call"})


def fold(attribute: str) -> str:
    """'callback number' -> 'phone', '办公室座机' -> 'landline'; unknown names lowercased."""
    attribute = " ".join(attribute.lower().split())
    for key, pattern in _FOLDERS:
        if pattern.match(attribute):
            return key
    return attribute


# Attributes that name a place: their value keeps its preposition ("desk is on floor 3").
LOCATIONAL = frozenset({"desk", "office", "seat", "room", "工位", "座位", "办公室"})
_FOLDED = frozenset(key for key, _ in _FOLD)
# Words that make an attribute single-valued by themselves ("favourite film", "home address").
_SINGLE_VALUED = re.compile(
    r"^(?:favou?rite|preferred|current|main|primary|usual)\b|\b(?:name|number|address|email|manager"
    r"|owner|lead|status|role|title|version|size|limit|birthday|date|deadline|price|salary"
    r"|department|diet|pronouns|timezone|id|handle|account|contact|level|tier|rank)$")


def single_valued(attribute: str) -> bool:
    """True for attributes that hold one value at a time ('phone', 'favourite film',
    'account manager'); 'dog' or 'car' may be described many ways at once."""
    return attribute in _FOLDED or attribute in LOCATIONAL or bool(_SINGLE_VALUED.search(attribute))
