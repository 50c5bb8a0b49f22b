"""One text check on every way in: NUL, lone surrogates and control characters are refused
with a 400 (or a form / command error) naming the field, whatever the Content-Type, and
nothing is stored. A row that cannot be mirrored (written before the check existed) never
turns a committed write into a 500 and never stops a reconcile or a reindex: it is logged,
counted and shown on the Index page and in ``/index/health``.
"""

import json

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from memories.models import Memory
from search.memory_search import memory_search
from sessions.models import Message, Session
from tests.conftest import login
from tests.helpers import create

pytestmark = pytest.mark.django_db

# Raw JSON text (escapes, so the body itself is plain ASCII and any parser accepts it).
NUL = "\\u0000"
SURROGATE = "\\ud800"
BELL = "\\u0007"
ESC = "\\u001b"

TYPES = ["application/octet-stream", "text/csv", "application/vnd.api+json",
         "application/json"]


def raw_post(api, path, body: str, content_type: str, method="post"):
    return getattr(api.client, method)("/api/v1" + path, data=body.encode(),
                                       content_type=content_type, headers=api._headers())


def memory_body(field: str, bad: str) -> str:
    base = {"user_id": "u-a", "content": "a plain note about tea"}
    text = json.dumps(base)[:-1]
    if field in ("tags", "keywords"):
        return text + f', "{field}": ["ok", "x{bad}y"]}}'
    if field == "metadata":
        return text + f', "metadata": {{"note": {{"deep": "x{bad}y"}}}}}}'
    if field == "metadata.key":
        return text + f', "metadata": {{"k{bad}": 1}}}}'
    if field == "content":
        return json.dumps({"user_id": "u-a"})[:-1] + f', "content": "tea {bad} time"}}'
    return text + f', "{field}": "x{bad}y"}}'


def expected_field(field: str) -> str:
    return {"metadata": "metadata.note.deep", "metadata.key": "metadata"}.get(field, field)


@pytest.mark.parametrize("content_type", TYPES)
@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
@pytest.mark.parametrize("field", ["content", "tags", "metadata", "metadata.key", "source",
                                   "context", "author", "keywords", "conversation_id"])
def test_it_refuses_unstorable_text_in_a_memory_whatever_the_content_type(
        api, field, bad, content_type):
    resp = raw_post(api, "/memories", memory_body(field, bad), content_type)
    assert resp.status_code == 400, resp.content
    error = resp.json()["error"]
    assert error["field"] is not None and error["field"].startswith(
        expected_field(field).split(".")[0])
    assert Memory.objects.count() == 0


@pytest.mark.parametrize("field", ["tags", "source", "author", "keywords"])
@pytest.mark.parametrize("bad", [BELL, ESC, "\\n"], ids=["bell", "escape", "newline"])
def test_it_refuses_control_characters_in_single_line_fields(api, field, bad):
    resp = raw_post(api, "/memories", memory_body(field, bad), "application/octet-stream")
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["field"] == field
    assert Memory.objects.count() == 0


def test_free_text_keeps_tabs_and_line_breaks_but_not_other_controls(api):
    ok = api.post("/memories", {"user_id": "u-a", "content": "line one\n\tline two\r\n"})
    assert ok.status_code == 201
    bad = raw_post(api, "/memories", memory_body("content", BELL), "application/octet-stream")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "content"
    assert Memory.objects.count() == 1


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
def test_it_refuses_unstorable_text_in_a_patch(api, bad):
    memory = create("a plain note about tea")
    for body in (f'{{"content": "tea {bad}"}}', f'{{"tags": ["a{bad}"]}}',
                 f'{{"metadata": {{"a": "{bad}"}}}}'):
        resp = raw_post(api, f"/memories/{memory.memory_id}", body, "application/octet-stream",
                        method="patch")
        assert resp.status_code == 400, (body, resp.content)
    memory.refresh_from_db()
    assert memory.version == 1 and memory.content == "a plain note about tea"


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
def test_it_refuses_unstorable_text_in_sessions(api, bad):
    body = f'{{"user_id": "u-a", "session_id": "s-1", "system_prompt": "be {bad} kind"}}'
    assert raw_post(api, "/sessions", body, "application/octet-stream").status_code == 400
    body = f'{{"user_id": "u-a", "session_id": "s-1", "metadata": {{"k": "{bad}"}}}}'
    assert raw_post(api, "/sessions", body, "application/octet-stream").status_code == 400
    assert not Session.objects.exists()
    assert api.post("/sessions", {"user_id": "u-a", "session_id": "s-1"}).status_code == 201
    for body in (f'{{"role": "user", "content": "hi {bad}"}}',
                 f'{{"messages": [{{"role": "user", "content": "ok"}}, '
                 f'{{"role": "user", "content": "x{bad}"}}]}}'):
        resp = raw_post(api, "/sessions/s-1/messages", body, "application/octet-stream")
        assert resp.status_code == 400, resp.content
        assert resp.json()["error"]["field"].endswith("content")
    assert not Message.objects.exists()


def test_the_session_writer_itself_refuses_it(builtins):
    """The writers hold the check, so every later way in (MCP, jobs) inherits it."""
    from memories import services
    from memories.errors import InvalidInput
    from sessions import services as sessions

    with pytest.raises(InvalidInput):
        services.memory_create(user_id="u-a", content="ok", metadata={"k": "\ud800"})
    with pytest.raises(InvalidInput):
        services.memory_create(user_id="u-a", content="tea\x00")
    session = sessions.session_create(user_id="u-a", session_id="s-1")
    with pytest.raises(InvalidInput):
        sessions.session_append(session_id=session.session_id,
                                messages=[{"role": "user", "content": "a\x00b"}])
    assert not Memory.objects.exists() and not Message.objects.exists()


def _export_doc(content: str, **extra) -> dict:
    return {"schema_version": 2, "user_id": "u-a", "memories": [
        {"user_id": "u-a", "content": "a fine first memory", "type": "long_term"},
        {"user_id": "u-a", "content": content, "type": "long_term", **extra}]}


@pytest.mark.parametrize("replace", [False, True], ids=["merge", "replace"])
@pytest.mark.parametrize("where", ["content", "tags", "metadata"])
def test_the_import_command_refuses_unstorable_text(builtins, tmp_path, replace, where):
    extra = {"content": "tea\x00time"} if where == "content" else {
        "tags": ["x\ud800"]} if where == "tags" else {"metadata": {"k": "\x00"}}
    doc = _export_doc("another memory", **{k: v for k, v in extra.items() if k != "content"})
    if where == "content":
        doc["memories"][1]["content"] = extra["content"]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")  # ASCII escapes: valid JSON
    args = ["import", str(path)] + (["--replace"] if replace else [])
    with pytest.raises(CommandError, match=r"memories\[1\]"):
        call_command(*args)
    assert Memory.objects.count() == 0


def test_the_console_backup_upload_refuses_unstorable_text(admin_user):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = login(admin_user)
    doc = json.dumps(_export_doc("tea\x00time"))
    resp = client.post("/index/backup/import/", {
        "mode": "merge", "document": SimpleUploadedFile("d.json", doc.encode())})
    assert resp.status_code == 400
    assert b"memories[1]" in resp.content and b"content" in resp.content
    assert Memory.objects.count() == 0


def test_import_locomo_refuses_unstorable_text_naming_the_turn(builtins, tmp_path):
    sample = {"sample_id": "conv-x", "conversation": {
        "speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "fine"},
                      {"speaker": "B", "dia_id": "D1:2", "text": "bad\x00turn"}]}}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    with pytest.raises(CommandError, match=r"turn D1:\d.*NUL"):
        call_command("import_locomo", str(path), "--no-progress")
    # (Compared in Python: PostgreSQL refuses a NUL even as a query parameter.)
    assert not any("\x00" in c for c in Memory.objects.values_list("content", flat=True))


# --- rows written before the check: they never break a write or a batch --------------------

def _poison(memory):
    """Give a row a lone surrogate in its metadata, as rows written before the text check
    hold them (SQLite keeps the JSON escape; PostgreSQL refuses such text at insert, so
    there such a row cannot exist)."""
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL refuses lone surrogates at insert: no such row can exist")
    Memory.objects.filter(pk=memory.pk).update(metadata={"note": "\ud800"}, version=7)


def test_a_committed_write_on_a_poison_row_never_answers_500(api):
    memory = create("a poisoned note about tea")
    _poison(memory)
    resp = api.patch(f"/memories/{memory.memory_id}", {"importance": 0.9})
    assert resp.status_code == 200, resp.content
    assert resp.json()["warning"] == "index_pending"
    assert Memory.objects.get(pk=memory.pk).importance == 0.9


def test_reconcile_and_reindex_skip_a_poison_row_count_it_and_go_on(
        admin_api, admin_user, redis_client):
    good = [create(f"coffee note number {n}") for n in range(3)]
    poison = create("coffee note that is poisoned")
    _poison(poison)
    # Redis loses everything: every row must be rebuilt, the poison row among them.
    redis_client.delete(*redis_client.scan_iter(match=f"{settings.MEMORY_KEY_PREFIX}:*"))
    call_command("reconcile")
    found = {h.memory_id for h in memory_search(user_id="u-a", query="coffee", limit=10).results}
    assert found == {m.memory_id for m in good}
    call_command("reindex")
    found = {h.memory_id for h in memory_search(user_id="u-a", query="coffee", limit=10).results}
    assert found == {m.memory_id for m in good}
    health = admin_api.get("/index/health").json()
    assert health["unindexable"]["count"] == 1
    assert health["unindexable"]["memory_ids"] == [poison.memory_id]
    page = login(admin_user).get("/index/")
    assert page.status_code == 200
    assert "1 memory cannot be indexed" in page.content.decode()
    assert poison.memory_id in page.content.decode()
