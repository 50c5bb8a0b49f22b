"""Backup page: export a namespace, export everything as a job, import (admin only)."""

import json

import django_rq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memories import queue as job_queue
from memories import services
from memories.models import Memory

pytestmark = pytest.mark.django_db


def test_it_exports_and_imports_a_namespace(admin_role_client):
    services.memory_create(user_id="u-a", content="backed up memory")
    resp = admin_role_client.get("/index/backup/export/?user_id=u-a")
    assert resp.status_code == 200 and "attachment" in resp["Content-Disposition"]
    doc = json.loads(resp.content)
    assert doc["schema_version"] == 5 and doc["memories"][0]["content"] == "backed up memory"
    services.memory_create(user_id="u-a", content="added after the backup")
    upload = SimpleUploadedFile("export.json", resp.content, content_type="application/json")
    done = admin_role_client.post("/index/backup/import/", {"document": upload, "mode": "replace"})
    assert done.status_code == 302 and done["Location"] == "/index/backup/"
    assert "restored 1" in admin_role_client.get(done["Location"]).content.decode()
    assert list(Memory.objects.values_list("content", flat=True)) == ["backed up memory"]


def test_a_refresh_after_an_import_imports_nothing_again(admin_role_client):
    """POST-redirect-GET: the browser's refresh is a GET of the backup page."""
    doc = {"schema_version": 2, "memories": [{"user_id": "u-a", "content": "imported once"}]}
    upload = SimpleUploadedFile("doc.json", json.dumps(doc).encode())
    done = admin_role_client.post("/index/backup/import/", {"document": upload, "mode": "merge"})
    assert done.status_code == 302
    for _ in range(2):
        assert admin_role_client.get(done["Location"]).status_code == 200
    assert list(Memory.objects.values_list("content", flat=True)) == ["imported once"]


def test_it_refuses_bad_files_and_low_roles(admin_role_client, editor_client):
    bad = SimpleUploadedFile("x.json", b"not json", content_type="application/json")
    assert admin_role_client.post("/index/backup/import/", {"document": bad}).status_code == 400
    assert admin_role_client.get("/index/backup/export/?user_id=%20x").status_code == 400
    assert editor_client.get("/index/backup/").status_code == 403
    assert editor_client.post("/index/backup/export-all/").status_code == 403
    assert admin_role_client.get("/index/backup/files/export-nope.json").status_code == 404


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_it_exports_everything_as_a_job(admin_role_client, settings, tmp_path, monkeypatch):
    services.memory_create(user_id="u-a", content="one")
    services.memory_create(user_id="u-b", content="two")
    settings.BASE_DIR = tmp_path
    import operations.views.backup as backup_views

    monkeypatch.setattr(backup_views, "EXPORTS", tmp_path / "var" / "exports")
    job_queue.get_queue("default").empty()
    assert admin_role_client.post("/index/backup/export-all/").status_code == 302
    django_rq.get_worker(*job_queue.queue_names("default")).work(burst=True)
    page = admin_role_client.get("/index/backup/").content.decode()
    (name,) = [p.name for p in backup_views.EXPORTS.glob("export-*.json")]
    assert name in page
    doc = json.loads((backup_views.EXPORTS / name).read_text())
    assert {m["user_id"] for m in doc["memories"]} == {"u-a", "u-b"}
    assert admin_role_client.get(f"/index/backup/files/{name}").status_code == 200
