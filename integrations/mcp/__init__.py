"""The MCP server: tools and resources over the memory core, for MCP clients (``server``),
served at ``/mcp`` (``views``, stateless Streamable HTTP) and by ``manage.py mcp_stdio``."""
