"""MemoryBank (SiliconFriend) probing questions: hit@5 against hand-made labels.

Used by bench/quality.py (inside its Django set-up). Each user of
``memorybank_siliconfriend/memory_bank_{en,cn}.json`` is one namespace
(``mb-<lang>-<n>``); each exchange one memory, written turn by turn through
``memory_create`` (the service behind ``POST /memories``) in history order:
``content`` = the user's query and the companion's response on two lines, ``author`` =
the user, ``conversation_id`` = the day, ``created_at`` = the day plus the exchange's index in
minutes. Each probing question is a recall in its user's namespace; a hit is a labelled
exchange (bench/labels/, labelled before any tuning) among the first 5 results. Questions
with no labelled exchange are left out.
"""

import datetime as dt
import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
K = 5


def load(data_dir: Path, lang: str) -> tuple[dict, list[dict]]:
    """Write the histories; return ``({(user, "YYYY-MM-DD#j"): memory_id}, questions)``."""
    from memories import services

    bank = json.loads((data_dir / "memorybank_siliconfriend" / f"memory_bank_{lang}.json")
                      .read_text(encoding="utf-8"))
    labels = json.loads((ROOT / "bench" / "labels" / f"memorybank_{lang}.json")
                        .read_text(encoding="utf-8"))
    ids, namespace = {}, {}
    for n, (raw_user, person) in enumerate(bank.items()):
        user = raw_user.strip()
        namespace[user] = f"mb-{lang}-{n}"
        for day in sorted(person["history"]):
            start = dt.datetime.fromisoformat(day).replace(hour=20, tzinfo=dt.UTC)
            for j, ex in enumerate(person["history"][day]):
                memory, _ = services.memory_create(
                    user_id=namespace[user], conversation_id=day, author=user[:128],
                    content=f"{ex['query'].strip()}\n{ex['response'].strip()}",
                    created_at=start + dt.timedelta(minutes=j), source="memorybank")
                ids[(user, f"{day}#{j}")] = memory.memory_id
    questions = []
    for user, items in labels.items():
        for item in items:
            relevant = {ids[(user, x)] for x in item["exchanges"]}
            if relevant:
                questions.append({"user_id": namespace[user], "question": item["question"],
                                  "relevant": relevant})
    return ids, questions


def hit_at_k(questions: list[dict], profiles: tuple[str, ...], **search_kw) -> dict:
    """``{profile: {"hit@5", "mrr@5", "p50_ms"}}`` over ``questions``."""
    from search.memory_search import memory_search

    out = {}
    for name in profiles:
        hits, rr, ms = [], [], []
        for q in questions:
            res = memory_search(user_id=q["user_id"], query=q["question"], limit=K,
                                profile=name, **search_kw)
            ranked = [h.memory_id for h in res.results]
            first = next((r for r, m in enumerate(ranked, 1) if m in q["relevant"]), None)
            hits.append(first is not None)
            rr.append(1 / first if first else 0.0)
            ms.append(res.took_ms)
        out[name] = {"hit@5": statistics.fmean(hits), "mrr@5": statistics.fmean(rr),
                     "p50_ms": statistics.median(ms)}
    return out


def run(data_dir: Path, profiles: tuple[str, ...], embed=None) -> dict:
    """Both languages: ``{lang: {"memories", "questions", "profiles": {...}}}``. ``embed``:
    the worker's embedding job, run after the writes (the default profile then also shows
    as it answers before it, ``"context, before embeddings"``)."""
    results = {}
    for lang in ("en", "cn"):
        ids, questions = load(data_dir, lang)
        scores = {}
        if embed is not None:
            scores["context, before embeddings"] = hit_at_k(questions, ("context",))["context"]
            embed()
        scores.update(hit_at_k(questions, profiles))
        results[lang] = {"memories": len(set(ids.values())), "questions": len(questions),
                         "profiles": scores}
    return results


def print_table(results: dict) -> None:
    for lang, r in results.items():
        print(f"\nMemoryBank ({lang}): {r['memories']} exchanges, {r['questions']} probing "
              f"questions with labels; hit@5 / MRR@5")
        for name, m in r["profiles"].items():
            print(f"  {name:<36}{m['hit@5']:9.3f}{m['mrr@5']:9.3f}{m['p50_ms']:9.2f} ms")
