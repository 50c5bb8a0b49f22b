"""Importance estimate for a memory written without one (pure; no Django).

The score starts at a base and adds bounded boosts, each reported so the console can show
why: emphasis words (English and Chinese), concrete facts (numbers, dates, times, money,
ids) and the author's role. Result is in 0..1.
"""

import re
from dataclasses import dataclass, field

BASE = 0.4
EMPHASIS = re.compile(
    r"\b(important|critical|urgent|must|never|always|remember|decided|decision|deadline|"
    r"incident|outage|security|password|allergic|prefers?|asap)\b"
    r"|重要|紧急|必须|务必|记住|决定|截止|事故|故障|安全|密码|过敏|喜欢|不要",
    re.IGNORECASE,
)
DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b|\d{1,2}月\d{1,2}[日号]|"
    r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b|周[一二三四五六日末]|星期[一二三四五六日天]",
    re.IGNORECASE,
)
NUMBER = re.compile(r"\d")
ID_LIKE = re.compile(r"\b[A-Z]{2,}-\d+\b")
ROLE_BOOST = {"admin": 0.1, "manager": 0.1, "lead": 0.1, "system": 0.05}


@dataclass
class Estimate:
    """``score`` in 0..1 and the ``parts`` that add up to it (name -> amount)."""

    score: float
    parts: dict[str, float] = field(default_factory=dict)


def estimate(content: str, *, author: str = "", role: str = "") -> Estimate:
    """Estimate importance of ``content``: base 0.4 + emphasis (0.1 each, max 0.3) + dates
    (0.1) + numbers or ids (0.1) + author role (up to 0.1; ``role``, else the author's name
    when it is a role such as ``system`` or ``manager``); capped at 1.0, two decimals."""
    parts = {"base": BASE}
    emphasis = min(0.3, 0.1 * len(EMPHASIS.findall(content)))
    if emphasis:
        parts["emphasis"] = emphasis
    if DATE.search(content):
        parts["date"] = 0.1
    if NUMBER.search(content) or ID_LIKE.search(content):
        parts["facts"] = 0.1
    role_boost = ROLE_BOOST.get((role or author or "").lower(), 0.0)
    if role_boost:
        parts["role"] = role_boost
    return Estimate(score=round(min(1.0, sum(parts.values())), 2), parts=parts)
