"""LoCoMo for bench/quality.py: the conversations as memories, the questions with their evidence."""

import json
import time
from io import StringIO
from pathlib import Path


def load_locomo(data_dir: Path):
    """Import the conversations through ``import_locomo``; return per-sample documents."""
    from django.core.management import call_command

    from memories.models import Memory
    from operations import locomo

    path = data_dir / "locomo_dev.json"
    out = StringIO()
    started = time.perf_counter()
    call_command("import_locomo", str(path), "--no-progress", stdout=out)
    import_s = time.perf_counter() - started
    samples = list(locomo.iter_samples(json.loads(path.read_text(encoding="utf-8"))))

    corpus = {}
    for sample in samples:
        sid = sample["sample_id"]
        stored = {
            (m.conversation_id, m.content): m.memory_id
            for m in Memory.objects.filter(user_id=sid, deleted_at__isnull=True)
        }
        turns = list(locomo.iter_turns(sample))
        plain = list(locomo.iter_turns(sample, captions=False))
        dia_to_mem, docs = {}, {}
        for n, item in enumerate(turns):
            memory_id = stored[(item["conversation_id"], item["content"])]
            dia_to_mem[item["metadata"]["dia_id"]] = memory_id
            if memory_id in docs:  # a deduplicated turn: the first one stands for the memory
                continue
            same = [
                j
                for j in (n - 1, n + 1)
                if 0 <= j < len(turns) and turns[j]["conversation_id"] == item["conversation_id"]
            ]
            prev = turns[n - 1] if n - 1 in same else None
            nxt = turns[n + 1] if n + 1 in same else None
            docs[memory_id] = {
                "content": item["content"],
                "no_caption": plain[n]["content"],
                "prev": prev["content"] if prev else "",
                "prev_text": _text_only(prev) if prev else "",
                "next_text": _text_only(nxt) if nxt else "",
            }
        corpus[sid] = {"dia_to_mem": dia_to_mem, "memory_ids": sorted(docs), "docs": docs}
    return corpus, import_s, out.getvalue().strip().splitlines()[-1]


def _text_only(item: dict) -> str:
    """A turn's content without its ``speaker: `` prefix (text and photo caption)."""
    speaker = item["metadata"]["speaker"]
    return item["content"][len(speaker) + 2 :]


def locomo_questions(data_dir: Path, corpus: dict) -> list[dict]:
    rows = []
    with open(data_dir / "locomo_dev_qrels.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q["sample_id"] not in corpus or not q.get("evidence"):
                continue
            mapping = corpus[q["sample_id"]]["dia_to_mem"]
            q["relevant"] = [mapping.get(e) for e in q["evidence"]]
            rows.append(q)
    return rows

