"""A webhook receiver on a loopback port, on a thread of its own (so a test running the command
line, which runs its own event loop, can receive deliveries too): it answers 200 to every POST
and hands each request to the test."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Sink:
    """`with Sink() as sink:` then give `sink.url` to the server; `sink.next(timeout)`."""

    def __init__(self) -> None:
        self._received: queue.Queue[Received] = queue.Queue()
        received = self._received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                received.put(Received(self.path, dict(self.headers.items()), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def next(self, timeout: float) -> Received:
        return self._received.get(timeout=timeout)

    def __enter__(self) -> Sink:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
