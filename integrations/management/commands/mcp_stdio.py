"""``manage.py mcp_stdio``: the MCP tools over stdin/stdout, for local MCP clients.

The client launches this command and speaks MCP on its stdin/stdout; the token (from
``MEMORY_CONSOLE_TOKEN``, or ``--token``, which other local users can read in the process
list) decides the role and namespaces, exactly as a bearer token does for the REST API,
and is checked again at every call (a revoked token stops working).

At start it says on stderr (stdout is the MCP channel) which database and Redis it uses,
and refuses a Redis that holds no Memory Console data under its key prefix
(``MEMORY_KEY_PREFIX``: no namespace's keys, memories or sessions): a client config copied
without ``REDIS_URL`` would otherwise run on whatever ``redis://127.0.0.1:6379/0`` holds,
often another program's data. A brand-new install has no data yet: ``--allow-empty-redis``
starts anyway. An unreachable Redis is only
reported: the tools then degrade as the REST API does.

``--default-namespace`` names the namespace the tools use when a call leaves ``user_id`` out.
"""

import os
import re
from urllib.parse import urlsplit, urlunsplit

import anyio
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from integrations.mcp.caller import (
    caller_for_token,
    check_default_namespace,
    use_default_namespace,
    use_token,
)
from integrations.mcp.runner import recycle_connections_between_calls
from integrations.mcp.server import server
from integrations.tracing.setup import setup as tracing_setup
from memories import store
from memories.errors import ServiceError


def redacted(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def database_label() -> str:
    """``vendor NAME on HOST:PORT`` of the default database (no password)."""
    s = connection.settings_dict
    where = f" on {s['HOST']}:{s['PORT'] or 'default port'}" if s.get("HOST") else ""
    return f"{connection.vendor} {s['NAME']}{where}"


def holds_product_data(client, prefix: str) -> bool:
    """Whether Redis holds the data of a namespace under ``prefix`` (keys
    ``prefix:{user_id}:...``, ``memories.store``): the set of namespaces first (one call),
    else a SCAN that stops at the first such key. The row cache's generation key does not
    count: any process that reads a token writes it. Raises RedisError."""
    if client.exists(f"{prefix}:namespaces"):
        return True
    pattern = re.sub(r"([*?\[\]\\])", r"\\\1", prefix) + ":{*"
    return next(iter(client.scan_iter(match=pattern, count=1000)), None) is not None


class Command(BaseCommand):
    help = ("Serve the MCP tools over stdio (token: MEMORY_CONSOLE_TOKEN or --token). "
            "Refuses a Redis without Memory Console data unless --allow-empty-redis.")

    def add_arguments(self, parser):
        parser.add_argument("--token", default="",
                            help="API token (default: the MEMORY_CONSOLE_TOKEN variable)")
        parser.add_argument("--default-namespace", default=None, metavar="USER_ID",
                            help="the namespace of calls that leave user_id out (default: "
                                 "the token's, when it is restricted to exactly one)")
        parser.add_argument("--allow-empty-redis", action="store_true",
                            help="start even though Redis holds no Memory Console data "
                                 "under MEMORY_KEY_PREFIX (a new install)")

    def handle(self, *args, token: str = "", default_namespace=None,
               allow_empty_redis: bool = False, **options):
        token = token or os.environ.get("MEMORY_CONSOLE_TOKEN", "")
        if not token:
            raise CommandError("no token: set MEMORY_CONSOLE_TOKEN or pass --token")
        self._say_stores()  # first: a token unknown here may be a token of another database
        caller = caller_for_token(token)
        if caller is None:
            raise CommandError("the token is unknown or revoked")
        if default_namespace is not None:
            try:
                check_default_namespace(caller, default_namespace, field="--default-namespace")
            except ServiceError as exc:
                raise CommandError(exc.message) from None
        self._check_stores(allow_empty_redis)
        recycle_connections_between_calls()
        use_token(token)
        tracing_setup()  # spans on stderr or to a collector, never on stdout (the MCP channel)
        use_default_namespace(default_namespace)
        anyio.run(server.run_stdio_async)

    def _say_stores(self) -> None:
        self.stderr.write(f"mcp_stdio: database {database_label()}")
        self.stderr.write(f"mcp_stdio: Redis {redacted(settings.REDIS_URL)} "
                          f"(key prefix {settings.MEMORY_KEY_PREFIX!r})")

    def _check_stores(self, allow_empty: bool) -> None:
        """CommandError for a Redis with no Memory Console data (unless ``allow_empty``)."""
        url, prefix = redacted(settings.REDIS_URL), settings.MEMORY_KEY_PREFIX
        try:
            found = holds_product_data(store.get_client(), prefix)
        except store.RedisError as exc:
            self.stderr.write(f"mcp_stdio: Redis is unreachable ({type(exc).__name__}): "
                              "writes go to the database and are indexed once it is back")
            return
        if not found and not allow_empty:
            raise CommandError(
                f"Redis {url} holds no Memory Console data under the key prefix {prefix!r}: "
                "set REDIS_URL (and MEMORY_KEY_PREFIX) to the server's, or pass "
                "--allow-empty-redis for a new install")
        if not found:
            self.stderr.write("mcp_stdio: Redis holds no Memory Console data yet "
                              "(--allow-empty-redis)")
