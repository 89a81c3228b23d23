"""Keys: the Secret type, keyring backend detection and timeouts, the lookup order, storing,
logging out, env-only operation and the doctor report.

The keyring backends below are real ones, in keyring's own API (`KeyringBackend` subclasses with
a declared priority, installed with `keyring.set_keyring`). Every test starts on keyring's fail
backend, so none can reach the keyring of the machine running the tests.
"""

from __future__ import annotations

import copy
import pickle
import stat
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail, null
from keyring.backends.chainer import ChainerBackend
from keyring.compat import properties
from keyring.errors import KeyringLocked, PasswordDeleteError

from accounts.credentials import (
    ENV_API_KEY,
    HOW_TO_PROCEED,
    KeySource,
    ResolvedProfile,
    cleartext_warnings,
    delete_key,
    find_key,
    insecure_storage_warning,
    key_from_env,
    parse_key,
    resolve_profile,
    store_key,
)
from accounts.doctor import DoctorLine, Level, doctor_report
from accounts.errors import (
    ConfigError,
    InvalidKeyError,
    InvalidServerURLError,
    KeyFileError,
    KeyringBackendError,
    KeyringTimeoutError,
    KeyringUnavailableError,
    NoProfileError,
    ProfileConflictError,
    ProfileNotFoundError,
)
from accounts.keystore import SERVICE, KeyFileStore, KeyringStore, choose_backend
from accounts.profiles import AppPaths, KeyStorage, Profile, ProfileStore
from accounts.secret import Secret

KEY = "trk_" + "k" * 40
OTHER_KEY = "trk_" + "o" * 40


class MemoryKeyring(KeyringBackend):
    """An OS-keyring-grade backend that keeps its entries in a dict."""

    @properties.classproperty
    def priority(cls) -> float:
        return 5

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}
        self.calls: list[str] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.calls.append("get")
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.calls.append("set")
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.calls.append("delete")
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("no such password")


class LowPriorityKeyring(MemoryKeyring):
    """Priority below 1: how keyring marks a backend it does not recommend (plaintext files)."""

    @properties.classproperty
    def priority(cls) -> float:
        return 0.5


class AltPlaintextKeyring(MemoryKeyring):
    """Claims a high priority, but comes from the keyrings.alt family."""

    __module__ = "keyrings.alt.file"


class NotViableKeyring(MemoryKeyring):
    @properties.classproperty
    def priority(cls) -> float:
        raise RuntimeError("requires the secretstorage daemon")


class LockedKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("the collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked(f"could not unlock to store {password}")

    delete_password = set_password  # type: ignore[assignment]


class StuckKeyring(MemoryKeyring):
    """A keyring whose daemon does not answer (until the test ends)."""

    release: ClassVar[threading.Event] = threading.Event()

    def get_password(self, service: str, username: str) -> str | None:
        self.release.wait(10)
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        self.release.wait(10)


class Chain(ChainerBackend):
    """keyring's chainer, over a chain the test chooses instead of every installed backend."""

    chain: ClassVar[list[KeyringBackend]] = []

    @properties.classproperty
    def backends(cls) -> list[KeyringBackend]:
        return cls.chain


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("TRACKER_API_KEY", "TRACKER_SERVER", "PYTHON_KEYRING_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRACKER_HOME", str(tmp_path / "home"))
    keyring.set_keyring(fail.Keyring())
    yield
    StuckKeyring.release.set()
    keyring.set_keyring(fail.Keyring())


@pytest.fixture
def memory() -> MemoryKeyring:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    return backend


@pytest.fixture
def stuck() -> StuckKeyring:
    StuckKeyring.release.clear()
    backend = StuckKeyring()
    keyring.set_keyring(backend)
    return backend


@pytest.fixture
def paths() -> AppPaths:
    return AppPaths.from_env()


@pytest.fixture
def profiles(paths: AppPaths) -> ProfileStore:
    store = ProfileStore(paths)
    store.add(Profile("work", "https://tracker.example.com", "acme"))
    return store


def fast() -> KeyringStore:
    return KeyringStore(timeout=0.2)


def all_bytes_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# Secret


def test_a_secret_masks_itself_everywhere_but_reveal() -> None:
    secret = Secret(KEY)
    shown = [repr(secret), str(secret), f"{secret}", f"{secret!r}", format(secret)]
    assert all(KEY not in text and "****" in text for text in shown)
    assert secret.reveal() == KEY


def test_containers_of_a_secret_stay_masked() -> None:
    resolved = ResolvedProfile("w", "https://h/v1", "a", Secret(KEY), KeySource.ENV)
    assert KEY not in repr(resolved)
    assert KEY not in repr(copy.deepcopy(resolved))
    assert copy.deepcopy(resolved) == resolved
    assert KEY not in repr([Secret(KEY)])
    assert copy.deepcopy(Secret(KEY)).reveal() == KEY


def test_a_secret_is_not_in_a_traceback_that_shows_locals() -> None:
    def send(key: Secret) -> None:
        raise ConnectionError("server went away")

    try:
        send(Secret(KEY))
    except ConnectionError as exc:
        rendered = "".join(
            traceback.TracebackException.from_exception(exc, capture_locals=True).format()
        )
    assert "key = Secret('********')" in rendered
    assert KEY not in rendered


def test_secrets_compare_by_value_and_refuse_pickling() -> None:
    assert Secret(KEY) == Secret(KEY)
    assert Secret(KEY) != Secret(OTHER_KEY)
    assert Secret(KEY) != KEY
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(Secret(KEY))


@pytest.mark.parametrize(
    ("raw", "expected"), [(KEY, KEY), (f"  {KEY}\n", KEY), ("a", "a"), ("x~!#$", "x~!#$")]
)
def test_parse_key_trims_what_a_paste_adds(raw: str, expected: str) -> None:
    assert parse_key(Secret(raw), "the prompt").reveal() == expected


@pytest.mark.parametrize("raw", ["", "  \n", "trk_ab cd", "trk_ab\tcd", "trk_é", "trk_\x00"])
def test_parse_key_refuses_what_cannot_go_in_a_header_without_quoting_it(raw: str) -> None:
    with pytest.raises(InvalidKeyError) as caught:
        parse_key(Secret(raw), "the prompt")
    assert "the prompt" in str(caught.value)
    if raw.strip():
        assert raw.strip() not in str(caught.value)


# Backend detection


@pytest.mark.parametrize(
    ("backend", "reason"),
    [
        (fail.Keyring(), "'fail' backend"),
        (null.Keyring(), "'null' backend"),
        (LowPriorityKeyring(), "priority 0.5 is below 1"),
        (AltPlaintextKeyring(), "keyrings.alt"),
        (NotViableKeyring(), "requires the secretstorage daemon"),
    ],
)
def test_backends_that_are_not_an_os_keyring_are_not_used(
    backend: KeyringBackend, reason: str
) -> None:
    chosen, status = choose_backend(backend)
    assert chosen is None
    assert not status.usable
    assert reason in status.reason
    assert type(backend).__qualname__ in status.backend


def test_a_real_backend_is_used() -> None:
    backend = MemoryKeyring()
    chosen, status = choose_backend(backend)
    assert chosen is backend
    assert status.usable
    assert "MemoryKeyring (priority 5)" in status.backend


def test_a_chainer_is_looked_through_to_its_best_real_backend() -> None:
    plaintext, real = LowPriorityKeyring(), MemoryKeyring()
    Chain.chain = [plaintext, real]
    chosen, status = choose_backend(Chain())
    assert chosen is real
    assert status.usable
    assert "MemoryKeyring" in status.reason


def test_a_chainer_of_plaintext_backends_is_not_used() -> None:
    Chain.chain = [LowPriorityKeyring(), AltPlaintextKeyring()]
    chosen, status = choose_backend(Chain())
    assert chosen is None
    assert "chains no OS keyring" in status.reason


def test_writes_through_a_chainer_never_reach_its_plaintext_backend(profiles: ProfileStore) -> None:
    plaintext, real = LowPriorityKeyring(), MemoryKeyring()
    Chain.chain = [plaintext, real]
    keyring.set_keyring(Chain())
    assert store_key("work", Secret(KEY), insecure=False) is KeySource.KEYRING
    assert real.entries == {(SERVICE, "work"): KEY}
    assert plaintext.entries == {}


def test_the_store_asks_keyring_for_its_current_backend(memory: MemoryKeyring) -> None:
    assert KeyringStore().status().usable
    keyring.set_keyring(fail.Keyring())
    assert not KeyringStore().status().usable


def test_a_keyring_that_cannot_start_is_reported_not_raised() -> None:
    def broken() -> KeyringBackend:
        raise RuntimeError("bad keyringrc.cfg")

    status = KeyringStore(get_backend=broken).status()
    assert not status.usable
    assert "bad keyringrc.cfg" in status.reason


def test_an_unusable_keyring_is_never_called() -> None:
    backend = LowPriorityKeyring()
    keyring.set_keyring(backend)
    with pytest.raises(KeyringUnavailableError):
        KeyringStore().set("work", Secret(KEY))
    with pytest.raises(KeyringUnavailableError):
        KeyringStore().get("work")
    assert backend.calls == []


# Timeouts


def test_a_stuck_keyring_read_is_given_up_after_the_timeout(stuck: StuckKeyring) -> None:
    started = time.monotonic()
    with pytest.raises(KeyringTimeoutError, match=r"took longer than 0\.2 s reading the key"):
        fast().get("work")
    assert time.monotonic() - started < 2


def test_a_stuck_backend_choice_is_given_up_after_the_timeout() -> None:
    release = threading.Event()

    def hangs() -> KeyringBackend:
        release.wait(10)
        return MemoryKeyring()

    started = time.monotonic()
    try:
        status = KeyringStore(timeout=0.2, get_backend=hangs).status()
    finally:
        release.set()
    assert time.monotonic() - started < 2
    assert not status.usable
    assert "took longer than 0.2 s" in status.reason


def test_a_stuck_keyring_does_not_stop_a_lookup(
    stuck: StuckKeyring, profiles: ProfileStore
) -> None:
    lookup = find_key(profiles.get("work"), keyring=fast())
    assert lookup.key is None
    assert lookup.source is KeySource.NONE
    assert any("took longer than" in warning for warning in lookup.warnings)


def test_a_stuck_keyring_still_lets_a_chosen_key_file_be_read(
    stuck: StuckKeyring, profiles: ProfileStore
) -> None:
    assert store_key("work", Secret(KEY), insecure=True, keyring=fast()) is (
        KeySource.INSECURE_FILE
    )
    resolved = resolve_profile("work", keyring=fast())
    assert resolved.key == Secret(KEY)
    assert resolved.key_source is KeySource.INSECURE_FILE


def test_storing_into_a_stuck_keyring_fails_with_a_way_out(
    stuck: StuckKeyring, profiles: ProfileStore
) -> None:
    with pytest.raises(KeyringTimeoutError) as caught:
        store_key("work", Secret(KEY), insecure=False, keyring=fast())
    assert HOW_TO_PROCEED in str(caught.value)


# Lookup order


def test_the_environment_wins_and_the_keyring_is_not_even_asked(
    monkeypatch: pytest.MonkeyPatch, memory: MemoryKeyring, profiles: ProfileStore
) -> None:
    memory.entries[(SERVICE, "work")] = OTHER_KEY
    monkeypatch.setenv(ENV_API_KEY, f" {KEY}\n")
    lookup = find_key(profiles.get("work"))
    assert lookup.key == Secret(KEY)
    assert lookup.source is KeySource.ENV
    assert memory.calls == []


def test_an_empty_env_key_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_API_KEY, "  ")
    assert key_from_env() is None


def test_a_malformed_env_key_is_an_error_that_does_not_quote_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_API_KEY, "trk_secret value")
    with pytest.raises(InvalidKeyError, match=ENV_API_KEY) as caught:
        key_from_env()
    assert "secret value" not in str(caught.value)


def test_a_traceback_with_locals_from_a_bad_env_key_does_not_show_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual's crash screen renders every frame's locals; none may hold the plain key."""
    monkeypatch.setenv("TRACKER_SERVER", "https://h")
    monkeypatch.setenv(ENV_API_KEY, "trk_secret value")
    with pytest.raises(InvalidKeyError) as caught:
        resolve_profile()
    rendered = "".join(
        traceback.TracebackException.from_exception(caught.value, capture_locals=True).format()
    )
    assert "resolve_profile" in rendered and "key_from_env" in rendered
    assert "secret value" not in rendered


def test_the_keyring_comes_next(memory: MemoryKeyring, profiles: ProfileStore) -> None:
    memory.entries[(SERVICE, "work")] = KEY
    lookup = find_key(profiles.get("work"))
    assert (lookup.key, lookup.source, lookup.warnings) == (Secret(KEY), KeySource.KEYRING, ())


def test_without_any_key_the_caller_has_to_ask(profiles: ProfileStore) -> None:
    lookup = find_key(profiles.get("work"))
    assert (lookup.key, lookup.source, lookup.warnings) == (None, KeySource.NONE, ())


def test_a_locked_keyring_becomes_a_warning_that_does_not_quote_the_key(
    profiles: ProfileStore,
) -> None:
    keyring.set_keyring(LockedKeyring())
    lookup = find_key(profiles.get("work"))
    assert lookup.key is None
    assert lookup.warnings == (
        "The key of profile 'work' could not be read: the keyring "
        f"{LockedKeyring.__module__}.LockedKeyring (priority 5) failed reading the key: "
        "KeyringLocked: the collection is locked",
    )


def test_a_key_file_is_only_read_for_a_profile_that_chose_it(
    paths: AppPaths, profiles: ProfileStore
) -> None:
    path = KeyFileStore(paths).write("work", Secret(KEY))
    lookup = find_key(profiles.get("work"))
    assert lookup.key is None
    assert lookup.warnings == (insecure_storage_warning("work", path),)


# Storing


def test_store_key_uses_a_real_keyring(
    memory: MemoryKeyring, profiles: ProfileStore, paths: AppPaths
) -> None:
    assert store_key("work", Secret(KEY), insecure=False) is KeySource.KEYRING
    assert memory.entries == {(SERVICE, "work"): KEY}
    assert profiles.get("work").key_storage is KeyStorage.KEYRING
    assert KEY.encode() not in all_bytes_under(paths.config_dir)
    assert resolve_profile("work").key == Secret(KEY)


def test_store_key_prefers_the_keyring_even_when_a_file_is_allowed(
    memory: MemoryKeyring, profiles: ProfileStore, paths: AppPaths
) -> None:
    assert store_key("work", Secret(KEY), insecure=True) is KeySource.KEYRING
    assert not KeyFileStore(paths).exists("work")


def test_store_key_without_a_keyring_refuses_and_says_how_to_go_on(
    profiles: ProfileStore, paths: AppPaths
) -> None:
    with pytest.raises(KeyringUnavailableError) as caught:
        store_key("work", Secret(KEY), insecure=False)
    message = str(caught.value)
    assert "'fail' backend" in message
    assert all(hint in message for hint in ("TRACKER_API_KEY", "keyring", "--insecure-storage"))
    assert not KeyFileStore(paths).exists("work")
    assert KEY not in message


def test_a_locked_keyring_error_on_store_does_not_quote_the_key(profiles: ProfileStore) -> None:
    keyring.set_keyring(LockedKeyring())
    with pytest.raises(KeyringBackendError) as caught:
        store_key("work", Secret(KEY), insecure=False)
    assert "KeyringLocked: could not unlock to store ********" in str(caught.value)
    rendered = "".join(
        traceback.TracebackException.from_exception(caught.value, capture_locals=True).format()
    )
    assert KEY not in rendered
    assert KEY not in repr(caught.value.__context__)


def test_insecure_storage_writes_an_owner_only_file_and_warns_on_every_start(
    profiles: ProfileStore, paths: AppPaths
) -> None:
    assert store_key("work", Secret(f"{KEY}\n"), insecure=True) is KeySource.INSECURE_FILE
    path = paths.keys_dir / "work.key"
    assert path.read_text() == f"{KEY}\n"
    assert mode(path) == 0o600
    assert mode(paths.keys_dir) == 0o700
    assert mode(paths.config_dir) == 0o700
    assert profiles.get("work").key_storage is KeyStorage.INSECURE_FILE
    assert KEY.encode() not in paths.config_file.read_bytes()
    warning = insecure_storage_warning("work", path)
    assert str(path) in warning and "plaintext" in warning
    for _ in range(2):
        resolved = resolve_profile()
        assert resolved.key == Secret(KEY)
        assert resolved.key_source is KeySource.INSECURE_FILE
        assert resolved.warnings == (warning,)


def test_a_key_file_readable_by_others_is_refused(profiles: ProfileStore, paths: AppPaths) -> None:
    store_key("work", Secret(KEY), insecure=True)
    (paths.keys_dir / "work.key").chmod(0o644)
    with pytest.raises(KeyFileError, match="chmod 600") as caught:
        resolve_profile("work")
    assert KEY not in str(caught.value)


@pytest.mark.parametrize(
    ("content", "problem"), [(b"\n", "is empty"), (b"trk_\xff\xfe\n", "printable ASCII")]
)
def test_a_broken_key_file_is_reported(
    profiles: ProfileStore, paths: AppPaths, content: bytes, problem: str
) -> None:
    store_key("work", Secret(KEY), insecure=True)
    (paths.keys_dir / "work.key").write_bytes(content)
    with pytest.raises(InvalidKeyError, match=problem) as caught:
        resolve_profile("work")
    assert str(paths.keys_dir / "work.key") in str(caught.value)


def test_moving_to_a_keyring_deletes_the_plaintext_file(
    profiles: ProfileStore, paths: AppPaths
) -> None:
    store_key("work", Secret(KEY), insecure=True)
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    assert store_key("work", Secret(OTHER_KEY), insecure=False) is KeySource.KEYRING
    assert not (paths.keys_dir / "work.key").exists()
    assert profiles.get("work").key_storage is KeyStorage.KEYRING
    resolved = resolve_profile("work")
    assert (resolved.key, resolved.warnings) == (Secret(OTHER_KEY), ())


def test_keys_are_stored_only_for_known_profiles_and_valid_keys(profiles: ProfileStore) -> None:
    with pytest.raises(ProfileNotFoundError):
        store_key("nope", Secret(KEY), insecure=True)
    with pytest.raises(InvalidKeyError):
        store_key("work", Secret("two words"), insecure=True)


def test_the_config_never_contains_the_key(
    memory: MemoryKeyring, profiles: ProfileStore, paths: AppPaths
) -> None:
    store_key("work", Secret(KEY), insecure=False)
    profiles.add(Profile("home", "http://localhost:8000", "acme"))
    keyring.set_keyring(fail.Keyring())
    store_key("home", Secret(OTHER_KEY), insecure=True)
    config = paths.config_file.read_bytes()
    assert KEY.encode() not in config
    assert OTHER_KEY.encode() not in config
    assert b"key_storage" in config


# Logging out


def test_delete_key_removes_it_from_the_keyring(
    memory: MemoryKeyring, profiles: ProfileStore
) -> None:
    store_key("work", Secret(KEY), insecure=False)
    assert delete_key("work") == (KeySource.KEYRING,)
    assert memory.entries == {}
    assert delete_key("work") == ()


def test_delete_key_removes_the_key_file(profiles: ProfileStore, paths: AppPaths) -> None:
    store_key("work", Secret(KEY), insecure=True)
    assert delete_key("work") == (KeySource.INSECURE_FILE,)
    assert not (paths.keys_dir / "work.key").exists()


def test_delete_key_works_for_a_profile_no_longer_configured(memory: MemoryKeyring) -> None:
    memory.entries[(SERVICE, "gone")] = KEY
    assert delete_key("gone") == (KeySource.KEYRING,)


def test_delete_key_removes_the_file_even_when_the_keyring_fails(
    profiles: ProfileStore, paths: AppPaths
) -> None:
    store_key("work", Secret(KEY), insecure=True)
    keyring.set_keyring(LockedKeyring())
    with pytest.raises(KeyringBackendError, match="deleting the key"):
        delete_key("work")
    assert not (paths.keys_dir / "work.key").exists()


# Resolving: config and environment together


def test_resolve_uses_the_named_then_the_default_profile(
    memory: MemoryKeyring, profiles: ProfileStore
) -> None:
    profiles.add(Profile("home", "http://localhost:8000", "family"))
    memory.entries[(SERVICE, "home")] = KEY
    assert resolve_profile("home") == ResolvedProfile(
        "home", "http://localhost:8000/v1", "family", Secret(KEY), KeySource.KEYRING
    )
    default = resolve_profile()
    assert (default.name, default.server, default.key) == (
        "work",
        "https://tracker.example.com/v1",
        None,
    )


def test_env_only_operation_needs_no_stored_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_SERVER", "http://127.0.0.1:8000/")
    monkeypatch.setenv(ENV_API_KEY, KEY)
    assert resolve_profile() == ResolvedProfile(
        None, "http://127.0.0.1:8000/v1", None, Secret(KEY), KeySource.ENV
    )


def test_a_stored_key_is_never_sent_to_another_server(
    monkeypatch: pytest.MonkeyPatch, memory: MemoryKeyring, profiles: ProfileStore
) -> None:
    memory.entries[(SERVICE, "work")] = KEY
    monkeypatch.setenv("TRACKER_SERVER", "https://elsewhere.example.com")
    resolved = resolve_profile()
    assert (resolved.name, resolved.server, resolved.key) == (
        None,
        "https://elsewhere.example.com/v1",
        None,
    )
    with pytest.raises(ProfileConflictError, match="TRACKER_SERVER"):
        resolve_profile("work")


def test_tracker_server_naming_the_default_profiles_server_keeps_the_profile(
    monkeypatch: pytest.MonkeyPatch, memory: MemoryKeyring, profiles: ProfileStore
) -> None:
    memory.entries[(SERVICE, "work")] = KEY
    monkeypatch.setenv("TRACKER_SERVER", "https://TRACKER.example.com/v1/")
    resolved = resolve_profile()
    assert (resolved.name, resolved.key_source) == ("work", KeySource.KEYRING)
    assert resolve_profile("work").key == Secret(KEY)


def test_no_profile_and_no_server_is_a_clear_error(paths: AppPaths) -> None:
    with pytest.raises(NoProfileError) as caught:
        resolve_profile()
    assert "TRACKER_SERVER" in str(caught.value)
    assert str(paths.config_file) in str(caught.value)
    with pytest.raises(ProfileNotFoundError):
        resolve_profile("work")


def test_a_bad_tracker_server_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_SERVER", "localhost:8000")
    with pytest.raises(InvalidServerURLError, match=r"^TRACKER_SERVER: .*did you mean"):
        resolve_profile()


@pytest.mark.parametrize(
    ("server", "warns"),
    [
        ("http://tracker.example.com/v1", True),
        ("http://10.0.0.5/v1", True),
        ("http://localhost:8000/v1", False),
        ("http://127.0.0.1:8000/v1", False),
        ("http://[::1]:8000/v1", False),
        ("https://tracker.example.com/v1", False),
    ],
)
def test_plain_http_across_a_network_is_warned_about(server: str, warns: bool) -> None:
    assert bool(cleartext_warnings(server)) is warns


def test_resolve_carries_the_cleartext_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_SERVER", "http://tracker.example.com")
    assert resolve_profile().warnings == cleartext_warnings("http://tracker.example.com/v1")


def test_every_error_here_is_a_config_error() -> None:
    for error in (
        InvalidKeyError,
        KeyFileError,
        KeyringBackendError,
        KeyringTimeoutError,
        KeyringUnavailableError,
        NoProfileError,
        ProfileConflictError,
    ):
        assert issubclass(error, ConfigError)


# Doctor


def text_of(lines: list[DoctorLine]) -> str:
    return "\n".join(f"{line.level} {line.topic} {line.text}" for line in lines)


def test_doctor_explains_an_unused_keyring_and_where_files_live(paths: AppPaths) -> None:
    report = text_of(doctor_report())
    assert "warn keyring keyring.backends.fail.Keyring (priority 0) is not used" in report
    assert f"TRACKER_HOME is set to {paths.config_dir.parent}" in report
    assert "TRACKER_SERVER is not set" in report
    assert "TRACKER_API_KEY is not set" in report
    assert f"info config {paths.config_file} does not exist yet" in report
    assert f"info data {paths.data_dir} does not exist yet" in report
    assert "no profiles" in report


def test_doctor_shows_a_used_keyring_modes_and_profiles(
    memory: MemoryKeyring, profiles: ProfileStore, paths: AppPaths
) -> None:
    report = text_of(doctor_report())
    assert f"ok keyring {MemoryKeyring.__module__}.MemoryKeyring (priority 5) is used" in report
    assert f"info config {paths.config_file} (mode 0600)" in report
    assert f"info config {paths.config_dir} (mode 0700)" in report
    assert "work (default): https://tracker.example.com/v1, workspace acme" in report
    assert memory.calls == []


def test_doctor_never_shows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_API_KEY, KEY)
    monkeypatch.setenv("TRACKER_SERVER", "https://h")
    report = text_of(doctor_report())
    assert KEY not in report
    assert f"TRACKER_API_KEY is set ({len(KEY)} chars)" in report
    assert "TRACKER_SERVER is set to https://h/v1" in report
    monkeypatch.setenv(ENV_API_KEY, "trk_two words")
    report = text_of(doctor_report())
    assert f"error env set ({len('trk_two words')} chars) but unusable" in report
    assert "two words" not in report


def test_doctor_reports_problems(
    monkeypatch: pytest.MonkeyPatch, profiles: ProfileStore, paths: AppPaths
) -> None:
    store_key("work", Secret(KEY), insecure=True)
    paths.config_file.chmod(0o644)
    monkeypatch.setenv("TRACKER_SERVER", "localhost:8000")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    lines = doctor_report()
    report = text_of(lines)
    assert f"warn config {paths.config_file} has mode 0644" in report
    assert "error env TRACKER_SERVER: the server URL 'localhost:8000' has no scheme" in report
    assert "PYTHON_KEYRING_BACKEND picks keyring.backends.null.Keyring" in report
    warning = insecure_storage_warning("work", paths.keys_dir / "work.key")
    assert DoctorLine("profiles", Level.WARN, f"{warning} (mode 0600)") in lines
    assert KEY not in report
    paths.config_file.write_text("schema = [")
    assert "error profiles" in text_of(doctor_report())
