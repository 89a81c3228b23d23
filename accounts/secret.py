"""Keeping the API key unseen: a masked value type, and files only their owner can read.

The key travels from the environment, the keyring, a key file or the login form to the
`Authorization` header. On the way it passes through logs, exception messages, debuggers and
Textual's crash screen, which renders the local variables of every frame. Wrapping it keeps
every one of those masked: `Secret` is the one type a key travels in, up to and including the
API client (`sync.client.ApiClient` takes nothing else); only the code that actually sends or
stores the key calls `reveal()`, inline, as late as it can, never into a local variable.

Files that hold a key, or sit next to one (config.toml), are written by `write_private_file`:
owner-only from their first byte, and replaced whole so that a crash never leaves half a file.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import NoReturn

MASK = "********"
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")
"""Printable ASCII without spaces: what an API key may hold to travel in a header as it is."""


class Secret:
    """A string that shows itself as a mask; `reveal()` is the one way to read it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The real value, for the one place that has to send it."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    def __str__(self) -> str:
        return MASK

    def __eq__(self, other: object) -> bool:
        # Constant time, so that comparing keys does not leak how much of them matched.
        if not isinstance(other, Secret):
            return NotImplemented
        import hmac  # with OpenSSL's hashlib behind it: only keys are compared

        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Secret:
        # Immutable, so sharing is a copy; `dataclasses.asdict` deep-copies every field.
        return self

    def __reduce__(self) -> NoReturn:
        # Pickling would write the value to wherever the pickle goes (a cache, a crash dump).
        raise TypeError("a Secret cannot be pickled")


def key_problem(key: Secret) -> str | None:
    """Why `key` (surrounding whitespace aside) cannot be sent in an `Authorization` header,
    in words that do not quote it; None when it can.

    Checked before the HTTP client sees the key: httpx's encoding errors quote the header.
    """
    if not key.reveal().strip():
        return "is empty"
    if not _HEADER_SAFE.fullmatch(key.reveal().strip()):
        return "contains spaces or characters other than printable ASCII"
    return None


def ensure_private_dir(path: Path) -> None:
    """Create the directory if needed and make it the owner's alone (0700)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if os.name == "posix":
        path.chmod(0o700)


def write_private_file(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step, readable by its owner only.

    A crash leaves the old file or the new one, never half of either; the temporary file is
    created 0600 by mkstemp, so the data is never readable by others, even for an instant. A
    symlinked file (dotfile managers) is written through the link rather than replacing it.
    """
    target = path.resolve() if path.is_symlink() else path
    directory = target.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    import tempfile  # with shutil and the compressors behind it: only to write

    fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    if os.name == "posix":
        directory_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(directory_fd)
        finally:
            os.close(directory_fd)
