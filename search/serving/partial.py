"""Window rows read in part (PURE): a recall's window is ranked on a few fields of each
memory's hot-store hash, and only its results need the whole hash.

A window ranked by BM25 and meaning alone reads no field of its rows (``UNREAD``); one ranked
by recency, importance, a filter or a time range reads ``RANK_FIELDS`` (``partial``). Either
way the rows that become results are read whole once ranked (``search.lean_window``). A
window of 100 whole hashes (content, metadata, context) was most of such a recall's Redis
time and reply.
"""

# What ranks a window row: recency (created_at, accessed_at), importance, the filters
# (created_at, author, tags, agent_id, run_id: search.recall_filters; metadata only when a
# recall filters on it, ``RecallFilters.fields``), the time range (created_at), the
# validity (search.recall_filters.Validity), and the hit count a pending row keeps
# (search.pending), and the version ranked: a result whose whole hash holds another was
# written between the two reads (search.lean_window).
RANK_FIELDS = ("created_at", "accessed_at", "importance", "author", "tags", "agent_id",
               "run_id", "access_count", "version", "valid_from", "valid_until")


class Partial(dict):
    """A row's hash as far as it was read: the fields read over placeholders for the rest."""


# The placeholders: enough for the ranking loop, never shown (the results are read whole).
_PLACEHOLDERS = {"content": "", "type": "", "version": "0", "metadata": "{}",
                 "created_at": "0", "importance": "0", "conversation_id": ""}
UNREAD = Partial(_PLACEHOLDERS)


def partial(fields: dict[str, str]) -> Partial:
    """``fields`` (some of a hash, as read) over the placeholders."""
    return Partial({**_PLACEHOLDERS, **fields})


def is_partial(doc) -> bool:
    return isinstance(doc, Partial)
