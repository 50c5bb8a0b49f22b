"""Search of a serving index (PURE): the exact top k of a query over one
:class:`~search.serving.engine.FieldIndex`, with the statistics of the documents live at the
query's moment, and the filters (types, conversation, validity) as masks over doc ids.

:class:`FieldSearch` holds the reads; ``FieldIndex`` inherits them, and owns the arrays they
read (see ``search.serving.engine`` for the layout). :class:`Found` is what a search answers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from search.serving import prune

LONG_TERM = "long_term"


@dataclass
class Found:
    """What :meth:`FieldIndex.search` answers: the live statistics and candidate rows.

    ``rows`` are ``(memory_id, dl, {term: tf})``: in ``any``/``all`` mode the exact top k by
    BM25 (ties by memory id, best first), in ``collect`` mode every match, unranked.
    ``expired`` lists memories past ``expire_at`` that are still in the index.
    """

    n_docs: int
    total_len: int
    df: dict[str, int]
    rows: list[tuple[str, int, dict[str, int]]] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    # Filled by the caller that fetched the hits' stored rows with the search (or None):
    # their hot-store hashes, whether their recall hits were counted, and whether the
    # namespace then needs its place in the pending access set (search.serving.answer).
    hashes: dict | None = None
    # ``{memory_id: BM25}`` of every row (``math.fsum`` of its contributions, as
    # ``search.scoring.bm25`` sums them).
    scores: dict = field(default_factory=dict)
    # ``{memory_id: [contribution of each query term]}`` of every row (0.0 for a term it
    # lacks), the values summed in ``scores``: :meth:`contributions` reads them.
    parts: dict = field(default_factory=dict)
    counted: bool = False
    unlisted: bool = False
    # Where the namespace's write stream stood when this answer was proved current:
    # (last entry id, entries added up to it); None when not read from a stream.
    position: tuple[str, int] | None = None
    # ``(hit ids, result)`` of the caller's read made while Redis answered (answer.search's
    # ``prefetch``), or None.
    prefetched: tuple[frozenset, object] | None = None

    @property
    def avgdl(self) -> float:
        return self.total_len / self.n_docs if self.n_docs else 0.0

    def contributions(self, memory_id: str) -> dict[str, float]:
        """``{term: BM25 contribution}`` of the query terms row ``memory_id`` holds, in
        query-term order (what ``search.scoring.bm25_terms`` gives, to the bit); ``{}`` for
        a memory that is not a row."""
        parts = self.parts.get(memory_id)
        if parts is None:
            return {}
        return {t: c for t, c in zip(self.df, parts, strict=True) if c}


class FieldSearch:
    """The reads of :class:`~search.serving.engine.FieldIndex` (a mixin: it keeps no state
    of its own). Not thread-safe: callers lock."""

    def _postings(self, term: str, live: np.ndarray, clean: bool):
        """``(docs, tfs, max tf, min dl)`` of a term (live documents only unless ``clean``),
        or None for an unknown term."""
        tid = self.vocab.get(term)
        if tid is None:
            return None
        tmax, dmin = 0, np.iinfo(np.int32).max
        if tid + 1 < len(self.indptr):
            lo, hi = self.indptr[tid], self.indptr[tid + 1]
            docs, tfs = self.p_docs[lo:hi], self.p_tfs[lo:hi]
            if hi > lo:
                tmax, dmin = int(self.tmax[tid]), int(self.dlmin[tid])
        else:
            docs = tfs = np.empty(0, np.int32)
        extra = self.delta.get(tid)
        if extra:
            ddocs, dtfs = np.array(extra[0], np.int32), np.array(extra[1], np.int32)
            tmax, dmin = max(tmax, int(dtfs.max())), min(dmin, int(self.dl[ddocs].min()))
            docs, tfs = np.concatenate([docs, ddocs]), np.concatenate([tfs, dtfs])
        if not clean:
            keep = live[docs]
            docs, tfs = docs[keep], tfs[keep]
        return docs, tfs, tmax, dmin

    def search(self, terms: list[str], *, k: int, k1: float = 1.2, b: float = 0.75,
               mode: str = "any", now: float = 0.0, types: list[str] | None = None,
               conversation_id: str | None = None,
               valid: tuple[float, float] | None = None) -> Found:
        """Exact top ``k`` for distinct ``terms``; ``mode`` any | all | collect.

        ``valid`` = ``(lo, hi)`` (epoch seconds) keeps the documents whose fact holds at some
        moment of ``[lo, hi]``: ``vf <= hi`` and ``vu > lo`` (now: ``(now, inf)``; as of t:
        ``(t, t)``; None: every document, superseded or not). Like ``types``, a filter: it
        never changes the statistics.

        ``now`` is epoch seconds: documents with ``0 < exp <= now`` count neither in the
        statistics nor as matches, and are listed in ``expired``. ``types`` keeps documents
        of those types; ``conversation_id`` keeps documents of that conversation, of none,
        and long-term ones (as the Lua search did). Filters never change the statistics.
        ``any`` and ``all`` walk only the postings that can change the top k
        (``search.serving.prune``); ``collect`` scores every match.
        """
        live, expired = self.live, []
        n_live, total = self.n_live, self.total_len
        gone = []
        if self.expiring and now >= self.exp_floor:
            gone = [d for d in self.expiring if self.exp[d] <= now]
            if not gone:
                self.exp_floor = float(self.exp[list(self.expiring)].min())
        if gone:
            live = live.copy()
            live[gone] = False
            n_live -= len(gone)
            total -= int(self.dl[gone].sum())
            expired = sorted(self.ids[d].decode() for d in gone)
        clean = self.dead == 0 and not gone
        found = Found(n_live, total, {}, expired=expired)
        got = [self._postings(term, live, clean) for term in terms]
        for term, p in zip(terms, got, strict=True):
            found.df[term] = 0 if p is None else len(p[0])
        if n_live == 0:
            return found
        present = [j for j, p in enumerate(got) if p is not None and len(p[0])]
        if not present or (mode == "all" and len(present) < len(terms)):
            return found
        avgdl = total / n_live
        lists = [None] * len(terms)
        for j in present:
            docs, tfs, tmax, dmin = got[j]
            df = len(docs)
            idf = math.log(1.0 + (n_live - df + 0.5) / (df + 0.5))
            # The same operations as prune.tf_part, on Python floats: a bound, not a score.
            ub = idf * (tmax / (tmax + k1 * ((1.0 - b) + (b * dmin) / avgdl)))
            lists[j] = prune.Term(docs, tfs, idf, ub, live_only=True)
        accept = self._accept(types, conversation_id, self._valid_range(valid))
        args = {"live": live, "dl": self.dl, "avgdl": avgdl, "k1": k1, "b": b, "accept": accept}
        if mode == "all":
            cand, matrix, tfm = prune.intersect(lists, **args)
        elif mode == "collect":
            cand, matrix, tfm = prune.dense(lists, n=self.n, k=None, **{
                key: v for key, v in args.items() if key != "live"})
        elif sum(len(got[j][0]) for j in present) <= prune.FLAT_POSTINGS:
            cand, matrix, tfm = prune.flat(lists, k=k, scratch=self._scratch, n=self.n, **args)
        else:
            cand, matrix, tfm = prune.maxscore(lists, k=k, scratch=self._scratch, n=self.n,
                                               **args)
        if len(cand) == 0:
            return found
        if mode != "collect":
            cols = prune.top(matrix, k, self.ids[cand])
            cand, tfm, matrix = cand[cols], tfm[:, cols], matrix[:, cols]
        found.rows = self._rows(cand, terms, tfm)
        found.parts = {row[0]: contribs for row, contribs in zip(
            found.rows, matrix.T.tolist(), strict=True)}
        found.scores = {m: math.fsum(contribs) for m, contribs in found.parts.items()}
        return found

    def _valid_range(self, valid):
        """``valid`` as the mask needs it, or None when no live document can fail it (no
        fact ended by ``lo``, and ``hi`` open): the common recall pays nothing."""
        if valid is None:
            return None
        lo, hi = valid
        if hi == math.inf and (not self.ending or lo < self.vu_floor):
            return None
        return lo, hi

    def _accept(self, types, conversation_id, valid=None):
        """The filters as a mask over doc ids (None: no filter)."""
        if not types and not conversation_id and valid is None:
            return None
        codes = [self.types[t] for t in types if t in self.types] if types else None
        conv = self.convs.get(conversation_id, -1) if conversation_id else None
        long_term = self.types.get(LONG_TERM, -1)
        holds = None
        if valid is not None:
            # One pass over the documents, then one lookup per posting walked (postings of
            # common terms are long: two comparisons per posting cost more than this pass).
            lo, hi = valid
            holds = self.vu[:self.n] > lo
            if hi != math.inf:
                holds &= self.vf[:self.n] <= hi
            if codes is None and conv is None:
                return holds.__getitem__

        def accept(docs):
            ok = np.ones(len(docs), bool)
            if codes is not None:
                ok &= np.isin(self.type_code[docs], codes)
            if conv is not None:
                code = self.conv_code[docs]
                ok &= (code == 0) | (code == conv) | (self.type_code[docs] == long_term)
            if holds is not None:
                ok &= holds[docs]
            return ok

        return accept

    def _rows(self, cand, terms, tfm):
        """``(memory_id, dl, {term: tf})`` of ``cand``; ``tfm`` holds their tfs (terms x
        candidates)."""
        return [(memory_id.decode(), dl, {t: tf for t, tf in zip(terms, tfs, strict=True) if tf})
                for memory_id, dl, tfs in zip(self.ids[cand].tolist(), self.dl[cand].tolist(),
                                              tfm.T.tolist(), strict=True)]
