"""Context built by the server: the neighbouring turns a memory is indexed with.

A memory written with a ``conversation_id`` and no ``context`` gets the text of the
``PREVIOUS`` memories before it in that conversation (by ``created_at``) and, once it
arrives, the ``NEXT`` one after it (``context_from = "conversation"``). A memory promoted
from a session message gets the messages around that message in its session
(``context_from = "session"``). Two previous turns and the next one measured best on LoCoMo
dev (docs/benchmarks.md, quality).

A memory's neighbours are the memories of its own agent only (the same ``agent_id``; an
unscoped memory, ``agent_id`` "", has only unscoped ones): one agent's turns never enter
another agent's context, and one agent's write never rebuilds another agent's memories.

When a neighbour arrives later (the next memory of the conversation, the next message of the
session), the server-built context of the memories it neighbours is rebuilt in the same
transaction as that write, and re-mirrored after its commit, so the write that brings the
next turn returns with its predecessor already reindexed.

Why a new index state and not a new version: the context is derived from *other* rows, as
the postings are. Writing a version of the previous memory for every turn that follows it
would double the history of every conversation, and would move that memory's ``version``
under its own client (whose next PATCH with ``version`` would get a 409 for a change it
never made). So the rebuild updates the row's ``context`` in place (no history row) and
re-mirrors the same version; ``put.lua`` accepts an equal version. What a memory was indexed
with stays reproducible: it is a function of its neighbours, which are versioned. A context
given by the client (``context_from = "client"``) or copied by ``memory_promote`` (``"copy"``)
is never rebuilt; PATCH and rollback version it like any field. The session side lives in
``sessions/promote.py`` (a message's neighbours are session rows).
"""

import functools

from django.db import connection, transaction

from memories.mirror import sync_memory
from memories.models import Memory

PREVIOUS = 2
NEXT = 1

CLIENT, CONVERSATION, SESSION, COPY = "client", "conversation", "session", "copy"


def _live(user_id: str, conversation_id: str, agent_id: str):
    """The live memories of one agent's turns of a conversation (a window's candidates)."""
    return Memory.objects.filter(user_id=user_id, conversation_id=conversation_id,
                                 agent_id=agent_id, deleted_at__isnull=True)


# How many rows each side of the window reads (the rows at ``memory``'s own time on either
# side are sorted out by id afterwards: see _trim).
BEFORE_ROWS = PREVIOUS + 1
AFTER_ROWS = PREVIOUS + NEXT


def _trim(memory: Memory, before: list[Memory], after: list[Memory]
          ) -> tuple[list[Memory], list[Memory]]:
    """The window from the rows read at or before / at or after ``memory``'s time: strictly
    before / after it by ``(created_at, memory_id)``, oldest first."""
    key = (memory.created_at, memory.memory_id)
    order = lambda m: (m.created_at, m.memory_id)  # noqa: E731
    before = sorted(before, key=order, reverse=True)[:BEFORE_ROWS]
    after = sorted(after, key=order)[:AFTER_ROWS]
    before = [m for m in before if order(m) < key][:BEFORE_ROWS]
    after = [m for m in after if order(m) > key][:AFTER_ROWS]
    return before[::-1], after


def _neighbours(memory: Memory) -> tuple[list[Memory], list[Memory]]:
    """Up to PREVIOUS + NEXT + 1 live memories of its agent before and after ``memory``
    (oldest first)."""
    rows = _live(memory.user_id, memory.conversation_id, memory.agent_id).exclude(memory_id=memory.memory_id)
    before = list(rows.filter(created_at__lte=memory.created_at)
                  .order_by("-created_at", "-memory_id")[:BEFORE_ROWS])
    after = list(rows.filter(created_at__gte=memory.created_at)
                 .order_by("created_at", "memory_id")[:AFTER_ROWS])
    return _trim(memory, before, after)


def join_context(before: list[str], after: list[str]) -> str:
    return "\n".join([*before[-PREVIOUS:], *after[:NEXT]])


def conversation_context(memory: Memory) -> str:
    """The context text of ``memory`` from its conversation's neighbours (of its agent)
    right now."""
    before, after = _neighbours(memory)
    return join_context([m.content for m in before], [m.content for m in after])


@functools.cache
def _context_update_sql() -> str:
    """The one statement of a rebuild, built once: the ORM's ``update()`` of the same column
    compiled it again on every single create whose predecessor gains it as its next turn.
    Like ``update()``, no signal."""
    qn = connection.ops.quote_name
    field = Memory._meta.get_field
    return (f"UPDATE {qn(Memory._meta.db_table)} SET {qn(field('context').column)} = %s "
            f"WHERE {qn(field('memory_id').column)} = %s")


def context_rebuilt(memory: Memory, text: str, *, sync: bool = True) -> bool:
    """Store a rebuilt server context in place (no version, see the module docstring) and,
    with ``sync``, re-mirror the row after the commit (without: the caller mirrors it, as
    :func:`memory_create` does in one pipeline with the new memory). Returns whether the
    text changed. Call inside the writing transaction."""
    if memory.context == text:
        return False
    memory.context = text
    with connection.cursor() as cursor:
        cursor.execute(_context_update_sql(), [text, memory.memory_id])
    if sync:
        transaction.on_commit(lambda m=memory: sync_memory(m.memory_id, memory=m))
    return True


class Window:
    """The live memories of its agent around one new memory of a conversation, read once (two indexed
    queries): up to ``PREVIOUS + 1`` before it and ``PREVIOUS + NEXT`` after it, enough to
    build its own context and that of every neighbour whose window it enters (the one
    before it reads the two before that; the second after it reads the one after that)."""

    def __init__(self, memory: Memory, rows: tuple[list[Memory], list[Memory]] | None = None):
        """``rows``: the rows of its agent at or before and at or after ``memory``'s time,
        when the caller has read them (``BEFORE_ROWS`` / ``AFTER_ROWS`` of each, nearest first)."""
        self.memory = memory
        if not memory.conversation_id:
            self.before, self.after = [], []
        elif rows is not None:
            self.before, self.after = _trim(memory, *rows)
        else:
            self.before, self.after = _neighbours(memory)

    def context(self) -> str:
        """The new memory's own context (what :func:`conversation_context` would give)."""
        return join_context([m.content for m in self.before], [m.content for m in self.after])

    def arrived(self) -> list[Memory]:
        """After the new memory is saved: rebuild the server-built contexts of the memories
        whose window now holds it (the one before it, the two after it), in place, without
        a sync; returns those whose context changed (the caller mirrors them)."""
        if not self.memory.conversation_id:
            return []
        row = [*self.before, self.memory, *self.after]
        at = len(self.before)
        changed = []
        for i in [*range(at - NEXT, at), *range(at + 1, at + 1 + PREVIOUS)]:
            if not 0 <= i < len(row) or row[i].context_from != CONVERSATION:
                continue
            text = join_context([m.content for m in row[max(0, i - PREVIOUS):i]],
                                [m.content for m in row[i + 1:i + 1 + NEXT]])
            if context_rebuilt(row[i], text, sync=False):
                changed.append(row[i])
        return changed


def _by_user(keys) -> dict[str, list[str]]:
    """The conversations of each namespace among ``(user_id, conversation_id, agent_id)``
    keys (each once: one agent's window and another's read the same rows)."""
    by_user: dict[str, dict[str, None]] = {}
    for user_id, conversation_id, _agent_id in keys:
        by_user.setdefault(user_id, {})[conversation_id] = None
    return {user_id: list(conversations) for user_id, conversations in by_user.items()}


def _building(groups: dict[tuple[str, str, str], list[Memory]]
              ) -> dict[tuple[str, str, str], list[Memory]]:
    """The windows of ``groups`` (an agent's turns of a conversation) where some memory builds its context from the
    conversation: a new one of the batch, or a stored one (one query per namespace and 500
    conversations, reading no row). Only their stored rows are read: a bulk load whose
    contexts are the client's read every stored row of every conversation it touched, which
    for a batch spread over a namespace's conversations is most of the namespace."""
    needed = {key for key, members in groups.items()
              if any(m.context_from == CONVERSATION for m in members)}
    rest = [key for key in groups if key not in needed]
    for user_id, conversations in _by_user(rest).items():
        for start in range(0, len(conversations), 500):
            needed.update((user_id, c, a) for c, a in Memory.objects.filter(
                user_id=user_id, deleted_at__isnull=True, context_from=CONVERSATION,
                conversation_id__in=conversations[start:start + 500],
            ).values_list("conversation_id", "agent_id").distinct())
    return {key: members for key, members in groups.items() if key in needed}


def batch_contexts(new: list[Memory]) -> list[str]:
    """Server-built contexts for a bulk write (``memory_create_many``, an import): each
    memory of ``new`` whose ``context_from`` is ``conversation`` gets the context its
    conversation gives it once the whole batch is in (neighbours of its agent from the
    batch and from the live rows already stored), set on the unsaved instance; stored memories whose
    window now holds a new one are rebuilt in place (:func:`context_rebuilt`). One query
    per namespace and 500 conversations (two where some conversation's new memories all
    bring their own context: :func:`_building`). Call inside the writing transaction, before
    the batch is inserted. Returns the ids of the stored memories rebuilt."""
    # One window per agent's turns of a conversation: every new turn is a neighbour of its
    # agent's turns, whoever built its own context.
    groups: dict[tuple[str, str, str], list[Memory]] = {}
    for m in new:
        if m.conversation_id:
            groups.setdefault((m.user_id, m.conversation_id, m.agent_id), []).append(m)
    groups = _building(groups)
    if not groups:
        return []
    stored: dict[tuple[str, str, str], list[Memory]] = {key: [] for key in groups}
    by_user = _by_user(groups)
    for user_id, conversations in by_user.items():
        for start in range(0, len(conversations), 500):
            rows = Memory.objects.filter(user_id=user_id, deleted_at__isnull=True,
                                         conversation_id__in=conversations[start:start + 500])
            for m in rows:  # another agent's turns (a window not in groups) are no neighbours
                window = stored.get((user_id, m.conversation_id, m.agent_id))
                if window is not None:
                    window.append(m)
    touched = []
    for key, members in groups.items():
        fresh = {m.memory_id for m in members}
        turns = sorted([*stored[key], *members], key=lambda m: (m.created_at, m.memory_id))
        for i, m in enumerate(turns):
            if m.context_from != CONVERSATION:
                continue
            window = turns[max(0, i - PREVIOUS):i + NEXT + 1]
            if m.memory_id not in fresh and not any(w.memory_id in fresh for w in window):
                continue
            text = join_context([t.content for t in turns[max(0, i - PREVIOUS):i]],
                                [t.content for t in turns[i + 1:i + 1 + NEXT]])
            if m.memory_id in fresh:
                m.context = text
            elif m.context != text:
                context_rebuilt(m, text)
                touched.append(m.memory_id)
    return touched
