"""A keyring backend for the command line run as a child process in tests.

It stands in for an OS keyring (priority 5, outside the `keyrings.*` family, so
`accounts.keystore.choose_backend` accepts it) and keeps its entries in the JSON file named by
`SECURITY_KEYRING_FILE`, which the tests put outside TRACKER_HOME: the key is meant to be
there, and nowhere under TRACKER_HOME. Select it with
`PYTHON_KEYRING_BACKEND=security_keyring.FileKeyring` and this folder on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.compat import properties
from keyring.errors import PasswordDeleteError

ENV_FILE = "SECURITY_KEYRING_FILE"


class FileKeyring(KeyringBackend):
    @properties.classproperty
    def priority(cls) -> float:
        return 5

    @staticmethod
    def _path() -> Path:
        return Path(os.environ[ENV_FILE])

    def _load(self) -> dict[str, str]:
        try:
            entries: dict[str, str] = json.loads(self._path().read_text())
        except FileNotFoundError:
            return {}
        return entries

    def _save(self, entries: dict[str, str]) -> None:
        self._path().write_text(json.dumps(entries))

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._load()
        entries[f"{service}/{username}"] = password
        self._save(entries)

    def delete_password(self, service: str, username: str) -> None:
        entries = self._load()
        if entries.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError(username)
        self._save(entries)
