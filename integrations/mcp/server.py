"""The MCP server: tools and resources over Memory Console (``mcp`` SDK's MCPServer).

One instance per process, shared by both transports: ``/mcp`` (Streamable HTTP, stateless,
``integrations.mcp.views``) and ``manage.py mcp_stdio``. The tools are listed in
``memory_tools.TOOLS`` and ``session_tools.TOOLS``, the resources in
``session_tools.RESOURCES``.
"""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from pydantic import ValidationError

from integrations.mcp import memory_tools, session_tools
from integrations.mcp.runner import error_body, error_result
from memories.errors import InvalidInput
from memories.validation import check_storable_text

INSTRUCTIONS = (
    "Long-term memory for agents. Memories live in namespaces (user_id). Remember with "
    "add_memory, recall with search_memories (BM25 ranking, every result explained), "
    "forget with delete_memory. When a fact replaces an older one (a new address), add it "
    "with supersedes: [the old memory's id]; search_memories answers facts valid now, or "
    "as_of a date; invalidate_memory ends a fact. Conversations: create_session, append_messages, get_context; "
    "promote turns a message or working memory into a long-term memory."
)


class ConsoleServer(MCPServer):
    """MCPServer whose argument errors read like the REST API's: an unknown argument, one
    the input schema refuses, or text no database can store (NUL, a lone surrogate: what
    the API's middleware refuses) is an error result ``{"error": {"code": "invalid",
    "message", "field"}, "status": 400}`` naming it (the SDK alone would ignore unknown
    arguments and answer schema errors as free text)."""

    async def call_tool(self, name, arguments, context=None):
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            unknown = sorted(set(arguments) - set(tool.parameters.get("properties", {})))
            if unknown:
                return error_result(error_body(
                    InvalidInput(f"unknown field {unknown[0]!r}", field=unknown[0])))
            try:
                check_storable_text(arguments)
            except InvalidInput as exc:
                return error_result(error_body(exc))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return error_result(error_body(exc.__cause__))
            raise


def build_server() -> MCPServer:
    # subscriptions=False: no `subscriptions/listen`. Its answer is a stream that lasts as long
    # as its client, which over /mcp (stateless, answers handed over whole) would hold a web
    # thread and never deliver; and nothing here changes its tools or resources to announce.
    server = ConsoleServer("memory-console", title="Memory Console",
                           instructions=INSTRUCTIONS, version="1", log_level="WARNING",
                           subscriptions=False)
    for fn, annotations in memory_tools.TOOLS + session_tools.TOOLS:
        server.add_tool(fn, annotations=annotations, structured_output=True)
    # Ids are opaque strings, not file paths: "a/../b" or "/lead" are valid ids (as on every
    # REST route), so the SDK's path-traversal checks would refuse real records.
    ids_are_not_paths = ResourceSecurity(reject_path_traversal=False, reject_absolute_paths=False)
    for uri, name, fn in session_tools.RESOURCES:
        server.resource(uri, name=name, mime_type="application/json",
                        security=ids_are_not_paths)(fn)
    return server


server = build_server()
