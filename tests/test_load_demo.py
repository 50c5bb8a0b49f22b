"""``load_demo``: the fixture (an export document, times relative to the load) goes in
through the import service in one command, once (a second run loads nothing, ``--replace``
loads it again); it tells a story on every page; an export of it imports back whole; and
``--admin-password`` gives a working console login."""

import datetime as dt
import json

import pytest
from django.contrib.auth import authenticate as django_authenticate
from django.core.management import call_command
from django.utils import timezone

from accounts.roles import role_of
from console.demo_recalls import RECALLS
from console.management.commands.load_demo import demo_document
from lab import runs as lab_runs
from lab.models import EvalRun, Judgment, QuerySet
from memories import services
from memories.models import AuditEvent, Conflict, Memory
from operations import backup
from operations.consolidate import consolidate_group, consolidation_plan
from recalls.models import Recall, RecallFeedback
from search.memory_search import memory_search
from sessions.models import Message, Session
from tests.conftest import login

pytestmark = pytest.mark.django_db(transaction=True)

DOC = demo_document()
NAMESPACES = ("team-harbor", "agent-support", "agent-ops", "王磊", "mei.lin@harbor.example")


@pytest.fixture
def demo(builtins):
    call_command("load_demo")


def _counts():
    return (Memory.objects.count(), Memory.history.count(), Session.objects.count(),
            Message.objects.count(), Judgment.objects.count(), EvalRun.objects.count(),
            Conflict.objects.count())


def test_it_loads_the_fixture_through_the_import_service_once(builtins, capsys):
    call_command("load_demo")
    out = capsys.readouterr().out
    counts = _counts()
    assert counts[0] == len(DOC["memories"]) > 300 and f"memories: {counts[0]} loaded" in out
    assert counts[2:] == (12, sum(len(s["messages"]) for s in DOC["sessions"]), 10, 2, 3)
    assert AuditEvent.objects.filter(action="import", actor="load_demo").count() == 1
    assert {m.user_id for m in Memory.objects.all()} == set(NAMESPACES)

    call_command("load_demo")
    assert "demo already present (agent-ops, agent-support" in capsys.readouterr().out
    assert _counts() == counts

    services.memory_create(user_id="team-harbor", content="a note of my own")
    call_command("load_demo", "--replace")
    assert f"({counts[0] + 1} replaced)" in capsys.readouterr().out
    assert _counts() == counts and not Memory.objects.filter(content="a note of my own")


def test_its_times_are_relative_to_the_load(demo):
    now = timezone.now()
    created = list(Memory.objects.values_list("created_at", flat=True))
    assert max(created) <= now and min(created) > now - dt.timedelta(days=130)
    assert now - max(created) < dt.timedelta(days=7)  # alive: something from this week
    short = Memory.objects.filter(type="short_term", deleted_at__isnull=True)
    assert short.count() > 5
    assert all(m.expire_at > now + dt.timedelta(days=1) for m in short)
    last = sorted(Session.objects.values_list("updated_at", flat=True))
    assert len(set(last)) == 12 and last[-1] <= now and last[0] < now - dt.timedelta(days=21)
    versions = Memory.history.values_list("history_date", flat=True)
    assert max(versions) <= now and min(versions) > now - dt.timedelta(days=130)


def test_it_tells_a_story_of_edits_forgets_rollbacks_and_consolidation(demo, admin_user):
    kinds = set(Memory.history.values_list("kind", flat=True))
    assert {"create", "edit", "forget", "restore", "rollback", "consolidate", "supersede",
            "promote"} <= kinds
    edits = Memory.history.filter(kind="edit").exclude(history_change_reason="")
    assert edits.count() >= 3 and Memory.history.filter(changed_by="tom.becker").exists()
    rolled = Memory.objects.get(pk=Memory.history.get(kind="rollback").memory_id)
    assert "two approvals" in rolled.content and rolled.version == 3
    assert Memory.objects.filter(deleted_at__isnull=False, deleted_by="tom.becker").exists()
    # The consolidation can be undone: its sources come back.
    merged = Memory.objects.get(metadata__consolidated_from__isnull=False,
                                deleted_at__isnull=True)
    sources = merged.metadata["consolidated_from"]
    assert Memory.objects.filter(memory_id__in=sources, deleted_at__isnull=False).count() == 2
    assert services.consolidation_undo(memory_id=merged.memory_id, actor=admin_user,
                                       reason="look at both again") == sources


def test_it_holds_facts_over_time_sessions_and_a_lab_example(demo):
    superseded = Memory.objects.get(superseded_by__isnull=False)
    assert "08:00 UTC" in superseded.content and superseded.valid_until is not None
    open_ = Conflict.objects.get(status="open")
    assert "+49 30 5550 1200" in open_.newer.content
    assert Conflict.objects.filter(status="rejected").exclude(decision_reason="").count() == 2
    assert all(s.summary and s.summary_upto_seq > 0 for s in Session.objects.all())
    promoted = Memory.objects.get(metadata__promoted_from__session_id="sess-support-0001")
    assert promoted.context_from == "session"

    qs = QuerySet.objects.get(name="support questions (demo)")
    assert qs.user_id == "agent-support" and len(qs.queries) == 6
    first, second = EvalRun.objects.filter(query_set=qs).order_by("created_at")
    assert [p["version"] for p in first.profiles if p["name"] == "support-tuned"] == [1]
    assert [p["version"] for p in second.profiles if p["name"] == "support-tuned"] == [2]
    cmp = lab_runs.run_compare(first, second)
    assert cmp["mean_deltas"]["bm25"]["ndcg"] == 0
    assert cmp["mean_deltas"]["support-tuned"]["ndcg"] > 0  # the tuning shows
    groups = [g for ns in NAMESPACES for g in consolidation_plan(user_id=ns).groups]
    assert len(groups) >= 3
    harbor = next(g for g in groups if "v2.6.0" in g.merged_text)
    assert "no-reply@mail.harbor.example" in harbor.merged_text  # byte for byte


def test_its_memories_are_searchable_in_chinese_and_english(demo):
    hits = memory_search(user_id="agent-support", query="海鸥物流的合同什么时候到期？",
                         limit=5).results
    assert hits and "海鸥物流" in hits[0].content
    hits = memory_search(user_id="team-harbor", query="release candidates regression",
                         limit=5).results
    assert hits and "regression" in hits[0].content.lower()


def test_the_password_reset_group_merges_into_one_sentence(demo, admin_user):
    plan = consolidation_plan(user_id="agent-support")
    group = next(g for g in plan.groups if "Password reset emails" in g.merged_text)
    want = ("Password reset emails now come from no-reply@mail.harbor.example after the "
            "INC-228 fix.")
    merged = consolidate_group(memory_ids=group.memory_ids, actor=admin_user)
    assert merged.content == want


def test_every_console_page_shows_the_demo(demo, admin_user):
    client = login(admin_user)
    merged = Memory.objects.get(metadata__consolidated_from__isnull=False)
    rolled = Memory.objects.get(pk=Memory.history.get(kind="rollback").memory_id)
    run = EvalRun.objects.order_by("created_at").first()
    pages = {
        "/": "agent-support",
        "/memories/?user_id=agent-support&q=Oakridge": "Oakridge Dental is on the Starter",
        f"/memories/{rolled.memory_id}/": "Arjun confirmed: billing still needs two approvals",
        f"/memories/{rolled.memory_id}/diff/?a=1&b=2": "one approval",
        f"/memories/{merged.memory_id}/": "Undo consolidation",
        "/conflicts/": "+49 30 5550 1200", "/sessions/": "sess-support-0001",
        "/sessions/sess-support-0001/": "Bluefin Logistics",
        "/search/?user_id=agent-support&q=refund+approval": "refund",
        "/activity/": "load_demo", "/index/": "agent-support",
        "/index/policy/?user_id=team-harbor": "v2.6.0", "/lab/": "support questions (demo)",
        "/lab/profiles/support-tuned/": "no recency weight", f"/lab/runs/{run.pk}/": "bm25",
        "/lab/judgments/": "demo-reviewer",
    }
    for url, text in pages.items():
        response = client.get(url)
        assert response.status_code == 200, url
        assert text in response.content.decode(), url


def test_its_agents_recalls_are_traced_over_the_past_days_with_feedback(demo, admin_user,
                                                                        capsys):
    spec = json.loads(RECALLS.read_text(encoding="utf-8"))
    recalls = list(Recall.objects.order_by("at"))
    assert len(recalls) == len(spec["recalls"]) and all(r.results.exists() for r in recalls)
    ages = [(timezone.now() - r.at).total_seconds() / 3600 for r in recalls]
    assert max(ages) > 200 and min(ages) < 3  # spread over the past days, oldest first
    assert {r.interface for r in recalls} == {r["interface"] for r in spec["recalls"]}
    assert {r.actor for r in recalls} == set(spec["agents"])
    assert all(r.token_id for r in recalls)
    # Served as they stood then: nothing written after its recall, and the versions then,
    # so the edits and the supersession since show on the recalls' pages.
    for r in recalls:
        assert all(x.memory.created_at <= r.at for x in r.results.select_related("memory"))
    served = {(r.query, x.memory_id): (x.version, x.memory) for r in recalls
              for x in r.results.select_related("memory") if x.rank == 1}
    edited = [q for (q, _), (v, m) in served.items() if v < m.version and m.superseded_by is None]
    assert "do billing pull requests need two approvals?" in edited
    assert any(m.superseded_by for (q, _), (v, m) in served.items()
               if q == "what time UTC is the daily standup?")
    assert all(r.profile_version for r in recalls)
    given = sum(len(r.get("feedback", [])) for r in spec["recalls"])
    assert RecallFeedback.objects.count() == given
    assert list(RecallFeedback.objects.filter(grade=0).values_list("note", flat=True)) == [
        "not about the API's limit"]
    page = login(admin_user)
    billing = next(r for r in recalls if r.query.startswith("do billing"))
    assert "edited since" in page.get(f"/recalls/{billing.recall_id}/").content.decode()
    based = next(r for r in recalls if r.query == "what time UTC is the daily standup?")
    assert "superseded by" in page.get(f"/recalls/{based.recall_id}/").content.decode()

    client = login(admin_user)
    usage = client.get("/usage/").content.decode()
    assert "support-bot" in usage and "ops-bot" in usage

    # Replaced, not doubled: the old traces go, and the old feedback with the memories it
    # graded (the replace erases them).
    call_command("load_demo", "--replace")
    assert Recall.objects.count() == len(spec["recalls"])
    assert RecallFeedback.objects.count() == given


def test_an_export_of_the_demo_imports_back_whole(demo):
    before = {"versions": sorted(Memory.history.values_list(
        "memory_id", "version", "kind", "changed_by", "history_change_reason", "history_date")),
        "sessions": list(Session.objects.order_by("session_id").values()),
        "runs": list(EvalRun.objects.order_by("created_at").values("name", "metrics",
                                                                    "created_at")),
        "conflicts": sorted(Conflict.objects.values_list("newer", "older", "status"))}
    doc = backup.export_memories()
    Session.objects.filter(session_id="sess-support-0001").delete()
    backup.import_memories(doc=doc, mode="replace")
    assert before == {"versions": sorted(Memory.history.values_list(
        "memory_id", "version", "kind", "changed_by", "history_change_reason", "history_date")),
        "sessions": list(Session.objects.order_by("session_id").values()),
        "runs": list(EvalRun.objects.order_by("created_at").values("name", "metrics",
                                                                    "created_at")),
        "conflicts": sorted(Conflict.objects.values_list("newer", "older", "status"))}


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
