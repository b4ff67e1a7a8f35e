"""A model server that accepts connections and never answers (Ollama loading a model).

A real loopback TCP socket: each connection's request is read and recorded, nothing is
ever written back, and the server notes when a client gives up (closes its end).
"""

from __future__ import annotations

import socket
import threading

__all__ = ["SilentServer"]


class SilentServer:
    """Use as a context manager; ``base_url`` points at it."""

    def __init__(self) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._lock = threading.Lock()
        self._connections: list[socket.socket] = []
        self.requests: list[bytes] = []
        """The first bytes of each request received (never answered)."""
        self.requested = threading.Event()
        """Set once a request has arrived."""
        self.gave_up = threading.Event()
        """Set once a client closed a connection it had sent a request on."""
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.close()
        with self._lock:
            for conn in self._connections:
                conn.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(conn)
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        seen = False
        while True:
            try:
                data = conn.recv(4096)
            except OSError:
                return
            if not data:
                if seen:
                    self.gave_up.set()
                return
            if not seen:
                seen = True
                with self._lock:
                    self.requests.append(data)
                self.requested.set()
