"""The MCP server: the owner's tools and data for other AI clients (Claude Desktop, Claude Code,
Cursor...), over Streamable HTTP at ``/mcp`` (``http.py``) and over stdio
(``manage.py talorys_mcp``), both on the official ``mcp`` SDK (``server.py``).

A client authenticates with an API token only. What it may do is decided in ``access.py``,
through the same tool registry and executor a chat turn uses."""
