"""The serving index's validity filter (pure): exact top k over the facts that hold in a
range, the statistics of every document, incremental == rebuild == snapshot arrays."""

import math
import random

import pytest

from search.serving.engine import Doc, FieldIndex
from tests.test_serving_engine import _doc, oracle


def _holds(d: Doc, lo: float, hi: float) -> bool:
    return d.vf <= hi and d.vu > lo


def _expected(docs, terms, lo, hi, k):
    scores = oracle(docs, terms)  # statistics over every document, valid or not
    kept = [(s, m) for m, s in scores.items() if _holds(docs[m], lo, hi)]
    return [m for s, m in sorted(kept, key=lambda x: (-x[0], x[1]))][:k]


def _docs(seed, n=400):
    rng = random.Random(seed)
    docs = {}
    for i in range(n):
        vf = rng.choice([-math.inf, rng.uniform(0, 100)])
        vu = rng.choice([math.inf, math.inf, vf + rng.uniform(1, 50) if vf > -math.inf
                         else rng.uniform(0, 100)])
        docs[f"m{i:04d}"] = _doc(rng, f"m{i:04d}", vf=vf, vu=vu)
    return docs


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("valid", [(50.0, math.inf), (30.0, 30.0), (0.0, 100.0), (200.0, math.inf)])
def test_the_top_k_of_the_facts_holding_in_a_range_is_exact(seed, valid):
    docs = _docs(seed)
    index = FieldIndex(list(docs.values()))
    for terms in (["alpha"], ["alpha", "beta"], ["gamma", "杭州", "eta"]):
        for k in (1, 5, 50):
            got = [r[0] for r in index.search(terms, k=k, valid=valid).rows]
            assert got == _expected(docs, terms, *valid, k)


def test_validity_never_changes_the_statistics_and_none_keeps_every_document():
    docs = _docs(7)
    index = FieldIndex(list(docs.values()))
    everything = index.search(["alpha"], k=1000)
    now = index.search(["alpha"], k=1000, valid=(60.0, math.inf))
    assert (now.n_docs, now.df, now.total_len) == (everything.n_docs, everything.df,
                                                   everything.total_len)
    assert len(now.rows) < len(everything.rows)
    assert {r[0] for r in now.rows} <= {r[0] for r in everything.rows}


def test_an_upsert_that_ends_a_fact_is_seen_at_once_and_equals_a_rebuild():
    docs = _docs(3, n=60)
    index = FieldIndex(list(docs.values()))
    rng = random.Random(9)
    for memory_id in rng.sample(sorted(docs), 30):
        old = docs[memory_id]
        docs[memory_id] = Doc(memory_id, old.dl, old.tf, vf=old.vf, vu=rng.uniform(0, 100))
        index.upsert(docs[memory_id])
    rebuilt = FieldIndex(list(docs.values()))
    arrays, names = rebuilt.arrays()
    loaded = FieldIndex.from_arrays(arrays, names)
    for valid in ((40.0, math.inf), (10.0, 10.0)):
        for terms in (["alpha"], ["beta", "delta"]):
            want = _expected(docs, terms, *valid, 10)
            for idx in (index, rebuilt, loaded):
                assert [r[0] for r in idx.search(terms, k=10, valid=valid).rows] == want


def test_a_snapshot_without_validity_arrays_is_refused():
    arrays, names = FieldIndex(list(_docs(1, n=10).values())).arrays()
    del arrays["vu"]
    with pytest.raises(ValueError):
        FieldIndex.from_arrays(arrays, names)
