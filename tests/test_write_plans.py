"""Writes cost the same in a large namespace as in a small one: the duplicate checks of
``memory_create`` and ``memory_create_many`` look rows up by the full dedup key in its index,
so no query plan walks a namespace (or the whole table), whatever statistics SQLite has."""

import functools

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories import services

pytestmark = pytest.mark.django_db


def _dedup_selects(run):
    with CaptureQueriesContext(connection) as ctx:
        run()
    out = [q["sql"] for q in ctx.captured_queries
           if q["sql"].lstrip().upper().startswith("SELECT")
           and "content_hash" in q["sql"].partition(" WHERE ")[2]]
    assert out, "no duplicate check ran"
    return out


def _plan(sql: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql)
        return " | ".join(str(row[-1]) for row in cursor.fetchall())


@pytest.fixture
def big_namespace(builtins):
    if connection.vendor != "sqlite":
        pytest.skip("query plans are checked on SQLite, whose planner has no statistics here")
    services.memory_create_many(items=[
        {"user_id": "u-big", "content": f"note {n}", "conversation_id": f"c{n % 7}"}
        for n in range(400)])


DEDUP_KEY = "(user_id=? AND conversation_id=? AND type=? AND content_hash=?)"


def test_the_create_duplicate_check_searches_the_dedup_key_index(big_namespace):
    for sql in _dedup_selects(lambda: services.memory_create(user_id="u-big",
                                                             content="a new note")):
        plan = _plan(sql)
        assert "content_hash=?" in plan and "SCAN" not in plan, plan
        assert "created_at" not in plan, plan


def test_the_user_wide_duplicate_check_is_one_statement_on_the_dedup_key_index(big_namespace):
    """A create without a conversation: one prepared SELECT (``conversation_id IS NULL``),
    searched by all four columns of the dedup key's index, in a namespace whose user-wide
    rows share the hash's prefix with many others."""
    services.memory_create_many(items=[{"user_id": "u-big", "content": f"wide {n}"}
                                       for n in range(200)])
    for content in ("a new note", "wide 7"):  # a miss, then a duplicate
        selects = _dedup_selects(functools.partial(services.memory_create, user_id="u-big",
                                                   content=content))
        assert len(selects) == 1, selects
        assert "conversation_id\" IS NULL" in selects[0], selects[0]
        plan = _plan(selects[0])
        assert f"SEARCH memories_memory USING INDEX memories_me_user_id_715790_idx {DEDUP_KEY}" \
            == plan, plan


def test_the_bulk_duplicate_check_searches_the_dedup_key_index(big_namespace):
    items = [{"user_id": "u-big", "content": f"fresh {n}", "conversation_id": f"c{n % 3}"}
             for n in range(20)] + [{"user_id": "u-big", "content": "note 3",
                                     "conversation_id": "c3"}]
    result = {}

    def run():
        result["out"] = services.memory_create_many(items=items)

    for sql in _dedup_selects(run):
        plan = _plan(sql)
        assert "content_hash=?" in plan and "SCAN" not in plan, plan
    assert [dup for _, dup in result["out"]] == [False] * 20 + [True]


def test_every_query_of_a_conversation_create_searches_an_index(big_namespace):
    """The dedup lookup and the window of neighbours (one statement of three parts) and the
    neighbours' context updates: none scans the memory table or walks the namespace's
    created_at index."""
    services.memory_create(user_id="u-big", content="first turn", conversation_id="c3")
    with CaptureQueriesContext(connection) as ctx:
        services.memory_create(user_id="u-big", content="second turn", conversation_id="c3")
    plans = [_plan(q["sql"]) for q in ctx.captured_queries
             if q["sql"].lstrip().upper().startswith(("SELECT", "UPDATE"))
             and "memories_memory" in q["sql"].partition(" WHERE ")[0]]
    assert len(plans) >= 2, plans  # dedup + the window before and after, an update
    window = [p for p in plans if p.count("SEARCH memories_memory") == 3]
    assert len(window) == 1 and "content_hash=?" in window[0], plans
    for plan in plans:
        assert "SCAN memories_memory" not in plan, plan
        assert "SEARCH memories_memory USING" in plan, plan
        assert "(user_id=? AND created_at" not in plan, plan
