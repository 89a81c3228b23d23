"""A key made with `keys create --save-as PROFILE` goes into the OS keyring and nowhere else:
not printed, not in argv, not in any byte under TRACKER_HOME; the next command on that profile
uses it (issue 20). Run as child processes against the reference service on loopback, with
the file-backed stand-in for an OS keyring outside TRACKER_HOME (`security_keyring`)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from leak_support import SCRIPT, Served, files_holding, leak_forms, make_session

from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread

FILE_KEYRING = "security_keyring.FileKeyring"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db = tmp_path_factory.mktemp("service") / "server.db"
    key = seed_workspace(db, "Acme", 5, plan="enterprise")
    with ServiceThread(create_app(db)) as service:
        yield Served(service.base_url, key)


def test_a_key_saved_as_a_profile_is_used_next_and_kept_nowhere_else(
    tmp_path: Path, served: Served
) -> None:
    session = make_session(tmp_path, served, FILE_KEYRING)
    keyring_file = tmp_path / "os-keyring.json"
    session.run("login", "--server", served.base_url, "--with-key", stdin=served.key + "\n")
    out = session.run(
        *("keys", "create", "--name", "reader", "--permission", "issues:read"),
        *("--permission", "projects:read", "--save-as", "reader"),
    )
    assert "kept it in the keyring as profile 'reader'; it was not shown" in out
    stored = json.loads(keyring_file.read_text())
    new_key = stored["tracker-tui/reader"]
    assert new_key.startswith("trk_") and new_key != served.key

    shown = json.loads(session.run("--profile", "reader", "workspace", "--json"))
    assert shown["key_permissions"] == ["issues:read", "projects:read"]
    listed = json.loads(session.run("keys", "list", "--json"))
    [made] = [key for key in listed if key["name"] == "reader"]
    session.run("--profile", "reader", "issues", "list")

    assert files_holding(session.home, new_key) == []
    for form in leak_forms(new_key):
        text = form.decode("latin-1")
        assert not any(text in argv for argv in session.argv_seen)
        assert not any(text in output for output in session.outputs)
    session.assert_no_leak()

    session.run("keys", "revoke", made["id"], "--yes")
    refused = subprocess.run(
        [str(SCRIPT), "--profile", "reader", "workspace"],
        capture_output=True,
        text=True,
        env=session.env,
        timeout=60,
    )
    assert refused.returncode == 1
    assert "it has been revoked" in refused.stderr
