"""A stdio MCP server with one tool, ``environment()``, that reports the environment it was
started with (as JSON): what the environment tests check for secrets."""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    server: MCPServer = MCPServer(name="env-test", log_level="WARNING")

    @server.tool(description="The environment variables of this server process.")
    def environment() -> str:
        return json.dumps(dict(os.environ))

    return server


if __name__ == "__main__":
    build_server().run("stdio")
