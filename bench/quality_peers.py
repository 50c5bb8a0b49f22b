"""The peers of bench/quality.py: bm25s and rank_bm25 over the same documents and tokens."""

from collections import defaultdict

from bench.quality_metrics import DEPTH


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


def locomo_peer_runs(questions, corpus) -> dict[str, list[list[str]]]:
    """Every peer / context variant: name -> ranked memory ids per question."""
    from search.index import fields

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

