"""A tiny JSON-RPC server over the real stdio, driven by ``test_rpc_stdio.py``.

Its handlers misbehave on purpose: they print to stdout, write to fd 1 directly and
start a child process that inherits stdout and stdin, to prove that none of it reaches
the protocol stream.
"""

import logging
import os
import subprocess
import sys

import anyio

from acpwire.rpc import Connection, RequestContext, method_not_found, stdio_streams

CHILD_STDIN_PROBE = "import sys; sys.stdout.write(repr(sys.stdin.read()))"


class Echo:
    async def on_request(self, method: str, params: object, ctx: RequestContext) -> object:
        if method == "echo":
            return params
        if method == "noisy":
            print("stray print to stdout")
            os.write(1, b"stray write to fd 1\n")
            await anyio.run_process(
                [sys.executable, "-c", "print('child writes to inherited stdout')"],
                stdout=None,
                stderr=None,
            )
            return {"ok": True}
        if method == "child_stdin":
            done = await anyio.run_process(
                [sys.executable, "-c", CHILD_STDIN_PROBE], stdin=None, stderr=None
            )
            return done.stdout.decode()
        raise method_not_found(method)

    async def on_notification(self, method: str, params: object) -> None:
        raise method_not_found(method)


async def main() -> None:
    async with stdio_streams() as (receive, send):
        await Connection(receive, send, Echo(), name="echo-server").serve()
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # stdio restored afterwards
    logging.getLogger("echo-server").warning("served until end of input")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    anyio.run(main)
