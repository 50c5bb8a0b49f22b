"""A re-ranked window read in part: a window ranked by recency, importance, a filter or a
time range reads only the hash fields that rank it (search.serving.partial.RANK_FIELDS) of
each row, and the whole hashes of its results once ranked, and answers exactly what whole
hashes answer (the same search with RANK_FIELDS emptied)."""

import datetime as dt

import pytest
from django.utils import timezone

from memories import access, store
from memories.models import Memory
from search import memory_search as memory_search_module
from search.index import fields as index_fields
from search.memory_search import memory_search
from search.models import RankingProfile
from search.profile_services import profile_build
from search.serving import answer, documents, feed
from search.serving.partial import RANK_FIELDS
from tests.helpers import create

pytestmark = pytest.mark.django_db


@pytest.fixture
def reads(monkeypatch):
    """The hash fields each feed.lua call of this test asked for, and how many hashes
    (the real calls run; only their arguments are noted)."""
    calls = []
    real = answer.feed_reply

    def noted(client, user_id, field_name, last_id, count, hash_ids=(), **kw):
        calls.append((tuple(kw.get("hash_fields", ())), len(hash_ids)))
        return real(client, user_id, field_name, last_id, count, hash_ids, **kw)

    monkeypatch.setattr(answer, "feed_reply", noted)
    return calls


def _corpus(n=30):
    now = timezone.now()
    made = []
    for i in range(n):
        made.append(create(
            f"harbour ferry timetable note {i} " + "ferry " * (i % 4),
            importance=round(0.1 + (i % 9) / 10, 2), author="ops" if i % 3 else "desk",
            tags=["boats"] if i % 2 else ["boats", "winter"], metadata={"n": i},
            conversation_id=f"c{i % 5}", created_at=now - dt.timedelta(days=i)))
    return made


def _answer(query, prof, **kw):
    found = memory_search(user_id="u-a", query=query, limit=4, profile=prof, **kw)
    assert len(found.results) == 4
    return [(h.memory_id, h.score, h.content, h.metadata, h.conversation_id, h.version,
             h.importance, h.explain.recency, h.explain.terms, h.explain.context_terms)
            for h in found.results]


def test_feed_reply_reads_only_the_named_fields_and_nothing_of_a_hash_that_is_gone(builtins):
    m = create("harbour ferry", metadata={"big": "x" * 500}, author="ops")
    got = feed.feed_reply(store.get_client(), "u-a", index_fields.CONTENT, "0-0", 0,
                          [m.memory_id, "mem_0000000000000000"], hash_fields=RANK_FIELDS)
    raw = got["hashes"][0]  # the reply itself (hash_of reads absent empty fields as "")
    assert {store.text(name) for name in raw[::2]} <= set(RANK_FIELDS)
    held = documents.hash_of(raw)
    assert {"created_at", "importance", "author"} <= set(held)
    assert held["author"] == "ops" and float(held["importance"]) == pytest.approx(m.importance)
    assert got["hashes"][1] == []
    whole = feed.feed_reply(store.get_client(), "u-a", index_fields.CONTENT, "0-0", 0,
                            [m.memory_id])
    assert "metadata" in documents.hash_of(whole["hashes"][0])


@pytest.mark.parametrize("case", ["hybrid", "filters", "time"])
def test_a_window_ranked_by_its_hashes_reads_rows_in_part_and_answers_as_whole_reads(
        builtins, monkeypatch, reads, case):
    _corpus()
    bm25 = RankingProfile.objects.get(name="bm25")
    if case == "hybrid":
        prof, kw, query = profile_build(bm25, w_recency=0.3, w_importance=0.2), {}, "ferry"
    elif case == "filters":
        prof, kw, query = bm25, {"author": "ops", "tags": ["boats"]}, "ferry timetable"
    else:
        prof = profile_build(RankingProfile.objects.get(name="context"), w_semantic=0.0)
        kw, query = {}, "ferry timetable last week"
    assert prof.temporal == "boost" or case != "time"
    kw["now"] = timezone.now().timestamp()  # the same recency for both answers
    served = _answer(query, prof, **kw)
    # The window's rows were read in part (again when the check found writes to apply),
    # and only the results whole (a call without hashes is the index's build or catch-up).
    carried = [r for r in reads if r[1]]
    assert len(carried) >= 2 and carried[-1] == ((), 4)
    assert all(fields == RANK_FIELDS and n > 4 for fields, n in carried[:-1])
    # The same search reading every row's whole hash (as before the partial reads).
    monkeypatch.setattr(memory_search_module, "RANK_FIELDS", ())
    assert _answer(query, prof, **kw) == served
    monkeypatch.undo()
    rows = {m.memory_id: m for m in Memory.objects.filter(
        memory_id__in=[r[0] for r in served])}
    for memory_id, _, content, metadata, conversation, *_ in served:
        assert (content, metadata, conversation) == (
            rows[memory_id].content, rows[memory_id].metadata, rows[memory_id].conversation_id)


def test_a_pending_row_of_a_window_read_in_part_is_served_as_the_database_holds_it(builtins):
    made = _corpus(12)
    prof = profile_build(RankingProfile.objects.get(name="bm25"), w_importance=0.9)
    top = memory_search(user_id="u-a", query="ferry", limit=3, profile=prof).results[0]
    # A write whose mirror failed: the database holds a new content and importance.
    Memory.objects.filter(pk=top.memory_id).update(importance=0.0, content="harbour ferry moved",
                                                   needs_resync=True)
    again = {h.memory_id: h for h in memory_search(user_id="u-a", query="ferry", limit=12,
                                                   profile=prof).results}
    assert again[top.memory_id].content == "harbour ferry moved"
    assert again[top.memory_id].importance == 0.0
    assert len(again) == len(made)


_WRITES = {"importance": {"importance": 0.01}, "type": {"type": "working"},
           "content": {"content": "the harbour cafe opens late"}}


def _written_between_the_reads(monkeypatch, made, write, **kw):
    """The recall ``kw`` after one of its results was written (a real write, committed and
    mirrored) just before the results' whole hashes are read: ``(found, the memory
    written)``, once the test saw every result counted exactly once and the written one not
    served."""
    from memories.services import change

    memory_search(user_id="u-a", **kw)  # builds the serving index
    real, written = answer.rows, []

    def write_first(client, **args):
        if not written:
            written.append(args["memory_ids"][0])
            change.memory_update(memory_id=written[0], **_WRITES[write])
        return real(client, **args)

    monkeypatch.setattr(answer, "rows", write_first)
    found = memory_search(user_id="u-a", count_hits=True, **kw)
    assert written and len(found.results) == kw["limit"]
    assert written[0] not in {h.memory_id for h in found.results}
    if not found.hits_counted:
        access.access_record(user_id="u-a", memory_ids=[h.memory_id for h in found.results])
    counted = {m.memory_id for m in made
               if store.get_client().hget(store.key("u-a", "m", m.memory_id),
                                          "access_count") not in (None, b"0", "0")}
    assert counted == {h.memory_id for h in found.results}
    return found


@pytest.mark.parametrize("write", ["importance", "type"])
def test_a_row_written_between_the_window_read_and_the_results_read_is_not_served_mixed(
        builtins, monkeypatch, write):
    """The results' whole hashes are read after the window was ranked on its rows' fields:
    a row written in between is not served in a state it was not ranked (nor filtered) in;
    it gives its place to the next, uncounted, as a forgotten row does."""
    made = _corpus(12)
    prof = profile_build(RankingProfile.objects.get(name="bm25"), w_recency=0.3,
                         w_importance=0.2)
    found = _written_between_the_reads(monkeypatch, made, write, query="ferry", limit=3,
                                       profile=prof, types=["long_term"], tags=["boats"])
    for h in found.results:
        assert h.type == "long_term"
        w = h.explain.weights
        assert h.score == pytest.approx(w["relevance"] * h.explain.relevance
                                        + w["recency"] * h.explain.recency
                                        + w["importance"] * h.explain.importance)


@pytest.mark.parametrize("write", ["content", "type"])
def test_a_row_of_a_lean_window_written_between_the_two_reads_is_not_served_mixed(
        builtins, monkeypatch, write):
    """A window ranked by BM25 and meaning alone reads no field of its rows (search.lean_window)
    and its results' whole hashes once ranked: a result written in between (its content, or
    its type out of the types asked for) is not served under the score, filter and
    explanation of the version ranked; it gives its place to the next, uncounted, as a
    forgotten row does."""
    made = _corpus(12)
    prof = RankingProfile.objects.get(name="context")  # semantic rescoring: a lean window
    assert prof.w_semantic > 0
    found = _written_between_the_reads(monkeypatch, made, write, query="ferry timetable",
                                       limit=3, profile=prof, types=["long_term"])
    for h in found.results:
        assert h.type == "long_term" and "ferry" in h.content


@pytest.mark.parametrize("weights", [{}, {"w_recency": 0.3, "w_importance": 0.2}],
                         ids=["top-k", "window"])
def test_the_explanation_is_the_index_own_contributions(builtins, monkeypatch, weights):
    """Each result's BM25 and per-term contributions come from the serving index (the
    formula written once there): never recomputed by the Python formula, which is the
    tests' oracle alone, and equal to it to the bit."""
    from search import scoring

    _corpus(30)
    prof = profile_build(RankingProfile.objects.get(name="bm25"), **weights)
    memory_search(user_id="u-a", query="ferry timetable", limit=4, profile=prof)  # built
    real = scoring.bm25_terms

    def refuse(*args, **kw):
        raise AssertionError("the recall computed BM25 itself")

    monkeypatch.setattr(scoring, "bm25_terms", refuse)
    found = memory_search(user_id="u-a", query="ferry timetable", limit=4, profile=prof)
    monkeypatch.undo()
    assert len(found.results) == 4
    analyzer = index_fields.ANALYZERS[index_fields.CONTENT]
    for h in found.results:
        tf = analyzer.term_frequencies(h.content)
        want = real(found.terms, tf, sum(tf.values()), found.n_docs, found.df, found.avgdl)
        assert h.explain.terms == want and list(h.explain.terms) == list(want)
        assert h.explain.bm25 == scoring.bm25(found.terms, tf, sum(tf.values()), found.n_docs,
                                              found.df, found.avgdl)
