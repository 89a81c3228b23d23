"""The API key never leaks: a whole command-line session, run as child processes against the
reference service on loopback, leaves no trace of the key in any byte of any file under
TRACKER_HOME (config, cache database and its WAL, logs), in any process's argv or in any output.

Three ways of giving the key are checked: stdin into an OS-grade keyring (`security_keyring`,
outside TRACKER_HOME), stdin into the `--insecure-storage` key file (the one file allowed to hold
it, 0600 in a 0700 folder, until logout), and TRACKER_API_KEY with no stored profile. The
objects that carry the key in memory show a mask in `repr` and `str`.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from leak_support import Served, Session, leak_forms, make_session

from accounts.credentials import KeyLookup, KeySource, ResolvedProfile, find_key, resolve_profile
from accounts.keystore import KeyringStore
from accounts.profiles import AppPaths, KeyStorage, Profile, ProfileStore
from accounts.secret import Secret
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.client import ApiClient

FAIL_KEYRING = "keyring.backends.fail.Keyring"
FILE_KEYRING = "security_keyring.FileKeyring"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db = tmp_path_factory.mktemp("service") / "server.db"
    key = seed_workspace(db, "Acme", 30, plan="enterprise")
    with ServiceThread(create_app(db)) as service:
        yield Served(service.base_url, key)


def _edits(session: Session, served: Served, first: int) -> None:
    """Every kind of write, queued the way a user makes them and sent by one sync; `first` is
    the first of the five issues (by number) this session may change."""
    one, two, three, four, five = (f"#{first + offset}" for offset in range(5))
    title = f"Edited in security check {first}"
    session.run("sync")
    session.run("issues", "create", "--title", "Made in a security check", "--no-push")
    session.run("issues", "edit", one, "--title", title, "--priority", "high", "--no-push")
    session.run("issues", "comment", two, "--body", "A comment from the check", "--no-push")
    session.run("issues", "bulk-edit", three, four, "--priority", "low", "--no-push")
    session.run("issues", "delete", five, "--yes", "--no-push")
    session.run("sync")
    assert served.titles().count(title) == 1


def assert_private(home: Path) -> None:
    """Every folder under TRACKER_HOME is 0700 and every file 0600, although the children ran
    with umask 022."""
    paths = sorted(home.rglob("*"))
    assert any(path.suffix == ".db" for path in paths), paths
    for path in paths:
        mode = stat.S_IMODE(path.stat().st_mode)
        expected = 0o700 if path.is_dir() else 0o600
        assert mode == expected, f"{path.relative_to(home)} has mode {mode:04o}"


def test_a_session_with_the_key_in_a_keyring(tmp_path: Path, served: Served) -> None:
    session = make_session(tmp_path, served, FILE_KEYRING)
    keyring_file = tmp_path / "os-keyring.json"
    out = session.run("login", "--server", served.base_url, "--with-key", stdin=served.key + "\n")
    assert "keyring" in out
    assert served.key in keyring_file.read_text()
    _edits(session, served, 1)
    session.run("doctor")
    session.assert_no_leak()
    assert_private(session.home)
    session.run("logout")
    assert served.key not in keyring_file.read_text()
    session.assert_no_leak()


def test_a_session_with_the_key_in_an_insecure_file(tmp_path: Path, served: Served) -> None:
    session = make_session(tmp_path, served, FAIL_KEYRING)
    session.run(
        "login",
        "--server",
        served.base_url,
        "--with-key",
        "--insecure-storage",
        stdin=served.key,
    )
    session.run("sync")
    session.run("issues", "bulk-edit", "#11", "#12", "--title", "Bulk in security check")
    assert served.titles().count("Bulk in security check") == 2
    key_file = Path("config") / "keys" / "default.key"
    session.assert_no_leak(allowed=frozenset({str(key_file)}))
    assert_private(session.home)
    assert not (tmp_path / "os-keyring.json").exists()
    session.run("logout")
    assert not (session.home / key_file).exists()
    session.assert_no_leak()


def test_a_session_with_the_key_in_the_environment(tmp_path: Path, served: Served) -> None:
    session = make_session(
        tmp_path,
        served,
        FAIL_KEYRING,
        TRACKER_SERVER=served.base_url,
        TRACKER_API_KEY=served.key,
    )
    session.run("sync")
    session.run("issues", "edit", "#21", "--title", "Env in security check")
    assert served.titles().count("Env in security check") == 1
    session.assert_no_leak()
    assert_private(session.home)
    assert not (session.home / "config" / "config.toml").exists()


async def test_objects_that_carry_the_key_hide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "trk_" + "S3cr3t" * 6 + "abcd"
    monkeypatch.setenv("TRACKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRACKER_SERVER", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TRACKER_API_KEY", key)
    profile = Profile(name="work", server="http://127.0.0.1:9/v1", workspace="Acme")
    ProfileStore(AppPaths.from_env()).add(profile)
    resolved = resolve_profile("work")
    lookup = find_key(profile)
    secret = Secret(key)
    client = ApiClient("http://127.0.0.1:9/v1", Secret(key))
    shown = [
        secret,
        resolved,
        lookup,
        KeyLookup(secret, KeySource.KEYRING),
        ResolvedProfile(None, "http://x/v1", None, secret, KeySource.ENV),
        client,
        client._http.headers,
        ProfileStore(AppPaths.from_env()).load(),
        KeyringStore(),
    ]
    try:
        assert resolved.key == secret and lookup.key == secret
        for item in shown:
            for text in (repr(item), str(item), f"{item}", f"{item!r}"):
                assert not any(form.decode("latin-1") in text for form in leak_forms(key)), text
        assert profile.key_storage is KeyStorage.KEYRING
    finally:
        await client.aclose()
