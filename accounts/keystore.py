"""The two places a profile's key can be kept: the OS keyring, or a plaintext file.

keyring picks its backend by itself. On a headless Linux box that is its `fail` backend, which
raises on every call; with keyrings.alt installed it may be a plaintext file, or an encrypted one
that prompts for a password on the terminal (under a full-screen TUI). None of those is an OS
keyring, so `choose_backend` accepts a backend only when it is a real one: not keyring's fail or
null backend, nothing from the keyrings.* family (keyrings.alt, keyrings.cryptfile), and a
priority of at least 1, keyring's own mark of a recommended backend. A chainer is looked
through to the best real backend it chains, so that a plaintext backend further down the chain
is never written to.

Every keyring call, choosing the backend included (Secret Service asks D-Bus), runs in a daemon
thread and is given up after a timeout, so a stuck keyring daemon can neither hang the app nor
keep it from exiting.

The plaintext key files (`KeyFileStore`) exist only for users who chose them; reading one that
other users could read is refused, as ssh refuses a private key in that state.

keyring itself is imported on the first call that needs it, inside that call's thread: importing
it (and its backends, which it finds through package metadata) costs more than a whole read
command may take, and the commands that need no key never pay it
(docs/architecture.md#start-up).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from accounts.errors import (
    KeyFileError,
    KeyringBackendError,
    KeyringTimeoutError,
    KeyringUnavailableError,
)
from accounts.profiles import AppPaths, validate_profile_name
from accounts.secret import MASK, Secret, ensure_private_dir, write_private_file
from issuefields.frozen import Frozen

if TYPE_CHECKING:
    from concurrent.futures import Future

    from keyring.backend import KeyringBackend

SERVICE = "tracker-tui"
DEFAULT_TIMEOUT = 3.0
RECOMMENDED_PRIORITY = 1.0

T = TypeVar("T")


class KeyringStatus(Frozen):
    """Which backend keyring offers, and why this client does or does not use it."""

    _fields = ("backend", "usable", "reason")
    __slots__ = _fields
    backend: str
    usable: bool
    reason: str

    def __init__(self, backend: str, usable: bool, reason: str) -> None:
        self._init(backend, usable, reason)


def describe_backend(backend: KeyringBackend) -> str:
    kind = type(backend)
    try:
        priority = f"priority {float(kind.priority):g}"
    except Exception as exc:  # a backend reports that it is not viable by raising here
        priority = f"not viable: {exc}"
    return f"{kind.__module__}.{kind.__qualname__} ({priority})"


def choose_backend(backend: KeyringBackend) -> tuple[KeyringBackend | None, KeyringStatus]:
    """The backend to use in place of `backend` (None when there is none), and why."""
    from keyring.backends.chainer import ChainerBackend

    name = describe_backend(backend)
    if isinstance(backend, ChainerBackend):
        chained = list(backend.backends)
        real = [each for each in chained if _refusal(each) is None]
        if not real:
            refused = "; ".join(f"{describe_backend(b)}: {_refusal(b)}" for b in chained)
            return None, KeyringStatus(name, False, f"it chains no OS keyring ({refused or '-'})")
        chosen = real[0]  # keyring sorts the chain by priority, highest first
        reason = f"it chains an OS keyring, {describe_backend(chosen)}, which is used directly"
        return chosen, KeyringStatus(name, True, reason)
    refusal = _refusal(backend)
    if refusal is not None:
        return None, KeyringStatus(name, False, refusal)
    return backend, KeyringStatus(name, True, "an OS keyring")


def _refusal(backend: KeyringBackend) -> str | None:
    from keyring.backends import fail, null

    if isinstance(backend, fail.Keyring):
        return (
            "keyring found no OS keyring and fell back to its 'fail' backend (on Linux, a "
            "Secret Service such as GNOME Keyring or KeePassXC, or KWallet, must be running)"
        )
    if isinstance(backend, null.Keyring):
        return "keyring is switched off: its 'null' backend was chosen in its configuration"
    if type(backend).__module__.split(".")[0] == "keyrings":
        return (
            "backends of the keyrings.* family (keyrings.alt, keyrings.cryptfile, ...) keep "
            "keys in files, plaintext or behind a terminal prompt, not in an OS keyring"
        )
    try:
        priority = float(type(backend).priority)
    except Exception as exc:  # a backend reports that it is not viable by raising here
        return f"the backend is not usable here: {exc}"
    if priority < RECOMMENDED_PRIORITY:
        return f"its priority {priority:g} is below {RECOMMENDED_PRIORITY:g}: not recommended"
    return None


class KeyringStore:
    """The OS keyring, used only when it is real, each call bounded by `timeout` seconds.

    Entries are (service "tracker-tui", user name = profile name).
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        get_backend: Callable[[], KeyringBackend] | None = None,
    ) -> None:
        self._timeout = timeout
        self._get_backend = get_backend

    def status(self) -> KeyringStatus:
        try:
            return _bounded(lambda: self._choose()[1], self._timeout, "choosing a backend")
        except KeyringTimeoutError as exc:
            return KeyringStatus("unknown", False, str(exc))

    def get(self, profile: str) -> Secret | None:
        validate_profile_name(profile)

        def read(backend: KeyringBackend) -> Secret | None:
            value = backend.get_password(SERVICE, profile)
            return None if value is None else Secret(value)

        return self._use("reading the key", read)

    def set(self, profile: str, key: Secret) -> None:
        validate_profile_name(profile)
        self._use(
            "storing the key",
            lambda backend: backend.set_password(SERVICE, profile, key.reveal()),
            redact=key,
        )

    def delete(self, profile: str) -> bool:
        """Whether there was a key to delete (backends differ in how they say there was not)."""
        validate_profile_name(profile)

        def remove(backend: KeyringBackend) -> bool:
            if backend.get_password(SERVICE, profile) is None:
                return False
            backend.delete_password(SERVICE, profile)
            return True

        return self._use("deleting the key", remove)

    def _choose(self) -> tuple[KeyringBackend | None, KeyringStatus]:
        try:
            backend = (self._get_backend or _default_backend)()
        except Exception as exc:  # keyring's own start-up failed: report it, don't crash
            return None, KeyringStatus("none", False, f"keyring could not start: {exc}")
        return choose_backend(backend)

    def _use(
        self,
        action: str,
        operation: Callable[[KeyringBackend], T],
        redact: Secret | None = None,
    ) -> T:
        """Run `operation` on the real backend; its errors lose any mention of `redact`."""

        def task() -> T:
            backend, status = self._choose()
            if backend is None:
                raise KeyringUnavailableError(f"no OS keyring is available: {status.reason}")
            try:
                return operation(backend)
            except Exception as exc:  # backends raise keyring, D-Bus and OS errors alike
                failure = f"the keyring {status.backend} failed {action}: {type(exc).__name__}"
                detail = str(exc)
                if redact is not None:
                    detail = detail.replace(redact.reveal(), MASK)
            # Raised outside the except block, so no traceback of the backend's frames (which
            # hold the key as a plain str) is chained to it for a crash screen to render.
            raise KeyringBackendError(f"{failure}: {detail}" if detail else failure)

        return _bounded(task, self._timeout, action)


def _default_backend() -> KeyringBackend:
    """keyring's own choice, which imports it (within the caller's timeout)."""
    import keyring

    return keyring.get_keyring()


def _bounded(task: Callable[[], T], timeout: float, action: str) -> T:
    """Run `task` in a daemon thread; give up waiting after `timeout` seconds.

    A daemon thread rather than an executor: an executor's worker is joined at exit, so a stuck
    keyring call would hang the app's exit instead of its start.
    """
    import threading  # only when a key is read or stored: reads of the cache need none
    from concurrent.futures import Future

    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(task())
        except BaseException as exc:  # handed to the waiting thread, never lost in this one
            future.set_exception(exc)

    threading.Thread(target=run, name=f"{SERVICE}-keyring", daemon=True).start()
    try:
        return future.result(timeout)
    except TimeoutError:
        if future.done():
            raise
        raise KeyringTimeoutError(
            f"the keyring took longer than {timeout:g} s {action}; its daemon may be stuck or "
            "waiting for an unlock prompt"
        ) from None


class KeyFileStore:
    """Plaintext key files, one per profile, for the users who chose `--insecure-storage`."""

    def __init__(self, paths: AppPaths) -> None:
        self._paths = paths

    def path(self, profile: str) -> Path:
        return self._paths.keys_dir / f"{validate_profile_name(profile)}.key"

    def exists(self, profile: str) -> bool:
        return self.path(profile).exists()

    def read(self, profile: str) -> Secret | None:
        """The file's content as it is (`accounts.credentials.parse_key` checks it)."""
        path = self.path(profile)
        try:
            with path.open("rb") as file:
                mode = os.fstat(file.fileno()).st_mode
                if os.name == "posix" and mode & 0o077:
                    raise KeyFileError(
                        f"{path} can be read by other users (mode {mode & 0o777:04o}), so it "
                        f"is not used; run 'chmod 600 {path}' or store the key again"
                    )
                return Secret(file.read().decode("utf-8", errors="replace"))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise KeyFileError(f"cannot read {path}: {exc.strerror or exc}") from None

    def write(self, profile: str, key: Secret) -> Path:
        path = self.path(profile)
        try:
            ensure_private_dir(self._paths.config_dir)
            ensure_private_dir(self._paths.keys_dir)
            write_private_file(path, f"{key.reveal()}\n".encode())
        except OSError as exc:
            raise KeyFileError(f"cannot write {path}: {exc.strerror or exc}") from None
        return path

    def delete(self, profile: str) -> bool:
        path = self.path(profile)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise KeyFileError(f"cannot delete {path}: {exc.strerror or exc}") from None
        return True
