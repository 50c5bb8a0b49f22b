"""``load_demo``: the demo memories and sessions load once (a second run adds nothing), are
searchable in Chinese and English, and ``--admin-password`` gives a working console login."""

import pytest
from django.contrib.auth import authenticate as django_authenticate
from django.core.management import call_command

from accounts.roles import role_of
from console.demo_data import demo_memories, demo_sessions
from memories.models import Memory
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
    assert "sessions: 0 created (0 messages), 12 already present" in out
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
