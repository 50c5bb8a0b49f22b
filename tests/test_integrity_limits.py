"""Deeply nested JSON and bodies over the size limit answer JSON 400 / 413 naming the limit
in the API, and a form error on the console's import; nothing is stored."""

import json

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from memories.models import Memory
from tests.conftest import login

pytestmark = pytest.mark.django_db


def nested_metadata(depth: int) -> str:
    return '{"user_id": "u-a", "content": "tea", "metadata": ' + '{"a": ' * depth + "1" + \
        "}" * depth + "}"


@pytest.mark.parametrize("body", [
    pytest.param(nested_metadata(1000), id="metadata-1000-levels"),
    pytest.param("[" * 100_000, id="100k-open-brackets"),
    pytest.param('{"user_id": "u-a", "content": "tea", "tags": ' + "[" * 5000 + "]" * 5000 + "}",
                 id="tags-5000-levels"),
])
@pytest.mark.parametrize("content_type", ["application/json", "application/octet-stream"])
def test_deeply_nested_json_is_a_json_400_naming_the_limit(api, body, content_type):
    resp = api.client.post("/api/v1/memories", data=body.encode(), content_type=content_type,
                           headers=api._headers())
    assert resp.status_code == 400, resp.content[:300]
    assert resp["Content-Type"].startswith("application/json")
    error = resp.json()["error"]
    assert error["code"] == "invalid"
    assert "nested" in error["message"] and "levels" in error["message"]
    assert Memory.objects.count() == 0


def test_metadata_nesting_is_bounded_by_the_writer_too(api):
    """A depth the request parser takes still has to fit the metadata limit (the writers)."""
    resp = api.client.post("/api/v1/memories", data=nested_metadata(40).encode(),
                           content_type="application/json", headers=api._headers())
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == "metadata"
    assert "levels" in resp.json()["error"]["message"]
    ok = api.client.post("/api/v1/memories", data=nested_metadata(5).encode(),
                         content_type="application/json", headers=api._headers())
    assert ok.status_code == 201


@pytest.mark.parametrize("path", ["/memories", "/import", "/recall", "/sessions"])
def test_a_body_over_the_limit_is_a_json_413_naming_the_limit(admin_api, path):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = json.dumps({"user_id": "u-a", "content": "x" * (limit + 10)})
    resp = admin_api.post(path, body)
    assert resp.status_code == 413
    assert resp["Content-Type"].startswith("application/json")
    error = resp.json()["error"]
    assert error["code"] == "too_large"
    assert f"{limit:,}" in error["message"]
    assert error["limit"] == limit
    assert Memory.objects.count() == 0


def _upload(client, text: str, mode="merge"):
    return client.post("/index/backup/import/", {
        "mode": mode, "document": SimpleUploadedFile("doc.json", text.encode())})


@pytest.mark.parametrize("text", [
    pytest.param('{"schema_version": 2, "memories": [' + "[" * 100_000 + "]}", id="brackets"),
    pytest.param('{"schema_version": 2, "memories": [{"user_id": "u-a", "content": "t", '
                 '"metadata": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}]}", id="metadata"),
])
def test_the_console_import_refuses_deep_nesting_with_a_form_error(admin_user, text):
    resp = _upload(login(admin_user), text)
    assert resp.status_code == 400
    page = resp.content.decode()
    assert 'class="alert alert-error"' in page and "nested" in page and "levels" in page
    assert Memory.objects.count() == 0


@override_settings(MEMORY_IMPORT_MAX_BYTES=1000)
def test_the_console_import_refuses_a_file_over_the_limit_with_a_form_error(admin_user):
    doc = {"schema_version": 2, "memories": [{"user_id": "u-a", "content": "x" * 2000}]}
    resp = _upload(login(admin_user), json.dumps(doc))
    assert resp.status_code == 413
    page = resp.content.decode()
    assert 'class="alert alert-error"' in page and "1,000 bytes" in page
    assert Memory.objects.count() == 0


def test_the_import_command_refuses_deep_nesting(builtins, tmp_path):
    from django.core.management import CommandError, call_command

    path = tmp_path / "doc.json"
    path.write_text('{"schema_version": 2, "memories": ' + "[" * 100_000, encoding="utf-8")
    with pytest.raises(CommandError, match="nested"):
        call_command("import", str(path))
