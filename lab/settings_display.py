"""A ranking profile's settings as a person reads them (display only: the field names and
index field ids such as ``c`` and ``xs`` stay as they are in the database, Redis and the
API). Works on a ``RankingProfile`` and on the settings dict a run recorded."""

from search.index import fields as index_fields
from search.profile_services import SETTINGS

# Every setting of search.profile_services.SETTINGS, in groups (a column each in a table).
GROUPS = (
    ("Ranker", ("ranker",)),
    ("BM25", ("k1", "b")),
    ("Weights", ("w_relevance", "w_recency", "w_importance", "w_time", "w_semantic")),
    ("Recency", ("half_life_hours", "recency_from")),
    ("Text analysis", ("stemming", "synonyms", "context")),
    ("Matching", ("match_mode", "temporal")),
)

LABELS = {
    "ranker": "ranker",
    "k1": "k1 (term saturation)",
    "b": "b (length normalisation)",
    "w_relevance": "relevance",
    "w_recency": "recency",
    "w_importance": "importance",
    "w_time": "time match",
    "w_semantic": "semantic",
    "half_life_hours": "half-life",
    "recency_from": "counted from",
    "stemming": "stemming",
    "synonyms": "synonyms",
    "context": "neighbouring turns (context field)",
    "match_mode": "match",
    "temporal": "time in the query",
}

VALUES = {
    "recency_from": {"created_at": "creation", "accessed_at": "last access"},
    "match_mode": {
        "any": "any term",
        "all": "all terms",
        "all_then_any": "all terms, else any",
    },
    "temporal": {"off": "ignored", "filter": "filters", "boost": "boosts"},
    "ranker": {"bm25": "BM25", "keyword": "keyword overlap"},
}

FIELD_LABELS = {
    index_fields.CONTENT: "content",
    index_fields.CONTENT_STEMMED: "content, stemmed",
    index_fields.WITH_CONTEXT_STEMMED: "content and neighbouring turns, stemmed",
}

assert {s for _, group in GROUPS for s in group} == set(SETTINGS), "a setting has no group"


def _get(profile, name):
    return profile.get(name) if isinstance(profile, dict) else getattr(profile, name, None)


def setting_value(name: str, value) -> str:
    """One setting's value as text: on/off, numbers without noise, words for choices."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "on" if value else "off"
    if name == "half_life_hours":
        return f"{value:g} h"
    if isinstance(value, float | int):
        return f"{value:.2f}"
    return VALUES.get(name, {}).get(value, str(value))


def field_label(field_id: str) -> str:
    """An index field id (``c``, ``s``, ``xs``) as words; an unknown id as it is."""
    return FIELD_LABELS.get(field_id, field_id)


def setting_groups(profile) -> list[dict]:
    """``[{"label", "items": [{"name", "label", "value"}]}]``: every setting, grouped; the
    text-analysis group ends with the index field the profile scores against."""
    out = []
    for label, names in GROUPS:
        items = [
            {"name": n, "label": LABELS[n], "value": setting_value(n, _get(profile, n))}
            for n in names
        ]
        if label == "Text analysis":
            field = _get(profile, "field") or index_fields.content_field(
                stemming=bool(_get(profile, "stemming")), context=bool(_get(profile, "context"))
            )
            items.append({"name": "field", "label": "index field", "value": field_label(field)})
        out.append({"label": label, "items": items})
    return out
