"""Text folded for matching: NFKC then case folding (pure).

``fold("会议室１０２")`` is ``"会议室102"``, ``fold("ＡＰＩ")`` is ``"api"``, ``fold("Москва")`` is
``"москва"`` and ``fold("Straße")`` is ``"strasse"``. Case folding can leave text that NFKC
would change again, so NFKC runs on both sides of it (Unicode's NFKC_Casefold, closely).
Stored beside a memory's content, it lets a plain ``LIKE`` match the same way on SQLite (whose
``LIKE`` folds ASCII only) and PostgreSQL.
"""

import unicodedata


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
