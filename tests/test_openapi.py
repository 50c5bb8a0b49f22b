"""The OpenAPI document is typed: every 2xx answer has a schema with its properties, every
operation documents its error answers with the one error envelope, enums are enums; and real
answers validate against the document (with no key it does not declare)."""

import copy

import pytest
from django.test import Client
from jsonschema import Draft202012Validator

ERROR_REF = "#/components/schemas/ErrorOut"
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def doc():
    resp = Client().get("/api/v1/openapi.json")
    assert resp.status_code == 200
    return resp.json()


def operations(doc):
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def resolve(doc, schema: dict) -> dict:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def typed(doc, schema: dict) -> bool:
    """An object with declared properties (each member of a union one too), never a bare
    object, an ``additionalProperties`` map or an untyped value."""
    schema = resolve(doc, schema)
    if "anyOf" in schema or "oneOf" in schema:
        return all(typed(doc, s) for s in schema.get("anyOf", schema.get("oneOf")))
    return schema.get("type") == "object" and bool(schema.get("properties"))


def test_it_types_every_2xx_answer(doc):
    untyped = []
    for name, op in operations(doc):
        for status, answer in op["responses"].items():
            if not status.startswith("2") or status == "204":
                continue
            schema = answer.get("content", {}).get("application/json", {}).get("schema")
            if schema is None or not typed(doc, schema):
                untyped.append(f"{name} {status}")
    assert untyped == []


def test_it_documents_every_operations_errors(doc):
    missing = []
    for name, op in operations(doc):
        answers = op["responses"]
        expected = {"400", "401", "403"}
        if "{" in name:
            expected.add("404")
        if "requestBody" in op:
            expected.add("413")
        missing += [f"{name} {s}" for s in sorted(expected - set(answers))]
        for status, answer in answers.items():
            if status[0] in "45":
                schema = answer["content"]["application/json"]["schema"]
                if schema.get("$ref") != ERROR_REF:
                    missing.append(f"{name} {status} is not the error envelope")
    assert missing == []


def test_it_declares_enums_and_the_metadata_filter(doc):
    schemas = doc["components"]["schemas"]
    match_mode = schemas["RecallIn"]["properties"]["match_mode"]
    assert {"any", "all", "all_then_any"} <= set(match_mode["anyOf"][0]["enum"])
    assert schemas["MemoryOut"]["properties"]["type"]["enum"] == [
        "long_term", "short_term", "working"]
    assert schemas["MemoryIn"]["properties"]["type"]["enum"] == [
        "long_term", "short_term", "working"]
    listing = doc["paths"]["/api/v1/memories"]["get"]
    (pattern,) = listing["x-query-parameter-patterns"]
    assert pattern["pattern"].startswith("^metadata\\.") and pattern["in"] == "query"
    limit = next(p for p in listing["parameters"] if p["name"] == "limit")
    assert limit["schema"]["maximum"] == 500


def closed(doc) -> dict:
    """The document's schemas with every declared object closed to undeclared keys."""
    components = copy.deepcopy(doc["components"])

    def close(node):
        if isinstance(node, dict):
            if node.get("properties") and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(components)
    return components


def check(doc, method, path, resp):
    """``resp`` is one of the operation's documented answers and validates against it."""
    op = doc["paths"]["/api/v1" + path][method]
    status = str(resp.status_code)
    assert status in op["responses"], f"{method} {path} answered undocumented {status}"
    if status == "204":
        return
    schema = op["responses"][status]["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": closed(doc)})
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in validator.iter_errors(resp.json())]
    assert errors == [], f"{method} {path} {status}"


@pytest.mark.django_db(transaction=True)
def test_real_answers_validate_against_the_document(doc, api, viewer_api):
    created = api.post("/memories", {"user_id": "oa", "content": "the office is in Porto",
                                     "tags": ["place"], "metadata": {"k": {"n": 1}}})
    check(doc, "post", "/memories", created)
    check(doc, "post", "/memories", api.post("/memories", {"user_id": "oa",
                                                           "content": "the office is in Porto"}))
    memory_id = created.json()["memory_id"]
    check(doc, "get", "/memories/{memory_id}", api.get(f"/memories/{memory_id}"))
    check(doc, "get", "/memories", api.get("/memories?user_id=oa"))
    check(doc, "get", "/memories", api.get("/memories?user_id=oa&limit=501"))
    check(doc, "get", "/namespaces", api.get("/namespaces"))
    check(doc, "patch", "/memories/{memory_id}",
          api.patch(f"/memories/{memory_id}", {"importance": 0.8}))
    check(doc, "get", "/memories/{memory_id}/history", api.get(f"/memories/{memory_id}/history"))
    check(doc, "post", "/recall", api.post("/recall", {"user_id": "oa", "query": "office"}))
    check(doc, "post", "/recall", api.post("/recall", {"user_id": "oa", "query": "office",
                                                       "match_mode": "some"}))
    session = api.post("/sessions", {"user_id": "oa", "session_id": "s-1"})
    check(doc, "post", "/sessions", session)
    check(doc, "post", "/sessions/{session_id}/messages",
          api.post("/sessions/s-1/messages", {"role": "user", "content": "I moved to Lisbon"}))
    check(doc, "get", "/sessions/{session_id}/context", api.get("/sessions/s-1/context"))
    check(doc, "get", "/sessions/{session_id}", api.get("/sessions/s-1"))
    check(doc, "get", "/sessions", api.get("/sessions?user_id=oa"))
    check(doc, "post", "/memories/batch", api.call(
        "post", "/memories/batch", {"memories": [{"user_id": "oa", "content": "tea at four"},
                                                 {"user_id": "oa", "type": "forever"}]}))
    check(doc, "get", "/profiles", api.get("/profiles"))
    check(doc, "get", "/conflicts", api.get("/conflicts?user_id=oa"))
    check(doc, "get", "/memories/{memory_id}", api.get("/memories/mem_0000000000000000"))
    check(doc, "delete", "/memories/{memory_id}", viewer_api.delete(f"/memories/{memory_id}"))
    check(doc, "delete", "/memories/{memory_id}", api.delete(f"/memories/{memory_id}"))


@pytest.mark.django_db(transaction=True)
def test_admin_answers_validate_against_the_document(doc, admin_api):
    admin_api.post("/memories", {"user_id": "ob", "content": "the office is in Porto"})
    check(doc, "get", "/audit", admin_api.get("/audit"))
    check(doc, "get", "/export", admin_api.get("/export?user_id=ob"))
    check(doc, "post", "/cleanup", admin_api.post("/cleanup", {"user_id": "ob", "dry_run": True}))
    hook = admin_api.post("/webhooks", {"url": "https://127.0.0.1:9/hook",
                                        "events": ["memory.created"]})
    check(doc, "post", "/webhooks", hook)
    check(doc, "get", "/webhooks", admin_api.get("/webhooks"))
    if hook.status_code == 201:
        check(doc, "get", "/webhooks/{webhook_id}/deliveries",
              admin_api.get(f"/webhooks/{hook.json()['id']}/deliveries"))


@pytest.mark.django_db(transaction=True)
def test_list_limits_are_the_documented_maximum(doc, api):
    """Each list answers its documented maximum ``limit`` and refuses one more (400 naming
    ``limit``)."""
    api.post("/memories", {"user_id": "oa", "content": "one memory"})
    for path in ("/memories?user_id=oa", "/namespaces?user_id=oa", "/sessions?user_id=oa",
                 "/audit?", "/conflicts?"):
        op = doc["paths"]["/api/v1" + path.split("?")[0]]["get"]
        limit = next(p for p in op["parameters"] if p["name"] == "limit")["schema"]
        maximum = limit.get("maximum") or next(s["maximum"] for s in limit["anyOf"]
                                               if "maximum" in s)
        sep = "&" if path.endswith(("oa",)) else ""
        assert api.get(f"{path}{sep}limit={maximum}").status_code == 200, path
        over = api.get(f"{path}{sep}limit={maximum + 1}")
        assert over.status_code == 400 and over.json()["error"]["field"] == "limit", path
