"""What the key-leak checks share: every form a key could take in a file, the search of every
byte under a folder for them, and a command-line session run as child processes whose argv and
output are watched (`tests/security/test_key_never_leaked.py`, `test_key_saved_as_profile.py`).
"""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from security_keyring import ENV_FILE

HERE = Path(__file__).resolve().parent
SCRIPT = Path(sys.executable).with_name("tracker-tui")


def leak_forms(key: str) -> list[bytes]:
    """The key as it could sit in a file: raw, without its prefix, UTF-16, hex, and base64
    (standard and url-safe) at each of the three alignments a containing text could give it."""
    raw = key.encode()
    forms = [raw, raw[4:], key.encode("utf-16-le"), raw.hex().encode(), raw.hex().upper().encode()]
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * shift + raw)
            start = (shift * 4 + 2) // 3 + 1
            forms.append(encoded[start:-4])
    return forms


def files_holding(root: Path, key: str) -> list[str]:
    """Every file under `root` that holds the key in any of its forms."""
    forms = leak_forms(key)
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found.extend(str(path.relative_to(root)) for form in forms if form in data)
    return sorted(set(found))


@dataclass
class Session:
    """Runs the command line as child processes with one environment, watching their argv."""

    home: Path
    env: dict[str, str]
    key: str
    argv_seen: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    def run(self, *args: str, stdin: str = "") -> str:
        argv = [str(SCRIPT), *args]
        with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=out_file,
                stderr=err_file,
                env=self.env,
                text=True,
                umask=0o022,
            )
            assert process.stdin is not None
            process.stdin.write(stdin)
            process.stdin.close()
            self.argv_seen.extend(_watch_argv(process))
            process.wait(timeout=60)
            out_file.seek(0)
            err_file.seek(0)
            out, err = out_file.read(), err_file.read()
        self.outputs.append(out + err)
        assert process.returncode == 0, (args, out, err)
        return out

    def assert_no_leak(self, *, allowed: frozenset[str] = frozenset()) -> None:
        assert files_holding(self.home, self.key) == sorted(allowed)
        assert self.argv_seen, "the child's argv was never read"
        for form in leak_forms(self.key):
            text = form.decode("latin-1")
            assert not any(text in argv for argv in self.argv_seen)
            assert not any(text in output for output in self.outputs)


def _descendants(pid: int) -> list[int]:
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children = task.read_text().split()
        except OSError:
            continue
        for child in children:
            found.extend(_descendants(int(child)))
    return found


def _watch_argv(process: subprocess.Popen[str]) -> Iterator[str]:
    """The command lines of the process and its children, read from /proc while it runs."""
    while process.poll() is None:
        for pid in _descendants(process.pid):
            with contextlib.suppress(OSError):
                yield Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        time.sleep(0.01)


@dataclass
class Served:
    base_url: str
    key: str

    def titles(self) -> list[str]:
        """What the server holds now, asked directly."""
        headers = {"Authorization": f"Bearer {self.key}"}
        response = httpx.get(f"{self.base_url}/issues?per_page=100", headers=headers)
        return [issue["title"] for issue in response.json()["data"]]


def make_session(tmp_path: Path, served: Served, keyring: str, **extra: str) -> Session:
    home = tmp_path / "home"
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"TRACKER_API_KEY", "TRACKER_SERVER", "PYTHONPATH"}
    }
    env.update(
        TRACKER_HOME=str(home),
        PYTHON_KEYRING_BACKEND=keyring,
        PYTHONPATH=str(HERE),
        **{ENV_FILE: str(tmp_path / "os-keyring.json")},
        **extra,
    )
    return Session(home, env, served.key)
