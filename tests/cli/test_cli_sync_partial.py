"""`tracker-tui sync` with a key that may read some resources only (issue 20), against the
reference service on a loopback port: it pulls what the key may read, says once what it left
out and why, and ends with status 3 (partly done); a key that may not read issues fails (1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import loopback, make_cli, without_me

from cache import Resource, open_cache
from server.keys import create_key


def test_a_key_with_issues_read_only_pulls_the_issues_and_names_what_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 4) as service:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        key = create_key(service.db, "Acme", "reader", permissions=["issues:read"])
        cli.use(service.base_url, key)
        status, out, err = cli.run("sync")
        assert status == 3, err
        lines = out.splitlines()
        left_out = [line for line in lines if "not pulled" in line]
        assert left_out == [
            "not pulled, the API key may not read them: projects (lacks projects:read); use a "
            "profile whose key has the permission, or ask a workspace admin for such a key"
        ]
        assert "tracker-tui:" not in err
        with open_cache("env") as cache:
            assert cache.server.local_count(Resource.ISSUES) == 4
            assert cache.server.local_count(Resource.PROJECTS) == 0
        status, out, _ = cli.run("sync", "--json")
        assert status == 3
        report = json.loads(out)
        assert report["pull"]["withheld"] == {"projects": "projects:read"}
        assert report["pull"]["resources"]["projects"]["requests"] == 0
        assert "projects (lacks projects:read)" in report["stopped"]
        status, out, _ = cli.run("issues", "list", "--json")
        assert status == 0 and len(json.loads(out)) == 4


def test_without_me_the_403_is_learned_and_the_next_sync_does_not_ask_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 3, wrap=without_me) as service:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        key = create_key(service.db, "Acme", "reader", permissions=["issues:read"])
        cli.use(service.base_url, key)
        status, out, err = cli.run("sync", "--json")
        assert status == 3, err
        first = json.loads(out)["pull"]
        assert first["withheld"] == {"projects": "projects:read"}
        assert first["resources"]["projects"]["requests"] == 1
        status, out, _ = cli.run("sync", "--json")
        assert status == 3
        again = json.loads(out)["pull"]
        assert again["withheld"] == {"projects": "projects:read"}
        assert again["resources"]["projects"]["requests"] == 0
        with open_cache("env") as cache:
            assert cache.server.local_count(Resource.ISSUES) == 3


def test_a_key_that_may_not_read_issues_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 2) as service:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        key = create_key(service.db, "Acme", "projects", permissions=["projects:read"])
        cli.use(service.base_url, key)
        status, out, err = cli.run("sync")
        assert status == 1 and out == ""
        [line] = err.splitlines()
        assert line.startswith("tracker-tui: the API key lacks the permission issues:read (403)")
