"""Consolidation in the console: each group of the policy page applied or skipped alone
(merged text and similarity shown before anything is written), Undo consolidation on the
merged memory's page, and the undo of a forgetting-policy run. Admin only, reason required."""

import datetime as dt

import pytest

from console.pages import FRAGMENT_HEADER
from memories.models import AuditEvent, Memory
from operations import consolidate
from tests.conftest import work
from tests.views.conftest import HX, ids, tags, text

# The PostgreSQL pass runs these (scripts/test -m postgres): JSON queries of cleanup runs and their
# undo.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queues"),
              pytest.mark.postgres]

OLD = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
NOTES = [
    "Harbor v2.6.0 ships on Thursday. Replies come from no-reply@mail.harbor.example.",
    "Harbor v2.6.0 ships on Thursday.",
    "Kestrel Health renews its Enterprise plan on 1 March.",
    "Oakridge Dental renews its Enterprise plan on 1 March.",
    "陈静跟进青山零售的续约，日期是 3 月 1 日。",
    "青山零售的续约日期是 3 月 1 日，陈静跟进。",
]


@pytest.fixture
def notes(make_memory):
    return [make_memory(n) for n in NOTES]


def groups_on_page(body) -> list[str]:
    return [a["data-group-id"] for _, a in tags(body) if "data-group-id" in a]


def live(memory_id) -> bool:
    return Memory.objects.get(memory_id=memory_id).deleted_at is None


def test_the_page_shows_each_group_with_its_merged_text_and_similarity(admin_role_client,
                                                                      notes):
    body = text(admin_role_client.get("/index/policy/", {"user_id": "u-a"}))
    plan = consolidate.consolidation_plan(user_id="u-a")
    assert groups_on_page(body) == [g.group_id for g in plan.groups]
    assert len(plan.groups) == 2  # the two customers stay apart
    assert "no-reply@mail.harbor.example" in body and "v2.6.0" in body
    assert f"similarity {plan.groups[0].similarity:.2f}" in body
    assert "Undo consolidation" in body  # the page says how to undo
    assert Memory.objects.filter(deleted_at__isnull=False).count() == 0  # nothing written


def test_a_threshold_from_the_form_changes_the_plan(admin_role_client, notes):
    resp = admin_role_client.get("/index/policy/", {"user_id": "u-a", "threshold": "1"})
    assert resp.status_code == 200 and groups_on_page(text(resp)) == []
    resp = admin_role_client.get("/index/policy/", {"user_id": "u-a", "threshold": "1.5"})
    assert resp.status_code == 400 and "alert-error" in text(resp)


def test_skip_hides_one_group_and_writes_nothing(admin_role_client, notes):
    plan = consolidate.consolidation_plan(user_id="u-a")
    first, second = (g.group_id for g in plan.groups)
    resp = admin_role_client.get("/index/policy/", {"user_id": "u-a", "skip": first},
                                 headers=HX)
    assert groups_on_page(text(resp)) == [second] and "1 group skipped" in text(resp)
    assert not AuditEvent.objects.exists()


def _group_post(group, **extra):
    return {"user_id": "u-a", "group_id": group.group_id,
            "memory_ids": ",".join(group.memory_ids), **extra}


def test_apply_one_group_merges_it_alone(admin_role_client, notes):
    plan = consolidate.consolidation_plan(user_id="u-a")
    group = plan.groups[0]
    resp = admin_role_client.post("/index/policy/consolidate/group/", _group_post(group),
                                  headers=HX)
    assert resp.status_code == 400 and "A reason is required" in text(resp)
    assert text(resp).lstrip().startswith(f'<article class="group" id="group-{group.group_id}"')
    assert resp[FRAGMENT_HEADER] == "1"  # made for its card: swapped there, DEBUG on too
    assert all(live(i) for i in group.memory_ids)
    resp = admin_role_client.post("/index/policy/consolidate/group/",
                                  _group_post(group, reason="same release"), headers=HX)
    assert resp.status_code == 200 and "Merged 2 memories into" in text(resp)
    merged = Memory.objects.get(source="consolidation")
    assert merged.content == group.merged_text and merged.metadata["consolidated_from"] == (
        group.memory_ids)
    assert not any(live(i) for i in group.memory_ids)
    assert all(live(i) for i in plan.groups[1].memory_ids)  # the other group is untouched
    event = AuditEvent.objects.get(action="consolidate", target=merged.memory_id)
    assert event.reason == "same release" and event.actor == "ada"


def test_without_javascript_apply_goes_to_the_merged_memory(admin_role_client, notes):
    group = consolidate.consolidation_plan(user_id="u-a").groups[0]
    resp = admin_role_client.post("/index/policy/consolidate/group/",
                                  _group_post(group, reason="dup"))
    merged = Memory.objects.get(source="consolidation")
    assert resp.status_code == 302 and resp["Location"] == f"/memories/{merged.memory_id}/"


def test_a_group_that_names_other_things_is_refused_inline(admin_role_client, notes):
    fake = consolidate.PlannedGroup("grp_000000000000", [notes[2].memory_id, notes[3].memory_id],
                                    "", 0.9)
    resp = admin_role_client.post("/index/policy/consolidate/group/",
                                  _group_post(fake, reason="x"), headers=HX)
    assert resp.status_code == 400 and "name different things" in text(resp)
    assert resp[FRAGMENT_HEADER] == "1"
    assert live(notes[2].memory_id) and live(notes[3].memory_id)


@pytest.mark.parametrize("client_name", ["viewer_client", "editor_client"])
def test_only_admins_apply_or_undo(request, client_name, notes):
    client = request.getfixturevalue(client_name)
    group = consolidate.consolidation_plan(user_id="u-a").groups[0]
    resp = client.post("/index/policy/consolidate/group/", _group_post(group, reason="x"),
                       headers=HX)
    assert resp.status_code == 403
    merged = consolidate.consolidate_group(memory_ids=group.memory_ids)
    resp = client.post(f"/memories/{merged.memory_id}/undo-consolidation/", {"reason": "x"})
    assert resp.status_code == 403 and live(merged.memory_id)
    page = text(client.get(f"/memories/{merged.memory_id}/"))
    assert "undo-consolidation-form" not in ids(page)
    # Whoever may read the memory sees what it was merged from (read-only, links).
    assert "Merged from 2 memories" in page
    for source in group.memory_ids:
        assert f'href="/memories/{source}/"' in page


def test_undo_consolidation_on_the_merged_memory_page(admin_role_client, notes):
    group = consolidate.consolidation_plan(user_id="u-a").groups[0]
    merged = consolidate.consolidate_group(memory_ids=group.memory_ids, reason="dup")
    page = text(admin_role_client.get(f"/memories/{merged.memory_id}/"))
    assert "undo-consolidation-form" in ids(page) and "Undo consolidation" in page
    assert "nothing to roll back to" not in page
    url = f"/memories/{merged.memory_id}/undo-consolidation/"
    resp = admin_role_client.post(url, {"reason": ""}, headers=HX)
    assert resp.status_code == 400 and "A reason is required" in text(resp)
    assert "<html" not in text(resp) and live(merged.memory_id)
    resp = admin_role_client.post(url, {"reason": "wrong merge"}, headers=HX)
    assert resp.status_code == 200 and "Consolidation undone: 2 memories restored" in text(resp)
    assert all(live(i) for i in group.memory_ids) and not live(merged.memory_id)
    event = AuditEvent.objects.get(action="consolidation_undo")
    assert (event.target, event.reason, event.actor) == (merged.memory_id, "wrong merge", "ada")
    assert "undo-consolidation-form" not in ids(text(admin_role_client.get(
        f"/memories/{merged.memory_id}/")))


@pytest.mark.django_db(transaction=True)  # a real commit: the job runs in a forked work horse
def test_undo_of_a_policy_run_from_the_policy_page(admin_role_client, make_memory):
    stale = [make_memory(f"an idle trivial note {n}", importance=0.1, created_at=OLD)
             for n in range(3)]
    admin_role_client.post("/index/policy/cleanup/", {"user_id": "u-a"})
    work()
    assert not any(live(m.memory_id) for m in stale)
    job_id = AuditEvent.objects.get(action="cleanup", data__has_key="job_id").data["job_id"]
    job_page = text(admin_role_client.get(f"/index/jobs/{job_id}/"))
    assert "Undo it on the Policy page" in job_page and "/index/policy/?user_id=u-a#runs" in job_page
    body = text(admin_role_client.get("/index/policy/", {"user_id": "u-a"}))
    run_ids = [a["data-run-id"] for _, a in tags(body) if "data-run-id" in a]
    assert len(run_ids) == 1 and "Undo run" in body
    url = f"/index/policy/runs/{run_ids[0]}/undo/"
    resp = admin_role_client.post(url, {"reason": ""}, headers=HX)
    assert resp.status_code == 400 and "A reason is required" in text(resp)
    assert text(resp).lstrip().startswith('<div id="policy">')
    resp = admin_role_client.post(url, {"reason": "too eager"})
    assert resp.status_code == 302
    assert all(live(m.memory_id) for m in stale)
    event = AuditEvent.objects.get(action="cleanup_undo")
    assert (event.target, event.reason) == (run_ids[0], "too eager")
    body = text(admin_role_client.get("/index/policy/", {"user_id": "u-a"}))
    assert "undone by ada" in body
    again = admin_role_client.post(url, {"reason": "again"}, headers=HX)
    assert again.status_code == 409 and "undone already" in text(again)


def test_apply_all_of_a_changed_plan_is_refused_in_place(admin_role_client, notes):
    resp = admin_role_client.post("/index/policy/consolidate/", {
        "user_id": "u-a", "reason": "dup", "group_id": "grp_000000000000"}, headers=HX)
    assert resp.status_code == 409 and "run the dry run again" in text(resp)
    assert resp["HX-Retarget"] == "#messages" and "<html" not in text(resp)
    assert not Memory.objects.filter(source="consolidation").exists()
