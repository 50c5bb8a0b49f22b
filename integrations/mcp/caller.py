"""Who is calling a tool: the API token's user and namespace restriction.

The MCP transports authenticate exactly as the REST API does (the same token lookup, roles
and namespace restriction). The bearer token travels to the tools in a context variable
(asyncio tasks and asgiref's thread hops both carry it along) and is resolved again at every
call, so a token revoked while a stdio server runs stops working with its next call. A
``Caller`` has the two attributes the API's permission helpers read from a request
(``user``, ``token_namespaces``), so those helpers take it unchanged.
"""

import contextvars
import copy
from dataclasses import dataclass, field

from accounts.tokens import token_lookup
from memories.errors import ServiceError


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"


@dataclass(frozen=True)
class Caller:
    user: object
    token_namespaces: list[str] = field(default_factory=list)


_token: contextvars.ContextVar[str] = contextvars.ContextVar("mcp_token", default="")


def caller_for_token(token: str) -> Caller | None:
    """The caller a bearer token stands for, or None (unknown, revoked, inactive user).
    Reads the database (through the row cache): call it from a sync context."""
    row = token_lookup(token)
    if row is None:
        return None
    # The cached row is shared by the process's threads: never hand its user out.
    return Caller(user=copy.copy(row.user), token_namespaces=list(row.namespaces))


def use_token(token: str) -> contextvars.Token:
    """Make ``token`` the credential of the tool calls that follow in this context."""
    return _token.set(token)


def forget_token(marker: contextvars.Token) -> None:
    _token.reset(marker)


def current_caller() -> Caller:
    """The caller of this tool call; Unauthorized (401) for a missing or dead token."""
    caller = caller_for_token(_token.get())
    if caller is None:
        raise Unauthorized("missing or invalid bearer token")
    return caller
