"""A small MCP server for the MCP host tests, built with the SDK's ``MCPServer``.

Run as a script it serves stdio; the tests also import :func:`build_server` to serve the
same tools over streamable HTTP and SSE in-process. Tools:

* ``echo`` returns its text (prefixed with ``ECHO_PREFIX`` from the environment, if set);
* ``fail`` always fails (``isError`` result) with the reason it was given;
* ``server.info`` (a dot: valid in MCP, not in OpenAI function names) reports the
  process id, working directory and the ``ECHO_GREETING`` environment variable;
* ``block`` never returns, for the timeout and cancellation tests (it first writes the
  file ``ECHO_BLOCKED_FILE`` names, when set, so a test knows the call arrived).
"""

from __future__ import annotations

import json
import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build_server() -> MCPServer:
    server: MCPServer = MCPServer(name="echo-test", log_level="WARNING")

    @server.tool(description="Return the given text.")
    def echo(text: str) -> str:
        return os.environ.get("ECHO_PREFIX", "") + text

    @server.tool(description="Always fails with the given reason.")
    def fail(reason: str) -> str:
        raise ToolError(f"failed on purpose: {reason}")

    @server.tool(name="server.info", description="Process id, cwd and greeting of this server.")
    def info() -> str:
        return json.dumps(
            {"pid": os.getpid(), "cwd": os.getcwd(), "greeting": os.environ.get("ECHO_GREETING")}
        )

    @server.tool(description="Never returns.")
    async def block() -> str:
        marker = os.environ.get("ECHO_BLOCKED_FILE")
        if marker:
            with open(marker, "w", encoding="utf-8") as handle:
                handle.write("called\n")
        await anyio.sleep_forever()
        return "unreachable"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
