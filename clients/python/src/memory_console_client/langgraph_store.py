"""A LangGraph ``BaseStore`` backed by Memory Console (``pip install
'memory-console-client[langgraph]'``).

Mapping
-------
- **Namespaces.** ``(user_id,)`` holds the user's user-wide memories (no conversation);
  ``(user_id, conversation_id)`` the memories of one conversation. Longer or empty
  namespaces raise ``InvalidNamespaceError``; a search or listing prefix ``()`` or ``("*",)``
  lists namespaces across users, but a search names its user (``(user_id, ...)``).
- **Items and keys.** ``put(ns, key, value)`` writes one memory: its ``content`` is the
  value's text (the ``index`` fields when given, else ``value["content"]`` / ``"text"`` /
  ``"memory"``, else the value as JSON), and its ``metadata["langgraph"]`` keeps
  ``{"key", "value"}`` so ``get`` returns exactly the value that was put. ``put(...,
  None)`` (or ``delete``) forgets it (soft: restorable in the console). Memories written by
  other means appear as items too, keyed by their ``memory_id``, with the value
  ``{"content", "type", "tags", "metadata"}``. Two keys holding the same text in one
  namespace would be one memory to the server's deduplication, so the second gets its key
  prefixed to the content (``"key: text"``).
- **Facts over time.** A ``put`` that gives a key a new text does not overwrite: it writes
  a new memory that supersedes the key's current one, which stays readable with
  ``valid_until`` and ``superseded_by`` set (the server's own detector is off for these
  writes: the store says what is replaced). A value whose text is unchanged (other fields
  of the value changed) is a new version of the same memory. Putting back an earlier text
  makes that earlier memory hold again and supersede the current one. ``get`` answers the
  key's current memory and ``search`` current items only (superseded or ended facts leave
  them, also when a reviewer or ``invalidate`` ended them). The history of a key:
  ``store.client.list_memories(user_id, metadata={"langgraph.key": key})`` (every memory
  of the key, newest first, each with its validity), or ``store.client.recall(user_id,
  query, include_superseded=True)`` / ``as_of=``.
- **Search.** ``query`` runs our recall (BM25 with the store's ranking ``profile``) in the
  user's namespace; ``score`` is the recall's final score. ``filter`` applies LangGraph's own
  operators (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``) to the values, on the
  client: a filtered query looks at the top 100 recall hits at most. Without ``query`` the
  items come newest first. The memory filters every interface takes go to the server
  instead: ``filter`` keys ``since``, ``until`` (datetimes or ISO 8601), ``author``,
  ``tags`` (every one), ``agent_id``, ``run_id``, ``metadata`` (dotted path -> string),
  ``now`` and ``as_of`` (the facts valid then) are those filters, not value fields.
- **Agent scope.** ``MemoryConsoleStore(..., agent_id="planner", run_id="r-7")``: every
  ``put`` writes its memory with them, and a key is the agent's own (``get`` and ``put``
  find the key's memory among that agent's).
- **TTL** (minutes, LangGraph's unit) becomes a short-term memory with ``ttl_seconds =
  ttl * 60``; the server forgets it after that time. Our TTL counts from the write: reads
  do not refresh it (``refresh_ttl`` is accepted and has no effect), a ``put`` re-arms it.

Errors from the API (403 for a namespace outside the token, 400 ...) propagate as the
client's exceptions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterable
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path

# The filter and namespace-match semantics of LangGraph's InMemoryStore, reused so both stores
# agree (private helpers of the pinned langgraph release).
from langgraph.store.memory import _compare_values, _does_match

from .client import AsyncMemoryConsole, MemoryConsole
from .errors import NotFound
from .models import Memory

META = "langgraph"  # metadata key holding {"key", "value"} of a stored item
TEXT_FIELDS = ("content", "text", "memory")
MEMORY_ID = re.compile(r"^mem_[0-9a-f]{16}$")
PAGE = 100  # items asked per list page
RECALL_MAX = 100  # the API's largest recall limit
# ``search`` filter keys that are the server's memory filters (api.filters), not value fields.
SERVER_FILTERS = ("since", "until", "author", "tags", "agent_id", "run_id", "metadata", "now",
                  "as_of")

# A step of an operation: a function of the client whose result (awaited for the async
# client) is sent back into the operation's generator.
Step = Generator[Any, Any, Any]


def _scope(namespace: tuple[str, ...]) -> tuple[str, str | None]:
    if len(namespace) not in (1, 2):
        raise InvalidNamespaceError(
            f"namespace {namespace!r}: use (user_id,) or (user_id, conversation_id)")
    return namespace[0], (namespace[1] if len(namespace) == 2 else None)


def _namespace(user_id: str, conversation_id: str | None) -> tuple[str, ...]:
    return (user_id,) if conversation_id is None else (user_id, conversation_id)


def _text(value: dict[str, Any], index: list[str] | None) -> str:
    """The text a value is remembered (and recalled) by."""
    if index:
        parts = [t for path in index for t in get_text_at_path(value, tokenize_path(path))]
        text = "\n".join(p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)
                         for p in parts)
    else:
        text = next((value[f] for f in TEXT_FIELDS if isinstance(value.get(f), str)), "")
    return text if text.strip() else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _stored(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    held = (meta or {}).get(META)
    return held if isinstance(held, dict) and "key" in held else None


def _key_and_value(memory_id: str, content: str, type_: str, tags: list[str],
                   meta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    held = _stored(meta)
    if held is not None:
        return str(held["key"]), dict(held.get("value") or {})
    return memory_id, {"content": content, "type": type_, "tags": tags, "metadata": meta}


def _item(memory: Memory) -> Item:
    key, value = _key_and_value(memory.memory_id, memory.content, memory.type, memory.tags,
                                memory.metadata)
    return Item(value=value, key=key, namespace=_namespace(memory.user_id,
                                                           memory.conversation_id),
                created_at=memory.created_at, updated_at=memory.updated_at or memory.created_at)


def _now() -> datetime:
    return datetime.now(UTC)


def _matches(value: dict[str, Any], filter_: dict[str, Any] | None) -> bool:
    return not filter_ or all(_compare_values(value.get(k), v) for k, v in filter_.items())


class MemoryConsoleStore(BaseStore):
    """``MemoryConsoleStore("http://host:8000", token, profile="context")``: a LangGraph
    store on Memory Console (see the module docstring for the mapping). ``profile`` is the
    ranking profile of searches (None = the server's default); ``ttl`` a LangGraph
    ``TTLConfig`` (``default_ttl`` in minutes); ``agent_id`` / ``run_id`` the agent scope of
    its writes and keys; other keywords go to both clients."""

    supports_ttl = True

    def __init__(self, base_url: str, token: str, *, profile: str | None = None,
                 ttl: TTLConfig | None = None, agent_id: str | None = None,
                 run_id: str | None = None, **client_options: Any):
        self.profile = profile
        self.ttl_config = ttl
        self.agent_id, self.run_id = agent_id, run_id
        # Its recalls are traced under the interface "langgraph" (X-Memory-Client).
        client_options.setdefault("client_name", "langgraph")
        self.client = MemoryConsole(base_url, token, **client_options)
        self.aclient = AsyncMemoryConsole(base_url, token, **client_options)

    # drivers: run an operation's steps with the sync or the async client ---------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._drive(self._op(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return [await self._adrive(self._op(op)) for op in ops]

    def _drive(self, steps: Step) -> Any:
        try:
            step = next(steps)
            while True:
                try:
                    result = step(self.client)
                except Exception as exc:  # the operation may handle it (NotFound ...)
                    step = steps.throw(exc)
                else:
                    step = steps.send(result)
        except StopIteration as done:
            return done.value

    async def _adrive(self, steps: Step) -> Any:
        try:
            step = next(steps)
            while True:
                try:
                    result = await step(self.aclient)
                except Exception as exc:
                    step = steps.throw(exc)
                else:
                    step = steps.send(result)
        except StopIteration as done:
            return done.value

    def close(self) -> None:
        self.client.close()

    async def aclose(self) -> None:
        await self.aclient.aclose()

    # operations, written once as generators of client steps -----------------------------
    def _op(self, op: Op) -> Step:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation {op!r}")

    def _find(self, namespace: tuple[str, ...], key: str) -> Step:
        """The current memory of item (namespace, key): the newest one of the key whose fact
        holds (neither forgotten, superseded nor ended), or None."""
        user_id, conversation_id = _scope(namespace)
        cursor = None
        while True:
            page = yield lambda c, cursor=cursor: c.list_memories(
                user_id, conversation_id=conversation_id or "", agent_id=self.agent_id,
                metadata={f"{META}.key": key}, cursor=cursor, limit=PAGE)
            current = next((m for m in page.items if m.holds), None)
            if current is not None:
                return current
            cursor = page.next_cursor
            if cursor is None:
                break
        if MEMORY_ID.match(key):  # a memory written by other means, keyed by its id
            try:
                memory = yield lambda c: c.get_memory(key)
            except NotFound:
                return None
            if (memory.user_id, memory.conversation_id) == (user_id, conversation_id) and (
                    memory.deleted_at is None and memory.holds
                    and _stored(memory.metadata) is None):
                return memory
        return None

    def _get(self, op: GetOp) -> Step:
        memory = yield from self._find(op.namespace, op.key)
        return _item(memory) if memory is not None else None

    def _put(self, op: PutOp) -> Step:
        user_id, conversation_id = _scope(op.namespace)
        existing = yield from self._find(op.namespace, op.key)
        if op.value is None:
            if existing is not None:
                yield lambda c: c.forget(existing.memory_id, reason="LangGraph store delete")
            return None
        value = dict(op.value)
        text = _text(value, op.index or None)
        meta = {META: {"key": op.key, "value": value}}
        same_text = existing is not None and existing.content in (text, f"{op.key}: {text}")
        if same_text and op.ttl is None and existing.type == "long_term":
            # The same fact, other fields of the value changed: a new version of it.
            yield lambda c: c.update_memory(existing.memory_id, metadata=meta,
                                            reason="LangGraph store put")
            return None
        if same_text:  # a TTL is (re-)armed only by a new write of the same fact
            yield lambda c: c.forget(existing.memory_id, reason="LangGraph store put (TTL)")
            existing = None
        ttl = {"type": "short_term", "ttl_seconds": max(1, round(op.ttl * 60))} if op.ttl else {}
        # A replacement says itself what it supersedes: no proposals of the server's own.
        mode = {"supersession": "off"} if existing is not None else {}
        for content in (text, f"{op.key}: {text}"):
            made = yield lambda c, content=content: c.remember(
                user_id, content, conversation_id=conversation_id, metadata=meta,
                source="langgraph", agent_id=self.agent_id, run_id=self.run_id, **ttl, **mode)
            held = _stored(made.metadata)
            if not made.deduplicated:
                break
            if held and held.get("key") == op.key:  # an earlier fact of this key, put back
                yield from self._reinstate(made, existing, meta)
                return None
        else:
            raise ValueError(
                f"key {op.key!r}: its text is already another item's in {op.namespace}")
        if existing is not None:
            yield lambda c: c.update_memory(made.memory_id, supersedes=[existing.memory_id],
                                            supersession="off", reason="LangGraph store put")
        return None

    def _reinstate(self, earlier: Memory, current: Memory | None,
                   meta: dict[str, Any]) -> Step:
        """``earlier`` (a memory of the key, its text put again) holds again, from now, and
        supersedes ``current``."""
        if not earlier.holds:
            earlier = yield lambda c: c.revalidate(earlier.memory_id,
                                                   "LangGraph store put: value put back")
        change: dict[str, Any] = {"metadata": meta, "supersession": "off"}
        if current is not None and current.memory_id != earlier.memory_id:
            change["supersedes"] = [current.memory_id]
            starts = max(earlier.updated_at or _now(), current.valid_from or _now())
            if earlier.valid_from is None or earlier.valid_from < starts:
                change["valid_from"] = starts
        yield lambda c: c.update_memory(earlier.memory_id, reason="LangGraph store put",
                                        **change)

    def _search(self, op: SearchOp) -> Step:
        prefix = op.namespace_prefix
        if not prefix or prefix[0] == "*" or len(prefix) > 2:
            raise InvalidNamespaceError(
                f"search prefix {prefix!r}: name the user, (user_id,) or (user_id, conv)")
        user_id, conversation_id = prefix[0], (prefix[1] if len(prefix) == 2 else None)
        want = op.offset + op.limit
        found: list[SearchItem] = []
        values = dict(op.filter or {})
        server = {k: values.pop(k) for k in SERVER_FILTERS if k in values}
        if op.query:
            asked = min(RECALL_MAX, want * (4 if values else 1))
            result = yield lambda c: c.recall(user_id, op.query, conversation_id=conversation_id,
                                              limit=asked, profile=self.profile, **server)
            for hit in result.results:
                if conversation_id is not None and hit.conversation_id != conversation_id:
                    continue  # recall in a conversation also brings user-wide memories
                key, value = _key_and_value(hit.memory_id, hit.content, hit.type, hit.tags,
                                            hit.metadata)
                if _matches(value, values):
                    found.append(SearchItem(_namespace(user_id, hit.conversation_id), key,
                                            value, hit.created_at, hit.created_at, hit.score))
            return found[op.offset:want]
        cursor = None
        while len(found) < want:
            page = yield lambda c, cursor=cursor: c.list_memories(
                user_id, conversation_id=conversation_id, cursor=cursor, limit=PAGE, **server)
            for memory in page.items:
                if not ("as_of" in server or "now" in server or memory.holds):
                    continue  # superseded or ended: history, not a current item
                item = _item(memory)
                if _matches(item.value, values):
                    found.append(SearchItem(item.namespace, item.key, item.value,
                                            item.created_at, item.updated_at))
            cursor = page.next_cursor
            if cursor is None:
                break
        return found[op.offset:want]

    def _list_namespaces(self, op: ListNamespacesOp) -> Step:
        conditions = op.match_conditions or ()
        user_id = next((c.path[0] for c in conditions if c.match_type == "prefix" and c.path
                        and c.path[0] != "*"), None)
        want, seen, out, cursor = op.offset + op.limit, set(), [], None
        while len(out) < want:
            page = yield lambda c, cursor=cursor: c.list_namespaces(
                user_id=user_id, cursor=cursor, limit=PAGE)
            for row in page.items:
                ns = _namespace(row.user_id, row.conversation_id)
                if not all(_does_match(cond, ns) for cond in conditions):
                    continue
                ns = ns[:op.max_depth] if op.max_depth is not None else ns
                if ns not in seen:
                    seen.add(ns)
                    out.append(ns)
            cursor = page.next_cursor
            if cursor is None:
                break
        return out[op.offset:want]
