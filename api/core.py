"""The one NinjaAPI object: bearer auth, the error shape of every answer, shared schemas and
namespace checks. Routers per capability live beside it; ``api.urls`` mounts them."""

import copy
import datetime as dt

from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer
from pydantic import ConfigDict, Field

from accounts.tokens import token_expired_at, token_lookup
from integrations.metrics.registry import count_redis_error
from memories import store
from memories.errors import PermissionDenied, ServiceError


class BearerAuth(HttpBearer):
    def authenticate(self, request, token):
        row = token_lookup(token)
        if row is None:
            expired = token_expired_at(token)
            if expired is not None:  # the 401 says why (_auth_error)
                request.auth_refusal = (
                    f"this token expired at {expired.isoformat(timespec='seconds')}; "
                    "ask an admin for a new one"
                )
            return None
        request.user = copy.copy(row.user)  # the cached row is shared by threads
        request.token_namespaces = row.namespaces
        request.token_agents = row.agents
        request.token_pk = row.pk  # whose Idempotency-Keys (api.idempotency)
        return request.user


# Text no database can store is refused before any view runs, by
# memory_console.middleware.ApiJsonErrorsMiddleware (validation.check_storable_text).
api = NinjaAPI(title="Memory Console API", version="1", auth=BearerAuth(), urls_namespace="api")


def error_response(request, status: int, code: str, message: str, field=None, **extra):
    body = {"error": {"code": code, "message": message, "field": field, **extra}}
    return api.create_response(request, body, status=status)


@api.exception_handler(ServiceError)
def _service_error(request, exc: ServiceError):
    response = api.create_response(request, exc.as_dict(), status=exc.status)
    if "retry_after_seconds" in exc.extra:
        response["Retry-After"] = str(exc.extra["retry_after_seconds"])
    return response


@api.exception_handler(store.RedisError)
def _redis_error(request, exc):
    # Reads that need Redis (recall, readiness, health, hot windows) cannot answer without it;
    # writes never get here: they land in the database and are marked for resync.
    count_redis_error("api")
    return redis_error_response(request, exc)


def redis_error_response(request, exc, what: str = "Redis"):
    """503 for a request Redis could not serve: ``redis_full`` when it refused for memory
    (maxmemory with noeviction), ``unavailable`` when it could not be reached."""
    if isinstance(exc, store.OutOfMemoryError):
        return error_response(request, 503, "redis_full",
                      f"{what} is full (maxmemory reached) and refuses writes; try again once "
                      "it has room")
    return error_response(request, 503, "unavailable", f"{what} is unreachable; try again shortly")



@api.exception_handler(ValidationError)
def _validation_error(request, exc: ValidationError):
    message, field = validation_message(exc.errors)
    return error_response(request, 400, "invalid", message, field)


def validation_message(errors: list) -> tuple[str, str | None]:
    """``(message, field)`` of the first of pydantic's ``errors`` (``loc``, ``type``, ``msg``
    each), the field dotted (``tags.0``)."""
    first = errors[0] if errors else {}
    # loc is (where, ...): ("body", <parameter>, field, ...), ("query", name), ("path", name).
    # Only that prefix goes: a field may itself be called "query" (recall) or "path".
    loc = [str(p) for p in first.get("loc", [])]
    if loc and loc[0] in ("body", "query", "path", "header", "cookie", "form", "file"):
        where = loc.pop(0)
        if where == "body" and loc:
            loc.pop(0)  # the view's body parameter (``payload``)
    field = ".".join(loc) or None
    kind = first.get("type", "")
    if kind == "extra_forbidden":
        message = f"unknown field {field!r}"
    elif kind == "missing":
        message = f"{field} is required"
    else:
        message = f"{field}: {first.get('msg', 'invalid value')}" if field else first.get(
            "msg", "invalid request")
    return message, field


@api.exception_handler(AuthenticationError)
def _auth_error(request, exc):
    message = getattr(request, "auth_refusal", "missing or invalid bearer token")
    return error_response(request, 401, "unauthorized", message)


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    code = {400: "invalid", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code,
                                                                              "error")
    return error_response(request, exc.status_code, code, str(exc))


class Strict(Schema):
    model_config = ConfigDict(extra="forbid")


class ReasonIn(Strict):
    reason: str = Field(default="", max_length=1000)


def iso_or_none(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value else None


def allowed_namespace(request, user_id: str) -> bool:
    """Whether the request's token may touch namespace ``user_id`` (an empty restriction
    list, or a console session, allows every namespace the role allows)."""
    restricted = getattr(request, "token_namespaces", None)
    return not restricted or user_id in restricted



def is_restricted(request) -> bool:
    """Whether the request's token is restricted to some namespaces or agents."""
    return bool(getattr(request, "token_namespaces", None)
                or getattr(request, "token_agents", None))


def require_unrestricted(request, what: str, *, field: str | None = None) -> None:
    """Raise PermissionDenied (403) for a namespace- or agent-restricted token: settings
    that reach every namespace (the default profile, profiles of others, synonyms, tokens of
    superusers) need a token that reaches every namespace and agent."""
    if is_restricted(request):
        raise PermissionDenied(f"{what} needs a token that is not restricted to namespaces "
                               "or agents", field=field)


def allowed_agent(request, agent_id: str) -> bool:
    """Whether the request's token may read or change a memory of ``agent_id`` ("" none):
    an empty agent restriction (or a console session) allows every agent."""
    restricted = getattr(request, "token_agents", None)
    return not restricted or agent_id in restricted


def require_agent(request, agent_id: str | None) -> None:
    """Raise PermissionDenied (403) for a write as an agent outside the token's agents; a
    token restricted to agents writes only as one of them (``agent_id`` required)."""
    if getattr(request, "token_agents", None) and not allowed_agent(request, agent_id or ""):
        raise PermissionDenied(
            f"this token may not write as agent {agent_id!r}" if agent_id
            else "this token is restricted to some agents; name one in agent_id",
            field="agent_id")


def require_every_agent(request, what: str) -> None:
    """Raise PermissionDenied (403) for a token restricted to agents: ``what`` (an export,
    an import, the review queue, a cleanup, a consolidation, a reindex or reconcile, a job's
    status, the index health, the audit trail, the ranking lab's evaluations, judgments,
    query sets and runs, webhooks) reaches every agent's memories of a namespace."""
    if getattr(request, "token_agents", None):
        raise PermissionDenied(f"{what} reaches every agent's memories: it needs a token that "
                               "is not restricted to agents", field="agent_id")


def agent_scope(request, agent_id: str | None) -> list[str]:
    """The agents a read keeps: ``[agent_id]`` when named (403 outside the token's agents),
    else the token's agents (empty: every agent)."""
    restricted = list(getattr(request, "token_agents", None) or [])
    if agent_id is None:
        return restricted
    if restricted and agent_id not in restricted:
        raise PermissionDenied(f"this token may not read agent {agent_id!r}",
                               field="agent_id")
    return [agent_id]


def require_namespace(request, user_id: str | None) -> None:
    """Raise PermissionDenied (403) for a namespace outside the token's restriction; a
    restricted token may not act on every namespace at once (``user_id`` None)."""
    if user_id is None and getattr(request, "token_namespaces", None):
        raise PermissionDenied("this token is restricted to some namespaces; name one",
                               field="user_id")
    if user_id is not None and not allowed_namespace(request, user_id):
        raise PermissionDenied(f"this token may not access namespace {user_id!r}",
                               field="user_id")

