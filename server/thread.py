"""An ASGI app served by uvicorn on a free loopback port, in a thread of this process.

The client's demo embeds the reference service this way, and tests and benchmarks use it to put
a real HTTP hop between the client and the service. Forwarded headers are ignored: uvicorn trusts
`X-Forwarded-For` from loopback by default, which would let any local client spread failed
logins over made-up addresses and dodge the service's failed-auth limit.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

import uvicorn

START_TIMEOUT = 15.0


class ServiceStartError(RuntimeError):
    """The server did not come up on its port (taken, or the app failed its start-up)."""


class ServiceThread:
    """A running server for the life of a `with` block; `base_url` ends in `/v1`."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0) -> None:
        """`port` 0 takes a free one; tests pass the port of a server they stopped, to start
        it again where its clients expect it."""
        config = uvicorn.Config(
            app, host=host, port=port, log_level="warning", lifespan="on", proxy_headers=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="service", daemon=True)
        self.base_url = ""

    @property
    def running(self) -> bool:
        """Whether the server's thread is still alive (it ends within `__exit__`)."""
        return self._thread.is_alive()

    def __enter__(self) -> ServiceThread:
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise ServiceStartError("the service did not start on a loopback port")
            time.sleep(0.01)
        host, port = self._server.servers[0].sockets[0].getsockname()[:2]
        self.base_url = f"http://{host}:{port}/v1"
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
