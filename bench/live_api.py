"""LoCoMo written as a live agent would: through the HTTP API, one turn at a time.

Used by bench/quality.py (inside its Django set-up; requests go through Django's test
``Client``, so the whole API stack runs: auth, validation, services, the Redis mirror). The
client never builds context; whatever context a memory gets, the server built it.

* ``memories``: ``POST /api/v1/memories`` per turn with ``user_id`` = sample, ``conversation_id``
  = session, ``author`` = speaker, ``created_at`` = the session date plus the turn index.
* ``sessions``: one ``POST /api/v1/sessions`` per LoCoMo session, each turn appended with
  ``POST .../messages`` (its ``at`` = the turn's time; role ``user`` for the first speaker,
  ``assistant`` for the other) and promoted at once with ``POST .../messages/{seq}/promote``.

Each question is then ``POST /api/v1/recall`` (default profile, limit 50) in its namespace,
once right after the writes and once after the worker's embedding job (the default
profile's semantic rescoring needs the embeddings; before them it is BM25 alone); recall@k
counts the evidence turns found (a deduplicated turn maps to the memory returned).
"""

import json
from pathlib import Path


def _client():
    from django.contrib.auth.models import User
    from django.test import Client

    from accounts.tokens import token_create

    user, _ = User.objects.get_or_create(username="bench-live", defaults={"is_superuser": True})
    user.is_superuser = True
    user.save()
    token = token_create(user=user, name="bench")
    return Client(SERVER_NAME="localhost", headers={"Authorization": f"Bearer {token}"})


def _post(client, path: str, body: dict, ok=(200, 201)) -> dict:
    resp = client.post(f"/api/v1{path}", data=json.dumps(body), content_type="application/json")
    if resp.status_code not in ok:
        raise RuntimeError(f"{path}: {resp.status_code} {resp.content[:300]!r}")
    return resp.json()


def write(data_dir: Path, mode: str, prefix: str) -> dict[tuple[str, str], str]:
    """Write every turn; return ``{(namespace, dia_id): memory_id}``."""
    from operations import locomo

    client = _client()
    samples = json.loads((data_dir / "locomo_dev.json").read_text(encoding="utf-8"))
    out = {}
    for sample in locomo.iter_samples(samples):
        ns = f"{prefix}{sample['sample_id']}"
        speakers, session_of = {}, {}
        for item in locomo.iter_turns(sample, context=False):
            at = item["created_at"].isoformat() if item["created_at"] else None
            speaker = item["metadata"]["speaker"]
            if mode == "memories":
                body = {"user_id": ns, "conversation_id": item["conversation_id"],
                        "content": item["content"], "author": item["author"],
                        "importance": 0.5, "source": "locomo",
                        "metadata": item["metadata"]}
                if at:
                    body["created_at"] = at
                memory = _post(client, "/memories", body)
            else:
                sid = session_of.get(item["conversation_id"])
                if sid is None:
                    sid = _post(client, "/sessions", {"user_id": ns})["session_id"]
                    session_of[item["conversation_id"]] = sid
                role = "user" if speakers.setdefault(speaker, len(speakers)) == 0 else "assistant"
                msg = {"role": role, "content": item["content"]}
                if at:
                    msg["at"] = at
                length = _post(client, f"/sessions/{sid}/messages", {"messages": [msg]})["length"]
                memory = _post(client, f"/sessions/{sid}/messages/{length}/promote", {})
            out[(ns, item["metadata"]["dia_id"])] = memory["memory_id"]
    return out


def recall_runs(questions: list[dict], mapping: dict, prefix: str, depth: int) -> list[list[str]]:
    """Ranked memory ids per question through ``POST /recall`` (default profile)."""
    client = _client()
    runs = []
    for q in questions:
        ns = f"{prefix}{q['sample_id']}"
        q["relevant_live"] = [mapping.get((ns, e)) for e in q["evidence"]]
        found = _post(client, "/recall", {"user_id": ns, "query": q["question"],
                                          "limit": depth}, ok=(200,))
        runs.append([r["memory_id"] for r in found["results"]])
    return runs


def run(data_dir: Path, questions: list[dict], mode: str) -> tuple[dict, dict]:
    """Write LoCoMo through the API in ``mode``; return the overall recall@k etc. of recall
    asked right after the writes (no embedding computed yet: BM25 for every memory), and
    after the worker's embedding job has run (``bench.embedding_job``)."""
    from bench import embedding_job
    from bench.quality_metrics import DEPTH, aggregate, query_metrics

    prefix = f"live-{mode[0]}-"
    mapping = write(data_dir, mode, prefix)
    out = []
    for step in ("before", "after"):
        if step == "after":
            n, seconds = embedding_job.run_until_done()
            print(f"  ({mode}) embedding job: {n} memories in {seconds:.1f} s")
        runs = recall_runs(questions, mapping, prefix, DEPTH)
        out.append(aggregate([(q["category"], query_metrics(r, q["relevant_live"]))
                              for r, q in zip(runs, questions, strict=True)])["all"])
    return out[1], out[0]
