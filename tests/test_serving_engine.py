"""The serving index alone (pure): exact BM25 against the scoring module's formula over the
live documents, incremental == rebuild, no stale statistics after deletes or expiry, modes,
filters, ties by memory id."""

import random

import pytest

from search import scoring
from search.serving.engine import Builder, Doc, FieldIndex

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "杭州", "出差"]


def _doc(rng, memory_id, **kw):
    tf = {}
    for _ in range(rng.randint(1, 10)):
        word = rng.choice(WORDS)
        tf[word] = tf.get(word, 0) + 1
    return Doc(memory_id, sum(tf.values()), tf, **kw)


def oracle(docs: dict[str, Doc], terms, now=0.0, k1=1.2, b=0.75):
    live = {m: d for m, d in docs.items() if not (d.exp and d.exp <= now)}
    n = len(live)
    total = sum(d.dl for d in live.values())
    df = {t: sum(1 for d in live.values() if t in d.tf) for t in terms}
    out = {}
    for m, d in live.items():
        s = scoring.bm25(terms, d.tf, d.dl, n, df, total / n, k1, b)
        if s > 0:
            out[m] = s
    return out


def ranked(index, terms, k=1000, **kw):
    found = index.search(terms, k=k, **kw)
    return [r[0] for r in found.rows], found


def test_it_scores_every_match_as_the_formula_does():
    rng = random.Random(1)
    docs = {f"mem_{n:04d}": _doc(rng, f"mem_{n:04d}") for n in range(300)}
    index = FieldIndex(list(docs.values()))
    for terms in (["alpha"], ["alpha", "beta"], ["杭州", "出差", "zeta"], ["nothing"]):
        want = oracle(docs, terms)
        got, found = ranked(index, terms)
        assert got == sorted(want, key=lambda m: (-want[m], m))
        assert found.n_docs == 300 and found.total_len == sum(d.dl for d in docs.values())
        for memory_id, dl, tfs in found.rows:
            assert dl == docs[memory_id].dl
            assert tfs == {t: docs[memory_id].tf[t] for t in terms if t in docs[memory_id].tf}
        # The index's own sums are the formula's, to the bit (a lean window ranks by them).
        assert found.scores == {m: want[m] for m in got}


@pytest.mark.parametrize("mode", ["any", "all", "collect"])
def test_each_row_carries_the_formula_contributions_of_its_terms(mode):
    """A recall's explanation reads each row's per-term contributions from the search: the
    formula's, term by term and to the bit, in query-term order, in every mode."""
    rng = random.Random(2)
    docs = {f"mem_{n:04d}": _doc(rng, f"mem_{n:04d}") for n in range(300)}
    index = FieldIndex(list(docs.values()))
    for terms in (["alpha"], ["beta", "alpha", "eps"], ["杭州", "出差", "zeta"]):
        found = index.search(terms, k=20, mode=mode)
        assert found.rows and len(found.scores) == len(found.rows)
        for memory_id, dl, tfs in found.rows:
            want = scoring.bm25_terms(terms, tfs, dl, found.n_docs, found.df, found.avgdl)
            got = found.contributions(memory_id)
            assert got == want and list(got) == list(want) and set(got) == set(tfs)
            assert found.scores[memory_id] == scoring.bm25(terms, tfs, dl, found.n_docs,
                                                           found.df, found.avgdl)
    assert index.search(["alpha"], k=5).contributions("mem_none") == {}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_incremental_equals_rebuild_after_random_writes(seed):
    """Upserts and removes, with merges on the way: every score and the statistics equal a
    fresh build of the surviving documents, bit for bit (and the formula's to 1e-9)."""
    rng = random.Random(seed)
    index, docs = FieldIndex(), {}
    for step in range(3000):
        memory_id = f"mem_{rng.randrange(400):04d}"
        if rng.random() < 0.3:
            index.remove(memory_id)
            docs.pop(memory_id, None)
        else:
            docs[memory_id] = _doc(rng, memory_id)
            index.upsert(docs[memory_id])
        if step % 700 == 0:
            index.merge()
    rebuilt = FieldIndex(list(docs.values()))
    for terms in (["alpha"], ["beta", "gamma"], ["杭州", "delta", "theta"]):
        a, fa = ranked(index, terms)
        b, fb = ranked(rebuilt, terms)
        assert a == b and fa.df == fb.df and fa.n_docs == fb.n_docs == len(docs)
        want = oracle(docs, terms)
        assert set(a) == set(want)
        found = index.search(terms, k=len(want))
        exact = {r[0]: scoring.bm25(terms, r[2], r[1], fa.n_docs, fa.df, fa.avgdl)
                 for r in found.rows}
        for memory_id, value in want.items():
            assert exact[memory_id] == pytest.approx(value, abs=1e-9)


def test_a_delete_changes_df_and_n_at_once():
    index = FieldIndex([Doc("mem_a", 2, {"redis": 1, "cache": 1}), Doc("mem_b", 1, {"redis": 1}),
                        Doc("mem_c", 1, {"cache": 1})])
    assert index.search(["redis"], k=5).df == {"redis": 2}
    index.remove("mem_a")
    found = index.search(["redis"], k=5)
    assert found.df == {"redis": 1} and found.n_docs == 2 and found.total_len == 2
    assert [r[0] for r in found.rows] == ["mem_b"]


def test_an_expiry_is_seen_after_searches_made_before_it():
    """The search skips the expiring documents until the earliest expiry (exp_floor); a later
    document expiring sooner lowers it."""
    index = FieldIndex([Doc("mem_a", 1, {"alpha": 1}), Doc("mem_b", 1, {"alpha": 1},
                                                           type="short_term", exp=200.0)])
    assert index.search(["alpha"], k=5, now=50.0).n_docs == 2
    index.upsert(Doc("mem_c", 1, {"alpha": 1}, type="short_term", exp=100.0))
    assert index.search(["alpha"], k=5, now=99.0).n_docs == 3
    assert index.search(["alpha"], k=5, now=150.0).expired == ["mem_c"]
    index.remove("mem_c")
    assert index.search(["alpha"], k=5, now=150.0).n_docs == 2
    assert index.search(["alpha"], k=5, now=250.0).expired == ["mem_b"]


def test_the_order_of_near_equal_sums_is_the_exact_sums_order():
    """Two documents whose contributions sum to the same exact value but whose sequential
    sums differ in the last bit tie, and the tie goes by memory id."""
    import numpy as np

    from search.serving import prune

    matrix = np.array([[0.1, 0.3, 0.05], [0.2, 0.2, 0.05], [0.3, 0.1, 0.05]])
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1  # sequential sums differ
    ids = np.array([b"mem_b", b"mem_a", b"mem_c"], "S32")
    assert prune.top(matrix, 2, ids).tolist() == [1, 0]
    assert prune.top(matrix, 1, ids).tolist() == [1]


def test_expired_documents_leave_the_statistics_before_scoring():
    """Issue 13: the first search after an expiry scores with N, df and avgdl that no longer
    count the expired document, as a rebuild without it would."""
    rng = random.Random(5)
    docs = {f"mem_{n:03d}": _doc(rng, f"mem_{n:03d}") for n in range(40)}
    docs["mem_tmp"] = Doc("mem_tmp", 3, {"alpha": 3}, type="short_term", exp=100.0)
    index = FieldIndex(list(docs.values()))
    before = index.search(["alpha"], k=50, now=99.0)
    assert "mem_tmp" in [r[0] for r in before.rows] and before.n_docs == 41
    after = index.search(["alpha"], k=50, now=100.0)
    assert after.expired == ["mem_tmp"] and after.n_docs == 40
    rebuilt = FieldIndex([d for m, d in docs.items() if m != "mem_tmp"])
    assert after.rows == rebuilt.search(["alpha"], k=50).rows
    assert after.df == rebuilt.search(["alpha"], k=50).df


def test_match_modes_and_filters():
    index = FieldIndex([
        Doc("mem_1", 2, {"redis": 1, "cluster": 1}, type="long_term", conv="s1"),
        Doc("mem_2", 1, {"redis": 1}, type="working", conv="s1"),
        Doc("mem_3", 1, {"cluster": 1}, type="working", conv="s2"),
        Doc("mem_4", 1, {"redis": 1}, type="short_term", conv=""),
    ])
    assert ranked(index, ["redis", "cluster"], mode="all")[0] == ["mem_1"]
    assert set(ranked(index, ["redis", "cluster"], mode="collect")[0]) == {
        "mem_1", "mem_2", "mem_3", "mem_4"}
    assert ranked(index, ["redis", "nothing"], mode="all")[0] == []
    assert set(ranked(index, ["redis", "cluster"], types=["working"])[0]) == {"mem_2", "mem_3"}
    # Another conversation's working memory is hidden; long-term and conversation-less stay.
    assert set(ranked(index, ["redis", "cluster"], conversation_id="s1")[0]) == {
        "mem_1", "mem_2", "mem_4"}
    assert set(ranked(index, ["redis", "cluster"], conversation_id="s2")[0]) == {
        "mem_1", "mem_3", "mem_4"}


def test_ties_are_broken_by_memory_id_whatever_the_insertion_order():
    ids = [f"mem_{n:03d}" for n in range(200)]
    shuffled = ids[:]
    random.Random(2).shuffle(shuffled)
    index = FieldIndex()
    for memory_id in shuffled:
        index.upsert(Doc(memory_id, 3, {"same": 1, "x": 2}))
    for k in (1, 7, 150, 300):
        assert ranked(index, ["same"], k=k)[0] == ids[:k]


def test_top_k_equals_the_oracle_prefix_on_a_larger_index():
    rng = random.Random(9)
    docs = {f"mem_{n:05d}": _doc(rng, f"mem_{n:05d}") for n in range(3000)}
    index = FieldIndex(list(docs.values()))
    for terms in (["alpha", "beta"], ["theta", "杭州", "eps", "zeta"]):
        want = oracle(docs, terms)
        order = sorted(want, key=lambda m: (-want[m], m))
        for k in (1, 10, 100):
            assert ranked(index, terms, k=k)[0] == order[:k]


def _zipf_docs(rng, n, vocab=400):
    words = [f"w{i}" for i in range(vocab)]
    weights = [1 / (i + 1) for i in range(vocab)]
    docs = {}
    for d in range(n):
        tf = {}
        for word in rng.choices(words, weights, k=rng.randint(2, 30)):
            tf[word] = tf.get(word, 0) + 1
        memory_id = f"mem_{d:05d}"
        docs[memory_id] = Doc(memory_id, sum(tf.values()), tf,
                              type=rng.choice(["long_term", "working", "short_term"]),
                              conv=rng.choice(["", "s1", "s2"]))
    return docs, words


@pytest.mark.parametrize("flat_postings", [0, 10**9], ids=["maxscore", "flat"])
@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_top_k_equals_the_exhaustive_ranking_on_a_skewed_corpus(seed, flat_postings,
                                                                       monkeypatch):
    """MaxScore (search.serving.prune) walks only the postings that can change the top k,
    the flat path scores every posting in a few vectorised steps: both give the oracle's
    ranking with common and rare terms mixed, filters, removed and re-added documents, every
    k."""
    from search.serving import prune

    monkeypatch.setattr(prune, "FLAT_POSTINGS", flat_postings)
    rng = random.Random(seed)
    docs, words = _zipf_docs(rng, 4000)
    index = FieldIndex(list(docs.values()))
    for memory_id in rng.sample(sorted(docs), 300):  # dead postings, a delta segment
        if rng.random() < 0.5:
            del docs[memory_id]
            index.remove(memory_id)
        else:
            docs[memory_id] = _doc(rng, memory_id)
            index.upsert(docs[memory_id])
    pool = words[:8] + words[40:60] + words[200:]
    for _ in range(25):
        terms = list(dict.fromkeys(rng.sample(pool, rng.randint(1, 6))))
        want = oracle(docs, terms)
        for kw, keep in (({}, lambda d: True),
                         ({"types": ["working"]}, lambda d: d.type == "working"),
                         ({"conversation_id": "s1"},
                          lambda d: d.conv in ("", "s1") or d.type == "long_term")):
            order = sorted((m for m in want if keep(docs[m])), key=lambda m: (-want[m], m))
            for k in (1, 10, 50):
                assert ranked(index, terms, k=k, **kw)[0] == order[:k], (terms, kw, k)
        every = [m for m in want if all(t in docs[m].tf for t in terms)]
        every.sort(key=lambda m: (-want[m], m))
        assert ranked(index, terms, k=20, mode="all")[0] == every[:20]


def test_a_common_and_a_rare_term_are_answered_without_a_dense_scan(monkeypatch):
    rng = random.Random(3)
    docs, _ = _zipf_docs(rng, 4000)
    index = FieldIndex(list(docs.values()))
    from search.serving import prune

    def no_dense(*args, **kwargs):
        raise AssertionError("scanned every match")

    monkeypatch.setattr(prune, "dense", no_dense)
    terms = ["w0", "w1", "w250"]  # two in most documents, one rare
    want = oracle(docs, terms)
    assert ranked(index, terms, k=10)[0] == sorted(want, key=lambda m: (-want[m], m))[:10]


def test_a_memory_added_twice_to_a_build_is_one_document():
    """A build's SSCAN may list a memory twice: its second copy would outlive a removal."""
    builder = Builder()
    for _ in range(2):
        builder.add("mem_a", 3, "long_term", "", 0.0, ["kiwi", "fruit"], ["2", "1"])
    builder.add("mem_b", 2, "long_term", "", 0.0, ["fruit"], ["2"])
    index = builder.finish()
    assert (index.n_live, index.total_len) == (2, 5)
    index.remove("mem_a")
    assert index.search(["kiwi"], k=10).rows == []
    assert [r[0] for r in index.search(["fruit"], k=10).rows] == ["mem_b"]
