"""The serving index: one index field of one namespace compiled into NumPy arrays (PURE).

Exact Lucene BM25 (``memories.index.scoring``) with live statistics taken from the index
itself at query time: ``N``, ``df`` and the average length count only documents that are live
*now* (not removed, not past ``expire_at``), so a delete or an expiry changes every score at
once, with no stale document frequency (Lucene, tantivy and RediSearch count deleted documents
until a merge).

Layout (doc ids are dense ``int32`` numbers of this process, never shown outside):

- a *base* segment in CSR form: ``indptr[tid] .. indptr[tid + 1]`` slices ``p_docs`` (doc ids,
  ascending) and ``p_tfs`` (raw term frequencies) of term ``tid``;
- a *delta* segment of postings added since the last merge (per term, ascending doc ids: a
  new or changed document always gets a new, higher id);
- per-doc arrays: ``dl`` (length), ``type_code``, ``conv_code``, ``exp`` (epoch seconds, 0 =
  never), ``vf`` and ``vu`` (the fact's validity, epoch seconds: it holds for vf <= t < vu;
  -inf and +inf when unbounded), ``live``; ``ids`` (memory ids, bytes) for ties by memory id.

A changed document is removed (its id marked dead) and added again under a new id; dead
postings stay in place until :meth:`FieldIndex.merge` drops them, which happens when the
delta or the dead share grows (amortised, a few tens of ms per 100k documents).
The search is ``search.serving.field_search`` (inherited). The top k of ``any`` and ``all``
queries comes from ``search.serving.prune`` (MaxScore with per-term bounds kept here: the
largest tf and the shortest document of each term's postings; intersection from the rarest
term), which walks only postings that can change it; a query
whose essential postings cover much of the namespace, and ``collect``, score every match with
``np.bincount``. Contributions are summed in query-term order (so an incrementally maintained
index and a rebuilt one give the same sums bit for bit) and the boundary of the top k is
settled with ``math.fsum`` per document, as :func:`memories.index.scoring.bm25` sums, ties
by memory id.
"""

from __future__ import annotations

import array
import collections
import itertools
import math
from dataclasses import dataclass

import numpy as np

from search.serving import prune
from search.serving.field_search import LONG_TERM, FieldSearch, Found

__all__ = ["LONG_TERM", "Builder", "Doc", "FieldIndex", "Found"]
# Below this share of the base segment the delta is not merged yet.
MERGE_DELTA_SHARE = 1 / 16
MERGE_DEAD_SHARE = 1 / 4


@dataclass
class Doc:
    """One document of a field: ``tf`` maps term -> raw frequency, ``dl`` its length in
    tokens, ``exp`` its expiry in epoch seconds (0 = none), ``vf`` / ``vu`` the validity of
    its fact (epoch seconds; -inf / +inf: unbounded)."""

    memory_id: str
    dl: int
    tf: dict[str, int]
    type: str = LONG_TERM
    conv: str = ""
    exp: float = 0.0
    vf: float = -math.inf
    vu: float = math.inf


class Builder:
    """Fills an empty :class:`FieldIndex` with many documents at once (a rebuild): the
    postings are collected with C-level ``extend``/``map`` calls and sorted once."""

    def __init__(self, index: FieldIndex | None = None):
        self.index = index if index is not None else FieldIndex()
        # C int arrays, not lists: 4 bytes a posting instead of a pointer to an int object,
        # and handed to NumPy without a copy (a list of millions held the GIL noticeably).
        self.tids = array.array("i")
        self.dids = array.array("i")
        self.tfs = array.array("i")
        # Unknown terms get the next id on first sight.
        self._vocab = collections.defaultdict(itertools.count(len(self.index.vocab)).__next__,
                                              self.index.vocab)

    def add(self, memory_id: str, dl: int, type_: str, conv: str, exp: float, terms,
            tfs, vf: float = -math.inf, vu: float = math.inf) -> None:
        """One document: ``terms`` and ``tfs`` are iterables of equal length (tf may be str).
        A memory already added is left as it was (a second copy would stay behind when the
        memory is removed)."""
        if memory_id in self.index.doc_of:
            return
        d = self.index._new_doc(Doc(memory_id, dl, {}, type_, conv, exp, vf, vu))
        start = len(self.tids)
        self.tids.extend(map(self._vocab.__getitem__, terms))
        self.dids.extend(itertools.repeat(d, len(self.tids) - start))
        self.tfs.extend(map(int, tfs))

    def finish(self) -> FieldIndex:
        index = self.index
        index.vocab = dict(self._vocab)
        index._set_base(np.frombuffer(self.tids, np.int32), np.frombuffer(self.dids, np.int32),
                        np.frombuffer(self.tfs, np.int32))
        return index


class FieldIndex(FieldSearch):
    """The serving index of one field of one namespace. Not thread-safe: callers lock."""

    def __init__(self, docs: list[Doc] = ()):
        self.vocab: dict[str, int] = {}
        self.indptr = np.zeros(1, np.int64)
        self.p_docs = np.empty(0, np.int32)
        self.p_tfs = np.empty(0, np.int32)
        self.delta: dict[int, tuple[list[int], list[int]]] = {}
        self.delta_postings = 0
        self.doc_of: dict[str, int] = {}
        self.n = 0  # doc ids allocated
        cap = 16
        self.dl = np.zeros(cap, np.int32)
        self.type_code = np.zeros(cap, np.int8)
        self.conv_code = np.zeros(cap, np.int32)
        self.exp = np.zeros(cap, np.float64)
        self.vf = np.zeros(cap, np.float64)
        self.vu = np.zeros(cap, np.float64)
        self.live = np.zeros(cap, bool)
        self.ids = np.zeros(cap, "S32")
        self.types: dict[str, int] = {}
        self.convs: dict[str, int] = {"": 0}
        self.n_live = 0
        self.total_len = 0
        self.dead = 0  # dead doc ids not yet merged away
        self.expiring: set[int] = set()  # live doc ids with an expiry
        # No document of ``expiring`` expires before this (epoch seconds): a search before
        # it skips the walk over them.
        self.exp_floor = math.inf
        # Live doc ids whose fact ended (vu finite), and no vu of them is below ``vu_floor``:
        # a recall "valid now" before it needs no validity mask at all.
        self.ending: set[int] = set()
        self.vu_floor = math.inf
        self.tmax = self.dlmin = np.zeros(0, np.int32)
        self._scratch = prune.Scratch()
        if docs:
            self._load(docs)

    # --- writes ---------------------------------------------------------------------------

    def _grow(self, need: int) -> None:
        cap = len(self.dl)
        if need <= cap:
            return
        cap = max(need, cap * 2)
        for name in ("dl", "type_code", "conv_code", "exp", "vf", "vu", "live", "ids"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)

    def _new_doc(self, doc: Doc) -> int:
        d = self.n
        self.n += 1
        self._grow(self.n)
        self.dl[d] = doc.dl
        self.type_code[d] = self.types.setdefault(doc.type, len(self.types))
        self.conv_code[d] = self.convs.setdefault(doc.conv, len(self.convs))
        self.exp[d] = doc.exp
        self.vf[d], self.vu[d] = doc.vf, doc.vu
        self.live[d] = True
        self.ids[d] = doc.memory_id.encode()
        self.doc_of[doc.memory_id] = d
        self.n_live += 1
        self.total_len += doc.dl
        if doc.exp:
            self.expiring.add(d)
            self.exp_floor = min(self.exp_floor, doc.exp)
        if doc.vu != math.inf:
            self.ending.add(d)
            self.vu_floor = min(self.vu_floor, doc.vu)
        return d

    def _load(self, docs: list[Doc]) -> None:
        builder = Builder(self)
        for doc in {doc.memory_id: doc for doc in docs}.values():
            builder.add(doc.memory_id, doc.dl, doc.type, doc.conv, doc.exp, doc.tf.keys(),
                        doc.tf.values(), doc.vf, doc.vu)
        builder.finish()

    # The arrays :meth:`arrays` gives and :meth:`from_arrays` takes (one per document from
    # ``dl`` on, one per term for ``tmax`` and ``dlmin``).
    ARRAYS = ("indptr", "p_docs", "p_tfs", "tmax", "dlmin", "dl", "type_code", "conv_code",
              "exp", "vf", "vu", "ids")

    def arrays(self) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
        """``(arrays, names)``: the index as the named arrays of ``ARRAYS`` (merged first, so
        no delta and no dead document remain) and ``vocab``, ``types``, ``convs`` as lists
        in code order, which :meth:`from_arrays` takes back (``search.serving.snapshot``)."""
        if self.delta or self.dead:
            self.merge()
        n = self.n
        arrays = {name: getattr(self, name) for name in self.ARRAYS[:5]}
        arrays.update({name: getattr(self, name)[:n] for name in self.ARRAYS[5:]})

        def in_order(codes: dict[str, int]) -> list[str]:
            return [name for name, _ in sorted(codes.items(), key=lambda item: item[1])]

        return arrays, {"vocab": in_order(self.vocab), "types": in_order(self.types),
                        "convs": in_order(self.convs)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], names: dict[str, list[str]]) -> FieldIndex:
        """The index :meth:`arrays` described. Raises ValueError when the arrays do not fit
        together (a damaged snapshot)."""
        index = cls()
        if any(name not in arrays for name in cls.ARRAYS):
            raise ValueError("a serving index's snapshot lacks arrays (an older format)")
        n, n_terms = len(arrays["dl"]), len(names["vocab"])
        indptr, p_docs = arrays["indptr"], arrays["p_docs"]
        if (len(indptr) != n_terms + 1 or indptr[0] != 0 or indptr[-1] != len(p_docs)
                or len(arrays["p_tfs"]) != len(p_docs) or np.any(np.diff(indptr) < 0)
                or (len(p_docs) and not 0 <= p_docs.min() <= p_docs.max() < n)
                or any(len(arrays[name]) != n for name in cls.ARRAYS[5:])
                or any(len(arrays[name]) != n_terms for name in ("tmax", "dlmin"))):
            raise ValueError("the arrays of a serving index do not fit together")
        index.vocab = {term: tid for tid, term in enumerate(names["vocab"])}
        index.types = {name: code for code, name in enumerate(names["types"])}
        index.convs = {name: code for code, name in enumerate(names["convs"])}
        index._grow(n)
        for name in cls.ARRAYS[5:]:
            getattr(index, name)[:n] = arrays[name]
        for name in cls.ARRAYS[:5]:
            setattr(index, name, np.array(arrays[name], getattr(index, name).dtype))
        index.live[:n] = True
        index.n = index.n_live = n
        index.total_len = int(arrays["dl"].sum())
        index.doc_of = {m.decode(): d for d, m in enumerate(arrays["ids"].tolist())}
        expiring = np.flatnonzero(arrays["exp"] > 0)
        index.expiring = set(expiring.tolist())
        if len(expiring):
            index.exp_floor = float(arrays["exp"][expiring].min())
        ending = np.flatnonzero(arrays["vu"] != math.inf)
        index.ending = set(ending.tolist())
        if len(ending):
            index.vu_floor = float(arrays["vu"][ending].min())
        return index

    def _set_base(self, tids: np.ndarray, dids: np.ndarray, tfs: np.ndarray) -> None:
        # Stable by term: doc ids stay ascending within each term's slice.
        order = np.argsort(tids, kind="stable")
        self.p_docs, self.p_tfs = dids[order], tfs[order]
        counts = np.bincount(tids, minlength=len(self.vocab))
        self.indptr = np.zeros(len(self.vocab) + 1, np.int64)
        np.cumsum(counts, out=self.indptr[1:])
        self.delta, self.delta_postings = {}, 0
        # Per term: the largest tf and the shortest document of its postings, which bound
        # its contribution to any document (search.serving.prune); a removal leaves them as
        # they were, still bounds.
        self.tmax = np.zeros(len(self.vocab), np.int32)
        self.dlmin = np.zeros(len(self.vocab), np.int32)
        filled = counts > 0
        if filled.any():
            starts = self.indptr[:-1][filled]
            self.tmax[filled] = np.maximum.reduceat(self.p_tfs, starts)
            self.dlmin[filled] = np.minimum.reduceat(self.dl[self.p_docs], starts)

    def upsert(self, doc: Doc) -> None:
        """Add ``doc``, replacing the memory's previous document if any."""
        self.remove(doc.memory_id)
        d = self._new_doc(doc)
        for term, tf in doc.tf.items():
            tid = self.vocab.setdefault(term, len(self.vocab))
            lists = self.delta.get(tid)
            if lists is None:
                lists = self.delta[tid] = ([], [])
            lists[0].append(d)
            lists[1].append(tf)
        self.delta_postings += len(doc.tf)
        self._maybe_merge()

    def remove(self, memory_id: str) -> bool:
        """Take the memory's document out; False when it was not in the index."""
        d = self.doc_of.pop(memory_id, None)
        if d is None:
            return False
        self.live[d] = False
        self.n_live -= 1
        self.total_len -= int(self.dl[d])
        self.dead += 1
        self.expiring.discard(d)
        self.ending.discard(d)
        self._maybe_merge()
        return True

    def _maybe_merge(self) -> None:
        base = len(self.p_docs)
        if (self.delta_postings > max(4096, base * MERGE_DELTA_SHARE)
                or self.dead > max(1024, self.n * MERGE_DEAD_SHARE)):
            self.merge()

    def merge(self) -> None:
        """Fold the delta into the base and renumber live documents densely (drops dead
        postings). Scores are unchanged by a merge: they depend on live documents only."""
        counts = np.diff(self.indptr)
        tids = [np.repeat(np.arange(len(counts), dtype=np.int32), counts)]
        dids, tfs = [self.p_docs], [self.p_tfs]
        for tid, (ds, ts) in self.delta.items():
            tids.append(np.full(len(ds), tid, np.int32))
            dids.append(np.array(ds, np.int32))
            tfs.append(np.array(ts, np.int32))
        tids, dids, tfs = np.concatenate(tids), np.concatenate(dids), np.concatenate(tfs)
        keep = self.live[dids]
        tids, dids, tfs = tids[keep], dids[keep], tfs[keep]
        alive = np.flatnonzero(self.live[:self.n])
        renumber = np.full(self.n, -1, np.int32)
        renumber[alive] = np.arange(len(alive), dtype=np.int32)
        for name in ("dl", "type_code", "conv_code", "exp", "vf", "vu", "live", "ids"):
            arr = getattr(self, name)
            new = np.zeros(max(16, len(alive)), arr.dtype)
            new[:len(alive)] = arr[alive]
            setattr(self, name, new)
        self.n, self.dead = len(alive), 0
        self.doc_of = {m: int(renumber[d]) for m, d in self.doc_of.items()}
        self.expiring = {int(renumber[d]) for d in self.expiring}
        self.ending = {int(renumber[d]) for d in self.ending}
        # Within a term, base postings precede delta ones and both ascend, and renumbering
        # keeps the order: the stable sort by term keeps doc ids ascending.
        self._set_base(tids, renumber[dids], tfs)

    # --- reads (the search itself and its masks: search.serving.field_search) ------------

    def __len__(self) -> int:
        return self.n_live

    def nbytes(self) -> int:
        """Approximate memory held, in bytes (arrays plus the Python dictionaries)."""
        arrays = sum(a.nbytes for a in (self.indptr, self.p_docs, self.p_tfs, self.dl,
                                        self.type_code, self.conv_code, self.exp, self.vf,
                                        self.vu, self.live,
                                        self.ids, self.tmax, self.dlmin))
        arrays += self._scratch.nbytes()
        # dict entry + str object: ~100 bytes for a memory id, ~90 for a term.
        return arrays + 100 * len(self.doc_of) + 90 * len(self.vocab) + 40 * self.delta_postings
