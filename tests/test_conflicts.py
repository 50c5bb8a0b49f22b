"""The review queue: supersessions proposed on every write path, accepted or rejected."""

import pytest
from django.test import override_settings

from memories.models import Conflict, Memory

# The PostgreSQL pass runs these (scripts/test -m postgres): the review queue's raw SQL and row
# locks.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

PORTO = "Alice lives in Porto."
MADRID = "Alice moved to Madrid."


def remember(api, content, user_id="u-a", status=201, **kw):
    resp = api.post("/memories", {"user_id": user_id, "content": content, **kw})
    assert resp.status_code == status, resp.content
    return resp.json()


def queue(api, **params):
    query = "&".join(f"{k}={v}" for k, v in {"user_id": "u-a", **params}.items())
    resp = api.get(f"/conflicts?{query}")
    assert resp.status_code == 200, resp.content
    return resp.json()


def test_a_write_proposes_what_it_supersedes_listed_as_soon_as_it_answers(api):
    porto = remember(api, PORTO)
    madrid = remember(api, MADRID)
    body = queue(api)
    assert body["next_cursor"] is None
    [c] = body["conflicts"]
    assert (c["newer"], c["older"], c["status"]) == (madrid["memory_id"], porto["memory_id"],
                                                     "open")
    assert 0 < c["confidence"] <= 1 and "porto" in c["reason"] and "madrid" in c["reason"]
    assert c["evidence"]["older_value"] == "porto" and "moved" in c["evidence"]["words"]
    assert set(c) >= {"id", "user_id", "newer", "older", "confidence", "reason", "status",
                      "created_at"}
    # Proposed, not applied: Porto still holds until a reviewer accepts.
    assert api.get(f"/memories/{porto['memory_id']}").json()["superseded_by"] is None


def test_accept_supersedes_and_recall_answers_the_newer_fact(api):
    porto = remember(api, PORTO)
    madrid = remember(api, MADRID)
    [c] = queue(api)["conflicts"]
    accepted = api.post(f"/conflicts/{c['id']}/accept", {"reason": "checked with Alice"})
    assert accepted.status_code == 200 and accepted.json()["status"] == "accepted"
    assert accepted.json()["decided_by"] == "eddie"
    older = api.get(f"/memories/{porto['memory_id']}").json()
    assert older["superseded_by"] == madrid["memory_id"]
    ids = [h["memory_id"] for h in api.post("/recall", {"user_id": "u-a",
                                                         "query": "Alice Porto Madrid"}).json()["results"]]
    assert ids == [madrid["memory_id"]]
    assert queue(api)["conflicts"] == [] and len(queue(api, status="accepted")["conflicts"]) == 1
    again = api.post(f"/conflicts/{c['id']}/accept", {})
    assert again.status_code == 200 and again.json()["status"] == "accepted"


def test_reject_keeps_both_and_the_pair_is_never_proposed_again(api):
    porto = remember(api, PORTO)
    madrid = remember(api, MADRID)
    [c] = queue(api)["conflicts"]
    rejected = api.post(f"/conflicts/{c['id']}/reject", {"reason": "two homes"})
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert rejected.json()["decision_reason"] == "two homes"
    # The newer text edited (still the same claim): the pair stays decided.
    api.patch(f"/memories/{madrid['memory_id']}", {"content": "Alice moved to Madrid in May."})
    assert queue(api)["conflicts"] == []
    assert Conflict.objects.filter(newer_id=madrid["memory_id"],
                                   older_id=porto["memory_id"]).count() == 1


def test_rejecting_an_accepted_proposal_undoes_it(api):
    porto = remember(api, PORTO)
    remember(api, MADRID)
    [c] = queue(api)["conflicts"]
    api.post(f"/conflicts/{c['id']}/accept", {})
    undone = api.post(f"/conflicts/{c['id']}/reject", {"reason": "wrong Alice"})
    assert undone.status_code == 200 and undone.json()["status"] == "rejected"
    older = api.get(f"/memories/{porto['memory_id']}").json()
    assert older["superseded_by"] is None and older["valid_until"] is None
    kinds = [v["kind"] for v in api.get(f"/memories/{porto['memory_id']}/history").json()["versions"]]
    assert kinds == ["create", "supersede", "revalidate"]


def test_a_chain_proposes_each_step_never_the_skip(api):
    a = remember(api, "The billing service runs version 2.3 in production.")
    b = remember(api, "The billing service now runs version 2.4 in production.")
    c = remember(api, "The billing service now runs version 2.5 in production.")
    pairs = {(x["newer"], x["older"]) for x in queue(api)["conflicts"]}
    assert pairs == {(b["memory_id"], a["memory_id"]), (c["memory_id"], b["memory_id"])}


def test_compatible_facts_and_other_people_are_not_proposed(api):
    remember(api, "Alice likes tea.")
    remember(api, "Alice likes coffee.")
    remember(api, "Bob lives in Porto.")
    remember(api, "Carol lives in Madrid.")
    remember(api, "Alice might move to Berlin next year.")
    assert queue(api)["conflicts"] == []


def test_supersession_off_and_apply_per_write_and_by_setting(api):
    porto = remember(api, PORTO)
    remember(api, MADRID, supersession="off")
    assert queue(api)["conflicts"] == []
    bad = api.post("/memories", {"user_id": "u-a", "content": "x", "supersession": "maybe"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "supersession"
    with override_settings(MEMORY_SUPERSESSION="apply", MEMORY_SUPERSESSION_APPLY_AT=0.5):
        lisbon = remember(api, "Alice moved to Lisbon.")
    [c] = queue(api, status="accepted")["conflicts"]
    assert c["newer"] == lisbon["memory_id"]
    assert Memory.objects.get(pk=c["older"]).superseded_by == lisbon["memory_id"]
    assert porto["memory_id"] != lisbon["memory_id"]


def test_import_and_promote_propose_too(api, admin_api):
    remember(api, "Dana works at Initech as a tester.")
    imported = admin_api.post("/import", {"schema_version": 2, "memories": [
        {"user_id": "u-a", "content": "Dana works at Globex as a tester."}]})
    assert imported.status_code in (200, 201), imported.content
    assert len(queue(api)["conflicts"]) == 1
    short = remember(api, "Dana works at Umbrella as a tester.", conversation_id="c1",
                     type="working", supersession="off")
    promoted = api.post(f"/memories/{short['memory_id']}/promote", {})
    assert promoted.status_code == 201
    newers = {c["newer"] for c in queue(api)["conflicts"]}
    assert promoted.json()["memory_id"] in newers


def test_roles_and_restricted_tokens(api, viewer_api):
    from accounts.tokens import token_issue
    from tests.conftest import ApiClient

    remember(api, PORTO)
    remember(api, MADRID)
    remember(api, "Bo lives in Oslo.", user_id="u-b")
    remember(api, "Bo moved to Bergen.", user_id="u-b")
    [c] = viewer_api.get("/conflicts?user_id=u-a").json()["conflicts"]
    assert viewer_api.post(f"/conflicts/{c['id']}/accept", {}).status_code == 403
    only_a = ApiClient(None)
    only_a.token = token_issue(actor=None, username="agent-a", role="editor",
                               namespaces=["u-a"]).token
    mine = only_a.get("/conflicts").json()["conflicts"]
    assert {x["user_id"] for x in mine} == {"u-a"}
    theirs = api.get("/conflicts?user_id=u-b").json()["conflicts"][0]
    assert only_a.post(f"/conflicts/{theirs['id']}/accept", {}).status_code == 404
    assert only_a.get("/conflicts?user_id=u-b").status_code == 403
    assert api.get("/conflicts?status=closed").status_code == 400
    assert api.post("/conflicts/999999/accept", {}).status_code == 404


def test_the_queue_pages_by_cursor(api):
    for n in range(3):
        remember(api, f"Server s{n} runs version 1.{n}.")
        remember(api, f"Server s{n} now runs version 2.{n}.")
    first = queue(api, limit=2)
    assert len(first["conflicts"]) == 2 and first["next_cursor"]
    rest = queue(api, limit=2, cursor=first["next_cursor"])
    seen = [c["id"] for c in first["conflicts"] + rest["conflicts"]]
    assert len(set(seen)) == len(seen) >= 3


def test_a_purge_removes_its_proposals_and_their_evidence(api, admin_api):
    remember(api, PORTO)
    madrid = remember(api, MADRID)
    assert Conflict.objects.count() == 1
    assert admin_api.delete(f"/memories/{madrid['memory_id']}?purge=1&reason=gdpr").status_code == 204
    assert Conflict.objects.count() == 0
