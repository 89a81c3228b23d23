"""Profiles in config.toml: layout, validation, atomic owner-only writes, add/remove/default."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from accounts.errors import (
    ConfigError,
    ConfigFileError,
    InvalidProfileNameError,
    InvalidServerURLError,
    InvalidValueError,
    ProfileExistsError,
    ProfileNotFoundError,
)
from accounts.profiles import (
    AppPaths,
    Config,
    KeyStorage,
    Profile,
    ProfileStore,
    dump_config,
    normalize_server_url,
    parse_config,
    validate_profile_name,
)
from cache.paths import data_dir as cache_data_dir


@pytest.fixture
def paths(tmp_path: Path) -> AppPaths:
    return AppPaths.from_env({"TRACKER_HOME": str(tmp_path / "home")})


@pytest.fixture
def store(paths: AppPaths) -> ProfileStore:
    return ProfileStore(paths)


def work(
    name: str = "work",
    server: str = "https://tracker.example.com",
    workspace: str = "acme",
    key_storage: KeyStorage = KeyStorage.KEYRING,
    ui: dict[str, Any] | None = None,
) -> Profile:
    return Profile(name, server, workspace, key_storage, ui or {})


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# Layout


def test_tracker_home_puts_config_and_data_under_one_root(tmp_path: Path) -> None:
    paths = AppPaths.from_env({"TRACKER_HOME": str(tmp_path)})
    assert paths.config_file == tmp_path / "config" / "config.toml"
    assert paths.keys_dir == tmp_path / "config" / "keys"
    assert paths.data_dir == tmp_path / "data"


def test_tracker_home_expands_user_and_becomes_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    assert AppPaths.from_env({"TRACKER_HOME": "~/t"}).config_dir == Path("/home/someone/t/config")
    relative = AppPaths.from_env({"TRACKER_HOME": "rel"}).config_dir
    assert relative == Path.cwd() / "rel" / "config"


@pytest.mark.parametrize("env", [{}, {"TRACKER_HOME": ""}, {"TRACKER_HOME": "  "}])
def test_without_tracker_home_the_platform_directories_are_used(env: dict[str, str]) -> None:
    paths = AppPaths.from_env(env)
    assert paths.config_dir == Path(platformdirs.user_config_dir("tracker-tui", appauthor=False))
    assert paths.data_dir == Path(platformdirs.user_data_dir("tracker-tui", appauthor=False))
    assert paths.config_file.name == "config.toml"


def test_from_env_reads_the_process_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TRACKER_HOME", str(tmp_path))
    assert AppPaths.from_env().config_dir == tmp_path / "config"


XDG_CASES = (
    {"HOME": "/home/ann", "XDG_CONFIG_HOME": None, "XDG_DATA_HOME": None},
    {"HOME": "/home/ann/", "XDG_CONFIG_HOME": "", "XDG_DATA_HOME": ""},
    {"HOME": "/home/ann", "XDG_CONFIG_HOME": "/etc/ann", "XDG_DATA_HOME": "/srv/ann/"},
    {"HOME": "/home/ann", "XDG_CONFIG_HOME": "relative/cfg", "XDG_DATA_HOME": "./data"},
    {"HOME": "/", "XDG_CONFIG_HOME": None, "XDG_DATA_HOME": "/d"},
    {"HOME": "relative", "XDG_CONFIG_HOME": None, "XDG_DATA_HOME": None},
    {"HOME": None, "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": None},
)


@pytest.mark.parametrize("given", XDG_CASES, ids=lambda case: repr(sorted(case.items())))
def test_the_paths_are_platformdirs_own_without_importing_it(
    monkeypatch: pytest.MonkeyPatch, given: dict[str, str | None]
) -> None:
    """On Linux the usual case is answered without platformdirs (a command line's start pays
    for its imports), for the profiles as for the cache's files; the answer is the one
    platformdirs gives, whatever the environment."""
    monkeypatch.delenv("TRACKER_HOME", raising=False)
    for name, value in given.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        expected = (
            Path(platformdirs.user_config_dir("tracker-tui", appauthor=False)),
            Path(platformdirs.user_data_dir("tracker-tui", appauthor=False)),
        )
    except RuntimeError:  # no home platformdirs can resolve: neither may answer otherwise
        expected = None
    try:
        paths = AppPaths.from_env()
    except RuntimeError:
        assert expected is None
    else:
        assert (paths.config_dir, paths.data_dir) == expected
    try:
        cache_dir = cache_data_dir()
    except RuntimeError:
        assert expected is None
    else:
        assert expected is not None
        assert cache_dir == expected[1]


# Server URLs


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://tracker.example.com", "https://tracker.example.com/v1"),
        ("https://tracker.example.com/", "https://tracker.example.com/v1"),
        ("https://tracker.example.com/v1", "https://tracker.example.com/v1"),
        ("https://tracker.example.com/v1/", "https://tracker.example.com/v1"),
        ("https://tracker.example.com/v1/v1", "https://tracker.example.com/v1"),
        ("  HTTPS://Tracker.Example.COM/v1  ", "https://tracker.example.com/v1"),
        ("http://localhost:8000", "http://localhost:8000/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://[::1]:8000/", "http://[::1]:8000/v1"),
        ("https://example.com/api//tracker/", "https://example.com/api/tracker/v1"),
        ("https://example.com/api/v1", "https://example.com/api/v1"),
        ("https://example.com:8443", "https://example.com:8443/v1"),
    ],
)
def test_server_urls_are_normalized_to_end_in_v1_once(raw: str, expected: str) -> None:
    assert normalize_server_url(raw) == expected
    assert normalize_server_url(expected) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("localhost:8000", "did you mean 'http://localhost:8000'?"),
        ("127.0.0.1:8000/v1", "did you mean 'http://127.0.0.1:8000/v1'?"),
        ("tracker.example.com", "did you mean 'https://tracker.example.com'?"),
        ("ftp://tracker.example.com", "must start with http:// or https://, not ftp://"),
        ("https://", "has no host"),
        ("https:///v1", "has no host"),
        ("https://example.com:99999", "invalid port"),
        ("https://example.com:port", "invalid port"),
        ("https://example.com/v1?x=1", "query"),
        ("https://example.com/v1#top", "fragment"),
        ("https://example.com/v2", "ends in /v2"),
        ("https://example.com/v1/v3/", "ends in /v3"),
    ],
)
def test_bad_server_urls_say_what_is_wrong(raw: str, message: str) -> None:
    with pytest.raises(InvalidServerURLError) as caught:
        normalize_server_url(raw)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "raw", ["https://me:hunter2@example.com", "me:hunter2@example.com", "https://me@example.com"]
)
def test_credentials_in_a_url_are_refused_without_echoing_them(raw: str) -> None:
    with pytest.raises(InvalidServerURLError) as caught:
        normalize_server_url(raw)
    assert "user name or password" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    assert "me@" not in str(caught.value)


def test_url_errors_belong_to_the_config_error_tree() -> None:
    assert issubclass(InvalidServerURLError, InvalidValueError)
    assert issubclass(InvalidValueError, ConfigError)


# Profile names and profiles


@pytest.mark.parametrize("name", ["work", "Work-2", "a", "acme.prod", "x_y", "9" * 64])
def test_valid_profile_names(name: str) -> None:
    assert validate_profile_name(name) == name


@pytest.mark.parametrize(
    "name", ["", ".hidden", "-x", "a/b", "../x", "a b", "a\\b", "naïve", "9" * 65, "a\n"]
)
def test_profile_names_that_could_escape_a_directory_or_confuse_a_keyring_are_refused(
    name: str,
) -> None:
    with pytest.raises(InvalidProfileNameError):
        validate_profile_name(name)


def test_a_profile_normalizes_its_server_and_workspace() -> None:
    profile = work(server="http://localhost:8000/", workspace="  acme ")
    assert profile.server == "http://localhost:8000/v1"
    assert profile.workspace == "acme"
    assert profile.key_storage is KeyStorage.KEYRING
    assert profile.ui == {}


def test_a_profile_refuses_an_empty_workspace_and_a_bad_name() -> None:
    with pytest.raises(InvalidValueError, match="workspace is empty"):
        work(workspace=" ")
    with pytest.raises(InvalidProfileNameError):
        work(name="a/b")
    with pytest.raises(InvalidServerURLError):
        work(server="localhost:8000")


# The store: add, remove, default


def test_a_missing_config_file_is_an_empty_config(store: ProfileStore) -> None:
    assert store.load() == Config()
    assert not store.paths.config_file.exists()


def test_the_first_profile_becomes_the_default(store: ProfileStore) -> None:
    store.add(work())
    store.add(work(name="home", server="http://localhost:8000"))
    config = store.load()
    assert config.default == "work"
    assert sorted(config.profiles) == ["home", "work"]
    assert store.get("home").server == "http://localhost:8000/v1"


def test_add_can_make_a_profile_the_default(store: ProfileStore) -> None:
    store.add(work())
    store.add(work(name="home"), make_default=True)
    assert store.load().default == "home"


def test_adding_an_existing_name_is_refused(store: ProfileStore) -> None:
    store.add(work())
    with pytest.raises(ProfileExistsError, match="'work' already exists"):
        store.add(work(workspace="other"))
    assert store.get("work").workspace == "acme"


def test_set_default(store: ProfileStore) -> None:
    store.add(work())
    store.add(work(name="home"))
    store.set_default("home")
    assert store.load().default == "home"
    with pytest.raises(ProfileNotFoundError, match="'nope'"):
        store.set_default("nope")


def test_removing_a_profile_that_is_not_the_default(store: ProfileStore) -> None:
    store.add(work())
    store.add(work(name="home"))
    store.remove("home")
    assert list(store.load().profiles) == ["work"]
    assert store.load().default == "work"


def test_removing_the_default_leaves_the_only_remaining_profile_as_default(
    store: ProfileStore,
) -> None:
    store.add(work())
    store.add(work(name="home"))
    store.remove("work")
    assert store.load().default == "home"
    store.remove("home")
    assert store.load() == Config()


def test_removing_the_default_among_several_leaves_no_default(store: ProfileStore) -> None:
    for name in ("work", "home", "ci"):
        store.add(work(name=name))
    store.remove("work")
    assert store.load().default is None
    assert sorted(store.load().profiles) == ["ci", "home"]


def test_unknown_profiles_are_reported_with_the_known_ones(store: ProfileStore) -> None:
    store.add(work())
    with pytest.raises(ProfileNotFoundError, match=r"no profile named 'x' \(profiles: work\)"):
        store.get("x")
    with pytest.raises(ProfileNotFoundError):
        store.remove("x")
    with pytest.raises(ProfileNotFoundError):
        store.update(work(name="x"))


def test_ui_settings_round_trip_without_the_store_knowing_them(store: ProfileStore) -> None:
    ui = {
        "theme": "dark",
        "read_only": True,
        "views": {
            "mine": {"filter": 'assignee:me "quoted" \\ back', "sort": "-updated_at"},
            "naïve ünïcode": {"filter": "line\nbreak\ttab", "sort": "priority"},
        },
        "columns": ["id", "title"],
        "width": 3.5,
    }
    store.add(work())
    store.update(work(ui=ui))
    assert store.get("work").ui == ui
    assert tomllib.loads(store.paths.config_file.read_text())["profiles"]["work"]["ui"] == ui


def test_the_written_file_matches_the_documented_schema(store: ProfileStore) -> None:
    store.add(work(ui={"theme": "dark", "views": {"mine": {"filter": "a", "sort": "b"}}}))
    text = store.paths.config_file.read_text()
    assert text.startswith("# tracker-tui configuration. API keys are never stored")
    assert tomllib.loads(text) == {
        "schema": 1,
        "default_profile": "work",
        "profiles": {
            "work": {
                "server": "https://tracker.example.com/v1",
                "workspace": "acme",
                "key_storage": "keyring",
                "ui": {"theme": "dark", "views": {"mine": {"filter": "a", "sort": "b"}}},
            }
        },
    }


def test_a_value_toml_cannot_hold_is_refused_and_the_file_is_kept(store: ProfileStore) -> None:
    store.add(work())
    before = store.paths.config_file.read_bytes()
    with pytest.raises(ConfigFileError, match="cannot write"):
        store.update(work(ui={"theme": None}))
    assert store.paths.config_file.read_bytes() == before


# File modes and atomic writes


def test_config_is_0600_in_a_0700_directory_whatever_the_umask(store: ProfileStore) -> None:
    previous = os.umask(0)
    try:
        store.add(work())
    finally:
        os.umask(previous)
    assert mode(store.paths.config_file) == 0o600
    assert mode(store.paths.config_dir) == 0o700


def test_an_existing_open_config_directory_is_tightened(store: ProfileStore) -> None:
    store.paths.config_dir.mkdir(parents=True, mode=0o755)
    store.paths.config_dir.chmod(0o755)
    store.paths.config_file.write_text("schema = 1\n")
    store.paths.config_file.chmod(0o644)
    store.add(work())
    assert mode(store.paths.config_dir) == 0o700
    assert mode(store.paths.config_file) == 0o600


def test_a_write_leaves_no_temporary_file_behind(store: ProfileStore) -> None:
    store.add(work())
    store.add(work(name="home"))
    assert sorted(p.name for p in store.paths.config_dir.iterdir()) == ["config.toml"]


def test_a_failed_write_keeps_the_old_file_whole(
    store: ProfileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add(work())
    before = store.paths.config_file.read_bytes()

    def crash(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(ConfigFileError, match="No space left on device"):
        store.add(work(name="home"))
    monkeypatch.undo()
    assert store.paths.config_file.read_bytes() == before
    assert sorted(p.name for p in store.paths.config_dir.iterdir()) == ["config.toml"]


def test_the_file_is_swapped_in_by_one_rename(
    store: ProfileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add(work())
    seen: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: str, target: str) -> None:
        # At the moment of the swap the old file is still whole and the new one complete.
        assert "home" not in Path(target).read_text()
        assert "home" in Path(source).read_text()
        seen.append((source, target))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", spy)
    store.add(work(name="home"))
    assert [Path(target) for _, target in seen] == [store.paths.config_file]
    assert Path(seen[0][0]).parent == store.paths.config_dir


def test_a_symlinked_config_is_written_through_the_link(
    store: ProfileStore, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "tracker.toml"
    real.write_text("schema = 1\n")
    store.paths.config_dir.mkdir(parents=True)
    store.paths.config_file.symlink_to(real)
    store.add(work())
    assert store.paths.config_file.is_symlink()
    assert "[profiles.work]" in real.read_text()


# Reading a file someone edited


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("schema = [", "is not valid TOML"),
        ("colour = 'red'\n", "unknown key(s) colour"),
        ("schema = 2\n", "written by a newer tracker-tui"),
        ("profiles = 3\n", "profiles must be a table"),
        ("default_profile = 'x'\n", "default_profile 'x' is not a profile"),
        ("[profiles.w]\nworkspace = 'a'\n", 'needs server = "..." and workspace = "..."'),
        ("[profiles.w]\nserver = 'https://h'\n", "needs server"),
        (
            "[profiles.w]\nserver = 'https://h'\nworkspace = 'a'\nsever = 'x'\n",
            "profile 'w': unknown key(s) sever",
        ),
        (
            "[profiles.w]\nserver = 'https://h'\nworkspace = 'a'\nkey_storage = 'disk'\n",
            "key_storage must be one of 'keyring', 'insecure-file'",
        ),
        ("[profiles.w]\nserver = 'localhost:8000'\nworkspace = 'a'\n", "did you mean"),
        ("[profiles.w]\nserver = 'https://h'\nworkspace = 'a'\nui = 1\n", "ui must be a table"),
        ("[profiles.'a/b']\nserver = 'https://h'\nworkspace = 'a'\n", "invalid profile name"),
    ],
)
def test_a_broken_config_names_the_file_and_the_problem(
    store: ProfileStore, text: str, message: str
) -> None:
    store.paths.config_dir.mkdir(parents=True)
    store.paths.config_file.write_text(text)
    with pytest.raises(ConfigFileError) as caught:
        store.load()
    assert message in str(caught.value)
    assert str(store.paths.config_file) in str(caught.value)


def test_a_hand_written_file_with_defaults_is_read() -> None:
    config = parse_config(
        "[profiles.w]\nserver = 'http://localhost:8000'\nworkspace = 'acme'\n", Path("c.toml")
    )
    assert config.default is None
    assert config.get("w") == Profile("w", "http://localhost:8000/v1", "acme")


def test_dump_and_parse_round_trip() -> None:
    config = Config(
        profiles={
            "work": work(key_storage=KeyStorage.INSECURE_FILE, ui={"theme": "light"}),
            "home": work(name="home", server="http://localhost:8000"),
        },
        default="home",
    )
    assert parse_config(dump_config(config), Path("c.toml")) == config


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the shortcut is Linux's")
def test_the_usual_paths_load_no_platformdirs(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("TRACKER_HOME", None)
    code = "import sys; from accounts.profiles import AppPaths; AppPaths.from_env()\n"
    code += "from cache.paths import data_dir; data_dir()\n"
    code += "print(sorted({'platformdirs', 'tempfile', 'shutil'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
