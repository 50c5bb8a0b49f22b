"""``POST /memories/batch``: many creates in one request, for editors.

Each item is a single create (``POST /memories``' body, its validation, dedup and supersession)
in its own transaction: a bad item gets its own error and never stops the others, and what
was written stays written. ``Idempotency-Key`` (``api.idempotency``) replays the first
answer to a retried request.
"""

from typing import Any, Literal

from ninja import Router
from pydantic import Field, ValidationError
from pydantic_core import core_schema

from accounts.roles import require_role
from api import idempotency
from api.core import Strict, allowed_namespace, api, require_agent, validation_message
from api.memories import create_fields
from api.memory_bodies import INDEX_PENDING, MemoryIn
from api.schemas import WRITE, ErrorDetail, Out, errors
from integrations.metrics.registry import count_redis_error
from memories import services
from memories.errors import InvalidInput, PermissionDenied, ServiceError, TooLarge

router = Router()

BATCH_MAX = 500


class _Item:
    """An item taken as it comes (each is checked on its own: a bad one is its result's
    error, not a 400 of the request), documented as ``MemoryIn``."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        return core_schema.any_schema()

    @classmethod
    def __get_pydantic_json_schema__(cls, schema, handler):
        return handler(MemoryIn.__pydantic_core_schema__)


class BatchIn(Strict):
    memories: list[_Item] = Field(
        description=f"1..{BATCH_MAX} bodies of POST /memories (413 beyond; infer is refused)")


class BatchItemOut(Out):
    """One item's result, in input order: ``created`` (201's memory), ``deduplicated`` (the
    live memory with the same text in the same scope) or ``error`` (the error envelope's
    ``{"code", "message", "field"}``, the field within the item)."""

    index: int
    status: Literal["created", "deduplicated", "error"]
    memory_id: str = Field(default=None)
    error: ErrorDetail = Field(default=None)


class BatchOut(Out):
    results: list[BatchItemOut]


@router.post("/memories/batch", response={201: BatchOut, **errors(*WRITE, 409)},
             tags=["memories"], exclude_unset=True)
def batch_create(request, payload: BatchIn):
    """Create up to 500 memories: 201 ``{"results": [{"index", "status", "memory_id"?,
    "error"?}]}`` (each item as ``POST /memories``; an item outside the token's namespaces
    is its own ``forbidden`` error). 413 naming ``memories`` beyond 500; ``X-Warning:
    index_pending`` when Redis missed a write. With ``Idempotency-Key``, a retry answers the
    first request's results (409 while it runs or with another body)."""
    require_role(request.user, "editor")
    if not payload.memories:
        raise InvalidInput("memories must not be empty", field="memories")
    if len(payload.memories) > BATCH_MAX:
        raise TooLarge(f"at most {BATCH_MAX} memories a batch; got {len(payload.memories)}",
                       field="memories", limit=BATCH_MAX)
    key = idempotency.idempotency_key(request)
    if key is not None and (kept := idempotency.replay(request, key)) is not None:
        response = api.create_response(request, kept[1], status=kept[0])
        response["Idempotent-Replayed"] = "true"
        return response
    try:
        results, pending = [], False
        for index, item in enumerate(payload.memories):
            result, memory = _create_one(request, index, item)
            results.append(result)
            pending = pending or bool(memory is not None and memory.needs_resync)
    except BaseException:
        if key is not None:
            idempotency.release(request, key)
        raise
    body = {"results": results}
    if key is not None:
        idempotency.remember(request, key, 201, body)
    response = api.create_response(request, body, status=201)
    if pending:
        count_redis_error("mirror")
        response["X-Warning"] = INDEX_PENDING
    return response


def _create_one(request, index: int, item) -> tuple[dict, Any]:
    """``(result, memory or None)`` of one item."""
    try:
        if not isinstance(item, dict):
            raise InvalidInput("each item must be an object (a POST /memories body)")
        try:
            payload = MemoryIn.model_validate(item)
        except ValidationError as exc:
            message, field = validation_message(exc.errors())
            raise InvalidInput(message, field=field) from exc
        if payload.infer:
            raise InvalidInput("infer is not taken in a batch; use POST /memories",
                               field="infer")
        if not allowed_namespace(request, payload.user_id):
            raise PermissionDenied(f"this token may not access namespace {payload.user_id!r}",
                                   field="user_id")
        require_agent(request, payload.agent_id)
        fields = create_fields(payload)
        fields.pop("infer")
        memory, dup = services.memory_create(actor=request.user, **fields)
    except ServiceError as exc:
        return {"index": index, "status": "error", **exc.as_dict()}, None
    return {"index": index, "status": "deduplicated" if dup else "created",
            "memory_id": memory.memory_id}, memory
