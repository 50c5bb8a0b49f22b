"""Recall over one field's Redis postings in small commands, for a namespace whose serving
index this process is still building (``feed.NotReady``: more than ``feed.SYNC_BUILD_DOCS``
documents build on a background thread, seconds to a minute).

``search.lua`` answers the same question in one script, but its time grows with the
namespace (hundreds of milliseconds a call in a large namespace), and Redis runs
nothing else meanwhile: every tenant's writes waited. Here no command is long: each query
term's postings are read whole, ``CHUNK`` members with their scores per ZRANGE, at most
``PER_TRIP`` ZRANGEs per MULTI (about a millisecond of Redis time), and scored in this
process (``search.serving.exhaustive``: every posting's score holds its tf and document
length). The caller pays the reading (every posting of every term); other clients do not.

Exact, with the live statistics, however writes land between the reads:

- the field's N and total length, and the documents of every memory written since the read
  began, come from ``feed.lua`` at the end (the stream after the position noted first, and
  in the same atomic step the documents those entries name); every other memory's postings
  are as the chunks read them, since no write touched them;
- a write moves the ranks of a list's other members by one at most, so each MULTI also
  reads the stream's ``entries-added``, and the next chunk of a list starts that many
  members early: no posting of an unwritten memory is skipped (one read twice counts once).
  A chunk whose margin proved too small is read again.

A generation swap (a reindex), a stream trimmed past the noted position, or a burst of
writes between two reads of a list (half a chunk) start it again (``ATTEMPTS`` in all); then
``search.lua`` answers (logged: it is what every recall did before).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from memories import store
from search.index import postings
from search.serving import exhaustive
from search.serving.feed import (
    FEED_COUNT,
    FORMATS,
    NEW_STAMP,
    Unsupported,
    cannot_follow,
    doc_of,
    feed_reply,
    generation_field,
)

log = logging.getLogger(__name__)

# Members per ZRANGE and ZRANGEs per MULTI (one MULTI holds Redis for all of them): sized
# so that no command holds Redis long (docs/benchmarks.md, recall_building).
CHUNK = 500
PER_TRIP = 4
# Members a chunk starts early beyond the writes seen since the list's last read (room for
# writes landing between two round trips).
SLACK = 8
ATTEMPTS = 3


class Moved(Exception):
    """The field changed under the read in a way it cannot follow: read it again."""


@dataclass
class _List:
    """One sorted set being read: its members and scores so far (a read twice counts once),
    ``covered``: ranks below this, as they stood at its last read (``writes_at``: the writes
    seen then), hold no unread member that was not written since the read began.
    ``until``: stop at the first score above it (None: read all)."""

    key: str
    until: float | None = None
    got: dict = field(default_factory=dict)
    covered: int = 0
    writes_at: int = 0
    done: bool = False


def search_field(client, *, user_id: str, field: str, terms: list[str], k: int, k1: float,
                 b: float, mode: str, now: float, conversation_id: str | None = None,
                 types: list[str] | None = None, after_trip=None) -> postings.FieldHits:
    """As ``search.index.postings.search_field`` answers (the exact top ``k`` of mode any |
    all, every match in mode collect, with the live statistics), from reads that each hold
    Redis about a millisecond. ``now`` (epoch seconds): memories past their expiry are left
    out and listed in ``expired``. ``after_trip()`` runs after each round trip of the read
    (tests write there). Raises ``redis.RedisError``."""
    args = {"user_id": user_id, "terms": terms, "k": k, "k1": k1, "b": b, "mode": mode,
            "now": now, "conversation_id": conversation_id, "types": types}
    for _ in range(ATTEMPTS):
        try:
            return _search(client, field_name=field, after_trip=after_trip, **args)
        except Moved as exc:
            log.info("chunked recall of %s/%s read again: %s", user_id, field, exc)
        except Unsupported:
            break
    else:
        log.warning("chunked recall of %s/%s kept moving: search.lua answers", user_id, field)
    return postings.search_field(client, field=field, **args)


def _search(client, *, user_id, field_name, terms, k, k1, b, mode, now, conversation_id,
            types, after_trip) -> postings.FieldHits:
    head = feed_reply(client, user_id, field_name, "0-0", 0)
    # A "new:" stamp is settled before a recall gets here (search.index_lost): read it as
    # the format it names.
    if head["format"].removeprefix(NEW_STAMP) not in FORMATS:
        raise Unsupported(head["format"])
    base = store.namespace_base(user_id)
    fname = generation_field(field_name, head["gen"])
    lists = [_List(f"{base}{fname}:t:{t}") for t in terms]
    exp = _List(f"{base}{fname}:exp", until=now)
    _scan(client, user_id, [*lists, exp], head["added"], after_trip)
    # Read before the catch-up: a document changed after this read has a later stream entry,
    # so the catch-up brings it (and it overrides what was read here).
    dead_len = _lengths(client, base + fname + ":d:", sorted(exp.got))
    changed, final = _written_since(client, user_id, field_name, head)

    per_term = [_postings_now(term, lst, changed) for term, lst in zip(terms, lists, strict=True)]
    dead = {m for m in exp.got if m not in changed}
    dead_len = {m: dl for m, dl in dead_len.items() if m in dead}
    for m, d in changed.items():
        if d is not None and d.exp and d.exp <= now:
            dead.add(m)
            dead_len[m] = d.dl
    n_docs = final["N"] - len(dead_len)
    total_len = final["total_len"] - sum(dead_len.values())
    if n_docs <= 0:
        n_docs = total_len = 0
    matrix = exhaustive.matrix(len(terms), per_term, dead)
    contrib, df = exhaustive.contributions(matrix, n_docs=n_docs, total_len=total_len, k1=k1,
                                           b=b)
    hits = postings.FieldHits(n_docs=n_docs, total_len=total_len,
                              df=dict(zip(terms, df, strict=True)), rows=[],
                              expired=sorted(dead))
    if not n_docs:
        return hits
    count = (matrix.tf > 0).sum(axis=1)
    eligible = matrix.live & (count == len(terms) if mode == "all" else count > 0)
    admits = _Admits(client, base + fname + ":d:", changed, conversation_id, types)
    first = int(eligible.sum()) if mode == "collect" else k
    width = max(first, 1)
    while True:  # widen until ``first`` pass the type and conversation filter, or none remain
        order = exhaustive.ranked(matrix, contrib, eligible, width)
        passed = admits([matrix.ids[i] for i in order])
        chosen = [i for i, ok in zip(order, passed, strict=True) if ok]
        if len(chosen) >= first or len(order) < width:
            break
        width *= 4
    if admits.read and feed_reply(client, user_id, field_name, "0-0", 0)["added"] != final["added"]:
        # A type or conversation read after the catch-up may be of a later write.
        raise Moved("written while the filter was read")
    hits.rows = [(matrix.ids[i], int(matrix.dl[i]),
                  {t: int(matrix.tf[i, j]) for j, t in enumerate(terms) if matrix.tf[i, j]})
                 for i in chosen[:first]]
    return hits


def _postings_now(term: str, lst: _List, changed: dict) -> tuple[list[str], np.ndarray,
                                                                  np.ndarray]:
    """``(ids, tf, dl)`` of ``term`` as the field holds it now: the memories written since
    the read began from their documents (``changed``), every other one as its chunk read it."""
    ids = [m for m in lst.got if m not in changed] if changed else list(lst.got)
    tf, dl = exhaustive.decode(np.fromiter((lst.got[m] for m in ids), float, len(ids)))
    mine = [(m, d) for m, d in changed.items() if d is not None and d.tf.get(term)]
    if mine:
        ids += [m for m, _ in mine]
        tf = np.concatenate([tf, np.array([d.tf[term] for _, d in mine], np.int64)])
        dl = np.concatenate([dl, np.array([d.dl for _, d in mine], np.int64)])
    return ids, tf, dl


def _scan(client, user_id: str, lists: list[_List], added0: int, after_trip) -> None:
    """Read every list, ``PER_TRIP`` chunks per MULTI, each MULTI with the stream's
    ``entries-added``. A write moves another member's rank by one at most, so a list's next
    chunk starts as many members early as writes may have landed since its last read (those
    seen meanwhile, the rate of the last trip, and ``SLACK``); a chunk that proves its
    margin short (more writes since than it allowed for) is read again. Raises Moved when a
    margin would be half a chunk (a burst of writes) or the stream was recreated."""
    stream = store.key(user_id, "stream")
    writes, rate = 0, 0  # writes since the read began, as the last MULTI saw them; its delta
    while True:
        trip = [lst for lst in lists if not lst.done][:PER_TRIP]
        if not trip:
            return
        pipe = store.NamespacePipelines(client, transaction=True).for_namespace(user_id)
        starts = []
        for lst in trip:
            margin = writes - lst.writes_at + rate + SLACK
            if lst.covered and margin > CHUNK // 2:
                raise Moved(f"{margin} writes between two reads of a list")
            starts.append(max(0, lst.covered - margin) if lst.covered else 0)
            # The raw reply: redis-py's own WITHSCORES shaping (each RESP3 score formatted
            # back to text, then parsed) cost more than Redis's work here (_pairs).
            pipe.execute_command("ZRANGE", lst.key, starts[-1], starts[-1] + CHUNK - 1,
                                 "WITHSCORES")
        pipe.xinfo_stream(stream)
        *chunks, info = pipe.execute(raise_on_error=False)
        added = 0 if isinstance(info, Exception) else int(info["entries-added"])
        if added < added0 + writes:
            raise Moved("stream recreated")
        rate, writes = added - added0 - writes, added - added0
        for lst, start, items in zip(trip, starts, chunks, strict=True):
            if isinstance(items, Exception):
                raise items
            moved = writes - lst.writes_at  # since this list's last read
            if start and moved > lst.covered - start:
                continue  # its ranks moved past the margin: read this chunk again
            lst.writes_at = writes
            items = _pairs(items)
            if lst.until is not None and items and items[-1][1] > lst.until:
                lst.got.update((m, s) for m, s in items if s <= lst.until)
                lst.done = True
                continue
            lst.got.update(items)
            lst.done = len(items) < CHUNK
            lst.covered = start + CHUNK
        if after_trip is not None:
            after_trip()


def _pairs(reply: list) -> list:
    """``[(member, score), ...]`` of a raw ``ZRANGE ... WITHSCORES`` reply: RESP3's
    ``[[member, score], ...]`` (scores already doubles), or RESP2's flat
    ``[member, score, ...]`` (scores as text)."""
    if not reply:
        return reply
    if not isinstance(reply[0], list | tuple):
        reply = [(m, float(s)) for m, s in zip(reply[::2], reply[1::2], strict=True)]
    if isinstance(reply[0][0], bytes):  # a client that does not decode
        reply = [(m.decode(), s) for m, s in reply]
    return reply


def _written_since(client, user_id: str, field_name: str, head: dict) -> tuple[dict, dict]:
    """``({memory id: engine.Doc or None (deleted)}, the last feed.lua reply)``: the memories
    written after ``head``'s stream position, each with its document as it is now, and the
    reply whose N / total length describe that same moment. Raises Moved."""
    last, applied, changed = head["top"], head["added"], {}
    while True:
        got = feed_reply(client, user_id, field_name, last, FEED_COUNT)
        if cannot_follow(got, gen=head["gen"], format=head["format"], added=applied,
                         last_id=last):
            raise Moved("generation swapped, stream trimmed or recreated")
        for memory_id, raw in zip(got["ids"], got["docs"], strict=True):
            changed[memory_id] = doc_of(memory_id, raw) if raw else None
        if got["read"]:
            last, applied = got["read"][-1], applied + len(got["read"])
        elif applied < got["added"]:
            raise Moved("stream entries deleted")
        if applied >= got["added"]:
            return changed, got


def _fields(client, keys: list[str], names: tuple[str, ...]) -> list[list]:
    """HMGET of ``names`` on every key, ``CHUNK`` a round trip (each reply small)."""
    out = []
    for at in range(0, len(keys), CHUNK):
        pipe = client.pipeline(transaction=False)
        for key in keys[at:at + CHUNK]:
            pipe.hmget(key, names)
        out += pipe.execute()
    return out


def _lengths(client, prefix: str, memory_ids: list[str]) -> dict[str, int]:
    """Document lengths of ``memory_ids`` (absent: no document)."""
    got = _fields(client, [prefix + m for m in memory_ids], ("#dl",))
    return {m: int(dl) for m, (dl,) in zip(memory_ids, got, strict=True) if dl is not None}


class _Admits:
    """The type and conversation filter, as the serving index applies it (``engine``'s
    ``_accept``, ``search.lua``'s ``admits``): a memory of another type, or a short-term
    memory of another conversation, is left out. Each document's two fields read once,
    ``CHUNK`` HMGETs a round trip; the written ones come from their documents."""

    def __init__(self, client, prefix: str, changed: dict, conversation_id, types):
        self.client, self.prefix, self.changed = client, prefix, changed
        self.conv = conversation_id or ""
        self.types = set(types or ())
        self.known: dict[str, bool] = {}
        self.read = False  # whether any document's fields were read from Redis

    def __call__(self, memory_ids: list[str]) -> list[bool]:
        if not self.conv and not self.types:
            return [True] * len(memory_ids)
        unread = [m for m in memory_ids if m not in self.known]
        for m in unread:
            doc = self.changed.get(m)
            if doc is not None:
                self.known[m] = self._ok(doc.type, doc.conv)
        unread = [m for m in unread if m not in self.known]
        self.read = self.read or bool(unread)
        got = _fields(self.client, [self.prefix + m for m in unread], ("#type", "#conv"))
        for m, (type_, conv) in zip(unread, got, strict=True):
            self.known[m] = type_ is not None and self._ok(store.text(type_),
                                                           store.text(conv or ""))
        return [self.known[m] for m in memory_ids]

    def _ok(self, type_: str, conv: str) -> bool:
        return ((not self.types or type_ in self.types)
                and (not self.conv or not conv or conv == self.conv or type_ == "long_term"))
