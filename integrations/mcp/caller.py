"""Who is calling a tool: the API token's user and namespace restriction.

The MCP transports authenticate exactly as the REST API does (the same token lookup, roles
and namespace restriction). The bearer token travels to the tools in a context variable
(asyncio tasks and asgiref's thread hops both carry it along) and is resolved again at every
call, so a token revoked while a stdio server runs stops working with its next call. A
``Caller`` has the attributes the API's permission helpers read from a request
(``user``, ``token_namespaces``, ``token_agents``), so those helpers take it unchanged.

The default namespace spares a model from choosing ``user_id``: the one a connection names
(``mcp_stdio --default-namespace``, the ``X-Memory-Namespace`` header of ``/mcp``), else the
only namespace of a token restricted to exactly one; tools that take ``user_id`` use it when
the call gives none (``user_id_or_default``).
"""

import contextvars
import copy
from dataclasses import dataclass, field

from accounts.tokens import token_lookup
from memories.errors import InvalidInput, PermissionDenied, ServiceError
from memories.validation import clean_identifier


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"


@dataclass(frozen=True)
class Caller:
    user: object
    token_namespaces: list[str] = field(default_factory=list)
    token_agents: list[str] = field(default_factory=list)
    default_namespace: str | None = None
    token_pk: int | None = None  # the API token's id (the recall log's per-token usage)


_token: contextvars.ContextVar[str] = contextvars.ContextVar("mcp_token", default="")
_named_default: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "mcp_default_namespace", default=None)


def caller_for_token(token: str) -> Caller | None:
    """The caller a bearer token stands for, or None (unknown, revoked, inactive user).
    Reads the database (through the row cache): call it from a sync context."""
    row = token_lookup(token)
    if row is None:
        return None
    # The cached row is shared by the process's threads: never hand its user out.
    namespaces = list(row.namespaces)
    only = namespaces[0] if len(namespaces) == 1 else None
    return Caller(user=copy.copy(row.user), token_namespaces=namespaces,
                  token_agents=list(row.agents),
                  default_namespace=_named_default.get() or only, token_pk=row.pk)


def use_token(token: str) -> contextvars.Token:
    """Make ``token`` the credential of the tool calls that follow in this context."""
    return _token.set(token)


def forget_token(marker: contextvars.Token) -> None:
    _token.reset(marker)


def check_default_namespace(caller: Caller, name: str, *, field: str) -> None:
    """Refuse a default namespace the caller could not use: InvalidInput (400) for a bad
    identifier, PermissionDenied (403) outside a restricted token's namespaces; both name
    ``field`` (the header or option that gave it)."""
    clean_identifier(name, field)
    if caller.token_namespaces and name not in caller.token_namespaces:
        raise PermissionDenied(f"this token may not access namespace {name!r}", field=field)


def use_default_namespace(name: str | None) -> contextvars.Token:
    """Make ``name`` the default namespace of the tool calls that follow in this context
    (None: only a token restricted to one namespace gives a default). Check it first with
    ``check_default_namespace``."""
    return _named_default.set(name)


def forget_default_namespace(marker: contextvars.Token) -> None:
    _named_default.reset(marker)


def user_id_or_default(caller: Caller, user_id: str | None) -> str:
    """``user_id`` when given, else the caller's default namespace; InvalidInput naming
    ``user_id`` when there is neither."""
    if user_id is not None:
        return user_id
    if caller.default_namespace is None:
        raise InvalidInput(
            "user_id is required: this connection has no default namespace (a token "
            "restricted to one namespace, mcp_stdio --default-namespace or the "
            "X-Memory-Namespace header gives one)", field="user_id")
    return caller.default_namespace


def current_caller() -> Caller:
    """The caller of this tool call; Unauthorized (401) for a missing or dead token."""
    caller = caller_for_token(_token.get())
    if caller is None:
        raise Unauthorized("missing or invalid bearer token")
    return caller
