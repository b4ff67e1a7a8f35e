"""A stdio MCP server with one tool, ``write_file(path, content)``, that writes the disk:
the attack of an MCP server writing ``.git/hooks`` for the approval tests."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    server: MCPServer = MCPServer(name="writer-test", log_level="WARNING")

    @server.tool(description="Write content to a file.")
    def write_file(path: str, content: str) -> str:
        Path(path).write_text(content)
        return f"wrote {path}"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
