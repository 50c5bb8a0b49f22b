"""What the live index holds for a few terms of one field: its statistics, each term's
document frequency and postings.

The reader behind ``GET /api/v1/index/terms``: operators and tests read the index through
it rather than through key names, so a change of the index's Redis layout changes
``search.serving.feed``, not its readers. It answers from this process's serving index of
the field (``search.serving.feed.serving_index``), caught up from the namespace's write
stream by the same call, so it holds every write that has returned, in any process; its
``N`` and ``total_len`` are the field's statistics in Redis (the serving index's own, plus
the difference it accepted when the statistics hash had drifted from the documents).

A namespace whose first write after a loss of Redis stamped it ``new:`` is settled first,
as a recall settles it (``search.index_lost``).
"""

from dataclasses import dataclass

from memories import store
from memories.errors import Busy, ServiceError
from search import index_lost
from search.index import fields as index_fields
from search.serving import feed

MAX_TERMS = 50


class IndexLoading(Busy):
    """This process is loading the namespace's serving index on a background thread (a
    large namespace it did not hold yet): the API's 429, to be tried again in a second."""


class FormatUnreadable(ServiceError):
    """The namespace's index is in a format this process does not read (written by a newer
    deployment during a rolling upgrade): the API's 503."""

    status = 503
    code = "index_format"


@dataclass(frozen=True)
class LiveTerms:
    """One field of a namespace's live index: ``N`` live documents, ``total_len`` the sum of
    their lengths (tokens), ``generation`` the live generation (0 before any reindex),
    ``df`` {term: documents holding it} and ``postings`` {term: [memory_id, ...] in ascending
    memory_id order}, for the terms asked."""

    N: int
    total_len: int
    generation: int
    df: dict[str, int]
    postings: dict[str, list[str]]

    @property
    def avgdl(self) -> float:
        """Mean document length in tokens (0.0 for an empty field)."""
        return self.total_len / self.N if self.N else 0.0

    def as_dict(self) -> dict:
        return {"N": self.N, "total_len": self.total_len, "avgdl": self.avgdl,
                "generation": self.generation, "df": self.df, "postings": self.postings}


def live_terms(client, *, user_id: str, field: str, terms: list[str]) -> LiveTerms | None:
    """``terms`` (index terms, looked up verbatim: no analysis) of ``field`` (one of
    ``search.index.fields.ANALYZERS``) in ``user_id``'s live index; None when Redis holds no
    index of the namespace (nothing was ever written to it, or Redis lost it: no ``ver``
    hash). Raises ValueError for an unknown field or more than ``MAX_TERMS`` terms,
    IndexLoading, FormatUnreadable, ``memories.errors.IndexRebuilding`` (a ``new:`` stamp
    that Redis lost the namespace's older memories), RedisError."""
    if field not in index_fields.ANALYZERS:
        raise ValueError(f"unknown index field {field!r}")
    if len(terms) > MAX_TERMS:
        raise ValueError(f"at most {MAX_TERMS} terms")
    terms = list(dict.fromkeys(terms))
    if not client.exists(store.key(user_id, "ver")):
        return None
    served, index = _serving_index(client, user_id, field)
    try:
        # Every live document holding a term (``collect``: no ranking, no filter; ``now``
        # 0 keeps the documents past their expiry, which the index and its statistics
        # hold until the expiry job removes them).
        found = index.search(terms, k=0, mode="collect")
        n_offset, len_offset = served.offset
        answer = LiveTerms(N=index.n_live + n_offset, total_len=index.total_len + len_offset,
                           generation=int(served.gen or 0), df=found.df,
                           postings={t: [] for t in terms})
    finally:
        served.lock.release()
    for memory_id, _dl, tfs in found.rows:
        for term in tfs:
            answer.postings[term].append(memory_id)
    for ids in answer.postings.values():
        ids.sort()
    return answer


def _serving_index(client, user_id: str, field: str):
    """``feed.serving_index`` (its lock HELD), a ``new:`` stamp settled first."""
    try:
        return index_lost.settled_first(
            client, user_id, lambda: feed.serving_index(client, user_id, field))
    except feed.NotReady:
        raise IndexLoading(f"the index of {user_id!r} is being loaded; try again",
                           field="user_id", retry_after_seconds=1) from None
    except feed.Unsupported as exc:
        raise FormatUnreadable(f"the index of {user_id!r} is in format {exc.args[0]!r}, "
                               "which this process does not read", field="user_id") from None
