"""A database made by the migrations as they were before the models moved to their own apps
(memories 0011) migrates forward with every row, relation and history version intact, and
readable through the models in their new apps."""

import datetime as dt

import pytest
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts.models import ApiToken
from lab.models import EvalRun, Judgment, QuerySet
from memories.models import Memory
from search.models import RankingProfile, SynonymSet
from sessions.models import Message, Session

# The PostgreSQL pass runs these (scripts/test -m postgres): migrations.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

BEFORE_MOVE = [("memories", "0011_session_counters"), ("search", None),
               ("agent_sessions", None), ("lab", None), ("accounts", None)]
MOVED = {"rankingprofile": "search", "historicalrankingprofile": "search",
         "synonymset": "search", "session": "agent_sessions", "message": "agent_sessions",
         "judgment": "lab", "queryset": "lab", "evalrun": "lab", "apitoken": "accounts"}
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def _migrate(targets):
    MigrationExecutor(connection).migrate(targets)
    # The models as of the migrations now applied.
    return MigrationExecutor(connection).loader.project_state(
        [t for t in targets if t[1] is not None]).apps


def _fill_pre_move_database(old):
    """One row in every table that moved (and the ones they point at), written with the
    models as they were at memories 0011."""
    get = lambda name: old.get_model("memories", name)  # noqa: E731
    user = old.get_model("auth", "User").objects.create(username="owner")
    memory = get("Memory").objects.create(
        memory_id="mem_00000000000000a1", user_id="u-a", content="the passport is in the drawer",
        content_hash="h" * 64, created_at=NOW, updated_at=NOW, version=2)
    history = get("HistoricalMemory")
    for version in (1, 2):
        history.objects.create(
            memory_id=memory.memory_id, user_id="u-a", content=f"v{version}", type="long_term",
            content_hash="h" * 64, created_at=NOW, updated_at=NOW, version=version,
            importance=0.5, history_date=NOW, history_type="+" if version == 1 else "~",
            kind="create" if version == 1 else "edit", changed_by="owner")
    session = get("Session").objects.create(session_id="s-1", user_id="u-a", created_at=NOW,
                                            updated_at=NOW, last_seq=2, unfolded_chars=5)
    for seq, content in ((1, "hi"), (2, "there")):
        get("Message").objects.create(session=session, seq=seq, role="user", content=content,
                                      ts=NOW)
    profile = get("RankingProfile").objects.create(name="tuned", k1=1.5, b=0.5)
    get("HistoricalRankingProfile").objects.create(
        id=profile.id, name="tuned", ranker="bm25", k1=1.5, b=0.5, w_relevance=1.0,
        w_recency=0.0, w_importance=0.0, half_life_hours=720.0, recency_from="created_at",
        stemming=False, synonyms=False, context=False, match_mode="any", is_default=False,
        builtin=False, created_by="owner", updated_at=NOW, history_date=NOW, history_type="+",
        history_user_id=user.id)
    get("SynonymSet").objects.create(terms=["car", "automobile"], created_by="owner")
    get("Judgment").objects.create(user_id="u-a", query="passport", memory_id=memory.memory_id,
                                   grade=3, reviewer="owner")
    query_set = get("QuerySet").objects.create(name="travel", user_id="u-a",
                                               queries=["passport"])
    get("EvalRun").objects.create(name="first", k=10, query_set=query_set,
                                  metrics={"tuned": {"ndcg": 1.0}})
    get("ApiToken").objects.create(user=user, name="agent", prefix="mc_abcdefgh",
                                   key_hash="k" * 64, namespaces=["u-a"])
    # Content types as a deployment has them: made under the memories label, with a
    # permission pointing at one.
    content_types = old.get_model("contenttypes", "ContentType")
    ids = {}
    for model in MOVED:
        ids[model] = content_types.objects.get_or_create(app_label="memories", model=model)[0].id
    old.get_model("auth", "Permission").objects.create(
        name="Can audit session", codename="audit_session", content_type_id=ids["session"])
    return ids


def test_it_migrates_a_pre_move_database_forward_without_loss():
    # Leave only what the pre-move migrations made: no content type of the new labels yet.
    ContentType.objects.filter(app_label__in=set(MOVED.values())).delete()
    old = _migrate(BEFORE_MOVE)
    assert old.get_model("memories", "Session")._meta.db_table == Session._meta.db_table
    content_type_ids = _fill_pre_move_database(old)

    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    memory = Memory.objects.get(pk="mem_00000000000000a1")
    assert [h.content for h in memory.history.order_by("version")] == ["v1", "v2"]
    session = Session.objects.get(pk="s-1")
    assert [(m.seq, m.content) for m in session.messages.all()] == [(1, "hi"), (2, "there")]
    assert Message.objects.get(session=session, seq=2).session.user_id == "u-a"
    profile = RankingProfile.objects.get(name="tuned")
    assert (profile.k1, profile.b) == (1.5, 0.5)
    version = profile.history.get()
    assert version.history_user.username == "owner" and version.k1 == 1.5
    assert SynonymSet.objects.get().terms == ["car", "automobile"]
    judgment = Judgment.objects.get()
    assert (judgment.query, judgment.memory_id, judgment.grade) == (
        "passport", memory.memory_id, 3)
    run = EvalRun.objects.get()
    assert run.query_set == QuerySet.objects.get(name="travel")
    assert run.query_set.queries == ["passport"] and run.metrics == {"tuned": {"ndcg": 1.0}}
    assert list(QuerySet.objects.get().runs.all()) == [run]
    token = ApiToken.objects.get()
    assert token.user == User.objects.get(username="owner") and token.namespaces == ["u-a"]
    # The content types moved with their models (same ids), so the permission did too.
    for model, label in MOVED.items():
        assert ContentType.objects.get(app_label=label, model=model).id == \
            content_type_ids[model]
    assert not ContentType.objects.filter(app_label="memories", model__in=MOVED).exists()
    permission = Permission.objects.get(codename="audit_session")
    assert permission.content_type.model_class() is Session
