"""Schema 4 of the export: a replace import keeps each memory's versions, the sessions with
their summaries and the ranking lab's objects; times may be given relative to the import;
older schemas still import and leave sessions and the lab as they are."""

import datetime as dt

import pytest
from django.utils import timezone

from lab import judgments, query_sets, runs
from lab.models import EvalRun, Judgment, QuerySet
from memories import services
from memories.errors import InvalidInput
from memories.models import Memory
from operations import backup
from operations.relative_times import offset_seconds, offset_text, relative_times
from search import profile_services
from search.models import RankingProfile
from sessions import services as sessions
from sessions.models import Session

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _versions(memory_id):
    return [(h.version, h.kind, h.changed_by, h.history_change_reason, h.content,
             h.deleted_at is not None, h.history_date)
            for h in Memory.history.filter(memory_id=memory_id).order_by("version")]


@pytest.fixture
def story(admin_user, editor):
    m, _ = services.memory_create(user_id="u-a", content="the ferry leaves at nine",
                                  actor=editor)
    services.memory_update(memory_id=m.memory_id, content="the ferry leaves at ten",
                           actor=editor, reason="timetable changed")
    services.memory_forget(memory_id=m.memory_id, actor=admin_user, reason="stale")
    services.memory_restore(memory_id=m.memory_id, actor=admin_user, reason="still true")
    other, _ = services.memory_create(user_id="u-a", content="the pier opens at dawn")
    sessions.session_create(user_id="u-a", session_id="s-ferry", agent_id="bot")
    sessions.session_append(session_id="s-ferry", messages=[
        {"role": "user", "content": f"question {n} about the ferry"} for n in range(6)])
    sessions.session_fold(session_id="s-ferry", keep=2)
    qs = query_sets.queryset_create(actor=editor, name="ferry set", user_id="u-a",
                                    queries=["ferry"])
    judgments.judgment_set(actor=editor, user_id="u-a", query="ferry",
                           memory_id=m.memory_id, grade=3)
    profile_services.profile_create(actor=editor, name="tuned", w_relevance=0.5,
                                    w_recency=0.5)
    profile_services.profile_update(actor=editor, name="tuned", w_recency=0.0,
                                    reason="no recency")
    runs.run_create(actor=editor, name="first", query_set=qs, profiles=["bm25", "tuned"])
    return m, other


def test_a_replace_round_trip_keeps_history_sessions_and_the_lab(story, admin_user):
    m, other = story
    before = {"versions": _versions(m.memory_id), "other": _versions(other.memory_id),
              "run": EvalRun.objects.values("name", "metrics", "per_query", "created_at").get(),
              "session": Session.objects.values().get(),
              "profile": profile_services.profile_versions(RankingProfile.objects.get(
                  name="tuned"))}
    doc = backup.export_memories(user_id="u-a")
    assert doc["schema_version"] == 5 and [len(i["history"]) for i in doc["memories"]] == [4, 1]
    assert doc["memories"][0]["history"][1] == {**doc["memories"][0]["history"][1],
                                                "kind": "edit", "reason": "timetable changed"}
    # Everything changes in between, then the backup replaces it.
    services.memory_update(memory_id=m.memory_id, content="the ferry is cancelled")
    sessions.session_delete(session_id="s-ferry")
    Judgment.objects.all().delete()
    result = backup.import_memories(doc=doc, mode="replace", actor=admin_user)
    assert (result["restored"], result["sessions"], result["query_sets"], result["judgments"],
            result["runs"]) == (2, 1, 1, 1, 1)
    assert result["profiles"] == RankingProfile.objects.filter(builtin=False).count()
    assert _versions(m.memory_id) == before["versions"]
    assert _versions(other.memory_id) == before["other"]
    assert Memory.objects.get(pk=m.memory_id).content == "the ferry leaves at ten"
    session = Session.objects.values().get()
    assert session == before["session"] and session["summary"]
    assert sessions.session_context(session_id="s-ferry", last=10)["messages"][-1][
        "content"] == "question 5 about the ferry"
    assert EvalRun.objects.values("name", "metrics", "per_query", "created_at").get() == \
        before["run"]
    assert Judgment.objects.get().grade == 3 and QuerySet.objects.get().name == "ferry set"
    after = profile_services.profile_versions(RankingProfile.objects.get(name="tuned"))
    keep = ("version", "at", "reason", "w_recency", "changed_by")
    assert [{k: v[k] for k in keep} for v in after] == \
        [{k: v[k] for k in keep} for v in before["profile"]]


def test_times_relative_to_the_import_are_resolved_at_load(builtins):
    doc = {"schema_version": 4, "times": "relative", "user_id": "u-r", "memories": [
        {"memory_id": "mem_00000000000000aa", "user_id": "u-r", "content": "short note",
         "type": "short_term", "created_at": "-3d", "expire_at": "+2d", "history": [
             {"version": 1, "at": "-3d", "kind": "create", "actor": "bot",
              "content": "short nite"},  # a version's own fields: where it differs
             {"version": 2, "at": -3600, "kind": "edit", "reason": "typo"}]}]}
    start = timezone.now()
    backup.import_memories(doc=doc, mode="replace")
    row = Memory.objects.get()
    assert dt.timedelta(days=2, hours=23) < row.expire_at - row.created_at < dt.timedelta(days=6)
    assert start - dt.timedelta(days=3, minutes=1) < row.created_at < start
    assert row.version == 2 and [v[4] for v in _versions(row.memory_id)] == ["short nite",
                                                                               "short note"]


def test_a_bad_offset_or_version_is_named_and_changes_nothing(builtins):
    services.memory_create(user_id="u-r", content="kept as it is")
    bad = {"schema_version": 4, "times": "relative", "user_id": "u-r", "memories": [
        {"user_id": "u-r", "content": "x", "created_at": "three days ago"}]}
    with pytest.raises(InvalidInput, match=r"memories\[0\]\.created_at must be an offset"):
        backup.import_memories(doc=bad, mode="replace")
    bad = {"schema_version": 4, "user_id": "u-r", "memories": [
        {"user_id": "u-r", "content": "x", "version": 3, "history": [
            {"version": 1, "at": "2026-01-01T00:00:00Z", "kind": "create"}]}]}
    with pytest.raises(InvalidInput, match="must end with the memory's version 3"):
        backup.import_memories(doc=bad, mode="replace")
    assert list(Memory.objects.values_list("content", flat=True)) == ["kept as it is"]


def test_an_older_schema_leaves_sessions_and_the_lab_as_they_are(story, admin_user):
    doc = backup.export_memories(user_id="u-a")
    old = {"schema_version": 3, "user_id": "u-a", "memories": [
        {k: v for k, v in item.items() if k != "history"} for item in doc["memories"]]}
    backup.import_memories(doc=old, mode="replace", actor=admin_user)
    assert Session.objects.count() == 1 and EvalRun.objects.count() == 1
    assert [v[1] for v in _versions(story[0].memory_id)] == ["restore"]


def test_offsets_read_and_write_both_ways():
    assert offset_seconds("-3d4h", "x") == -(3 * 86400 + 4 * 3600)
    assert offset_seconds("+1w", "x") == 7 * 86400 and offset_seconds(-90, "x") == -90
    assert offset_text(-(3 * 86400 + 4 * 3600 + 5)) == "-3d4h5s" and offset_text(0) == "+0s"
    now = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    doc = relative_times({"schema_version": 4, "exported_at": now.isoformat(), "memories": [
        {"created_at": (now - dt.timedelta(hours=2)).isoformat(), "history": [
            {"at": (now - dt.timedelta(hours=2)).isoformat()}]}]}, now=now)
    assert doc["times"] == "relative" and "exported_at" not in doc
    assert doc["memories"][0]["created_at"] == doc["memories"][0]["history"][0]["at"] == "-2h"
