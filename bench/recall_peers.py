"""Peers of bench/recall.py on the same documents, the same tokens and the same top k.

Each peer is built from token lists (our analyzer's output joined by spaces, so every system
sees identical terms) and answers ``search(terms, k) -> [doc index]``:

- bm25s (``method="lucene"``, k1 1.2, b 0.75): exact Lucene BM25, static arrays;
- tantivy (its whitespace tokenizer over our tokens; BM25 with k1 1.2, b 0.75), which also
  takes live writes: ``add(tokens)`` then ``commit()`` and a searcher reload;
- SQLite FTS5 ``bm25()`` (unicode61 over our tokens; its IDF is Robertson's, not Lucene's).
"""

import sqlite3
import tempfile

import numpy as np


class Bm25sPeer:
    name = "bm25s"

    def __init__(self, token_lists):
        import bm25s

        self.vocab = {}
        ids = [[self.vocab.setdefault(t, len(self.vocab)) for t in toks] for toks in token_lists]
        self.retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        self.retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=self.vocab),
                             show_progress=False)

    def search(self, terms, k):
        q = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if not q:
            return []
        scores = self.retriever.get_scores(q)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(i) for i in top if scores[i] > 0]


class TantivyPeer:
    name = "tantivy"

    def __init__(self, token_lists):
        import tantivy

        self.tantivy = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace")
        builder.add_integer_field("doc", stored=True, fast=True)
        self.schema = builder.build()
        self.dir = tempfile.TemporaryDirectory(prefix="bench-tantivy-")
        self.index = tantivy.Index(self.schema, path=self.dir.name)
        self.writer = self.index.writer(heap_size=200_000_000, num_threads=1)
        for n, toks in enumerate(token_lists):
            self.writer.add_document(tantivy.Document(body=" ".join(toks), doc=n))
        self.writer.commit()
        self.writer.wait_merging_threads()
        self.writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        self.n = len(token_lists)
        self.index.reload()
        self.searcher = self.index.searcher()

    def add(self, tokens):
        """A live write, searchable when this returns (commit + reload)."""
        self.writer.add_document(self.tantivy.Document(body=" ".join(tokens), doc=self.n))
        self.n += 1
        self.writer.commit()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, terms, k):
        t = self.tantivy
        clauses = [(t.Occur.Should, t.Query.term_query(self.schema, "body", term))
                   for term in dict.fromkeys(terms)]
        if not clauses:
            return []
        hits = self.searcher.search(t.Query.boolean_query(clauses), k).hits
        return [self.searcher.doc(addr)["doc"][0] for _, addr in hits]


class Fts5Peer:
    name = "fts5"

    def __init__(self, token_lists):
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 "
                        "remove_diacritics 0')")
        self.db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)",
                            ((n, " ".join(toks)) for n, toks in enumerate(token_lists)))
        self.db.commit()

    def search(self, terms, k):
        words = [t for t in dict.fromkeys(terms) if '"' not in t]
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?",
                               (match, k)).fetchall()
        return [r[0] for r in rows]
