"""Login, logout, profiles, and one clear line on stderr for every failure; plus one run of
the real console script, with the key on stdin and never in argv."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import FAIL_KEYRING, Cli, Loopback, loopback, make_cli

from server.keys import create_key


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loopback]:
    with loopback(tmp_path_factory.mktemp("service"), 40) as running:
        yield running


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return make_cli(tmp_path, capsys, monkeypatch)


def one_line_failure(result: tuple[int, str, str], *words: str) -> str:
    status, out, err = result
    assert status != 0 and out == ""
    assert err.count("\n") == 1 and err.startswith("tracker-tui: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    return err


def test_login_sync_logout(cli: Cli, service: Loopback) -> None:
    cli.monkeypatch.setattr(sys, "stdin", io.StringIO(service.key + "\n"))
    status, out, err = cli.run(
        "login", "--server", service.base_url, "--with-key", "--insecure-storage"
    )
    assert status == 0, err
    assert "profile 'default' (default)" in out and "insecure-file" in out
    config = (cli.home / "config" / "config.toml").read_text()
    assert service.key not in config
    status, out, _ = cli.run("profiles")
    assert "* " in out.splitlines()[1] and "default" in out
    status, out, err = cli.run("sync")
    assert status == 0, err
    status, out, _ = cli.run("logout")
    assert status == 0 and "insecure-file" in out
    one_line_failure(cli.run("sync"), "no API key")


def test_login_refuses_a_wrong_key_and_stores_nothing(cli: Cli, service: Loopback) -> None:
    cli.monkeypatch.setattr(sys, "stdin", io.StringIO("trk_" + "x" * 40))
    err = one_line_failure(
        cli.run("login", "--server", service.base_url, "--with-key", "--insecure-storage"),
        "refused this API key",
        "create a new one",
        "Nothing was saved",
    )
    assert "log in again" not in err and "tracker-tui login" not in err
    assert "No profiles" in cli.run("profiles")[1]


def test_login_without_a_keyring_or_file_changes_nothing(cli: Cli, service: Loopback) -> None:
    """The refusal comes before any write: a new profile is not made, an old one not changed."""
    cli.monkeypatch.setattr(sys, "stdin", io.StringIO(service.key + "\n"))
    one_line_failure(
        cli.run("login", "--server", service.base_url, "--with-key"),
        "Nothing was saved",
        "--insecure-storage",
    )
    assert "No profiles" in cli.run("profiles")[1]
    cli.monkeypatch.setattr(sys, "stdin", io.StringIO(service.key + "\n"))
    assert (
        cli.run("login", "--server", service.base_url, "--with-key", "--insecure-storage")[0] == 0
    )
    config = (cli.home / "config" / "config.toml").read_text()
    cli.monkeypatch.setattr(sys, "stdin", io.StringIO(service.key + "\n"))
    one_line_failure(
        cli.run("login", "--server", service.base_url, "--with-key", "--workspace", "elsewhere"),
        "Nothing was saved",
    )
    assert (cli.home / "config" / "config.toml").read_text() == config
    assert cli.run("sync")[0] == 0


def test_login_without_a_terminal_or_stdin_flag_says_how(cli: Cli, service: Loopback) -> None:
    cli.monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    one_line_failure(cli.run("login", "--server", service.base_url), "--with-key")


def test_unauthorized(cli: Cli, service: Loopback) -> None:
    cli.use(service.base_url, "trk_" + "y" * 40)
    one_line_failure(cli.run("sync"), "401")


def test_forbidden(cli: Cli, service: Loopback) -> None:
    key = create_key(service.db, "Acme", "reader", permissions=["projects:read"])
    cli.use(service.base_url, key)
    one_line_failure(cli.run("sync"), "403")


def test_refused_connection(cli: Cli) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cli.use(f"http://127.0.0.1:{port}/v1", "trk_" + "z" * 40)
    one_line_failure(cli.run("sync"), "cannot reach")


def test_bad_url(cli: Cli) -> None:
    cli.use("ftp://tracker.example.com", "trk_" + "z" * 40)
    one_line_failure(cli.run("sync"), "http")
    one_line_failure(cli.run("login", "--server", "tracker.example.com", "--with-key"), "scheme")


def test_no_profile(cli: Cli) -> None:
    one_line_failure(cli.run("issues", "list"), "TRACKER_SERVER")


def test_corrupt_cache(cli: Cli, service: Loopback) -> None:
    cli.use(service.base_url, service.key)
    assert cli.run("sync")[0] == 0
    (path,) = (cli.home / "data").rglob("*.db")
    path.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    one_line_failure(cli.run("issues", "list"), "damaged")


def test_the_console_script_takes_the_key_from_stdin_only(
    tmp_path: Path, service: Loopback
) -> None:
    script = Path(sys.executable).with_name("tracker-tui")
    argv = [str(script), "login", "--server", service.base_url, "--with-key", "--insecure-storage"]
    env = {
        **os.environ,
        "TRACKER_HOME": str(tmp_path / "home"),
        "PYTHON_KEYRING_BACKEND": FAIL_KEYRING,
    }
    env.pop("TRACKER_API_KEY", None)
    env.pop("TRACKER_SERVER", None)
    done = subprocess.run(
        argv, input=service.key, capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert service.key not in " ".join(argv)
    assert service.key not in done.stdout + done.stderr
    listed = subprocess.run(
        [str(script), "sync"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert listed.returncode == 0, listed.stderr
    assert service.key not in listed.stdout + listed.stderr
