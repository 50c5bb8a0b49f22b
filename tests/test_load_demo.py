"""``load_demo``: the demo memories and sessions load once (a second run adds nothing), are
searchable in Chinese and English, and ``--admin-password`` gives a working console login."""

import pytest
from django.contrib.auth import authenticate as django_authenticate
from django.core.management import call_command

from accounts.roles import role_of
from console import demo_data
from console.demo_data import demo_memories, demo_sessions
from lab import runs as lab_runs
from lab.models import EvalRun, Judgment, QuerySet
from memories.models import Memory
from operations.consolidate import consolidate_group, consolidation_plan
from search.memory_search import memory_search
from sessions.models import Message, Session

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_loads_the_demo_once(builtins, capsys):
    call_command("load_demo")
    out = capsys.readouterr().out
    memories = Memory.objects.count()
    assert memories > 300 and memories == len(demo_memories())
    assert f"memories: {memories} created" in out
    assert Session.objects.count() == 12 == len(demo_sessions())
    messages = Message.objects.count()
    assert messages == sum(len(s["messages"]) for s in demo_sessions())

    call_command("load_demo")
    out = capsys.readouterr().out
    assert f"memories: 0 created, {memories} already present" in out
    assert "sessions: 0 created (0 messages, 0 summaries), 12 already present" in out
    assert "lab: already present" in out
    assert (Memory.objects.count(), Session.objects.count(), Message.objects.count()) == (
        memories,
        12,
        messages,
    )


def test_demo_rows_keep_their_fields(builtins):
    call_command("load_demo")
    spec = demo_memories()[0]
    row = Memory.objects.get(user_id=spec["user_id"], content=spec["content"])
    assert row.created_at.isoformat() == spec["created_at"]
    assert (row.importance, row.author, row.source) == (
        spec["importance"],
        spec["author"],
        spec["source"],
    )
    session = Session.objects.get(session_id="sess-support-0001")
    first = session.messages.order_by("seq").first()
    assert first.role == "system" and first.ts.isoformat() == demo_sessions()[0]["created_at"]


def test_demo_memories_are_searchable(builtins):
    call_command("load_demo")
    hits = memory_search(
        user_id="agent-support", query="海鸥物流的合同什么时候到期？", limit=5
    ).results
    assert hits and "海鸥物流" in hits[0].content
    hits = memory_search(
        user_id="team-harbor", query="release candidates regression", limit=5
    ).results
    assert hits and "regression" in hits[0].content.lower()


def test_it_creates_and_updates_the_admin_login(builtins, rf):
    # The login rate limiter (django-axes) authenticates only with a request.
    def authenticate(**credentials):
        return django_authenticate(rf.post("/accounts/login/"), **credentials)

    call_command("load_demo", "--admin-password", "first-pw")
    admin = authenticate(username="admin", password="first-pw")
    assert admin is not None and admin.is_superuser and admin.is_staff
    assert admin.groups.filter(name="admin").exists() and role_of(admin) == "admin"
    call_command("load_demo", "--admin-password", "second-pw")
    assert authenticate(username="admin", password="first-pw") is None
    assert authenticate(username="admin", password="second-pw") is not None


def test_it_seeds_summaries_a_lab_example_and_near_duplicates(builtins, capsys):
    """A newcomer sees every page alive: sessions with summaries, a query set with graded
    judgments and two runs (the same profile before and after tuning), and consolidation
    groups on the Policy page."""
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "12 summaries" in out
    summarised = Session.objects.exclude(summary="")
    assert summarised.count() == 12
    assert all(s.summary_upto_seq > 0 for s in summarised)

    qs = QuerySet.objects.get(name=demo_data.LAB_QUERY_SET)
    assert qs.user_id == "agent-support" and len(qs.queries) == 6
    assert Judgment.objects.filter(reviewer="demo-reviewer").count() == len(
        demo_data.LAB_JUDGMENTS
    )
    first, second = EvalRun.objects.filter(query_set=qs).order_by("pk")
    assert [p["version"] for p in first.profiles if p["name"] == "support-tuned"] == [1]
    assert [p["version"] for p in second.profiles if p["name"] == "support-tuned"] == [2]
    assert first.metrics["bm25"]["queries"] == 6 and first.metrics["bm25"]["ndcg"] > 0.5
    cmp = lab_runs.run_compare(first, second)
    assert cmp["shared"] == ["bm25", "support-tuned"]
    assert cmp["mean_deltas"]["bm25"]["ndcg"] == 0  # same profile, same data: no change
    # The tuning the example shows is visible: v2 (no recency weight) ranks better than v1.
    assert cmp["mean_deltas"]["support-tuned"]["ndcg"] > 0.1

    groups = {
        ns: consolidation_plan(user_id=ns).groups for ns in demo_data.NAMESPACES
    }
    assert sum(len(g) for g in groups.values()) >= 4
    assert all(len(g.memory_ids) == 2 for gs in groups.values() for g in gs)
    harbor = next(g for g in groups["team-harbor"] if "v2.6.0" in g.merged_text)
    assert "no-reply@mail.harbor.example" in harbor.merged_text  # byte for byte

    call_command("load_demo")  # idempotent: the lab example is written once
    assert QuerySet.objects.count() == 1 and EvalRun.objects.count() == 2


def test_the_demo_password_reset_group_merges_into_one_sentence(builtins, admin_user):
    """The same fact noted twice in agent-support ("... since the INC-228 fix." / "... now
    ... after the INC-228 fix.") becomes a memory that says it once."""
    call_command("load_demo")
    plan = consolidation_plan(user_id=demo_data.NS_SUPPORT)
    group = next(g for g in plan.groups if "Password reset emails" in g.merged_text)
    want = ("Password reset emails now come from no-reply@mail.harbor.example after the "
            "INC-228 fix.")
    assert group.merged_text == want
    merged = consolidate_group(memory_ids=group.memory_ids, actor=admin_user)
    assert merged.content == want and merged.content.lower().count("password reset") == 1
    assert Memory.objects.filter(memory_id__in=group.memory_ids,
                                 deleted_at__isnull=False).count() == 2
