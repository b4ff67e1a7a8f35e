"""One agent process of a conformance run, spoken to line by line (standard library only).

A raw client, not :class:`acpwire.ClientConnection`: a run sends what no typed client
would (a line that is not JSON, params that do not validate, a protocol version the
bindings refuse) and must see every byte the agent writes before anything decodes it.
Every line either side writes goes through the run's :class:`ProtocolChecker`, in the
order the client saw them: what the agent wrote is read by a thread into a queue and
checked when the run takes it, and the queue is drained before each line the client
writes, so a message the agent wrote before the client's next one is checked first.
Drained lines wait in a backlog, in order, until the run asks for the next one: nothing
the agent wrote is lost to the run, an answer taken while another line was written
included.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final

from .checker import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction, Finding, ProtocolChecker

__all__ = ["AgentExited", "AgentProcess", "Incoming", "NoAnswer"]

_EOF: Final = object()
_STDERR_KEPT: Final = 20


class NoAnswer(Exception):
    """Nothing came within the bound: ``what`` was waited for."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(f"waited {seconds:g} s for {what}")
        self.what = what
        self.seconds = seconds


class AgentExited(Exception):
    """The agent's stdout ended (it exited or closed it) while something was awaited."""


@dataclass(slots=True)
class Incoming:
    """One line the agent wrote, as the run took it."""

    raw: str
    message: object
    """The parsed JSON value; None for a line that is not JSON (``parsed`` False)."""
    parsed: bool
    findings: list[Finding]

    @property
    def obj(self) -> Mapping[str, Any]:
        return self.message if isinstance(self.message, dict) else {}

    @property
    def is_response(self) -> bool:
        return "method" not in self.obj and ("result" in self.obj or "error" in self.obj)

    @property
    def method(self) -> str | None:
        method = self.obj.get("method")
        return method if isinstance(method, str) else None


Handler = Callable[[str, Mapping[str, Any]], tuple[str, object]]
"""The client's answer to a request of the agent: ``("result", value)`` or
``("error", {"code", "message"})``."""

Sink = Callable[[Direction, str, list[Finding]], None]
"""Told every line either side wrote, with what the checker found."""


@dataclass(slots=True)
class AgentProcess:
    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: str | None
    sink: Sink
    handler: Handler
    stderr_log: IO[str] | None = None
    checker: ProtocolChecker = field(default_factory=ProtocolChecker)
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=_STDERR_KEPT))
    _process: subprocess.Popen[bytes] | None = None
    _lines: queue.Queue[object] = field(default_factory=queue.Queue)
    _backlog: deque[Incoming] = field(default_factory=deque)
    _next_id: int = 0
    _eof: bool = False
    _threads: list[threading.Thread] = field(default_factory=list)
    _stderr_lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        """Start the agent; OSError when it cannot be (not found, not executable)."""
        self._process = subprocess.Popen(
            list(self.argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(self.env),
            cwd=self.cwd,
            start_new_session=True,  # its own group: ended whole at the end
        )
        for target, name in ((self._read_stdout, "stdout"), (self._read_stderr, "stderr")):
            thread = threading.Thread(target=target, name=f"acpwire-check-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def returncode(self) -> int | None:
        assert self._process is not None
        return self._process.poll()

    def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in iter(self._process.stdout.readline, b""):
            self._lines.put(line)
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        for raw in iter(self._process.stderr.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\n")
            with self._stderr_lock:
                self.stderr_tail.append(text)
                if self.stderr_log is not None:
                    self.stderr_log.write(text + "\n")
                    self.stderr_log.flush()

    def last_stderr(self) -> str:
        with self._stderr_lock:
            lines = [line for line in self.stderr_tail if line.strip()]
        return lines[-1].strip()[:200] if lines else ""

    # Writing.

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def write_line(self, line: str, *, deliberate: bool = False) -> None:
        """Write one line (its newline added). ``deliberate``: bad input on purpose; it is
        still fed to the checker (so that its answer is matched) but what the checker
        finds in it is not reported."""
        self.drain()
        try:
            message: object = json.loads(line)
        except ValueError:
            findings: list[Finding] = [] if deliberate else self.checker.unparsable(CLIENT_TO_AGENT)
        else:
            findings = self.checker.check(CLIENT_TO_AGENT, message)
            if deliberate:
                findings = []
        self.sink(CLIENT_TO_AGENT, line, findings)
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(line.encode() + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the agent is gone: reading says so

    def send(self, message: Mapping[str, Any], *, deliberate: bool = False) -> None:
        self.write_line(json.dumps(message, ensure_ascii=False), deliberate=deliberate)

    def request(self, method: str, params: object, *, deliberate: bool = False) -> int:
        msg_id = self.new_id()
        self.send(
            {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params},
            deliberate=deliberate,
        )
        return msg_id

    def notify(self, method: str, params: object) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def close_input(self) -> None:
        self.drain()
        assert self._process is not None and self._process.stdin is not None
        with contextlib.suppress(OSError):
            self._process.stdin.close()

    # Reading.

    def drain(self) -> None:
        """Check every line already read, without waiting (they wait in the backlog)."""
        while self._pump(0):
            pass

    def _pump(self, timeout: float) -> bool:
        """Take one line the agent wrote (waiting up to ``timeout``): check it, put it in
        the backlog, answer it when it is a request. False when there was none."""
        if self._eof:
            return False
        try:
            item = self._lines.get(timeout=timeout) if timeout > 0 else self._lines.get_nowait()
        except queue.Empty:
            return False
        if item is _EOF:
            self._eof = True
            return False
        assert isinstance(item, bytes)
        raw = item.decode("utf-8", "replace").rstrip("\r\n")
        if not raw.strip():
            return True
        try:
            message: object = json.loads(raw)
        except ValueError:
            incoming = Incoming(raw, None, False, self.checker.unparsable(AGENT_TO_CLIENT))
        else:
            incoming = Incoming(raw, message, True, self.checker.check(AGENT_TO_CLIENT, message))
        self.sink(AGENT_TO_CLIENT, raw, incoming.findings)
        self._backlog.append(incoming)  # before answering: what the answer drains comes after
        if incoming.method is not None and "id" in incoming.obj:
            self._answer(incoming)
        return True

    def _answer(self, incoming: Incoming) -> None:
        method = incoming.method
        assert method is not None
        params = incoming.obj.get("params")
        kind, value = self.handler(method, params if isinstance(params, dict) else {})
        self.send({"jsonrpc": "2.0", "id": incoming.obj["id"], kind: value})

    def pending(self) -> bool:
        """Lines taken and checked that the run has not asked for yet."""
        return bool(self._backlog)

    def next(self, deadline: float, what: str, started: float) -> Incoming:
        """The next line the agent writes before ``deadline`` (a ``time.monotonic()``);
        NoAnswer naming ``what`` when none comes, AgentExited when its output ends."""
        while True:
            if self._backlog:
                return self._backlog.popleft()
            if self._eof:
                raise AgentExited(what)
            left = deadline - time.monotonic()
            if left <= 0:
                raise NoAnswer(what, round(deadline - started, 1))
            self._pump(min(left, 0.25))

    @property
    def ended(self) -> bool:
        """The agent's output ended and the run has taken every line of it."""
        return self._eof and not self._backlog

    def wait_exit(self, seconds: float) -> int | None:
        """The exit code once the agent exits within ``seconds``, else None."""
        assert self._process is not None
        try:
            return self._process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace: float = 2.0) -> None:
        """End the agent and its process group: stdin closed, then SIGTERM, SIGKILL."""
        if self._process is None:
            return
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        if self.wait_exit(grace) is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(OSError):
                    os.killpg(self._process.pid, sig)
                if self.wait_exit(grace) is not None:
                    break
        else:
            with contextlib.suppress(OSError):  # what it left running in its group
                os.killpg(self._process.pid, signal.SIGKILL)
        for thread in self._threads:
            thread.join(timeout=1)
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
