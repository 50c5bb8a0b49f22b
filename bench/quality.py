"""Retrieval quality on LoCoMo and CMRC 2018: our ranking profiles against bm25s and rank_bm25.

Runs inside Django with a throw-away SQLite file under var/bench/ and the Redis key prefix
``mcbench-quality-<pid>`` (both removed at the end; see bench/_django.py). LoCoMo is imported
through the product path (``manage.py import_locomo``: one memory per dialog turn, namespace =
``sample_id``); each question of ``locomo_dev_qrels.jsonl`` is a ``memory_search`` in its
namespace (top 50). CMRC 2018: each paragraph one memory in namespace ``cmrc``, each question a
query whose one relevant document is its paragraph.

The peers see the SAME documents (the memories as stored, one index per namespace) and the
SAME tokens (``memories.index.fields.ANALYZERS``; each distinct query term counted once, as
our search does): bm25s with Lucene BM25 (k1 1.2, b 0.75, as our ``bm25`` profile), and
rank_bm25's BM25Okapi (k1 1.2, b 0.75, its own IDF with an epsilon floor: not Lucene's formula,
reported as is). Ties are broken by memory id everywhere, as our search does, so ``bm25`` and
``bm25s`` on plain tokens should agree to float precision.

Extra rows (bm25s on our tokens, no product change) measure context indexing: a turn indexed
with the previous turn of its session (one field, concatenated), with previous and next turn,
and as a separate context field with its own statistics scored ``bm25(own) + w * bm25(ctx)``
(what DESIGN.md describes), plus the import without photo captions.

    .venv/bin/python bench/quality.py [--data-dir ../shared/data] [--skip-cmrc]

Metrics: recall@k = share of a question's evidence ids found in the top k, averaged over the
questions with at least one evidence id; nDCG@10 with binary gains; MRR within the top 50
(LoCoMo) or 10 (CMRC). Prints tables, then as its LAST line one JSON object of the headline
numbers.
"""

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from io import StringIO
from math import log2
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KS = (1, 5, 10, 25, 50)
DEPTH = 50
PROFILES = ("bm25", "stemmed", "context", "keyword")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-dom", 4: "single-hop", 5: "adversarial"}


# --- metrics --------------------------------------------------------------------------------


def query_metrics(ranked: list[str], relevant_by_evidence: list[str | None]) -> dict:
    """Metrics of one question. ``relevant_by_evidence``: the memory id of each evidence id
    (None when an evidence id maps to no memory: it counts as never found)."""
    n_evidence = len(relevant_by_evidence)
    rank_of = {}
    for rank, memory_id in enumerate(ranked[:DEPTH], start=1):
        rank_of.setdefault(memory_id, rank)
    out = {}
    for k in KS:
        found = sum(1 for m in relevant_by_evidence if m is not None and rank_of.get(m, 1e9) <= k)
        out[f"R@{k}"] = found / n_evidence
    relevant = {m for m in relevant_by_evidence if m is not None}
    dcg = sum(1 / log2(r + 1) for r, m in enumerate(ranked[:10], start=1) if m in relevant)
    idcg = sum(1 / log2(r + 1) for r in range(1, min(len(relevant), 10) + 1))
    out["nDCG@10"] = dcg / idcg if idcg else 0.0
    first = min((rank_of[m] for m in relevant if m in rank_of), default=None)
    out["MRR"] = 1 / first if first else 0.0
    return out


def aggregate(rows: list[tuple[int, dict]]) -> dict:
    """``{"all": {metric: mean}, category: {...}}`` from ``[(category, metrics)]``."""
    groups = defaultdict(list)
    for category, metrics in rows:
        groups["all"].append(metrics)
        groups[category].append(metrics)
    return {
        g: {name: statistics.fmean(m[name] for m in ms) for name in ms[0]} | {"n": len(ms)}
        for g, ms in groups.items()
    }


def rank_ids(scores, memory_ids: list[str], depth: int) -> list[str]:
    """Memory ids with a score > 0, best first, ties by memory id (as our search)."""
    import numpy as np

    hits = np.nonzero(scores > 0)[0]
    order = sorted(hits.tolist(), key=lambda i: (-float(scores[i]), memory_ids[i]))
    return [memory_ids[i] for i in order[:depth]]


# --- peers on our tokens ----------------------------------------------------------------------


class Bm25sIndex:
    """bm25s (Lucene BM25) over pre-tokenized documents; documents without tokens are left out
    of the statistics, as our index leaves them out of a field."""

    def __init__(self, docs: list[list[str]], n_total: int | None = None):
        import bm25s

        self.n_total = len(docs) if n_total is None else n_total
        self.rows = [i for i, toks in enumerate(docs) if toks]
        self.vocab: dict[str, int] = {}
        ids = [[self.vocab.setdefault(t, len(self.vocab)) for t in docs[i]] for i in self.rows]
        self.retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        if ids:
            self.retriever.index(
                bm25s.tokenization.Tokenized(ids=ids, vocab=self.vocab), show_progress=False
            )

    def scores(self, terms: list[str]):
        import numpy as np

        out = np.zeros(self.n_total, dtype=np.float64)
        q = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if q and self.rows:
            out[self.rows] = self.retriever.get_scores(q)
        return out


class RankBm25Index:
    def __init__(self, docs: list[list[str]]):
        from rank_bm25 import BM25Okapi

        self.rows = [i for i, toks in enumerate(docs) if toks]
        self.n_total = len(docs)
        self.bm = BM25Okapi([docs[i] for i in self.rows], k1=1.2, b=0.75)

    def scores(self, terms: list[str]):
        import numpy as np

        out = np.zeros(self.n_total, dtype=np.float64)
        q = list(dict.fromkeys(terms))
        if q:
            out[self.rows] = self.bm.get_scores(q)
        return out


# --- LoCoMo -------------------------------------------------------------------------------------


def load_locomo(data_dir: Path):
    """Import the conversations through ``import_locomo``; return per-sample documents."""
    from django.core.management import call_command

    from memories import locomo
    from memories.models import Memory

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


def run_live(data_dir: Path, questions: list[dict], mode: str) -> dict:
    """LoCoMo through the API turn by turn (bench/live_api.py): overall recall@k."""
    from bench import live_api

    prefix = f"live-{mode[0]}-"
    mapping = live_api.write(data_dir, mode, prefix)
    runs = live_api.recall_runs(questions, mapping, prefix, DEPTH)
    return aggregate([(q["category"], query_metrics(r, q["relevant_live"]))
                      for r, q in zip(runs, questions, strict=True)])["all"]


def run_ours(questions, *, namespace_of, depth) -> tuple[dict, dict]:
    from memories.search import memory_search

    ranked, took = {}, {}
    for name in PROFILES:
        runs, ms = [], []
        for q in questions:
            res = memory_search(
                user_id=namespace_of(q), query=q["question"], limit=depth, profile=name
            )
            runs.append([h.memory_id for h in res.results])
            ms.append(res.took_ms)
        ranked[name], took[name] = runs, statistics.median(ms)
    return ranked, took


def locomo_peer_runs(questions, corpus) -> dict[str, list[list[str]]]:
    """Every peer / context variant: name -> ranked memory ids per question."""
    from memories.index import fields

    plain = fields.ANALYZERS[fields.CONTENT]
    stem = fields.ANALYZERS[fields.CONTENT_STEMMED]
    by_sample = defaultdict(list)
    for n, q in enumerate(questions):
        by_sample[q["sample_id"]].append(n)

    variants = {}

    def add(name, per_sample_scores):
        runs = variants.setdefault(name, [None] * len(questions))
        for sid, qns in by_sample.items():
            ids = corpus[sid]["memory_ids"]
            score_fn = per_sample_scores(sid)
            for n in qns:
                runs[n] = rank_ids(score_fn(questions[n]["question"]), ids, DEPTH)

    def toks(analyzer, sid, build):
        c = corpus[sid]
        return [analyzer.tokens(build(c["docs"][m])) for m in c["memory_ids"]]

    def single(engine, analyzer, build):
        def per_sample(sid):
            index = engine(toks(analyzer, sid, build))
            return lambda text: index.scores(analyzer.tokens(text))

        return per_sample

    def two_fields(analyzer, w, ctx_build):
        def per_sample(sid):
            own = Bm25sIndex(toks(analyzer, sid, lambda d: d["content"]))
            ctx = Bm25sIndex(toks(analyzer, sid, ctx_build))

            def score(text):
                terms = analyzer.tokens(text)
                return own.scores(terms) + w * ctx.scores(terms)

            return score

        return per_sample

    add("bm25s (plain tokens)", single(Bm25sIndex, plain, lambda d: d["content"]))
    add("bm25s (stemmed tokens)", single(Bm25sIndex, stem, lambda d: d["content"]))
    add("rank_bm25 (plain tokens)", single(RankBm25Index, plain, lambda d: d["content"]))
    add("rank_bm25 (stemmed tokens)", single(RankBm25Index, stem, lambda d: d["content"]))
    # Context and caption experiments, all bm25s on stemmed tokens (the default profile's).
    add("ctx: no photo captions", single(Bm25sIndex, stem, lambda d: d["no_caption"]))
    add(
        "ctx: + prev turn text",
        single(Bm25sIndex, stem, lambda d: d["content"] + "\n" + d["prev_text"]),
    )
    add(
        "ctx: + prev turn (with speaker)",
        single(Bm25sIndex, stem, lambda d: d["content"] + "\n" + d["prev"]),
    )
    add(
        "ctx: + prev + next turn text",
        single(
            Bm25sIndex, stem, lambda d: "\n".join((d["content"], d["prev_text"], d["next_text"]))
        ),
    )
    add(
        "ctx: + prev turn text (plain tok)",
        single(Bm25sIndex, plain, lambda d: d["content"] + "\n" + d["prev_text"]),
    )
    # A separate context field with its own statistics: bm25(own) + w * bm25(context).
    for w in (0.3, 0.5, 1.0):
        add(f"ctx: own + w*field(prev), w={w}", two_fields(stem, w, lambda d: d["prev_text"]))
    for w in (0.5, 1.0, 2.0, 4.0):
        add(
            f"ctx: own + w*field(turn+prev), w={w}",
            two_fields(stem, w, lambda d: d["content"] + "\n" + d["prev_text"]),
        )
    return variants


# --- CMRC ---------------------------------------------------------------------------------------


def run_cmrc(data_dir: Path):
    from memories import services
    from memories.index import fields

    data = json.loads((data_dir / "cmrc2018_dev_part.json").read_text(encoding="utf-8"))
    paragraphs = [p for article in data["data"] for p in article["paragraphs"]]
    started = time.perf_counter()
    made = []
    for s in range(0, len(paragraphs), 500):
        made += services.memory_create_many(
            items=[
                {
                    "user_id": "cmrc",
                    "content": p["context"],
                    "importance": 0.5,
                    "source": "cmrc2018",
                    "metadata": {"paragraph": p["id"]},
                }
                for p in paragraphs[s : s + 500]
            ]
        )
    import_s = time.perf_counter() - started
    para_mem = [m.memory_id for m, _ in made]
    questions = [
        {"question": qa["question"], "category": 0, "relevant": [para_mem[n]]}
        for n, p in enumerate(paragraphs)
        for qa in p["qas"]
    ]
    ranked, took = run_ours(questions, namespace_of=lambda q: "cmrc", depth=10)
    ids = sorted(set(para_mem))
    content = {m.memory_id: m.content for m, _ in made}
    for label, key in (
        ("bm25s (plain tokens)", fields.CONTENT),
        ("bm25s (stemmed tokens)", fields.CONTENT_STEMMED),
    ):
        analyzer = fields.ANALYZERS[key]
        index = Bm25sIndex([analyzer.tokens(content[m]) for m in ids])
        ranked[label] = [
            rank_ids(index.scores(analyzer.tokens(q["question"])), ids, 10) for q in questions
        ]
    results = {}
    for name, runs in ranked.items():
        ms = [query_metrics(r, q["relevant"]) for r, q in zip(runs, questions, strict=True)]
        agg = aggregate([(0, m) for m in ms])["all"]
        results[name] = {
            "R@1": agg["R@1"],
            "R@5": agg["R@5"],
            "R@10": agg["R@10"],
            "MRR@10": statistics.fmean(
                _mrr_at(r, q["relevant"], 10) for r, q in zip(runs, questions, strict=True)
            ),
        }
    return results, took, len(set(para_mem)), len(questions), import_s


def _mrr_at(ranked, relevant, k):
    for rank, m in enumerate(ranked[:k], start=1):
        if m in relevant:
            return 1 / rank
    return 0.0


# --- output -------------------------------------------------------------------------------------


def print_locomo(results: dict, took: dict, n_questions: int) -> None:
    cols = [f"R@{k}" for k in KS] + ["nDCG@10", "MRR"]
    print(f"\nLoCoMo: {n_questions} questions with evidence; recall@k / nDCG@10 / MRR@50, overall")
    print(f"{'system':<38}" + "".join(f"{c:>9}" for c in cols) + f"{'p50 ms':>9}")
    for name, agg in results.items():
        lat = f"{took[name]:9.2f}" if name in took else ""
        print(f"{name:<38}" + "".join(f"{agg['all'][c]:9.3f}" for c in cols) + lat)
    cats = sorted(c for c in next(iter(results.values())) if c != "all")
    print("\nLoCoMo recall@10 per category (n questions)")
    print(f"{'system':<38}" + "".join(f"{CATEGORIES.get(c, c):>12}" for c in cats))
    print(
        f"{'':<38}"
        + "".join(f"{'(' + str(next(iter(results.values()))[c]['n']) + ')':>12}" for c in cats)
    )
    for name, agg in results.items():
        print(f"{name:<38}" + "".join(f"{agg[c]['R@10']:12.3f}" for c in cats))
    print("\nLoCoMo nDCG@10 per category")
    for name, agg in results.items():
        print(f"{name:<38}" + "".join(f"{agg[c]['nDCG@10']:12.3f}" for c in cats))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--skip-cmrc", action="store_true")
    parser.add_argument("--live", choices=("none", "memories", "sessions", "both"),
                        default="both", help="also write LoCoMo through the API turn by turn")
    parser.add_argument("--skip-memorybank", action="store_true")
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    started = time.perf_counter()

    import logging
    import os

    import bm25s  # noqa: F401  (its import sets its logger to DEBUG)

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    # Always a throw-away SQLite file, whatever DATABASE_URL the shell holds.
    db = ROOT / "var" / "bench" / f"quality-{os.getpid()}.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    _django.setup("quality")
    from django.conf import settings

    print(
        f"data: {data_dir}; redis {settings.REDIS_URL} prefix {settings.MEMORY_KEY_PREFIX}; "
        f"database {db.relative_to(ROOT)}"
    )

    corpus, import_s, import_line = load_locomo(data_dir)
    n_mem = sum(len(c["memory_ids"]) for c in corpus.values())
    print(
        f"LoCoMo import (manage.py import_locomo): {import_line} in {import_s:.1f} s "
        f"({n_mem} memories, {len(corpus)} namespaces)"
    )
    questions = locomo_questions(data_dir, corpus)
    unmapped = sum(1 for q in questions for m in q["relevant"] if m is None)
    t = time.perf_counter()
    ranked, took = run_ours(questions, namespace_of=lambda q: q["sample_id"], depth=DEPTH)
    ours_s = time.perf_counter() - t
    t = time.perf_counter()
    ranked.update(locomo_peer_runs(questions, corpus))
    peers_s = time.perf_counter() - t
    results = {}
    for name, runs in ranked.items():
        results[name] = aggregate(
            [
                (q["category"], query_metrics(r, q["relevant"]))
                for r, q in zip(runs, questions, strict=True)
            ]
        )
    print(
        f"queries: ours {ours_s:.1f} s (3 profiles x {len(questions)}), peers and context "
        f"variants {peers_s:.1f} s; evidence ids without a memory: {unmapped}"
    )
    print_locomo(results, took, len(questions))
    agree = statistics.fmean(
        a == b for a, b in zip(ranked["bm25"], ranked["bm25s (plain tokens)"], strict=True)
    )
    print(
        f"\nidentical top-50 lists, profile bm25 vs bm25s (plain tokens): {agree:.1%} of questions"
    )

    live = {}
    for mode in ("memories", "sessions") if args.live == "both" else (
            () if args.live == "none" else (args.live,)):
        live[mode] = run_live(data_dir, questions, mode)
        print(f"\nLoCoMo through the API turn by turn ({mode}, server-built context, default "
              f"profile): R@5 {live[mode]['R@5']:.3f} R@10 {live[mode]['R@10']:.3f} "
              f"R@50 {live[mode]['R@50']:.3f} (import_locomo's default profile: "
              f"{results['context']['all']['R@10']:.3f})")
    mbank = None
    if not args.skip_memorybank:
        from bench import memorybank

        mbank = memorybank.run(data_dir, PROFILES)
        memorybank.print_table(mbank)

    cmrc = None
    if not args.skip_cmrc:
        cmrc, cmrc_took, n_par, n_q, cmrc_import = run_cmrc(data_dir)
        print(
            f"\nCMRC 2018 (part of dev): {n_par} paragraphs in namespace cmrc (import "
            f"{cmrc_import:.1f} s), {n_q} questions, relevant = its paragraph"
        )
        print(f"{'system':<38}{'R@1':>9}{'R@5':>9}{'R@10':>9}{'MRR@10':>9}{'p50 ms':>9}")
        for name, m in cmrc.items():
            lat = f"{cmrc_took[name]:9.2f}" if name in cmrc_took else ""
            print(
                f"{name:<38}{m['R@1']:9.3f}{m['R@5']:9.3f}{m['R@10']:9.3f}{m['MRR@10']:9.3f}{lat}"
            )

    total = time.perf_counter() - started
    print(f"\ntotal {total:.1f} s")

    def pick(metric, names=None):
        return {n: round(results[n]["all"][metric], 4) for n in (names or results)}

    main_rows = [
        *PROFILES,
        "bm25s (plain tokens)",
        "bm25s (stemmed tokens)",
        "rank_bm25 (plain tokens)",
        "rank_bm25 (stemmed tokens)",
    ]
    headline = {
        "locomo_questions": len(questions),
        "locomo_recall@5": pick("R@5", main_rows),
        "locomo_recall@10": pick("R@10", main_rows),
        "locomo_recall@50": pick("R@50", main_rows),
        "locomo_ndcg@10": pick("nDCG@10", main_rows),
        "locomo_mrr": pick("MRR", main_rows),
        "locomo_context_recall@10": pick("R@10", [n for n in results if n.startswith("ctx")]),
        "locomo_p50_ms": {n: round(v, 2) for n, v in took.items()},
        "seconds": round(total, 1),
    }
    for mode, m in live.items():
        headline[f"locomo_live_{mode}_recall@10"] = round(m["R@10"], 4)
    if mbank:
        for lang, r in mbank.items():
            headline[f"memorybank_{lang}_hit@5"] = {
                n: round(v["hit@5"], 4) for n, v in r["profiles"].items()}
    if cmrc:
        headline["cmrc_recall@1"] = {n: round(m["R@1"], 4) for n, m in cmrc.items()}
        headline["cmrc_recall@10"] = {n: round(m["R@10"], 4) for n, m in cmrc.items()}
        headline["cmrc_mrr@10"] = {n: round(m["MRR@10"], 4) for n, m in cmrc.items()}
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
