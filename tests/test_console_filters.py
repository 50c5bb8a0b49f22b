"""The memory list's text filter matches on normalised text (NFKC + case folding) on SQLite and
PostgreSQL alike, for rows written by every writer and for rows that existed before the
column did (the migration backfills them). An HTMX action on a memory purged meanwhile
tells the user it is gone, in the target it would have swapped."""

import importlib

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.test import override_settings

from memories import services
from memories.models import Memory
from tests.conftest import login
from tests.helpers import create

# The PostgreSQL pass runs these (scripts/test -m postgres): a migration's backfill.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

TEXTS = {
    "room": "会议室１０２ is booked for Friday",
    "api": "The ＡＰＩ gateway rotates its keys",
    "city": "Москва office opens at nine",
    "strasse": "Meet at the STRASSE corner café",
    "plain": "nothing else matches here",
}


def shown(client, q: str) -> set[str]:
    resp = client.get("/memories/", {"q": q})
    assert resp.status_code == 200
    page = resp.content.decode()
    return {key for key, text in TEXTS.items() if ids[key] in page}


ids: dict[str, str] = {}


@pytest.fixture
def memories():
    ids.clear()
    for key, text in TEXTS.items():
        ids[key] = create(text).memory_id


@pytest.mark.parametrize(("q", "want"), [
    ("102", {"room"}), ("会议室102", {"room"}), ("api", {"api"}), ("API", {"api"}),
    ("ａｐｉ", {"api"}), ("москва", {"city"}), ("МОСКВА", {"city"}), ("straße", {"strasse"}),
    ("CAFÉ", {"strasse"}), ("zzz", set()),
])
def test_the_text_filter_matches_normalised_text(viewer, memories, q, want):
    assert shown(login(viewer), q) == want


def test_edits_rollbacks_and_imports_keep_the_filter_column_in_line(viewer, admin_api):
    memory = create("Ｖｅｒｓｉｏｎ one")
    services.memory_update(memory_id=memory.memory_id, content="ＲＥＤＩＳ two")
    client = login(viewer)
    page = client.get("/memories/", {"q": "redis"}).content.decode()
    assert memory.memory_id in page
    services.memory_rollback(memory_id=memory.memory_id, version=1, reason="undo")
    assert memory.memory_id in client.get("/memories/", {"q": "version"}).content.decode()
    assert memory.memory_id not in client.get("/memories/", {"q": "redis"}).content.decode()
    doc = {"schema_version": 2, "user_id": "u-b", "memories": [
        {"memory_id": "mem_00000000000000c1", "user_id": "u-b", "content": "ÜBER Ｍｏｄｅ",
         "type": "long_term"}]}
    assert admin_api.post("/import?mode=replace", doc).status_code == 200
    assert admin_api.post("/import", {"schema_version": 2, "memories": [
        {"user_id": "u-b", "content": "ＳＥＣＯＮＤ import", "type": "long_term"}]}).status_code == 200
    assert "mem_00000000000000c1" in client.get("/memories/", {"q": "über mode"}).content.decode()
    second = Memory.objects.get(content="ＳＥＣＯＮＤ import").memory_id
    assert second in client.get("/memories/", {"q": "second"}).content.decode()


def test_the_migration_backfills_existing_rows(viewer):
    memory = create("Ｒｏｔａｔｅ the ＫＥＹＳ")
    Memory.objects.filter(pk=memory.pk).update(content_folded="")  # a row from before
    migration = importlib.import_module(_backfill_module())
    migration.backfill(django_apps, connection.schema_editor())
    assert memory.memory_id in login(viewer).get("/memories/", {"q": "keys"}).content.decode()


def _backfill_module() -> str:
    from pathlib import Path

    folder = Path(importlib.import_module("memories.migrations").__file__).parent
    found = [p.stem for p in folder.glob("*content_folded*.py")]
    assert len(found) == 1, found
    return f"memories.migrations.{found[0]}"


@override_settings(DEBUG=False)
@pytest.mark.parametrize(("action", "data"), [
    ("forget", {"reason": ""}), ("restore", {"reason": ""}),
    ("importance", {"importance": "0.9", "version": "1", "reason": ""}),
    ("rollback", {"version": "1", "reason": "undo"}),
])
def test_an_htmx_action_on_a_purged_memory_says_it_is_gone(admin_user, action, data):
    memory = create("soon purged by someone else")
    client = login(admin_user)
    assert client.get(f"/memories/{memory.memory_id}/").status_code == 200
    services.memory_purge(memory_id=memory.memory_id, reason="meanwhile")
    resp = client.post(f"/memories/{memory.memory_id}/{action}/", data,
                       headers={"HX-Request": "true", "HX-Target": "memory-panel"})
    assert resp.status_code == 404
    body = resp.content.decode()
    assert "<html" not in body
    assert 'id="memory-panel"' in body  # replaces the target it was aimed at
    assert "no longer exists" in body and memory.memory_id in body
    # htmx swaps a 404 (base.html's responseHandling), so the message is shown.
    page = client.get("/memories/").content.decode()
    assert '"code": "(400|403|404|409|413|503)"' in page


@override_settings(DEBUG=False)
def test_a_plain_request_for_a_purged_memory_gets_the_full_404_page(viewer):
    resp = login(viewer).get("/memories/mem_0000000000000000/")
    assert resp.status_code == 404
    assert "<html" in resp.content.decode() and "Not found" in resp.content.decode()
