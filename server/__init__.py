"""The server around the tabs: input checks before any work (``inputs``), request-body caps and the
MCP allow-list (``http_limits``), the MCP tools (``mcp_tools``), memory bounds (``memory``) and the
launch settings (``launch``). It imports engines, never the tabs (``demos``)."""
