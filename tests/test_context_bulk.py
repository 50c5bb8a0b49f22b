"""Server-built context on the bulk paths: ``POST /import`` (merge and replace), the
``import`` command (both through ``memory_create_many``) and consolidation."""

import datetime as dt
import json

import pytest
from django.core.management import call_command

from memories import services
from memories.models import Memory
from operations.consolidate import consolidate_group
from search.memory_search import memory_search

# The PostgreSQL pass runs these (scripts/test -m postgres): the context rebuild's raw SQL.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def item(content, n, conversation="c-1", **kw):
    return {"user_id": "u-a", "conversation_id": conversation, "content": content,
            "created_at": f"2026-11-20T10:00:{n:02d}+00:00", **kw}


def create(content, n, **kw):
    fields = item(content, n, **kw)
    fields["created_at"] = dt.datetime.fromisoformat(fields["created_at"])
    return services.memory_create(**fields)[0]


def doc(*items):
    return {"schema_version": 2, "memories": list(items)}


def ctx(memory_id):
    m = Memory.objects.get(memory_id=memory_id)
    return m.context, m.context_from


def by_content(content):
    return Memory.objects.get(content=content, deleted_at__isnull=True).memory_id


def test_it_builds_context_for_a_merge_import_from_the_batch_and_the_stored_turns(
        builtins, admin_api):
    first = create("Calvin: my studio flooded", 1)
    resp = admin_api.post("/import", doc(
        item("Dave: was the mixing desk damaged?", 2),
        item("Calvin: the desk is fine, the carpet is ruined", 3),
        item("Dave: glad the gear survived", 4),
        item("elsewhere", 5, conversation="c-2"),
    ))
    assert resp.status_code == 200, resp.content
    # The stored turn gained the next one (rebuilt in place, no new version) ...
    assert ctx(first.memory_id) == ("Dave: was the mixing desk damaged?", "conversation")
    assert Memory.objects.get(memory_id=first.memory_id).version == 1
    # ... and each imported turn has its two previous turns and the next one.
    assert ctx(by_content("Calvin: the desk is fine, the carpet is ruined")) == (
        "Calvin: my studio flooded\nDave: was the mixing desk damaged?\n"
        "Dave: glad the gear survived", "conversation")
    assert ctx(by_content("elsewhere")) == ("", "conversation")
    # Recall sees it at once: the context term finds the first turn.
    found = memory_search(user_id="u-a", query="mixing desk", limit=5)
    assert first.memory_id in [h.memory_id for h in found.results]


def test_it_keeps_a_given_context_and_its_source(builtins, admin_api):
    resp = admin_api.post("/import", doc(
        item("turn one", 1, context="what the client said"),
        item("turn two", 2, context="copied text", context_from="copy"),
        item("turn three", 3),
    ))
    assert resp.status_code == 200, resp.content
    assert ctx(by_content("turn one")) == ("what the client said", "client")
    assert ctx(by_content("turn two")) == ("copied text", "copy")
    assert ctx(by_content("turn three")) == ("turn one\nturn two", "conversation")


def test_it_refuses_an_unknown_context_from_and_writes_nothing(builtins, admin_api):
    resp = admin_api.post("/import", doc(item("a", 1), item("b", 2, context="x",
                                                            context_from="robot")))
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == "context_from"
    assert not Memory.objects.exists()


def test_it_round_trips_server_built_context_through_export_and_replace(builtins, admin_api):
    for n, text in enumerate(["alpha turn", "beta turn", "gamma turn"], start=1):
        create(text, n)
    before = {m.memory_id: (m.context, m.context_from) for m in Memory.objects.all()}
    exported = admin_api.get("/export?user_id=u-a").json()
    assert all("context_from" in m for m in exported["memories"])
    resp = admin_api.call("post", "/import?mode=replace", exported)
    assert resp.status_code == 200, resp.content
    assert {m.memory_id: (m.context, m.context_from) for m in Memory.objects.all()} == before


def test_the_import_command_builds_context(builtins, tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc(item("north wing", 1), item("south wing", 2))))
    call_command("import", str(path), verbosity=0)
    assert ctx(by_content("north wing")) == ("south wing", "conversation")
    assert ctx(by_content("south wing")) == ("north wing", "conversation")


def test_a_consolidated_memory_keeps_its_sources_context(builtins):
    create("Calvin: the studio is in Boston", 1)
    a = create("Use argon2 for password hashing.", 2)
    b = create("Use argon2 for password hashing. Rotate keys.", 3)
    create("Dave: which salt length?", 4)
    merged = consolidate_group(memory_ids=[a.memory_id, b.memory_id])
    assert merged.context_from == "copy"
    assert "Calvin: the studio is in Boston" in merged.context
    assert "Dave: which salt length?" in merged.context
    found = memory_search(user_id="u-a", query="salt length", limit=5)
    assert merged.memory_id in [h.memory_id for h in found.results]


def test_a_bulk_load_of_client_contexts_reads_no_stored_row_of_its_conversations(builtins):
    """Conversations whose memories all bring their own context have nothing to rebuild:
    their stored rows are not read (a batch spread over a namespace's conversations read
    most of the namespace, each batch, so bulk loads slowed as the namespace grew); one
    whose stored turn builds its own from the conversation is still rebuilt."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for n in range(6):
        services.memory_create(user_id="u-a", conversation_id=f"c-{n % 3}",
                               content=f"stored turn {n}", context=f"given {n}")
    built = create("Calvin: my studio flooded", 1, conversation="c-built")
    with CaptureQueriesContext(connection) as queries:
        services.memory_create_many(items=[
            {"user_id": "u-a", "conversation_id": f"c-{n % 3}", "content": f"new turn {n}",
             "context": f"given again {n}"} for n in range(6)] + [
            {"user_id": "u-a", "conversation_id": "c-built", "content": "Dave: oh no",
             "context": "mine", "created_at": dt.datetime(2026, 11, 20, 10, 0, 2,
                                                           tzinfo=dt.UTC)}])
    reads = [q["sql"] for q in queries.captured_queries
             if q["sql"].startswith("SELECT") and '"content"' in q["sql"] and '"conversation_id" IN' in q["sql"]]
    assert len(reads) == 1 and "'c-built'" in reads[0] and "'c-0'" not in reads[0], reads
    assert ctx(built.memory_id) == ("Dave: oh no", "conversation")
