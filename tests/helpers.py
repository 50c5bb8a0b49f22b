"""Test helpers: read the Redis index back, and an oracle that scores from the database."""

from memories import services, store
from memories.models import Memory
from search import scoring
from search.index import fields as index_fields
from search.index import postings


def create(content: str, user_id: str = "u-a", **kw):
    """A memory made through the service (or the live duplicate it returns)."""
    return services.memory_create(user_id=user_id, content=content, **kw)[0]


def recall_answer(api, query: str, *, user_id: str = "u-a", headers=None, **body) -> dict:
    """``POST /recall`` through an API client (tests/conftest.py ``ApiClient``); its whole
    answer (``results``, ``recall_id``…), after checking it answered 200. ``body`` adds
    fields (``limit``, ``as_of``, ``now``…), ``headers`` request headers."""
    resp = api.post("/recall", {"user_id": user_id, "query": query, **body}, headers=headers)
    assert resp.status_code == 200, resp.content
    return resp.json()


def recall(api, query: str, *, user_id: str = "u-a", **body) -> list[dict]:
    """:func:`recall_answer`'s results."""
    return recall_answer(api, query, user_id=user_id, **body)["results"]


def index_terms(api, user_id: str, *terms: str, field: str = index_fields.CONTENT) -> dict:
    """``GET /index/terms`` through an admin's API client (tests/conftest.py ``admin_api``):
    ``{"N", "total_len", "avgdl", "generation", "df", "postings"}`` of ``terms`` in ``field``
    of the live index, after checking it answered 200. Tests read the index through it, not
    through key names, so a change of the key layout leaves them as they are."""
    from urllib.parse import urlencode

    query = urlencode({"user_id": user_id, "terms": ",".join(terms), "field": field})
    resp = api.get(f"/index/terms?{query}")
    assert resp.status_code == 200, resp.content
    return resp.json()


def indexed(api, user_id: str, term: str, field: str = index_fields.CONTENT) -> set[str]:
    """The memory ids holding ``term`` in ``field`` of the live index, read through
    :func:`index_terms`."""
    return set(index_terms(api, user_id, term, field=field)["postings"][term])


def index_read(user_id: str, *terms: str, field: str = index_fields.CONTENT) -> dict | None:
    """What :func:`index_terms` answers, read in this process through the same reader
    (``search.live_terms``, no HTTP): any term as the index holds it (non-ASCII, any
    number of them: read ``MAX_TERMS`` at a time); None when Redis holds no index of the
    namespace. Waits while this process loads a large namespace's index (at most 30 s)."""
    import time

    from search import live_terms

    client, answer = store.get_client(), None
    chunks = [terms[i:i + live_terms.MAX_TERMS]
              for i in range(0, len(terms), live_terms.MAX_TERMS)] or [()]
    for chunk in chunks:
        deadline = time.monotonic() + 30
        while True:
            try:
                found = live_terms.live_terms(client, user_id=user_id, field=field,
                                              terms=list(chunk))
                break
            except live_terms.IndexLoading:
                assert time.monotonic() < deadline, "the serving index never loaded"
                time.sleep(0.05)
        if found is None:
            return None
        got = found.as_dict()
        if answer is not None:
            got["df"] = {**answer["df"], **got["df"]}
            got["postings"] = {**answer["postings"], **got["postings"]}
        answer = got
    return answer


def postings_of(user_id: str, term: str, field: str = index_fields.CONTENT) -> set[str]:
    """The memory ids holding ``term`` (any index term, verbatim) in ``field`` of the live
    index, read through :func:`index_read`; empty when Redis holds no index."""
    found = index_read(user_id, term, field=field)
    return set(found["postings"][term]) if found else set()


def memory_hash(user_id: str, memory_id: str) -> dict[str, str]:
    raw = store.get_client().hgetall(store.key(user_id, "m", memory_id))
    return {store.text(k): store.text(v) for k, v in raw.items()}


def stats(user_id: str, field: str = index_fields.CONTENT) -> dict:
    return postings.field_stats(store.get_client(), user_id=user_id, field=field)


def oracle_scores(user_id: str, query: str, *, field: str = index_fields.CONTENT,
                  k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """BM25 of every live memory of ``user_id`` computed from the database alone: what a full
    rebuild of the index would answer."""
    analyzer = index_fields.ANALYZERS[field]
    docs = {m.memory_id: analyzer.term_frequencies(m.content)
            for m in Memory.objects.filter(user_id=user_id, deleted_at__isnull=True)}
    docs = {k: v for k, v in docs.items() if v}
    n = len(docs)
    total = sum(sum(v.values()) for v in docs.values())
    terms = list(dict.fromkeys(analyzer.tokens(query)))
    df = {t: sum(1 for v in docs.values() if t in v) for t in terms}
    out = {}
    for memory_id, tf in docs.items():
        score = scoring.bm25(terms, tf, sum(tf.values()), n, df, total / n, k1, b)
        if score > 0:
            out[memory_id] = score
    return out


def with_folds_running(workers: list, folders: int = 2) -> list[Exception]:
    """Run ``workers`` (callables) on threads while ``folders`` threads fold access hits in
    a loop until the workers end; returns the exceptions any of them raised."""
    import threading

    from django.db import connection

    from memories import access

    errors, done = [], threading.Event()

    def guard(fn):
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)
        finally:
            connection.close()

    def fold():
        while not done.is_set():
            access.access_fold()

    working = [threading.Thread(target=guard, args=(w,)) for w in workers]
    folding = [threading.Thread(target=guard, args=(fold,)) for _ in range(folders)]
    for t in folding + working:
        t.start()
    for t in working:
        t.join()
    done.set()
    for t in folding:
        t.join()
    return errors
