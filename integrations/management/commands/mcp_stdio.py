"""``manage.py mcp_stdio``: the MCP tools over stdin/stdout, for local MCP clients.

The client launches this command and speaks MCP on its stdin/stdout; the token (from
``MEMORY_CONSOLE_TOKEN``, or ``--token``, which other local users can read in the process
list) decides the role and namespaces, exactly as a bearer token does for the REST API,
and is checked again at every call (a revoked token stops working).
"""

import os

import anyio
from django.core.management.base import BaseCommand, CommandError

from integrations.mcp.caller import caller_for_token, use_token
from integrations.mcp.runner import recycle_connections_between_calls
from integrations.mcp.server import server


class Command(BaseCommand):
    help = "Serve the MCP tools over stdio (token: MEMORY_CONSOLE_TOKEN or --token)."

    def add_arguments(self, parser):
        parser.add_argument("--token", default="",
                            help="API token (default: the MEMORY_CONSOLE_TOKEN variable)")

    def handle(self, *args, token: str = "", **options):
        token = token or os.environ.get("MEMORY_CONSOLE_TOKEN", "")
        if not token:
            raise CommandError("no token: set MEMORY_CONSOLE_TOKEN or pass --token")
        if caller_for_token(token) is None:
            raise CommandError("the token is unknown or revoked")
        recycle_connections_between_calls()
        use_token(token)
        anyio.run(server.run_stdio_async)
