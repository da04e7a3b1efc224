"""The reference: a bare official MCPServer with one trivial tool (no kit, no state)."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bare", log_level="WARNING")


@server.tool()
def ping(account_id: str) -> str:
    """Echo an id (the cheapest useful tool)."""
    return account_id


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        uvicorn.run(server.streamable_http_app(json_response=True), host="127.0.0.1", port=int(sys.argv[2]),
                    log_level="warning")
    else:
        server.run("stdio")
