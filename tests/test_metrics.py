"""``/metrics``: who may read it, and that what agents do shows in it. The output is read
back with prometheus-client's own text parser, never with string matching."""

import socket

import pytest
from django.contrib.auth.models import User
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from accounts.tokens import token_create
from integrations.metrics import registry
from memories import store
from memories.models import Memory
from tests.conftest import work

pytestmark = pytest.mark.django_db


def scrape(token: str = "", **extra) -> dict[str, list]:
    """``{family name: [samples]}`` of one scrape (HTTP 200 asserted)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = Client().get("/metrics", headers=headers, **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    families = text_string_to_metric_families(response.content.decode())
    return {f.name: f.samples for f in families}


def value(families, name: str, **labels) -> float:
    """The sample ``name`` with exactly these labels (0 when absent)."""
    for samples in families.values():
        for sample in samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def histogram_count(families, name: str, **labels) -> float:
    return value(families, f"{name}_count", **labels)


def test_a_token_of_any_role_reads_it_others_are_refused(viewer):
    assert Client().get("/metrics").status_code == 401
    assert Client().get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    nobody = User.objects.create_user("nobody")  # in no role group
    refused = Client().get("/metrics",
                           headers={"Authorization": f"Bearer {token_create(user=nobody)}"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert "memory_console_index_pending" in scrape(token_create(user=viewer))


def test_an_allow_listed_address_reads_it_without_a_token(settings, builtins):
    settings.METRICS_ALLOWED_IPS = ["10.1.0.0/16"]
    assert "memory_console_index_pending" in scrape(REMOTE_ADDR="10.1.2.3")
    assert Client().get("/metrics", REMOTE_ADDR="10.2.0.1").status_code == 401


def test_writes_recalls_and_requests_show_without_namespace_labels(api, viewer):
    token = token_create(user=viewer)
    before = scrape(token)
    made = api.post("/memories", {"user_id": "ns-secret-42",
                                         "content": "The deploy freeze starts on Friday"})
    assert made.status_code == 201
    memory_id = made.json()["memory_id"]
    found = api.post("/recall", {"user_id": "ns-secret-42", "query": "deploy freeze",
                                        "profile": "bm25"})
    assert [r["memory_id"] for r in found.json()["results"]] == [memory_id]
    assert api.delete(f"/memories/{memory_id}").status_code == 204
    after = scrape(token)

    def grew(name, by, **labels):
        return value(after, name, **labels) - value(before, name, **labels) == by

    assert grew("memory_console_memory_writes_total", 1, kind="create")
    assert grew("memory_console_memory_writes_total", 1, kind="forget")
    assert grew("memory_console_recall_duration_seconds_count", 1, profile="bm25")
    assert grew("memory_console_recall_results_sum", 1, profile="bm25")
    assert grew("memory_console_http_request_duration_seconds_count", 1,
                view="api/v1/recall", method="POST", status="200")
    assert grew("memory_console_http_request_duration_seconds_count", 1,
                view="api/v1/memories/<memory_id>", method="DELETE", status="204")
    labels = {v for samples in after.values() for s in samples for v in s.labels.values()}
    assert not {"ns-secret-42", memory_id} & labels
    assert not any(memory_id in v for v in labels)


def test_index_pending_counts_memories_waiting_for_redis(viewer, api):
    made = [api.post("/memories", {"user_id": "u-a", "content": f"note {n}"}).json()
            for n in range(3)]
    token = token_create(user=viewer)
    assert value(scrape(token), "memory_console_index_pending") == 0
    Memory.objects.filter(memory_id__in=[m["memory_id"] for m in made[:2]]).update(
        needs_resync=True)
    assert value(scrape(token), "memory_console_index_pending") == 2


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_job_durations_and_drift_come_from_the_worker(admin_api, viewer, empty_queues):
    token = token_create(user=viewer)
    before = scrape(token)
    admin_api.post("/memories", {"user_id": "u-a", "content": "kept in the index"})
    assert admin_api.post("/index/reconcile").status_code == 202
    work()
    after = scrape(token)
    assert (histogram_count(after, "memory_console_job_duration_seconds",
                            job="reconcile_job", status="finished")
            - histogram_count(before, "memory_console_job_duration_seconds",
                              job="reconcile_job", status="finished")) == 1
    assert value(after, "memory_console_index_drift", when="after_repair") == 0
    assert value(after, "memory_console_queue_jobs", queue="index") == 0


def test_webhook_deliveries_count_by_event_and_outcome(viewer):
    token = token_create(user=viewer)
    before = scrape(token)
    registry.count_webhook_delivery(event="memory.created", outcome="failed", seconds=0.2)
    registry.count_webhook_delivery(event="memory.created", outcome="delivered", seconds=0.01)
    after = scrape(token)
    for outcome in ("failed", "delivered"):
        assert (value(after, "memory_console_webhook_deliveries_total",
                      event="memory.created", outcome=outcome)
                - value(before, "memory_console_webhook_deliveries_total",
                        event="memory.created", outcome=outcome)) == 1
    with pytest.raises(ValueError):
        registry.count_webhook_delivery(event="memory.created", outcome="lost")


def _dead_redis_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


def test_redis_errors_are_counted(settings, api, viewer):
    token = token_create(user=viewer)
    before = scrape(token)
    live = settings.REDIS_URL
    store._client.cache_clear()
    settings.REDIS_URL = _dead_redis_url()
    try:
        written = api.post("/memories", {"user_id": "u-a", "content": "kumquats in the cellar"})
        recall = api.post("/recall", {"user_id": "u-a", "query": "kumquats"})
    finally:
        store._client.cache_clear()
        settings.REDIS_URL = live
    assert written.json()["warning"] == "index_pending"
    assert recall.status_code == 503
    after = scrape(token)
    assert (value(after, "memory_console_redis_errors_total", where="mirror")
            - value(before, "memory_console_redis_errors_total", where="mirror")) >= 1
    assert (value(after, "memory_console_redis_errors_total", where="api")
            - value(before, "memory_console_redis_errors_total", where="api")) == 1


def test_bulk_creates_of_an_import_are_counted(admin_api, viewer):
    token = token_create(user=viewer)
    before = value(scrape(token), "memory_console_memory_writes_total", kind="create")
    doc = {"schema_version": 1, "memories": [
        {"user_id": "u-imp", "content": "imported note one"},
        {"user_id": "u-imp", "content": "imported note two"}]}
    answer = admin_api.post("/import", doc)
    assert answer.status_code == 200, answer.content
    after = value(scrape(token), "memory_console_memory_writes_total", kind="create")
    assert after - before == Memory.objects.filter(user_id="u-imp").count() == 2


def test_redis_errors_show_at_zero_before_the_first_error(viewer):
    """An alert on ``redis_errors_total`` needs its series before the first error: every
    place that counts one shows from the start (at 0 in a process that met none)."""
    families = scrape(token_create(user=viewer))
    places = {s.labels["where"] for s in families["memory_console_redis_errors"]
              if s.name == "memory_console_redis_errors_total"}
    assert places >= {"api", "mirror", "recall_hits", "mcp", "metrics"}


def test_process_metrics_show_in_multiprocess_mode(viewer, tmp_path, monkeypatch):
    """Under gunicorn (multiprocess files) the answer holds prometheus-client's process
    collector, as a single process's registry does."""
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    families = scrape(token_create(user=viewer))
    assert value(families, "process_resident_memory_bytes") > 0
    assert value(families, "process_start_time_seconds") > 0
    assert "memory_console_index_pending" in families
