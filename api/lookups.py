"""The lookups every adapter (REST, MCP) answers 404 with: one row by its id, or
``NotFound`` also when the row lies outside the token's namespaces or agents, so a
restricted token cannot even learn that it exists."""

from api.core import allowed_agent, allowed_namespace, require_every_agent
from memories.errors import NotFound
from memories.models import Conflict, Memory
from memories.validation import MEMORY_ID_RE
from recalls.models import RECALL_ID_RE, Recall
from recalls.readers import recall_find
from sessions.models import Session


def _visible(request, row: Memory | Session | None) -> bool:
    """Whether ``row`` exists within the token's namespaces and agents."""
    return row is not None and (allowed_namespace(request, row.user_id)
                                and allowed_agent(request, row.agent_id))


def memory_or_404(request, memory_id: str) -> Memory:
    """The memory ``memory_id``. Raises ``NotFound`` (field ``memory_id``)."""
    if not MEMORY_ID_RE.match(memory_id):
        raise NotFound(f"memory {memory_id!r} not found", field="memory_id")
    memory = Memory.objects.filter(memory_id=memory_id).first()
    if not _visible(request, memory):
        raise NotFound(f"memory {memory_id} not found", field="memory_id")
    return memory


def session_or_404(request, session_id: str) -> Session:
    """The session ``session_id``. Raises ``NotFound`` (field ``session_id``)."""
    session = Session.objects.filter(session_id=session_id).first()
    if not _visible(request, session):
        raise NotFound(f"session {session_id!r} not found", field="session_id")
    return session


def conflict_or_404(request, conflict_id: int) -> Conflict:
    """The proposed supersession ``conflict_id``. Raises ``PermissionDenied`` for a token
    restricted to agents (the review queue spans them all), ``NotFound`` (field
    ``conflict_id``)."""
    require_every_agent(request, "the review queue")
    c = Conflict.objects.filter(pk=conflict_id).first()
    if c is None or not allowed_namespace(request, c.user_id):
        raise NotFound(f"conflict {conflict_id} not found", field="conflict_id")
    return c


def recall_or_404(request, recall_id: str) -> Recall:
    """The traced recall ``recall_id`` (results and feedback prefetched; the log caught up
    first), visible when its namespace is the token's and, for a token restricted to
    agents, its agent is one of them or that token made it (not another token of its user,
    nor the console: their results may be other agents'). Raises ``NotFound``
    (field ``recall_id``)."""
    recall = recall_find(recall_id) if RECALL_ID_RE.match(recall_id or "") else None
    if recall is None or not allowed_namespace(request, recall.user_id) or not (
            allowed_agent(request, recall.agent_id)
            or (recall.token_id is not None
                and recall.token_id == getattr(request, "token_pk", None))):
        raise NotFound(f"recall {recall_id!r} not found", field="recall_id")
    return recall
