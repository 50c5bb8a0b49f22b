"""The demo's recalls (``fixtures/demo_recalls.json``), made again at load time as they were
served at their moment in the past.

Each recall searches the loaded memories as they stood then: memories written before it
(``until``), facts valid then (``as_of``), time words read from then (``now``); each result
is traced at the version it had then, so a memory edited or superseded since shows it on
the recall's page. The trace is written through the recall log's own writer, with the
filters the agent gave (only ``limit``; the three above are how the past is replayed, not
what the agent asked). Then the feedback the fixture lists is given on the results.
"""

import datetime as dt
import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import token_create
from accounts.users import user_create
from memories.models import Memory
from recalls import feedback as recall_feedback
from recalls import log as recall_log
from recalls.models import Recall
from search.memory_search import memory_search

RECALLS = Path(__file__).resolve().parent / "fixtures" / "demo_recalls.json"
LIMIT = 5


def _version_then(memory_id: str, at: dt.datetime, current: int) -> int:
    then = (Memory.history.filter(memory_id=memory_id, history_date__lte=at)
            .order_by("-history_date", "-history_id").values_list("version", flat=True)[:1])
    return then[0] if then else current


def demo_editor(username: str):
    """The demo's editor ``username``, made through the users' writer when missing (no
    password: it never logs in; it grades, recalls or owns a token)."""
    return (get_user_model().objects.filter(username=username).first()
            or user_create(actor="load_demo", username=username, role="editor"))


def _ensure_agent(username: str, namespace: str) -> int:
    """The editor ``username`` with one token (named after it, restricted to ``namespace``;
    its secret is never shown): the id its recalls are traced under."""
    user = demo_editor(username)
    token = ApiToken.objects.filter(user=user, name=username).first()
    if token is None:
        token_create(user=user, name=username, namespaces=[namespace])
        token = ApiToken.objects.get(user=user, name=username)
    return token.pk


def demo_recalls_replay() -> int:
    """Trace the fixture's recalls (their earlier traces in the demo's namespaces go first)
    and give their feedback. Returns how many recalls were traced."""
    with open(RECALLS, encoding="utf-8") as fh:
        spec = json.load(fh)
    tokens = {actor: _ensure_agent(actor, namespace)
              for actor, namespace in spec["agents"].items()}
    recall_log.recall_log_drop(user_ids=sorted(set(spec["agents"].values())))
    now, done = timezone.now(), []
    for r in spec["recalls"]:
        at = now - dt.timedelta(hours=r["hours_ago"])
        then = at.timestamp()
        found = memory_search(user_id=r["user_id"], query=r["query"], limit=LIMIT, now=then,
                              until=then, as_of=None if r.get("include_superseded") else then,
                              include_superseded=r.get("include_superseded", False))
        for hit in found.results:
            hit.version = _version_then(hit.memory_id, at, hit.version)
        filters = {"limit": LIMIT, **({"include_superseded": True}
                                      if r.get("include_superseded") else {})}
        done.append((r, recall_log.recall_log(
            found=found, user_id=r["user_id"], actor=r["actor"], interface=r["interface"],
            query=r["query"], agents=[], filters=filters, token_id=tokens[r["actor"]],
            at=at)))
    recall_log.recall_log_flush()
    for r, recall_id in done:
        recall = Recall.objects.filter(recall_id=recall_id).first()
        for given in r.get("feedback", []) if recall else []:
            result = recall.results.filter(rank=given["rank"]).first()
            if result is not None:
                recall_feedback.feedback_give(
                    recall=recall, memory_id=result.memory_id, actor=r["actor"],
                    grade=given.get("grade"), useful=given.get("useful"),
                    note=given.get("note", ""))
    return len(done)
