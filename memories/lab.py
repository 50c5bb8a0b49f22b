"""Ranking lab: ranking profiles (versioned), judgments, query sets, evaluation and runs.

Services (the only writers of RankingProfile, Judgment, QuerySet and EvalRun) are
keyword-only, check the actor's role and run in one transaction; selectors only read.
Ranking comes from :func:`memories.search.memory_search` (so the lab measures exactly what
recall serves) and the metrics from the pure :mod:`memories.index.metrics`.

Permissions (DESIGN "API"): viewers read and evaluate; editors create and edit their own
profiles, query sets, judgments and runs; admins edit any profile, delete profiles and
choose the default. The built-in profiles ``bm25`` and ``keyword`` are defined by DESIGN
("score is raw BM25", "0.5 / 0.3 / 0.2"), so they cannot be deleted, renamed or re-tuned:
only their default mark may change.
"""

import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence

from django.db import IntegrityError, transaction
from django.db.models import Avg

from memories import store
from memories.errors import InvalidInput, NotFound, PermissionDenied
from memories.index import fields as index_fields
from memories.index import metrics as ir
from memories.index import postings, scoring
from memories.models import (
    EvalRun,
    Judgment,
    MatchMode,
    Memory,
    QuerySet,
    Ranker,
    RankingProfile,
)
from memories.profiles import profile_resolve
from memories.roles import has_role, require_role
from memories.search import memory_search
from memories.services import audit_record
from memories.validation import MEMORY_ID_RE, clean_identifier

BUILTIN_NAMES = ("bm25", "keyword")
# Every setting a profile carries (besides ``name`` and ``is_default``), in display order.
SETTINGS = (
    "ranker",
    "k1",
    "b",
    "w_relevance",
    "w_recency",
    "w_importance",
    "half_life_hours",
    "recency_from",
    "stemming",
    "synonyms",
    "context",
    "match_mode",
)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
K_MAX = 100
QUERY_MAX_CHARS = 1000
QUERIES_MAX = 500
RUN_PROFILES_MAX = 6
RBO_P = 0.9
METRICS = ("ndcg", "precision", "recall", "mrr")


# --- small helpers ----------------------------------------------------------------------


def _actor_name(actor) -> str:
    if actor is None:
        return "system"
    return actor if isinstance(actor, str) else actor.get_username()


def _number(value, field: str, *, low: float, high: float, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{field} must be a number", field=field)
    value = float(value)
    too_low = value <= low if low_open else value < low
    if not math.isfinite(value) or too_low or value > high:
        bound = f"over {low:g}" if low_open else f"at least {low:g}"
        raise InvalidInput(f"{field} must be {bound} and at most {high:g}", field=field)
    return value


def _flag(value, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false", field=field)
    return value


def _choice(value, field: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise InvalidInput(f"{field} must be one of {', '.join(choices)}", field=field)
    return value


def clean_query(value, field: str = "query") -> str:
    """A query as judgments key it: white space collapsed, 1-1000 characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string", field=field)
    value = " ".join(value.split())
    if not value:
        raise InvalidInput(f"{field} must not be blank", field=field)
    if len(value) > QUERY_MAX_CHARS:
        raise InvalidInput(f"{field} must be at most {QUERY_MAX_CHARS} characters", field=field)
    return value


def clean_k(value, field: str = "k") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= K_MAX:
        raise InvalidInput(f"{field} must be an integer 1..{K_MAX}", field=field)
    return value


# --- ranking profiles ---------------------------------------------------------------------


def clean_settings(data: Mapping) -> dict:
    """Validate profile settings (any subset of :data:`SETTINGS`); raises InvalidInput
    naming the first bad field."""
    rules = {
        "ranker": lambda v, f: _choice(v, f, Ranker.values),
        "k1": lambda v, f: _number(v, f, low=0.0, high=5.0),
        "b": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "w_relevance": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "w_recency": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "w_importance": lambda v, f: _number(v, f, low=0.0, high=1.0),
        "half_life_hours": lambda v, f: _number(v, f, low=0.0, high=87600.0, low_open=True),
        "recency_from": lambda v, f: _choice(v, f, ("created_at", "accessed_at")),
        "stemming": _flag,
        "synonyms": _flag,
        "context": _flag,
        "match_mode": lambda v, f: _choice(v, f, MatchMode.values),
    }
    out = {}
    for field, value in data.items():
        if field not in rules:
            raise InvalidInput(f"unknown field {field!r}", field=field)
        out[field] = rules[field](value, field)
    return out


def profile_settings(profile: RankingProfile) -> dict:
    """``name`` and every setting of ``profile`` as plain JSON values."""
    return {"name": profile.name, **{f: getattr(profile, f) for f in SETTINGS}}


def profile_build(base: RankingProfile, *, name: str | None = None, **overrides) -> RankingProfile:
    """An unsaved profile: ``base``'s settings with ``overrides`` (validated) applied.

    memory_search takes it as it is, so slider settings are searched without being saved.
    """
    data = {f: getattr(base, f) for f in SETTINGS}
    data.update(clean_settings(overrides))
    return RankingProfile(name=name or base.name, is_default=False, builtin=False, **data)


def _check_weights(profile: RankingProfile) -> None:
    if profile.w_relevance + profile.w_recency + profile.w_importance <= 0:
        raise InvalidInput("at least one weight must be above 0", field="w_relevance")


def _clean_name(value) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise InvalidInput(
            "name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
            field="name",
        )
    return value


def profile_get(name: str, *, for_update: bool = False) -> RankingProfile:
    rows = RankingProfile.objects.select_for_update() if for_update else RankingProfile.objects
    profile = rows.filter(name=name).first() if isinstance(name, str) else None
    if profile is None:
        raise NotFound(f"profile {name!r} not found", field="name")
    return profile


def can_edit_profile(actor, profile: RankingProfile) -> bool:
    """Admins edit any profile; editors the ones they created."""
    if has_role(actor, "admin"):
        return True
    return (
        has_role(actor, "editor")
        and not profile.builtin
        and profile.created_by == _actor_name(actor) != ""
    )


def _stamp(profile: RankingProfile, actor, reason: str) -> None:
    """Who and why, for the simple_history version row this save writes."""
    # simple_history's reason column holds 100 characters; the audit record keeps it whole.
    profile._change_reason = (reason or "")[:100]
    if actor is not None and not isinstance(actor, str):
        profile._history_user = actor


def _make_default(profile: RankingProfile, actor, reason: str) -> None:
    """Unset every other default, one save each so each change is a recorded version."""
    for other in (
        RankingProfile.objects.select_for_update().filter(is_default=True).exclude(pk=profile.pk)
    ):
        other.is_default = False
        _stamp(other, actor, reason or f"default moved to {profile.name}")
        other.save()


@transaction.atomic
def profile_create(
    *, actor, name, is_default: bool = False, reason: str = "", **settings
) -> RankingProfile:
    """Create a profile owned by ``actor`` (editor; ``is_default`` needs admin).

    Unset settings take the model defaults (plain BM25). Raises InvalidInput (bad value or
    a name in use, naming the field) and PermissionDenied.
    """
    require_role(actor, "editor")
    name = _clean_name(name)
    if _flag(is_default, "is_default"):
        require_role(actor, "admin")
    profile = RankingProfile(
        name=name,
        is_default=is_default,
        builtin=False,
        created_by=_actor_name(actor),
        **clean_settings(settings),
    )
    _check_weights(profile)
    if RankingProfile.objects.filter(name=name).exists():
        raise InvalidInput(f"a profile named {name!r} already exists", field="name")
    _stamp(profile, actor, reason or "created")
    try:
        with transaction.atomic():
            profile.save(force_insert=True)
    except IntegrityError:  # a concurrent create of the same name won the race
        raise InvalidInput(f"a profile named {name!r} already exists", field="name") from None
    if is_default:
        _make_default(profile, actor, reason)
    audit_record(
        actor=actor,
        action="profile_create",
        target=f"profile:{name}",
        reason=reason,
        data=profile_settings(profile),
    )
    return profile


@transaction.atomic
def profile_update(
    *,
    actor,
    name: str,
    new_name: str | None = None,
    is_default: bool | None = None,
    reason: str = "",
    **changes,
) -> RankingProfile:
    """Change settings, rename (``new_name``) or mark default; each saved change is a new
    version (a change to nothing writes none). Built-ins keep their name and settings.
    Raises NotFound, PermissionDenied, InvalidInput."""
    require_role(actor, "editor")
    profile = profile_get(name, for_update=True)
    if not can_edit_profile(actor, profile):
        raise PermissionDenied(f"only its creator or an admin may change profile {name!r}")
    new_name = profile.name if new_name is None else new_name
    settings = clean_settings(changes)
    if new_name != profile.name:
        if profile.builtin:
            raise InvalidInput(
                f"the built-in profile {profile.name!r} cannot be renamed", field="name"
            )
        new_name = _clean_name(new_name)
        if RankingProfile.objects.filter(name=new_name).exists():
            raise InvalidInput(f"a profile named {new_name!r} already exists", field="name")
    if profile.builtin:
        changed = [f for f, v in settings.items() if getattr(profile, f) != v]
        if changed:
            raise InvalidInput(
                f"the built-in profile {profile.name!r} keeps its settings; "
                "save a copy under a new name instead",
                field=changed[0],
            )
    if is_default is not None and _flag(is_default, "is_default") != profile.is_default:
        require_role(actor, "admin")
        if not is_default:
            raise InvalidInput("mark another profile as default instead", field="is_default")
    before = profile_settings(profile) | {"is_default": profile.is_default}
    profile.name = new_name
    for field, value in settings.items():
        setattr(profile, field, value)
    if is_default is not None:
        profile.is_default = is_default
    _check_weights(profile)
    after = profile_settings(profile) | {"is_default": profile.is_default}
    diff = {f: [before[f], after[f]] for f in after if before[f] != after[f]}
    if not diff:
        return profile  # nothing changed: no new version
    _stamp(profile, actor, reason or "changed " + ", ".join(diff))
    profile.save()
    if profile.is_default:
        _make_default(profile, actor, reason)
    audit_record(
        actor=actor, action="profile_update", target=f"profile:{name}", reason=reason, data=diff
    )
    return profile


@transaction.atomic
def profile_delete(*, actor, name: str, reason: str = "") -> None:
    """Delete a profile (admin). Built-ins and the default are refused (400 naming ``name``).
    Its history stays, and so do runs that used it (they hold a copy of its settings)."""
    require_role(actor, "admin")
    profile = profile_get(name, for_update=True)
    if profile.builtin:
        raise InvalidInput(f"the built-in profile {name!r} cannot be deleted", field="name")
    if profile.is_default:
        raise InvalidInput(
            f"{name!r} is the default profile; mark another one as default first", field="name"
        )
    _stamp(profile, actor, reason or "deleted")
    profile.delete()
    audit_record(actor=actor, action="profile_delete", target=f"profile:{name}", reason=reason)


def profile_versions(profile: RankingProfile) -> list[dict]:
    """Every version of ``profile``, oldest first: number, when, who, why, full settings."""
    rows = profile.history.order_by("history_date", "history_id").select_related("history_user")
    out = []
    for number, h in enumerate(rows, start=1):
        out.append(
            {
                "version": number,
                "history_id": h.history_id,
                "at": h.history_date,
                "change": {"+": "create", "~": "update", "-": "delete"}[h.history_type],
                "changed_by": h.history_user.get_username() if h.history_user else "",
                "reason": h.history_change_reason or "",
                "is_default": h.is_default,
                **{f: getattr(h, f) for f in ("name", *SETTINGS)},
            }
        )
    return out


def profile_version(profile: RankingProfile) -> dict:
    """``{"history_id", "version"}`` of a saved profile's current version (None: unsaved)."""
    if profile.pk is None:
        return {"history_id": None, "version": None}
    history = profile.history.order_by("-history_date", "-history_id")
    latest = history.first()
    return {"history_id": latest.history_id if latest else None, "version": history.count()}


# --- judgments ----------------------------------------------------------------------------


@transaction.atomic
def judgment_set(*, actor, user_id, query, memory_id, grade) -> tuple[Judgment, bool]:
    """Record ``actor``'s grade (0-3) of a memory for a query; a reviewer's later grade
    replaces their earlier one, other reviewers' grades are kept apart. Returns
    ``(judgment, created)``."""
    require_role(actor, "editor")
    user_id = clean_identifier(user_id, "user_id")
    query = clean_query(query)
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
        raise InvalidInput("grade must be an integer 0..3", field="grade")
    if (
        not isinstance(memory_id, str)
        or not MEMORY_ID_RE.match(memory_id)
        or not (Memory.objects.filter(memory_id=memory_id, user_id=user_id).exists())
    ):
        raise NotFound(f"memory {memory_id!r} not found in {user_id!r}", field="memory_id")
    judgment, created = Judgment.objects.update_or_create(
        user_id=user_id,
        query=query,
        memory_id=memory_id,
        reviewer=_actor_name(actor),
        defaults={"grade": grade},
    )
    return judgment, created


def judgment_grades(
    *, user_id: str, query: str, reviewer: str = "", memory_ids: Iterable[str] | None = None
) -> dict[str, float]:
    """``{memory_id: grade}`` for a query: one reviewer's grades, or (blank ``reviewer``)
    the mean of every reviewer's grade of that memory."""
    rows = Judgment.objects.filter(user_id=user_id, query=" ".join(query.split()))
    if reviewer:
        rows = rows.filter(reviewer=reviewer)
    if memory_ids is not None:
        rows = rows.filter(memory_id__in=list(memory_ids))
    return {
        r["memory_id"]: float(r["grade"])
        for r in rows.values("memory_id").annotate(grade=Avg("grade")).order_by()
    }


def judgment_table(
    *, user_id: str, query: str, memory_ids: Iterable[str] | None = None
) -> dict[str, dict[str, int]]:
    """``{memory_id: {reviewer: grade}}``: every reviewer's grades, kept apart."""
    rows = Judgment.objects.filter(user_id=user_id, query=" ".join(query.split()))
    if memory_ids is not None:
        rows = rows.filter(memory_id__in=list(memory_ids))
    out: dict[str, dict[str, int]] = {}
    for memory_id, reviewer, grade in rows.values_list("memory_id", "reviewer", "grade"):
        out.setdefault(memory_id, {})[reviewer] = grade
    return out


# --- query sets ---------------------------------------------------------------------------


def _clean_queries(value) -> list[str]:
    if not isinstance(value, list | tuple) or not value:
        raise InvalidInput("queries must be a non-empty list of strings", field="queries")
    if len(value) > QUERIES_MAX:
        raise InvalidInput(f"queries takes at most {QUERIES_MAX} items", field="queries")
    return list(dict.fromkeys(clean_query(q, "queries") for q in value))


def _clean_set_name(value) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 100:
        raise InvalidInput("name must be 1-100 characters", field="name")
    return value.strip()


@transaction.atomic
def queryset_create(*, actor, name, user_id, queries) -> QuerySet:
    """A named list of queries of one namespace (editor). Duplicates are dropped."""
    require_role(actor, "editor")
    name = _clean_set_name(name)
    qs = QuerySet(
        name=name,
        user_id=clean_identifier(user_id, "user_id"),
        queries=_clean_queries(queries),
        created_by=_actor_name(actor),
    )
    if QuerySet.objects.filter(name=name).exists():
        raise InvalidInput(f"a query set named {name!r} already exists", field="name")
    qs.save(force_insert=True)
    audit_record(actor=actor, action="queryset_create", target=f"queryset:{qs.pk}")
    return qs


@transaction.atomic
def queryset_update(*, actor, pk: int, name=None, user_id=None, queries=None) -> QuerySet:
    """Change a query set (its creator or an admin). Runs made from it keep their copy."""
    require_role(actor, "editor")
    qs = queryset_get(pk)
    if not (has_role(actor, "admin") or qs.created_by == _actor_name(actor)):
        raise PermissionDenied(f"only its creator or an admin may change query set {qs.name!r}")
    if name is not None:
        name = _clean_set_name(name)
        if QuerySet.objects.filter(name=name).exclude(pk=qs.pk).exists():
            raise InvalidInput(f"a query set named {name!r} already exists", field="name")
        qs.name = name
    if user_id is not None:
        qs.user_id = clean_identifier(user_id, "user_id")
    if queries is not None:
        qs.queries = _clean_queries(queries)
    qs.save()
    audit_record(actor=actor, action="queryset_update", target=f"queryset:{qs.pk}")
    return qs


def queryset_get(pk) -> QuerySet:
    qs = QuerySet.objects.filter(pk=pk).first() if isinstance(pk, int) else None
    if qs is None:
        raise NotFound(f"query set {pk!r} not found", field="query_set")
    return qs


# --- evaluation -----------------------------------------------------------------------------


def query_metrics(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> dict:
    """nDCG@k (graded gains), P@k, recall@k and MRR within the top k of one ranking."""
    return {
        "ndcg": ir.ndcg_at_k(ranked, gains, k),
        "precision": ir.precision_at_k(ranked, gains, k),
        "recall": ir.recall_at_k(ranked, gains, k),
        "mrr": ir.mrr_at_k(ranked, gains, k),
    }


def mean_metrics(rows: Sequence[Mapping]) -> dict:
    """The mean of each metric over ``rows`` (0.0 each when there are none)."""
    n = len(rows)
    return {m: (math.fsum(r[m] for r in rows) / n if n else 0.0) for m in METRICS}


def _clean_relevant(value, field: str) -> dict[str, float]:
    """``[memory_id, ...]`` (each grade 1) or ``{memory_id: grade 0-3}``."""
    if isinstance(value, list | tuple):
        if not all(isinstance(v, str) for v in value):
            raise InvalidInput(f"{field} must list memory ids", field=field)
        return dict.fromkeys(value, 1.0)
    if isinstance(value, Mapping):
        out = {}
        for memory_id, grade in value.items():
            if (
                isinstance(grade, bool)
                or not isinstance(grade, int | float)
                or not (0 <= grade <= 3)
            ):
                raise InvalidInput(f"{field} grades must be 0..3", field=field)
            out[str(memory_id)] = float(grade)
        return out
    raise InvalidInput(f"{field} must be a list of memory ids or {{memory_id: grade}}", field=field)


def evaluate(*, profile, k: int, queries: Sequence[Mapping], now: float | None = None) -> dict:
    """Rank each query with ``profile`` (a name, a RankingProfile, saved or not) and measure
    the top ``k`` against the caller's relevance labels.

    Each query: ``{"user_id", "query", "conversation_id"?, "relevant"}``; ``relevant`` is a
    list of memory ids (grade 1 each) or ``{memory_id: grade 0-3}`` (nDCG uses the grade,
    the other metrics count grade > 0 as relevant). Returns ``{"k", "metrics", "per_query"}``;
    ``metrics`` are means over every query given, MRR is counted within the top k. Raises
    NotFound (unknown profile), InvalidInput, ``redis.RedisError``.
    """
    prof = profile_resolve(profile)
    k = clean_k(k)
    if not isinstance(queries, list | tuple) or not queries:
        raise InvalidInput("queries must be a non-empty list", field="queries")
    if len(queries) > QUERIES_MAX:
        raise InvalidInput(f"queries takes at most {QUERIES_MAX} items", field="queries")
    now = time.time() if now is None else now
    rows = []
    for i, item in enumerate(queries):
        where = f"queries.{i}"
        user_id = clean_identifier(item.get("user_id"), f"{where}.user_id")
        conversation_id = clean_identifier(
            item.get("conversation_id"), f"{where}.conversation_id", required=False
        )
        query = item.get("query")
        if not isinstance(query, str):
            raise InvalidInput(f"{where}.query must be a string", field=f"{where}.query")
        gains = _clean_relevant(item.get("relevant"), f"{where}.relevant")
        found = memory_search(
            user_id=user_id,
            query=query,
            limit=k,
            profile=prof,
            conversation_id=conversation_id,
            now=now,
        )
        ranked = [h.memory_id for h in found.results]
        rows.append(
            {
                "user_id": user_id,
                "query": query,
                "conversation_id": conversation_id,
                **query_metrics(ranked, gains, k),
                "results": ranked,
                "relevant": sum(1 for g in gains.values() if g > 0),
            }
        )
    return {"k": k, "metrics": mean_metrics(rows), "per_query": rows}


def compare_lists(a: Sequence[str], b: Sequence[str], k: int) -> dict:
    """How list ``b`` differs from list ``a`` (top ``k`` of each).

    ``moves[id]`` for each id of ``b``: ``{"kind": "up" | "down" | "same" | "new", "n"}``
    (``n`` ranks moved, relative to ``a``); ``dropped``: ids of ``a`` missing from ``b``;
    ``rank_a`` / ``rank_b``: 1-based ranks; plus Jaccard@k, RBO (p = 0.9) and ``shared``.
    """
    top_a, top_b = list(dict.fromkeys(a))[:k], list(dict.fromkeys(b))[:k]
    rank_a = {m: r for r, m in enumerate(top_a, start=1)}
    rank_b = {m: r for r, m in enumerate(top_b, start=1)}
    moves = {}
    for memory_id, rb in rank_b.items():
        ra = rank_a.get(memory_id)
        if ra is None:
            moves[memory_id] = {"kind": "new", "n": 0}
        elif ra > rb:
            moves[memory_id] = {"kind": "up", "n": ra - rb}
        elif ra < rb:
            moves[memory_id] = {"kind": "down", "n": rb - ra}
        else:
            moves[memory_id] = {"kind": "same", "n": 0}
    return {
        "moves": moves,
        "rank_a": rank_a,
        "rank_b": rank_b,
        "dropped": [m for m in top_a if m not in rank_b],
        "shared": len(rank_a.keys() & rank_b.keys()),
        "jaccard": ir.jaccard_at_k(top_a, top_b, k) if k >= 1 else 1.0,
        "rbo": ir.rbo(top_a, top_b, p=RBO_P),
    }


# --- runs -------------------------------------------------------------------------------------


def _live_ids(memory_ids: Iterable[str]) -> set[str]:
    return set(
        Memory.objects.filter(memory_id__in=list(memory_ids), deleted_at__isnull=True).values_list(
            "memory_id", flat=True
        )
    )


def run_create(
    *,
    actor,
    name: str,
    query_set,
    profiles: Sequence[str],
    k: int = 10,
    reviewer: str = "",
    now: float | None = None,
) -> EvalRun:
    """Evaluate ``profiles`` (names) over a query set with the judgments as gains and save
    the run, immutable.

    Gains: ``reviewer``'s grades, or (blank) the mean over reviewers; judgments of memories
    no longer live are left out. Each profile's metrics are means over the queries that
    have at least one relevant (grade > 0) judgment (trec_eval skips queries without
    relevant documents too); every query still gets a row. Results without a grade (from
    ``reviewer``, or from anyone) are listed in ``unjudged``, best rank first, to judge next. The searches run before the
    write transaction opens, so a long run never holds the database's write lock.
    """
    require_role(actor, "editor")
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 200:
        raise InvalidInput("name must be 1-200 characters", field="name")
    qs = query_set if isinstance(query_set, QuerySet) else queryset_get(query_set)
    k = clean_k(k)
    if not isinstance(reviewer, str) or len(reviewer) > 150:
        raise InvalidInput("reviewer must be a user name", field="reviewer")
    if (
        not isinstance(profiles, list | tuple)
        or not profiles
        or len(profiles) > RUN_PROFILES_MAX
        or not all(isinstance(p, str) for p in profiles)
    ):
        raise InvalidInput(
            f"profiles must list 1..{RUN_PROFILES_MAX} profile names", field="profiles"
        )
    resolved = []
    for profile_name in dict.fromkeys(profiles):
        prof = RankingProfile.objects.filter(name=profile_name).first()
        if prof is None:
            raise NotFound(f"profile {profile_name!r} not found", field="profiles")
        resolved.append(prof)
    now = time.time() if now is None else now
    per_query, unjudged, judged_rows = [], {}, {p.name: [] for p in resolved}
    for query in qs.queries:
        grades = judgment_grades(user_id=qs.user_id, query=query, reviewer=reviewer)
        live = _live_ids(grades)
        gains = {m: g for m, g in grades.items() if m in live}
        has_relevant = any(g > 0 for g in gains.values())
        for prof in resolved:
            found = memory_search(user_id=qs.user_id, query=query, limit=k, profile=prof, now=now)
            ranked = [h.memory_id for h in found.results]
            row = {
                "profile": prof.name,
                "user_id": qs.user_id,
                "query": query,
                "ranked": ranked,
                "scores": [h.score for h in found.results],
                "gains": {m: gains[m] for m in ranked if m in gains},
                "relevant": sum(1 for g in gains.values() if g > 0),
                "judged": has_relevant,
            }
            row.update(query_metrics(ranked, gains, k) if has_relevant else dict.fromkeys(METRICS))
            per_query.append(row)
            if has_relevant:
                judged_rows[prof.name].append(row)
            for rank, memory_id in enumerate(ranked, start=1):
                if memory_id in grades:
                    continue
                entry = unjudged.setdefault(
                    (query, memory_id),
                    {
                        "user_id": qs.user_id,
                        "query": query,
                        "memory_id": memory_id,
                        "profiles": [],
                        "best_rank": rank,
                    },
                )
                entry["profiles"].append(prof.name)
                entry["best_rank"] = min(entry["best_rank"], rank)
    client = store.get_client()
    fields = sorted(
        {index_fields.content_field(stemming=p.stemming, context=p.context) for p in resolved}
    )
    stats = {f: postings.field_stats(client, user_id=qs.user_id, field=f) for f in fields}
    index_stats = {qs.user_id: {f: {"N": s["N"], "avgdl": s["avgdl"]} for f, s in stats.items()}}
    order = {q: i for i, q in enumerate(qs.queries)}
    with transaction.atomic():
        run = EvalRun.objects.create(
            name=name.strip(),
            created_by=_actor_name(actor),
            k=k,
            query_set=qs,
            reviewer=reviewer,
            profiles=[
                {
                    **profile_settings(p),
                    "field": index_fields.content_field(stemming=p.stemming, context=p.context),
                    **profile_version(p),
                }
                for p in resolved
            ],
            index_stats=index_stats,
            metrics={
                p.name: {**mean_metrics(judged_rows[p.name]), "queries": len(judged_rows[p.name])}
                for p in resolved
            },
            per_query=per_query,
            unjudged=sorted(
                unjudged.values(), key=lambda e: (order[e["query"]], e["best_rank"], e["memory_id"])
            ),
        )
        audit_record(
            actor=actor,
            action="run_create",
            target=f"run:{run.pk}",
            data={"query_set": qs.pk, "profiles": [p.name for p in resolved], "k": k},
        )
    return run


def run_get(pk) -> EvalRun:
    run = EvalRun.objects.filter(pk=pk).first() if isinstance(pk, int) else None
    if run is None:
        raise NotFound(f"run {pk!r} not found", field="run")
    return run


def run_out(run: EvalRun) -> dict:
    """The API shape of a run (everything it recorded)."""
    return {
        "id": run.pk,
        "name": run.name,
        "created_by": run.created_by,
        "created_at": run.created_at.isoformat(),
        "k": run.k,
        "query_set": run.query_set_id,
        "reviewer": run.reviewer,
        "profiles": run.profiles,
        "index_stats": run.index_stats,
        "metrics": run.metrics,
        "per_query": run.per_query,
        "unjudged": run.unjudged,
    }


def run_compare(a: EvalRun, b: EvalRun) -> dict:
    """Two runs side by side: a column per (run, profile), each with its mean metrics, and a
    row per query with each column's nDCG@k; ``delta`` is the last column minus the first
    (None when either has no relevant judgment for that query)."""
    sources = [(label, run, prof) for label, run in (("A", a), ("B", b)) for prof in run.profiles]
    columns = [
        {
            "run": run.pk,
            "label": f"{label} · {prof['name']}",
            "profile": prof["name"],
            "version": prof.get("version"),
            "metrics": run.metrics.get(prof["name"], {}),
        }
        for label, run, prof in sources
    ]
    queries: dict[tuple[str, str], dict] = {}
    for index, (_label, run, prof) in enumerate(sources):
        for row in run.per_query:
            if row["profile"] != prof["name"]:
                continue
            entry = queries.setdefault(
                (row["user_id"], row["query"]),
                {"user_id": row["user_id"], "query": row["query"], "ndcg": [None] * len(columns)},
            )
            entry["ndcg"][index] = row["ndcg"]
    rows = list(queries.values())
    for row in rows:
        first, last = row["ndcg"][0], row["ndcg"][-1]
        row["delta"] = None if first is None or last is None else last - first
    return {"columns": columns, "queries": rows}


# --- explain ---------------------------------------------------------------------------------


def explain_hit(
    *,
    user_id: str,
    query: str,
    memory_id: str,
    profile,
    k: int = 10,
    conversation_id: str | None = None,
    now: float | None = None,
) -> dict:
    """The score of one result taken apart: each query term's BM25 part (tf, df, idf, dl,
    avgdl, the saturated tf part, its contribution), recency (age, half-life), importance,
    the weights and the final score.

    The ranking is recomputed (the same ``memory_search``), so df, N and avgdl are the live
    statistics the score used; tf and dl come from the profile's analyzer on the memory's
    indexed text. Raises NotFound when the memory is not in the profile's top ``k``.
    """
    prof = profile_resolve(profile)
    now = time.time() if now is None else now
    found = memory_search(
        user_id=user_id,
        query=query,
        limit=clean_k(k),
        profile=prof,
        conversation_id=conversation_id,
        now=now,
    )
    hit = next((h for h in found.results if h.memory_id == memory_id), None)
    memory = Memory.objects.filter(memory_id=memory_id, user_id=user_id).first()
    if hit is None or memory is None:
        raise NotFound(
            f"{memory_id} is not in the top {k} of {prof.name!r} for this query", field="memory_id"
        )
    field = index_fields.content_field(stemming=prof.stemming, context=prof.context)
    tf = index_fields.ANALYZERS[field].term_frequencies(
        index_fields.field_text(field, memory.content, memory.context)
    )
    dl = sum(tf.values())
    terms = []
    for term in found.terms:
        df = found.df.get(term, 0)
        count = tf.get(term, 0)
        idf = scoring.idf(found.n_docs, min(df, found.n_docs)) if df else 0.0
        part = scoring.tf_part(count, dl, found.avgdl, prof.k1, prof.b) if count else 0.0
        terms.append(
            {
                "term": term,
                "tf": count,
                "df": df,
                "idf": idf,
                "dl": dl,
                "avgdl": found.avgdl,
                "tf_part": part,
                "contribution": hit.explain.terms.get(term, 0.0),
                "context_only": term in hit.explain.context_terms,
            }
        )
    stamp = (
        memory.accessed_at if prof.recency_from == "accessed_at" and memory.accessed_at else None
    )
    stamp_epoch = stamp.timestamp() if stamp else hit.created_at
    parts = score_parts(hit)
    return {
        "hit": hit,
        "profile": prof,
        "field": field,
        "terms": terms,
        "n_docs": found.n_docs,
        "avgdl": found.avgdl,
        "dl": dl,
        "k1": prof.k1,
        "b": prof.b,
        "age_hours": max(0.0, (now - stamp_epoch) / 3600.0),
        "recency_from": prof.recency_from if stamp else "created_at",
        "half_life_hours": prof.half_life_hours,
        "parts": parts,
        "hybrid": prof.ranker == Ranker.KEYWORD or prof.w_recency > 0 or prof.w_importance > 0,
    }


def score_parts(hit) -> dict[str, float]:
    """The final score split into weight × component parts: relevance, recency, importance.

    For a pure BM25 profile the relevance part is the (weighted) raw BM25 score, so the parts
    always add up to ``hit.score``.
    """
    weights = hit.explain.weights
    recency = weights.get("recency", 0.0) * hit.explain.recency
    importance = weights.get("importance", 0.0) * hit.explain.importance
    return {
        "relevance": max(0.0, hit.score - recency - importance),
        "recency": recency,
        "importance": importance,
    }
