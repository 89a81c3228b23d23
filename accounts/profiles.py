"""Profiles: which server and workspace to talk to, and how each profile's key is kept.

The configuration is one TOML file, `config.toml`, in the configuration directory:
`platformdirs.user_config_dir("tracker-tui")`, or `$TRACKER_HOME/config` when TRACKER_HOME is
set (data then lives in `$TRACKER_HOME/data`). It never holds a key: keys come from
TRACKER_API_KEY, the OS keyring, or, only for a profile whose user chose it, a plaintext key
file of their own (see `accounts.credentials`). Every change is written atomically, mode 0600,
in a directory of mode 0700, as an edit of the file as it was (`accounts.config_edit`): what
the user wrote by hand (comments, order, blank lines, quoting) stays as they wrote it, and only
the values that changed are rewritten::

    # tracker-tui configuration. API keys are never stored in this file.
    schema = 1
    default_profile = "work"

    [profiles.work]
    server = "https://tracker.example.com/v1"
    workspace = "acme"
    key_storage = "keyring"            # or "insecure-file"

    [profiles.work.ui]                 # owned by the TUI, kept as it was given
    theme = "dark"
    read_only = false

    [profiles.work.ui.views.mine]
    filter = "assignee:me"
    sort = "-updated_at"

    [keymap]                           # owned by the TUI (tracker_tui.data.keymap)
    list.next = "n"

    [columns]                          # owned by the TUI (tracker_tui.data.columns)
    show = ["number", "title", "status", "assignee"]

docs/configuration.md describes every key, and the JSON Schema shipped with the package
(`tracker-tui config schema`) checks them.

Its errors, like those of the rest of `accounts`, are drawn in `accounts.errors`; no message
ever contains a key.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from accounts.errors import (
    ConfigFileError,
    InvalidProfileNameError,
    InvalidServerURLError,
    InvalidValueError,
    ProfileExistsError,
    ProfileNotFoundError,
)
from accounts.secret import ensure_private_dir, write_private_file
from issuefields.frozen import Frozen
from issuefields.userdirs import usual_linux_dirs

APP_NAME = "tracker-tui"
ENV_HOME = "TRACKER_HOME"
SCHEMA_VERSION = 1
CONFIG_HEADER = "# tracker-tui configuration. API keys are never stored in this file.\n"


def environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    """`env`, or the process environment when it is None.

    Callers use it inline and never keep `os.environ` in a local variable: it may hold
    TRACKER_API_KEY, and crash screens that render the locals of every frame would show it.
    """
    return os.environ if env is None else env


class AppPaths(Frozen):
    """Where the client keeps its files; TRACKER_HOME moves all of them under one root."""

    _fields = ("config_dir", "data_dir")
    __slots__ = _fields
    config_dir: Path
    data_dir: Path

    def __init__(self, config_dir: Path, data_dir: Path) -> None:
        self._init(config_dir, data_dir)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AppPaths:
        home = environ(env).get(ENV_HOME, "").strip()
        if home:
            root = Path(home).expanduser().absolute()
            return cls(config_dir=root / "config", data_dir=root / "data")
        usual = usual_linux_dirs(APP_NAME)
        if usual is not None:
            return cls(config_dir=Path(usual[0]), data_dir=Path(usual[1]))
        import platformdirs  # with tempfile and shutil behind it: not when TRACKER_HOME says

        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        )

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def keys_dir(self) -> Path:
        """Plaintext key files of the profiles that chose insecure storage."""
        return self.config_dir / "keys"


_VERSION_SEGMENT = re.compile(r"v\d+")
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")


def normalize_server_url(raw: str) -> str:
    """The API base URL the client sends requests to: http(s), a host, ending in `/v1` once.

    Users paste what their browser shows (`tracker.example.com`, `http://localhost:8000/`,
    `https://host/v1/`); each message says what to type instead.
    """
    text = raw.strip()
    if not text:
        raise InvalidServerURLError("the server URL is empty")
    authority = text.split("://", 1)[-1].split("/", 1)[0]
    if "@" in authority:
        # The URL is not echoed: what precedes the @ may be a password.
        raise InvalidServerURLError(
            "the server URL must not contain a user name or password; the API key is kept "
            "apart from it"
        )
    if "://" not in text:
        bare_host = authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority
        scheme = "http" if bare_host.lower() in _LOCAL_HOSTS else "https"
        raise InvalidServerURLError(
            f"the server URL {text!r} has no scheme; did you mean '{scheme}://{text}'?"
        )
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidServerURLError(
            f"the server URL {text!r} must start with http:// or https://, not {parts.scheme}://"
        )
    try:
        port = parts.port
    except ValueError:
        raise InvalidServerURLError(f"the server URL {text!r} has an invalid port") from None
    host = parts.hostname
    if not host:
        raise InvalidServerURLError(f"the server URL {text!r} has no host")
    if parts.query or parts.fragment:
        raise InvalidServerURLError(
            f"the server URL {text!r} must not have a query (?...) or a fragment (#...)"
        )
    segments = [segment for segment in parts.path.split("/") if segment]
    while segments and segments[-1] == "v1":
        segments.pop()
    if segments and _VERSION_SEGMENT.fullmatch(segments[-1]):
        raise InvalidServerURLError(
            f"the server URL {text!r} ends in /{segments[-1]}; this client speaks the API's /v1"
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc = f"{netloc}:{port}"
    return urlunsplit((scheme, netloc, "/".join(["", *segments, "v1"]), "", ""))


_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def validate_profile_name(name: str) -> str:
    """Names become keyring entries and key file names, so no separators or dot-files."""
    if not _PROFILE_NAME.fullmatch(name):
        raise InvalidProfileNameError(
            f"invalid profile name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


class KeyStorage(StrEnum):
    """Where a profile's key is kept when it is not given in TRACKER_API_KEY."""

    KEYRING = "keyring"
    INSECURE_FILE = "insecure-file"


class Profile(Frozen):
    """One server and workspace; `ui` belongs to the TUI (views, theme, read-only)."""

    _fields = ("name", "server", "workspace", "key_storage", "ui")
    __slots__ = _fields
    name: str
    server: str
    workspace: str
    key_storage: KeyStorage
    ui: Mapping[str, Any]

    def __init__(
        self,
        name: str,
        server: str,
        workspace: str,
        key_storage: KeyStorage | str = KeyStorage.KEYRING,
        ui: Mapping[str, Any] | None = None,
    ) -> None:
        validate_profile_name(name)
        stripped = workspace.strip()
        if not stripped:
            raise InvalidValueError(f"profile {name!r}: the workspace is empty")
        self._init(
            name,
            normalize_server_url(server),
            stripped,
            KeyStorage(key_storage),
            {} if ui is None else ui,
        )


class Config(Frozen):
    """The whole config file: the profiles by name and which one is used by default, and the
    TUI's tables for every profile (`keymap`, `columns`), kept as they were given."""

    _fields = ("profiles", "default", "keymap", "columns")
    __slots__ = _fields
    profiles: Mapping[str, Profile]
    default: str | None
    keymap: Mapping[str, Any]
    columns: Mapping[str, Any]

    def __init__(
        self,
        profiles: Mapping[str, Profile] | None = None,
        default: str | None = None,
        keymap: Mapping[str, Any] | None = None,
        columns: Mapping[str, Any] | None = None,
    ) -> None:
        self._init(
            {} if profiles is None else profiles,
            default,
            {} if keymap is None else keymap,
            {} if columns is None else columns,
        )

    def get(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles)) or "none"
            raise ProfileNotFoundError(f"no profile named {name!r} (profiles: {known})") from None


def parse_config(text: str, source: Path) -> Config:
    """Strict: an unknown key is reported rather than dropped, since it is usually a typo."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{source} is not valid TOML: {exc}") from None
    _reject_unknown(document, {"schema", "default_profile", *TOP_TABLES}, str(source))
    schema = document.get("schema", SCHEMA_VERSION)
    if not isinstance(schema, int) or schema > SCHEMA_VERSION:
        raise ConfigFileError(
            f"{source} has schema {schema!r}, written by a newer tracker-tui "
            f"(this one reads schema {SCHEMA_VERSION})"
        )
    tables = _table(document, "profiles", str(source))
    profiles = {name: _parse_profile(name, tables, source) for name in tables}
    default = document.get("default_profile")
    if default is not None and (not isinstance(default, str) or default not in profiles):
        raise ConfigFileError(f"{source}: default_profile {default!r} is not a profile")
    return Config(
        profiles=profiles,
        default=default,
        keymap=_table(document, "keymap", str(source)),
        columns=_table(document, "columns", str(source)),
    )


TOP_TABLES = ("profiles", "keymap", "columns")
"""The file's tables, in the order a new file lists them."""


def _parse_profile(name: str, tables: Mapping[str, Any], source: Path) -> Profile:
    where = f"{source}: profile {name!r}"
    table = _table(tables, name, str(source))
    _reject_unknown(table, {"server", "workspace", "key_storage", "ui"}, where)
    values = {key: table.get(key) for key in ("server", "workspace", "key_storage")}
    server, workspace = values["server"], values["workspace"]
    if not isinstance(server, str) or not isinstance(workspace, str):
        raise ConfigFileError(f'{where} needs server = "..." and workspace = "..."')
    try:
        storage = KeyStorage(values["key_storage"] or KeyStorage.KEYRING)
    except ValueError:
        choices = ", ".join(repr(storage.value) for storage in KeyStorage)
        raise ConfigFileError(f"{where}: key_storage must be one of {choices}") from None
    try:
        return Profile(
            name=name,
            server=server,
            workspace=workspace,
            key_storage=storage,
            ui=_table(table, "ui", where),
        )
    except InvalidValueError as exc:
        raise ConfigFileError(f"{where}: {exc}") from None


def _table(parent: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = parent.get(key, {})
    if not isinstance(value, dict):
        raise ConfigFileError(f"{where}: {key} must be a table")
    return value


def _reject_unknown(table: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigFileError(f"{where}: unknown key(s) {', '.join(unknown)}")


def config_document(config: Config) -> dict[str, Any]:
    """The file's content as plain data, in the order a new file lists it."""
    document: dict[str, Any] = {"schema": SCHEMA_VERSION}
    if config.default is not None:
        document["default_profile"] = config.default
    document["profiles"] = {
        name: _dump_profile(profile) for name, profile in sorted(config.profiles.items())
    }
    for name in ("keymap", "columns"):
        if table := getattr(config, name):
            document[name] = dict(table)
    return document


def dump_config(config: Config, previous: str | None = None) -> str:
    """The file for `config`: `previous` (the file as it is) edited where `config` differs from
    it, keeping the rest as it was written; a new file when there is none (or it is no TOML)."""
    from accounts.config_edit import dumps  # tomlkit only to write: few commands write

    return dumps(config_document(config), previous, header=CONFIG_HEADER)


def _dump_profile(profile: Profile) -> dict[str, Any]:
    table: dict[str, Any] = {
        "server": profile.server,
        "workspace": profile.workspace,
        "key_storage": profile.key_storage.value,
    }
    if profile.ui:
        table["ui"] = dict(profile.ui)
    return table


class ProfileStore:
    """Reads and changes the profiles in config.toml; every change is one atomic write of the
    file as it was, edited where the change is."""

    def __init__(self, paths: AppPaths) -> None:
        self.paths = paths

    def load(self) -> Config:
        path = self.paths.config_file
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Config()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigFileError(f"cannot read {path}: {exc}") from None
        return parse_config(text, path)

    def save(self, config: Config) -> None:
        path = self.paths.config_file
        try:
            previous = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            previous = None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigFileError(f"cannot read {path}: {exc}") from None
        try:
            data = dump_config(config, previous).encode("utf-8")
            ensure_private_dir(self.paths.config_dir)
            write_private_file(path, data)
        except (OSError, TypeError) as exc:
            raise ConfigFileError(f"cannot write {path}: {exc}") from None

    def get(self, name: str) -> Profile:
        return self.load().get(name)

    def add(self, profile: Profile, *, make_default: bool = False) -> None:
        """Add a new profile; the first one becomes the default."""
        config = self.load()
        if profile.name in config.profiles:
            raise ProfileExistsError(f"a profile named {profile.name!r} already exists")
        default = profile.name if make_default or config.default is None else config.default
        self.save(
            config.replace(profiles={**config.profiles, profile.name: profile}, default=default)
        )

    def update(self, profile: Profile) -> None:
        """Replace a stored profile, e.g. with new `ui` settings from the TUI."""
        config = self.load()
        config.get(profile.name)
        self.save(config.replace(profiles={**config.profiles, profile.name: profile}))

    def remove(self, name: str) -> None:
        """Forget a profile (its key is `accounts.credentials.delete_key`'s job).

        Removing the default leaves no default, unless exactly one profile remains.
        """
        config = self.load()
        config.get(name)
        profiles = {key: value for key, value in config.profiles.items() if key != name}
        default = config.default
        if default == name:
            default = next(iter(profiles)) if len(profiles) == 1 else None
        self.save(config.replace(profiles=profiles, default=default))

    def set_default(self, name: str) -> None:
        config = self.load()
        config.get(name)
        self.save(config.replace(default=name))
