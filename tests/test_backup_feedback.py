"""Schema 5 of the export: the recall feedback of the exported namespaces travels (not the
recall traces); a replace import restores it through ``recalls.feedback.feedback_restore``
with its times, skips and counts an item whose memory the document lacks, names a bad one;
schema 4 documents still import; times may be relative to the import."""

import copy
import datetime as dt

import pytest
from django.utils import timezone

from memories import services
from memories.errors import InvalidInput
from operations import backup
from operations.import_document import SCHEMA_VERSION
from operations.relative_times import relative_times
from recalls.models import Recall, RecallFeedback

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

KEEP = ("recall_key", "user_id", "query", "memory_id", "actor", "grade", "note", "created_at",
        "updated_at")


def _rows():
    return sorted(RecallFeedback.objects.values_list(*KEEP))


@pytest.fixture
def graded(api, viewer_api):
    """Two memories of u-fb, one recall of them by the editor; the editor grades the first
    3 with a note, the viewer 0; a recall of u-other graded too (not exported with u-fb)."""
    ferry, _ = services.memory_create(user_id="u-fb", content="the ferry leaves at nine")
    pier, _ = services.memory_create(user_id="u-fb", content="the ferry pier opens at dawn")
    far, _ = services.memory_create(user_id="u-other", content="the ferry to the far isle")
    found = {}
    for user_id in ("u-fb", "u-other"):
        resp = api.post("/recall", {"user_id": user_id, "query": "ferry"})
        assert resp.status_code == 200, resp.content
        found[user_id] = resp.json()["recall_id"]
    for client, memory, user_id, grade, note in (
            (api, ferry, "u-fb", 3, "exactly"), (viewer_api, ferry, "u-fb", 0, ""),
            (api, far, "u-other", 2, "")):
        resp = client.post(f"/recalls/{found[user_id]}/feedback",
                           {"memory_id": memory.memory_id, "grade": grade, "note": note})
        assert resp.status_code == 200, resp.content
    return ferry, pier, found


def test_an_export_carries_the_feedback_and_a_replace_restores_it(admin_api, graded):
    ferry, _pier, found = graded
    resp = admin_api.get("/export?user_id=u-fb")
    assert resp.status_code == 200
    doc = resp.json()
    assert doc["schema_version"] == SCHEMA_VERSION == 5
    assert sorted((f["actor"], f["grade"], f["note"]) for f in doc["feedback"]) == [
        ("eddie", 3, "exactly"), ("vera", 0, "")]
    item = doc["feedback"][0]
    assert set(item) == set(KEEP) and item["recall_key"] == found["u-fb"]
    assert (item["query"], item["memory_id"], item["user_id"]) == ("ferry", ferry.memory_id,
                                                                   "u-fb")
    assert "recalls" not in doc and "results" not in item  # the traces do not travel
    before = _rows()
    mine = [r for r in before if r[1] == "u-fb"]

    resp = admin_api.post("/import?mode=replace", doc)
    assert resp.status_code == 200, resp.content
    assert (resp.json()["feedback"], resp.json()["feedback_skipped"]) == (2, 0)
    assert _rows() == before and len(mine) == 2  # times too; u-other's untouched
    # The trace is still here: the restored feedback names it again.
    assert set(RecallFeedback.objects.filter(user_id="u-fb")
               .values_list("recall_id", flat=True)) == {found["u-fb"]}


def test_feedback_on_a_memory_the_document_lacks_is_skipped_and_counted(admin_user, graded):
    doc = backup.export_memories(user_id="u-fb")
    extra = {**doc["feedback"][0], "actor": "someone"}
    doc["feedback"] += [{**extra, "memory_id": "mem_0000000000000000"},
                        {**extra, "memory_id": RecallFeedback.objects.get(
                            user_id="u-other").memory_id}]
    doc["memories"] = [m for m in doc["memories"] if m["memory_id"] != extra["memory_id"]]
    result = backup.import_memories(doc=doc, mode="replace", actor=admin_user)
    # Every item named the ferry memory, left out, or a memory of no memory of the document.
    assert (result["feedback"], result["feedback_skipped"]) == (0, 4)
    assert not RecallFeedback.objects.filter(user_id="u-fb").exists()
    assert RecallFeedback.objects.filter(user_id="u-other").count() == 1


def test_a_bad_feedback_item_is_named_and_changes_nothing(admin_user, graded):
    doc = backup.export_memories(user_id="u-fb")
    before = _rows()
    for change, where in (({"grade": 4}, r"feedback\[1\]\.grade"),
                          ({"actor": ""}, r"feedback\[1\]\.actor"),
                          ({"colour": "red"}, r"feedback\[1\]\.colour"),
                          ({"user_id": "u-other"}, r"feedback\[1\]\.user_id"),
                          ({"created_at": "yesterday"}, r"feedback\[1\]\.created_at")):
        # A copy each time: an import parses the lab's times in the document it is given.
        bad = copy.deepcopy(doc)
        bad["feedback"][1].update(change)
        with pytest.raises(InvalidInput, match=where):
            backup.import_memories(doc=bad, mode="replace", actor=admin_user)
    assert _rows() == before


def test_a_schema_4_document_still_imports_without_feedback(admin_user, graded):
    doc = backup.export_memories(user_id="u-fb")
    old = {k: v for k, v in doc.items() if k != "feedback"} | {"schema_version": 4}
    result = backup.import_memories(doc=copy.deepcopy(old), mode="replace", actor=admin_user)
    assert result["restored"] == 2 and "feedback" not in result
    # Its memories were replaced, and the feedback on them went with them (a schema-4
    # document holds none to restore).
    assert not RecallFeedback.objects.filter(user_id="u-fb").exists()
    assert RecallFeedback.objects.filter(user_id="u-other").count() == 1
    with_stray = {**old, "feedback": [{"anything": True}]}  # not read before schema 5
    assert backup.import_memories(doc=with_stray, mode="replace",
                                  actor=admin_user)["restored"] == 2


def test_a_merge_leaves_feedback_alone_and_times_may_be_relative(admin_user, graded):
    doc = backup.export_memories(user_id="u-fb")
    before = _rows()
    backup.import_memories(doc=doc, mode="merge", actor=admin_user)
    assert _rows() == before

    now = dt.datetime.now(dt.UTC)
    rel = relative_times({**doc, "exported_at": now.isoformat()}, now=now)
    rel["feedback"][0]["created_at"] = rel["feedback"][0]["updated_at"] = "-2d"
    start = timezone.now()
    result = backup.import_memories(doc=rel, mode="replace", actor=admin_user)
    assert result["feedback"] == 2
    oldest = RecallFeedback.objects.filter(user_id="u-fb").order_by("created_at").first()
    assert start - dt.timedelta(days=2, minutes=1) < oldest.created_at < start
    assert oldest.updated_at == oldest.created_at
    assert Recall.objects.filter(user_id="u-fb").count() == 1
