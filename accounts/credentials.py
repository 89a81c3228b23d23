"""Which server and key the client runs with: finding, storing and forgetting a profile's key.

Lookup (`find_key`), first hit wins:

1. TRACKER_API_KEY. The keyring and key files are then not touched at all (scripts, CI).
2. The OS keyring, when `accounts.keystore` judges its backend real, within a timeout.
3. The profile's plaintext key file, only when the user chose `--insecure-storage` for it.
4. Nothing: the caller asks the user and keeps the key in memory for the session.

A keyring that fails or hangs does not stop the lookup: it becomes a warning, and the user is
asked for the key rather than the app hanging or crashing. A plaintext key file on disk adds
`insecure_storage_warning` to the warnings of every start.

`resolve_profile` combines config.toml with the environment. TRACKER_SERVER (with
TRACKER_API_KEY, and TRACKER_HOME to keep files apart) lets scripts run without any stored
profile. A stored key is only ever sent to the server it was stored for: when TRACKER_SERVER
names another server, the default profile is left aside (env-only mode) and a profile named
explicitly is an error.

Keys travel as `Secret`s and are never taken from argv (other users see it in `ps`): the CLI
reads them from TRACKER_API_KEY or a prompt, through `parse_key`. No function here keeps the
key, or `os.environ` (which may hold it), in a plain local variable, because crash screens
render the locals of every frame. Errors belong to the tree drawn in `accounts.errors`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum
from urllib.parse import urlsplit

from accounts.errors import (
    ConfigError,
    InvalidKeyError,
    InvalidServerURLError,
    KeyFileError,
    KeyNotKeptError,
    KeyringBackendError,
    KeyringTimeoutError,
    KeyringUnavailableError,
    NoProfileError,
    ProfileConflictError,
)
from accounts.keystore import KeyFileStore, KeyringStore
from accounts.profiles import (
    AppPaths,
    Config,
    KeyStorage,
    Profile,
    ProfileStore,
    environ,
    normalize_server_url,
    validate_profile_name,
)
from accounts.secret import Secret, key_problem
from issuefields.frozen import Frozen

ENV_API_KEY = "TRACKER_API_KEY"
ENV_SERVER = "TRACKER_SERVER"
INSECURE_STORAGE_FLAG = "--insecure-storage"
HOW_TO_PROCEED = (
    f"To go on, set {ENV_API_KEY} in the environment, install or unlock an OS keyring, "
    f"or pass {INSECURE_STORAGE_FLAG} to keep the key in a plaintext file only you can read."
)

_KEYRING_FAILURES = (KeyringUnavailableError, KeyringTimeoutError, KeyringBackendError)

ENV_PROFILE_CACHE = "env"
"""The cache of a run on TRACKER_SERVER and TRACKER_API_KEY alone, with no stored profile."""


class KeySource(StrEnum):
    ENV = "env"
    KEYRING = "keyring"
    INSECURE_FILE = "insecure-file"
    NONE = "none"


_STORAGE = {
    KeySource.KEYRING: KeyStorage.KEYRING,
    KeySource.INSECURE_FILE: KeyStorage.INSECURE_FILE,
}
"""Where a kept key went, as the profile records it."""


class KeyLookup(Frozen):
    _fields = ("key", "source", "warnings")
    __slots__ = _fields
    key: Secret | None
    source: KeySource
    warnings: tuple[str, ...]

    def __init__(
        self, key: Secret | None, source: KeySource, warnings: tuple[str, ...] = ()
    ) -> None:
        self._init(key, source, warnings)


class ResolvedProfile(Frozen):
    """What the client runs with. `name` and `workspace` are None in env-only mode."""

    _fields = ("name", "server", "workspace", "key", "key_source", "warnings")
    __slots__ = _fields
    name: str | None
    server: str
    workspace: str | None
    key: Secret | None
    key_source: KeySource
    warnings: tuple[str, ...]

    def __init__(
        self,
        name: str | None,
        server: str,
        workspace: str | None,
        key: Secret | None,
        key_source: KeySource,
        warnings: tuple[str, ...] = (),
    ) -> None:
        self._init(name, server, workspace, key, key_source, warnings)

    @property
    def cache_name(self) -> str:
        """The cache this profile uses; env-only runs (no stored profile) share one named
        `env`. Here rather than in `sync.session`, so that the command line's reads find
        their cache without loading the HTTP client."""
        return self.name or ENV_PROFILE_CACHE


def parse_key(given: Secret, origin: str) -> Secret:
    """A key as typed, pasted or read: surrounding whitespace (a trailing newline) is dropped.

    Anything else that cannot travel in an HTTP header is refused here, before it reaches the
    HTTP client, whose encoding errors would quote it. The value is taken and returned as a
    `Secret`, so no frame of a traceback from here holds it as a plain string.
    """
    problem = key_problem(given)
    if problem is not None:
        raise InvalidKeyError(f"the API key from {origin} {problem}")
    return Secret(given.reveal().strip())


def key_from_env(env: Mapping[str, str] | None = None) -> Secret | None:
    given = Secret(environ(env).get(ENV_API_KEY, ""))
    return parse_key(given, ENV_API_KEY) if given.reveal().strip() else None


def server_from_env(env: Mapping[str, str] | None = None) -> str | None:
    raw = environ(env).get(ENV_SERVER, "")
    if not raw.strip():
        return None
    try:
        return normalize_server_url(raw)
    except InvalidServerURLError as exc:
        raise InvalidServerURLError(f"{ENV_SERVER}: {exc}") from None


def insecure_storage_warning(profile: str, path: os.PathLike[str] | str) -> str:
    """Shown on every start while the key file exists, so the choice is never forgotten."""
    return (
        f"The API key of profile {profile!r} is stored in plaintext in {os.fspath(path)}. "
        "Anyone who can read your files can use it. Store it again without "
        f"{INSECURE_STORAGE_FLAG} once an OS keyring is available, or log out to delete it."
    )


def find_key(
    profile: Profile | None,
    *,
    env: Mapping[str, str] | None = None,
    keyring: KeyringStore | None = None,
) -> KeyLookup:
    """The key for `profile` (None: env-only mode, where only TRACKER_API_KEY counts)."""
    files = KeyFileStore(AppPaths.from_env(env))
    warnings: list[str] = []
    if profile is not None and files.exists(profile.name):
        warnings.append(insecure_storage_warning(profile.name, files.path(profile.name)))
    env_key = key_from_env(env)
    if env_key is not None:
        return KeyLookup(env_key, KeySource.ENV, tuple(warnings))
    if profile is None:
        return KeyLookup(None, KeySource.NONE, tuple(warnings))
    try:
        stored = (keyring or KeyringStore()).get(profile.name)
        key = None if stored is None else parse_key(stored, "the keyring")
    except KeyringUnavailableError:
        key = None  # the normal state of a box without a keyring; `doctor_report` explains it
    except (KeyringTimeoutError, KeyringBackendError) as exc:
        key = None
        warnings.append(f"The key of profile {profile.name!r} could not be read: {exc}")
    if key is not None:
        return KeyLookup(key, KeySource.KEYRING, tuple(warnings))
    if profile.key_storage is KeyStorage.INSECURE_FILE:
        stored = files.read(profile.name)
        if stored is not None:
            key = parse_key(stored, str(files.path(profile.name)))
            return KeyLookup(key, KeySource.INSECURE_FILE, tuple(warnings))
    return KeyLookup(None, KeySource.NONE, tuple(warnings))


def store_key(
    profile: str,
    key: Secret,
    *,
    insecure: bool,
    env: Mapping[str, str] | None = None,
    keyring: KeyringStore | None = None,
) -> KeySource:
    """Keep the key of a stored profile: in the keyring when it is real, which is preferred
    even when `insecure` allows a plaintext file; else in that file, only if `insecure`.

    Without `insecure` a missing or failing keyring is an error whose message says how to go on.
    """
    paths = AppPaths.from_env(env)
    profiles = ProfileStore(paths)
    stored = profiles.get(validate_profile_name(profile))
    checked = parse_key(key, "the key given")
    source = _keep_key(
        profile, checked, insecure=insecure, paths=paths, keyring=keyring or KeyringStore()
    )
    storage = _STORAGE[source]
    if stored.key_storage is not storage:
        profiles.update(stored.replace(key_storage=storage))
    return source


def save_login(
    profile: Profile,
    key: Secret,
    *,
    insecure: bool,
    env: Mapping[str, str] | None = None,
    keyring: KeyringStore | None = None,
) -> KeySource:
    """Keep the key of a checked login, then write its profile (keeping stored `ui` settings).

    The key goes first because a profile written before its key is kept outlives a keyring
    that refuses: the next start would find a profile it cannot use. If writing the profile
    fails, the key just kept for a new profile is taken back; the config file is as it was.
    """
    paths = AppPaths.from_env(env)
    store = ProfileStore(paths)
    checked = parse_key(key, "the key given")
    previous = store.load().profiles.get(validate_profile_name(profile.name))
    ring = keyring or KeyringStore()
    try:
        source = _keep_key(profile.name, checked, insecure=insecure, paths=paths, keyring=ring)
    except _KEYRING_FAILURES as exc:
        raise KeyNotKeptError(f"{exc} Nothing was saved.") from None
    saved = profile.replace(key_storage=_STORAGE[source], ui=previous.ui if previous else {})
    try:
        if previous is None:
            store.add(saved)
        else:
            store.update(saved)
    except ConfigError:
        if previous is None:
            _forget_new_key(profile.name, source, paths=paths, keyring=ring)
        raise
    return source


def _keep_key(
    name: str, key: Secret, *, insecure: bool, paths: AppPaths, keyring: KeyringStore
) -> KeySource:
    """The keyring when it takes the key (an old key file is then removed), which is preferred
    even when `insecure` allows a plaintext file; else that file, only if `insecure`. Without
    it a missing or failing keyring is an error whose message says how to go on."""
    files = KeyFileStore(paths)
    try:
        keyring.set(name, key)
    except _KEYRING_FAILURES as exc:
        if not insecure:
            raise type(exc)(
                f"Cannot store the key of profile {name!r}: {exc}. {HOW_TO_PROCEED}"
            ) from None
        files.write(name, key)
        return KeySource.INSECURE_FILE
    files.delete(name)
    return KeySource.KEYRING


def _forget_new_key(
    name: str, source: KeySource, *, paths: AppPaths, keyring: KeyringStore
) -> None:
    """Best effort: the profile write's error is the one to report."""
    try:
        if source is KeySource.KEYRING:
            keyring.delete(name)
        else:
            KeyFileStore(paths).delete(name)
    except (*_KEYRING_FAILURES, KeyFileError):
        return


def delete_key(
    profile: str,
    *,
    env: Mapping[str, str] | None = None,
    keyring: KeyringStore | None = None,
) -> tuple[KeySource, ...]:
    """Log out: remove the key from the keyring and the key file, wherever it is.

    Works for a profile already removed from config.toml, so no key is left orphaned.
    TRACKER_API_KEY is the environment's to unset. Returns where a key was removed from.
    """
    validate_profile_name(profile)
    removed: list[KeySource] = []
    failure: KeyringTimeoutError | KeyringBackendError | None = None
    try:
        if (keyring or KeyringStore()).delete(profile):
            removed.append(KeySource.KEYRING)
    except KeyringUnavailableError:
        pass  # nothing can have been stored in a keyring that is not there
    except (KeyringTimeoutError, KeyringBackendError) as exc:
        failure = exc
    if KeyFileStore(AppPaths.from_env(env)).delete(profile):
        removed.append(KeySource.INSECURE_FILE)
    if failure is not None:
        raise failure
    return tuple(removed)


def resolve_profile(
    name: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    keyring: KeyringStore | None = None,
) -> ResolvedProfile:
    """The server, workspace and key to run with: the named profile, else the default one,
    else TRACKER_SERVER alone. A missing key is not an error: the caller asks for it.
    """
    paths = AppPaths.from_env(env)
    profile, server = _choose_profile(name, ProfileStore(paths).load(), server_from_env(env), paths)
    lookup = find_key(profile, env=env, keyring=keyring)
    return ResolvedProfile(
        name=profile.name if profile is not None else None,
        server=server,
        workspace=profile.workspace if profile is not None else None,
        key=lookup.key,
        key_source=lookup.source,
        warnings=(*lookup.warnings, *cleartext_warnings(server)),
    )


def keyless_profile(
    name: str | None = None, *, env: Mapping[str, str] | None = None
) -> Profile | None:
    """The profile `resolve_profile` would choose (None: env-only mode), found without its
    key: reading the cache needs none, and looking it up loads the keyring or waits on it."""
    paths = AppPaths.from_env(env)
    profile, _ = _choose_profile(name, ProfileStore(paths).load(), server_from_env(env), paths)
    return profile


def cache_name_of(name: str | None = None, *, env: Mapping[str, str] | None = None) -> str:
    """`resolve_profile(name).cache_name`, without looking up the key."""
    profile = keyless_profile(name, env=env)
    return profile.name if profile is not None else ENV_PROFILE_CACHE


def _choose_profile(
    name: str | None, config: Config, env_server: str | None, paths: AppPaths
) -> tuple[Profile | None, str]:
    if name is not None:
        profile = config.get(validate_profile_name(name))
        if env_server is not None and env_server != profile.server:
            raise ProfileConflictError(
                f"profile {name!r} is for {profile.server}, but {ENV_SERVER} is {env_server}; "
                f"unset {ENV_SERVER} or choose the profile of that server"
            )
        return profile, profile.server
    if config.default is not None:
        default = config.get(config.default)
        if env_server in (None, default.server):
            return default, default.server
    if env_server is not None:
        return None, env_server
    raise NoProfileError(
        f"no profile was chosen and {paths.config_file} names no default profile; add a "
        f"profile, or set {ENV_SERVER} and {ENV_API_KEY} to run without one"
    )


def cleartext_warnings(server: str) -> tuple[str, ...]:
    """http:// is fine for a server on this machine, not across a network."""
    parts = urlsplit(server)
    host = parts.hostname or ""
    if parts.scheme != "http" or host == "localhost":
        return ()
    import ipaddress  # only for a plain http:// server

    try:
        if ipaddress.ip_address(host).is_loopback:
            return ()
    except ValueError:
        pass
    return (f"{server} uses plain http://: the API key crosses the network unencrypted.",)
