"""The reference service as its own process on a loopback port, and a colleague using it.

The terminal tests need a server that can go away and come back the way a real one does: a
`tracker-server serve` process that a test stops (SIGTERM, or SIGKILL mid-request), restarts on
the same port with the same database, and whose keys it revokes or creates with the
`tracker-server keys` commands. Nothing here reaches into the client; the colleague and the
checks of the server's state go through the HTTP API with keys of their own.

Starting the service is mostly importing FastAPI and uvicorn (1 to 5 s of a loaded machine,
four times in the session scenario): the next process is started as soon as the last one
stops, imports them while the server is down, and waits on its stdin for the word to serve,
then runs `tracker-server`'s own entry point with the same arguments.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx

BIN = Path(sys.executable).parent
SERVER = BIN / "tracker-server"
CLIENT = BIN / "tracker-tui"
WORKSPACE = "Acme"
T = TypeVar("T")
START_TIMEOUT = 30.0
STANDBY = """
import json, sys
import uvicorn, server.app, server.cli
line = sys.stdin.readline()
if not line:
    sys.exit(0)
from server.entry import main
sys.exit(main(json.loads(line)))
"""
"""A `tracker-server` waiting to be told its arguments (one JSON line on stdin), its imports
done; an empty stdin ends it."""


def eventually(
    check: Callable[[], T | Literal[False] | None],
    *,
    timeout: float = 30.0,
    what: str = "",
    explain: Callable[[], str] | None = None,
) -> T:
    """Poll `check` (a read of the server or the cache) until it returns something true.

    `explain` adds what a failure needs to be understood (the app's screen) to its message."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            shown = f"\n{explain()}" if explain else ""
            raise AssertionError(f"{what or 'the condition'} never held ({found!r}){shown}")
        time.sleep(0.25)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def server_command(*args: str | Path) -> str:
    """Run a `tracker-server` command (keys, seed); its last line of output (a key)."""
    done = subprocess.run(
        [str(SERVER), *map(str, args)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"tracker-server {args[:2]} failed: {done.stderr}"
    return done.stdout.strip().splitlines()[-1]


class ServerProcess:
    """`tracker-server serve` on 127.0.0.1:`port`, started and stopped by the test."""

    def __init__(self, db: Path, *, window_seconds: float = 1.0, port: int | None = None) -> None:
        self.db = db
        self.window_seconds = window_seconds
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = db.with_suffix(".log")
        self._process: subprocess.Popen[bytes] | None = None
        self._standby: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def seed(self, issues: int, *, plan: str = "enterprise") -> str:
        """Seed the workspace (before the first start, or while running); a key for it."""
        return server_command(
            "seed", "--db", self.db, "--issues", str(issues), "--workspace", WORKSPACE,
            "--plan", plan,
        )  # fmt: skip

    def create_key(self, name: str, *, user: str | None = None) -> str:
        args: list[str | Path] = ["keys", "create", "--db", self.db, "--workspace", WORKSPACE]
        args += ["--name", name]
        if user is not None:
            args += ["--user", user]
        return server_command(*args)

    def revoke_key(self, key: str) -> None:
        server_command("keys", "revoke", "--db", self.db, key)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start serving and return once it answers (any HTTP answer: the port is open)."""
        assert not self.running, "the server is already running"
        argv = ["serve", "--db", str(self.db), "--port", str(self.port)]
        argv += ["--window-seconds", str(self.window_seconds)]
        process = self._standby or self._stand_by()
        self._standby = None
        assert process.stdin is not None
        process.stdin.write(json.dumps(argv).encode() + b"\n")
        process.stdin.close()
        self._process = process
        self.starts += 1
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert self._process.poll() is None, f"the server died:\n{self.log.read_text()}"
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{self.base_url}/me", timeout=2)
                return
            assert time.monotonic() < deadline, f"the server never answered:\n{self.log_tail()}"
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> None:
        """Stop it with `sig` (SIGTERM: a clean shutdown; SIGKILL: a crash) and wait."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        _end(process, sig, timeout)
        if self._standby is None:
            self._standby = self._stand_by()

    def _stand_by(self) -> subprocess.Popen[bytes]:
        """The next server process, importing the service until `start` tells it to serve."""
        with self.log.open("ab") as log:
            return subprocess.Popen(
                [sys.executable, "-c", STANDBY],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def restart(self, sig: int = signal.SIGTERM) -> None:
        self.stop(sig)
        self.start()

    def log_tail(self, lines: int = 30) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def close(self) -> None:
        self.kill()
        if self._standby is not None:
            _end(self._standby, signal.SIGKILL, 15.0)
            self._standby = None


def _end(process: subprocess.Popen[bytes], sig: int, timeout: float) -> None:
    """Signal the process's group (`sig`, then SIGKILL if it lingers) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout)
    if process.stdin is not None:
        process.stdin.close()


class Api:
    """The server as seen over HTTP with one key: what a colleague, or a check, reads."""

    def __init__(self, server: ServerProcess, key: str) -> None:
        self.server = server
        self.key = key

    @contextlib.contextmanager
    def _client(self) -> Iterator[httpx.Client]:
        headers = {"Authorization": f"Bearer {self.key}"}
        with httpx.Client(base_url=self.server.base_url, headers=headers, timeout=10) as client:
            yield client

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request, retried while the server answers 429 (its windows are short here)."""
        for _ in range(50):
            with self._client() as client:
                response = client.request(method, path, **kwargs)
            if response.status_code != 429:
                return response
            time.sleep(float(response.headers.get("Retry-After", "0.2") or 0.2))
        return response

    def issues(self) -> list[dict[str, Any]]:
        """Every issue of the workspace, all pages."""
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            response = self.request("GET", "/issues", params={"per_page": 100, "page": page})
            response.raise_for_status()
            body = response.json()
            found += body["data"]
            if len(found) >= body["pagination"]["total"] or not body["data"]:
                return found
            page += 1

    def issue(self, number: int) -> dict[str, Any]:
        """The issue `#number` as the server has it now."""
        for issue in self.issues():
            if issue["number"] == number:
                return issue
        raise AssertionError(f"no issue #{number} on the server")

    def edit(self, number_or_id: int | str, **fields: Any) -> dict[str, Any]:
        issue_id = self.issue(number_or_id)["id"] if isinstance(number_or_id, int) else number_or_id
        response = self.request("PATCH", f"/issues/{issue_id}", json=fields)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def comments(self, issue_id: str) -> list[dict[str, Any]]:
        response = self.request("GET", "/comments", params={"issue_id": issue_id, "per_page": 100})
        response.raise_for_status()
        data: list[dict[str, Any]] = response.json()["data"]
        return data

    def users(self) -> dict[str, str]:
        """User id to name."""
        response = self.request("GET", "/users", params={"per_page": 100})
        response.raise_for_status()
        return {user["id"]: user["name"] for user in response.json()["data"]}


def client_env(
    home: Path, server: ServerProcess | None, key: str | None, **extra: str
) -> dict[str, str]:
    """The environment of a `tracker-tui` process: its own TRACKER_HOME, the server and key
    from the environment (never argv), no keyring, a fixed terminal type."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("TRACKER_", "TEXTUAL", "PYTEST", "COLUMNS", "LINES", "NO_COLOR"))
    }
    env.update(
        TRACKER_HOME=str(home),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        TERM="xterm-256color",
        COLORTERM="truecolor",
        TEXTUAL_ANIMATIONS="none",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
    )
    if server is not None:
        env["TRACKER_SERVER"] = server.base_url
    if key is not None:
        env["TRACKER_API_KEY"] = key
    env.update(extra)
    return env


def run_client(
    env: Mapping[str, str], *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`tracker-tui ARGS` without a terminal (as a script runs it)."""
    return subprocess.run(
        [str(CLIENT), *args],
        env=dict(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class Colleague:
    """Another member editing issues through the API every `every` seconds, in a thread, while
    the user works: titles of `numbers` (never a field the user edits there), priorities of
    `own` (issues the user leaves alone). An edit that meets a stopped server is skipped."""

    def __init__(
        self,
        api: Api,
        *,
        numbers: list[int],
        own: list[int],
        every: float = 1.5,
        seed: int = 7,
    ) -> None:
        self._api = api
        self._numbers = numbers
        self._own = own
        self._every = every
        self._random = random.Random(seed)
        self._stop = threading.Event()
        self._ids: dict[int, str] = {}
        self._thread = threading.Thread(target=self._run, name="colleague", daemon=True)
        self.edits = 0
        self.refused = 0
        self.last: tuple[int, str, str] | None = None
        """The last edit that landed: (number, field, value)."""

    def start(self) -> Colleague:
        self._ids = {issue["number"]: issue["id"] for issue in self._api.issues()}
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=15)

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            number, change = self._pick()
            try:
                response = self._api.request("PATCH", f"/issues/{self._ids[number]}", json=change)
            except httpx.TransportError:
                continue
            if response.status_code == 200:
                self.edits += 1
                ((name, value),) = change.items()
                self.last = (number, name, value)
            else:
                self.refused += 1

    def _pick(self) -> tuple[int, dict[str, str]]:
        if self._own and self._random.random() < 0.5:
            number = self._random.choice(self._own)
            return number, {"priority": self._random.choice(PRIORITIES)}
        number = self._random.choice(self._numbers)
        return number, {"title": f"Colleague's title {self.edits + 1} for #{number}"}


PRIORITIES = ("urgent", "high", "medium", "low", "none")
