"""The demo's ranking-lab example and session summaries, written through the product's own
writers (``load_demo`` calls it after the memories and sessions are in).

Lab: the query set ``demo_data.LAB_QUERY_SET`` over ``agent-support``, the demo reviewer's
graded judgments, and two evaluation runs of ``bm25`` against the profile
``support-tuned`` (run 1 with its version 1, run 2 after it was tuned to version 2), so the
run comparison shows a delta of the same profile across runs. The reviewer
``demo-reviewer`` is an editor without a password (it never logs in). Skipped when the query
set exists already, so the command stays idempotent.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from console import demo_data
from lab import judgments, query_sets, runs
from lab.models import QuerySet
from memories.models import Memory
from search import profile_services
from search.models import RankingProfile
from sessions import services as sessions

SUMMARY_KEEP = 4  # a demo session keeps its newest 4 messages beside the summary


def demo_summaries(session_ids: list[str]) -> int:
    """Fold each new demo session's older messages into its rolling summary (the
    summariser the product runs); returns how many sessions got one."""
    return sum(
        1
        for session_id in session_ids
        if sessions.session_fold(session_id=session_id, keep=SUMMARY_KEEP)["folded"]
    )


def _reviewer():
    user, created = get_user_model().objects.get_or_create(username=demo_data.LAB_REVIEWER)
    if created:
        user.set_unusable_password()
        user.save()
        user.groups.add(Group.objects.get(name="editor"))
    return user


def demo_lab() -> dict | None:
    """The lab example; None when it is there already. Returns what was written."""
    if (
        QuerySet.objects.filter(name=demo_data.LAB_QUERY_SET).exists()
        or RankingProfile.objects.filter(name=demo_data.LAB_PROFILE).exists()
    ):
        return None
    reviewer = _reviewer()
    user_id = demo_data.NS_SUPPORT
    queries = list(dict.fromkeys(q for q, _, _ in demo_data.LAB_JUDGMENTS))
    qs = query_sets.queryset_create(
        actor=reviewer, name=demo_data.LAB_QUERY_SET, user_id=user_id, queries=queries
    )
    graded = 0
    for query, phrase, grade in demo_data.LAB_JUDGMENTS:
        memory = (
            Memory.objects.filter(
                user_id=user_id, content__contains=phrase, deleted_at__isnull=True
            )
            .order_by("created_at", "memory_id")
            .first()
        )
        if memory is not None:
            judgments.judgment_set(
                actor=reviewer,
                user_id=user_id,
                query=query,
                memory_id=memory.memory_id,
                grade=grade,
            )
            graded += 1
    name = demo_data.LAB_PROFILE
    profile_services.profile_create(
        actor=reviewer, name=name, reason="demo", **demo_data.LAB_PROFILE_V1
    )
    profiles = ["bm25", name]
    first = runs.run_create(
        actor=reviewer, name=f"bm25 vs {name} v1", query_set=qs, profiles=profiles, k=5
    )
    profile_services.profile_update(
        actor=reviewer,
        name=name,
        reason="demo: support answers do not age; no recency weight",
        **demo_data.LAB_PROFILE_V2,
    )
    second = runs.run_create(
        actor=reviewer, name=f"bm25 vs {name} v2", query_set=qs, profiles=profiles, k=5
    )
    return {"query_set": qs.pk, "judgments": graded, "runs": [first.pk, second.pk]}
