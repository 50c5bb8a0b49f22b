"""The MCP server: tools and resources over Memory Console (``mcp`` SDK's MCPServer).

One instance per process, shared by both transports: ``/mcp`` (Streamable HTTP, stateless,
``integrations.mcp.views``) and ``manage.py mcp_stdio``. The tools are listed in
``memory_tools.TOOLS`` and ``session_tools.TOOLS``, the resources in
``session_tools.RESOURCES``, the prompts in ``prompts.PROMPTS``. Every tool call is counted
and timed by tool (``memory_console_mcp_tool_*``, ``integrations.metrics.registry``).
"""

import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from integrations.mcp import memory_tools, prompts, session_tools
from integrations.mcp.runner import call_body, error_body, error_result
from integrations.metrics.registry import mcp_tools_known, observe_mcp_tool
from memories.errors import InvalidInput
from memories.validation import check_storable_text

INSTRUCTIONS = (
    "Long-term memory for agents. Memories live in namespaces (user_id; a connection may "
    "have a default namespace, used when a tool's user_id is left out). Before answering a "
    "question about the user or anything said in earlier conversations, recall with "
    "search_memories (time words such as 'last week' work in its query; the memory_context "
    "prompt does this for a question). When the user states a lasting fact, a preference, "
    "a plan or a change, remember it with add_memory. Forget with delete_memory. When a "
    "fact replaces an older one (a new address), add it "
    "with supersedes: [the old memory's id]; search_memories answers facts valid now, or "
    "as_of a date; invalidate_memory ends a fact. Conversations: create_session, append_messages, get_context; "
    "promote turns a message or working memory into a long-term memory."
)


# The tools whose user_id falls back to the connection's default namespace.
DEFAULTED_USER_ID = {"add_memory", "search_memories", "list_memories", "create_session"}


def _default_namespace(caller) -> str | None:
    return caller.default_namespace


def _error_code(result) -> str | None:
    """The error code of a tool's answer (None when it succeeded)."""
    if not getattr(result, "is_error", False):
        return None
    body = getattr(result, "structured_content", None) or {}
    return (body.get("error") or {}).get("code") or "internal"


class ConsoleServer(MCPServer):
    """MCPServer whose argument errors read like the REST API's: an unknown argument, one
    the input schema refuses, or text no database can store (NUL, a lone surrogate: what
    the API's middleware refuses) is an error result ``{"error": {"code": "invalid",
    "message", "field"}, "status": 400}`` naming it (the SDK alone would ignore unknown
    arguments and answer schema errors as free text).

    Its tool list requires ``user_id`` where the connection has no default namespace, and
    every call is counted by tool (an unknown name as ``unknown``)."""

    async def list_tools(self):
        tools = await super().list_tools()
        try:
            default = await call_body(_default_namespace)
        except MCPError:  # no caller (a dead token): its calls will say so
            default = None
        if default is not None:
            return tools
        for tool in tools:
            if tool.name in DEFAULTED_USER_ID:
                schema = dict(tool.input_schema)
                schema["required"] = [*schema.get("required", []), "user_id"]
                tool.input_schema = schema
        return tools

    async def call_tool(self, name, arguments, context=None):
        label = name if self._tool_manager.get_tool(name) is not None else "unknown"
        started = time.perf_counter()
        code = "internal"  # unless the call answers
        try:
            result = await self._call_tool(name, arguments, context)
            code = _error_code(result)
            return result
        finally:
            observe_mcp_tool(tool=label, seconds=time.perf_counter() - started,
                             error_code=code)

    async def _call_tool(self, name, arguments, context):
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
    mcp_tools_known(fn.__name__ for fn, _ in memory_tools.TOOLS + session_tools.TOOLS)
    for fn, name, title in prompts.PROMPTS:
        server.prompt(name=name, title=title)(fn)
    # Ids are opaque strings, not file paths: "a/../b" or "/lead" are valid ids (as on every
    # REST route), so the SDK's path-traversal checks would refuse real records.
    ids_are_not_paths = ResourceSecurity(reject_path_traversal=False, reject_absolute_paths=False)
    for uri, name, fn in session_tools.RESOURCES:
        server.resource(uri, name=name, mime_type="application/json",
                        security=ids_are_not_paths)(fn)
    return server


server = build_server()
