"""Namespace isolation with look-alike ids.

Ids that share a prefix (``user_1024`` / ``user_10240``), contain the key separator
(``ali:ce`` vs user ``ali`` + conversation ``ce``), glob characters (``foo`` / ``foo*`` /
``f*o`` / ``f?o`` / ``[f]oo``), the hash-tag braces, a percent sign that looks like an encoded
id, white space, case or Unicode normalisation differences, are separate namespaces. Recall,
get, history, sessions (API and pages), reindex and the Redis key layout never let one see or
touch the other's data.
"""

import unicodedata
from urllib.parse import quote

import pytest
from django.conf import settings
from django.test import Client
from redis.crc import key_slot

from memories import store
from operations import reindex

pytestmark = pytest.mark.django_db

LOOK_ALIKES = [
    ("user_1024", "user_10240"),
    ("ali:ce", "ali"),
    ("foo", "foo*"),
    ("foo", "f*o"),
    ("foo", "f?o"),
    ("foo", "[f]oo"),
    ("u{a}", "u"),
    ("a}b", "a"),
    ("u:b", "u%3Ab"),
    ("a b", "a"),
    ("Alice", "alice"),
    ("客服:1", "客服"),
    (unicodedata.normalize("NFC", "Åsa"), unicodedata.normalize("NFD", "Åsa")),
]
PAIR_IDS = [f"{a!r}|{b!r}" for a, b in LOOK_ALIKES]


def _remember(api, user_id, content, **extra):
    response = api.post("/memories", {"user_id": user_id, "content": content, **extra})
    assert response.status_code == 201, response.content
    return response.json()["memory_id"]


def _recall(api, user_id, query, **extra):
    response = api.post("/recall", {"user_id": user_id, "query": query, "limit": 100, **extra})
    assert response.status_code == 200, response.content
    return [r["memory_id"] for r in response.json()["results"]]


def _namespace_keys(client, user_id) -> set[str]:
    """Keys a SCAN for this namespace's base finds (the pattern reindex uses)."""
    pattern = store.namespace_base(user_id) + "*"
    return {store.text(k) for k in client.scan_iter(match=pattern, count=1000)}


def _all_keys(client) -> set[str]:
    return {
        store.text(k) for k in client.scan_iter(match=f"{settings.MEMORY_KEY_PREFIX}:*", count=1000)
    }


@pytest.mark.parametrize(("a", "b"), LOOK_ALIKES, ids=PAIR_IDS)
def test_look_alike_namespaces_never_meet(admin_api, redis_client, a, b):
    assert a != b
    # Same words in both, so only the namespace can keep them apart.
    mem_a = _remember(admin_api, a, "shared words about the tea ceremony alpha")
    mem_b = _remember(admin_api, b, "shared words about the tea ceremony beta")
    admin_api.patch(f"/memories/{mem_a}", {"content": "shared words about the tea ceremony gamma"})

    assert _recall(admin_api, a, "shared tea ceremony alpha beta gamma") == [mem_a]
    assert _recall(admin_api, b, "shared tea ceremony alpha beta gamma") == [mem_b]
    assert _recall(admin_api, b, "gamma") == []
    # The other namespace's id used as a conversation of this one finds nothing of it.
    assert _recall(admin_api, a, "beta", conversation_id=b) == []

    got = admin_api.get(f"/memories/{mem_b}").json()
    assert (got["user_id"], got["content"]) == (b, "shared words about the tea ceremony beta")
    history_a = admin_api.get(f"/memories/{mem_a}/history").json()["versions"]
    history_b = admin_api.get(f"/memories/{mem_b}/history").json()["versions"]
    assert [v["version"] for v in history_a] == [1, 2]
    assert [v["content"] for v in history_b] == ["shared words about the tea ceremony beta"]

    # Keys: each namespace's SCAN pattern finds exactly its own keys, all in one slot.
    keys_a, keys_b = _namespace_keys(redis_client, a), _namespace_keys(redis_client, b)
    assert keys_a and keys_b and not keys_a & keys_b
    assert all(k.startswith(store.namespace_base(a)) for k in keys_a)
    assert all(k.startswith(store.namespace_base(b)) for k in keys_b)
    assert len({key_slot(k.encode()) for k in keys_a}) == 1
    assert len({key_slot(k.encode()) for k in keys_b}) == 1
    others = _all_keys(redis_client) - keys_a - keys_b
    assert all(not k.startswith(f"{settings.MEMORY_KEY_PREFIX}:{{") for k in others), others


@pytest.mark.parametrize(("a", "b"), LOOK_ALIKES, ids=PAIR_IDS)
def test_reindex_and_forget_of_one_namespace_leave_the_other_alone(admin_api, redis_client, a, b):
    mem_a = _remember(admin_api, a, "quarterly report draft one")
    mem_b = _remember(admin_api, b, "quarterly report draft two")
    before_b = {k: redis_client.type(k) for k in _namespace_keys(redis_client, b)}
    for _ in range(2):
        reindex.reindex_namespace(a)  # deletes the old generation by SCAN pattern
    assert admin_api.delete(f"/memories/{mem_a}").status_code == 204
    assert _recall(admin_api, a, "quarterly report") == []
    assert {k: redis_client.type(k) for k in _namespace_keys(redis_client, b)} == before_b
    assert _recall(admin_api, b, "quarterly report") == [mem_b]


def test_user_with_separator_is_not_user_plus_conversation(admin_api, redis_client):
    """``ali:ce`` (a user) and ``ali`` + conversation ``ce`` share no key and no result."""
    joined = _remember(admin_api, "ali:ce", "joined identity note", type="working")
    split = _remember(admin_api, "ali", "split identity note", type="working", conversation_id="ce")
    assert _recall(admin_api, "ali:ce", "identity note") == [joined]
    assert _recall(admin_api, "ali", "identity note", conversation_id="ce") == [split]
    assert _recall(admin_api, "ali", "identity note", conversation_id="ce:x") == []
    assert not _namespace_keys(redis_client, "ali:ce") & _namespace_keys(redis_client, "ali")


SESSION_IDS = ["foo", "foobar", "foo:bar", "foo bar", "f*o", "foo*", "客服:1", "s_1024", "s_10240"]


def test_look_alike_sessions_keep_their_own_messages(admin_api, redis_client):
    users = {
        "foo": "user_1024",
        "foobar": "user_10240",
        "foo:bar": "ali:ce",
        "foo bar": "ali",
        "f*o": "foo",
        "foo*": "foo*",
        "客服:1": "客服",
        "s_1024": "user_1024",
        "s_10240": "user_10240",
    }
    for session_id in SESSION_IDS:
        created = admin_api.post(
            "/sessions", {"user_id": users[session_id], "session_id": session_id}
        )
        assert created.status_code == 201, created.content
        for n in range(2):
            assert (
                admin_api.post(
                    f"/sessions/{quote(session_id, safe='')}/messages",
                    {"role": "user", "content": f"{session_id} #{n}"},
                ).status_code
                == 201
            )
    for session_id in SESSION_IDS:
        path = f"/sessions/{quote(session_id, safe='')}"
        context = admin_api.get(path + "/context").json()
        assert [m["content"] for m in context["messages"]] == [
            f"{session_id} #0",
            f"{session_id} #1",
        ]
        assert context["total"] == 2
        assert admin_api.get(path).json()["user_id"] == users[session_id]
    listed = admin_api.get("/sessions?user_id=user_1024").json()["sessions"]
    assert sorted(s["session_id"] for s in listed) == ["foo", "s_1024"]
    listed = admin_api.get(f"/sessions?user_id={quote('foo*')}").json()["sessions"]
    assert [s["session_id"] for s in listed] == ["foo*"]

    # Deleting one leaves every look-alike's hot window (LLEN-equivalent) untouched.
    windows = {s: redis_client.zcard(store.key(users[s], "sess", s, "msgs")) for s in SESSION_IDS}
    assert set(windows.values()) == {2}
    assert admin_api.delete(f"/sessions/{quote('f*o', safe='')}").status_code == 204
    for session_id in SESSION_IDS:
        expected = 0 if session_id == "f*o" else 2
        key = store.key(users[session_id], "sess", session_id, "msgs")
        assert redis_client.zcard(key) == expected, session_id


def test_pages_filter_by_exact_namespace(admin_user, admin_api):
    _remember(admin_api, "user_1024", "page visible note short")
    _remember(admin_api, "user_10240", "page hidden note longer")
    client = Client()
    client.force_login(admin_user)
    page = client.get("/memories/", {"user_id": "user_1024"})
    assert page.status_code == 200
    assert "page visible note short" in page.content.decode()
    assert "page hidden note longer" not in page.content.decode()
    search = client.get("/search/", {"user_id": "user_1024", "q": "page note"})
    assert search.status_code == 200
    assert "page hidden note longer" not in search.content.decode()


def test_export_of_one_namespace_holds_only_it(admin_api):
    _remember(admin_api, "user_1024", "exported note")
    _remember(admin_api, "user_10240", "not exported note")
    doc = admin_api.get("/export?user_id=user_1024").json()
    assert {m["user_id"] for m in doc["memories"]} == {"user_1024"}
