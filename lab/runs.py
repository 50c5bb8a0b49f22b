"""Evaluation runs: frozen results of evaluating profiles on a query set, and their comparison."""

import time
from collections.abc import Iterable, Sequence

from django.db import transaction

from accounts.roles import require_role
from lab.evaluation import METRICS, Deadline, clean_k, mean_metrics, query_metrics
from lab.judgments import AGENT_FEEDBACK, feedback_grades, judgment_grades
from lab.models import EvalRun, QuerySet
from lab.query_sets import queryset_get
from memories import store
from memories.errors import InvalidInput, NotFound
from memories.history import actor_name
from memories.models import Memory
from memories.services.audit import audit_record
from search.index import fields as index_fields
from search.index import postings
from search.memory_search import memory_search
from search.models import RankingProfile
from search.profile_services import profile_settings, profile_version

RUN_PROFILES_MAX = 6


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

    Gains: ``reviewer``'s grades, or (blank) the mean over reviewers, or (``reviewer``
    ``"agent feedback"``, ``lab.judgments.AGENT_FEEDBACK``) the agents' recall feedback on
    the set's queries (``lab.judgments.feedback_grades``); grades of memories no longer
    live are left out. Each profile's metrics are means over the queries that
    have at least one relevant (grade > 0) judgment (trec_eval skips queries without
    relevant documents too); every query still gets a row. Results without a grade (from
    ``reviewer``, or from anyone) are listed in ``unjudged``, best rank first, to judge next. The searches run before the
    write transaction opens, so a long run never holds the database's write lock; past the
    ``Deadline`` they stop with TooLarge (413, ``query_set``) and nothing is saved.
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
    feedback = (feedback_grades(user_id=qs.user_id, queries=qs.queries)
                if reviewer == AGENT_FEEDBACK else None)
    with Deadline(field="query_set") as deadline:
        per_query, unjudged, judged_rows = [], {}, {p.name: [] for p in resolved}
        for query in qs.queries:
            grades = (feedback.get(query, {}) if feedback is not None else
                      judgment_grades(user_id=qs.user_id, query=query, reviewer=reviewer))
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
                deadline.check(done=len(per_query), total=len(qs.queries) * len(resolved))
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
            created_by=actor_name(actor),
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
    row per query with each column's nDCG@k.

    A delta always compares a profile with itself: ``shared`` lists the profile names both
    runs evaluated (in A's order); per query, ``deltas[name]`` is B's nDCG@k of that profile
    minus A's (None when either has no relevant judgment for the query), and ``delta`` is
    that of the first shared profile (None when the runs share no profile). ``mean_deltas``:
    ``{name: {"queries": N, metric: B - A}}`` over the N queries judged (with a relevant
    judgment) in BOTH runs, so each mean delta is the mean of the per-query deltas; each
    metric is None when N is 0. (Each run's own means, in ``columns``, cover its own judged
    queries: after grading more queries they differ even when no ranking changed.)"""
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
    names_b = {p["name"] for p in b.profiles}
    shared = [p["name"] for p in a.profiles if p["name"] in names_b]
    queries: dict[tuple[str, str], dict] = {}
    by_side: dict[tuple[str, str, str, str], dict] = {}
    for index, (label, run, prof) in enumerate(sources):
        for row in run.per_query:
            if row["profile"] != prof["name"]:
                continue
            entry = queries.setdefault(
                (row["user_id"], row["query"]),
                {"user_id": row["user_id"], "query": row["query"], "ndcg": [None] * len(columns)},
            )
            entry["ndcg"][index] = row["ndcg"]
            by_side[(label, prof["name"], row["user_id"], row["query"])] = row
    rows = list(queries.values())
    both: dict[str, list[tuple[dict, dict]]] = {name: [] for name in shared}
    for row in rows:
        deltas = {}
        for name in shared:
            before = by_side.get(("A", name, row["user_id"], row["query"]))
            after = by_side.get(("B", name, row["user_id"], row["query"]))
            judged = before and after and before["judged"] and after["judged"]
            deltas[name] = after["ndcg"] - before["ndcg"] if judged else None
            if judged:
                both[name].append((before, after))
        row["deltas"] = deltas
        row["delta"] = deltas[shared[0]] if shared else None
    mean_deltas = {}
    for name, pairs in both.items():
        before = mean_metrics([p[0] for p in pairs])
        after = mean_metrics([p[1] for p in pairs])
        mean_deltas[name] = {
            "queries": len(pairs),
            **{m: (after[m] - before[m] if pairs else None) for m in METRICS},
        }
    return {"columns": columns, "queries": rows, "shared": shared, "mean_deltas": mean_deltas}


RUN_RESULTS = ("profiles", "index_stats", "metrics", "per_query", "unjudged")


@transaction.atomic
def runs_restore(*, items: list[dict], query_sets: dict[str, QuerySet]) -> int:
    """Write a backup's runs as they were measured (frozen: nothing is evaluated again):
    ``{"name", "query_set" (a name of ``query_sets``, or None), "k", "reviewer",
    "created_by", "created_at", "profiles", "index_stats", "metrics", "per_query",
    "unjudged"}``. Returns how many. Raises InvalidInput naming ``lab.runs[n]``."""
    for n, item in enumerate(items):
        where = f"lab.runs[{n}]"
        name, qs_name = item.get("name"), item.get("query_set")
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise InvalidInput(f"{where}.name must be 1-200 characters", field="lab", index=n)
        if qs_name is not None and qs_name not in query_sets:
            raise InvalidInput(f"{where}.query_set must name a query set of the document",
                               field="lab", index=n)
        try:
            k = clean_k(item.get("k"))
        except InvalidInput as exc:
            raise InvalidInput(f"{where}.{exc.message}", field="lab", index=n) from None
        kinds = {"profiles": list, "index_stats": dict, "metrics": dict, "per_query": list,
                 "unjudged": list}
        for field, kind in kinds.items():
            if not isinstance(item.get(field, kind()), kind):
                raise InvalidInput(f"{where}.{field} must be a {kind.__name__}", field="lab",
                                   index=n)
        run = EvalRun.objects.create(
            name=name.strip(), k=k, query_set=query_sets.get(qs_name),
            reviewer=item.get("reviewer") or "", created_by=item.get("created_by") or "",
            **{f: item.get(f) or kinds[f]() for f in RUN_RESULTS})
        if item.get("created_at"):  # auto_now_add stamps the create; the backup's moment wins
            EvalRun.objects.filter(pk=run.pk).update(created_at=item["created_at"])
    return len(items)
