"""The plan a server showed only in its rate-limit headers is remembered between commands
(issue 15): `status` reports it, and the next command starts from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import loopback, make_cli, without_me


def test_status_says_the_plan_the_headers_showed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 30, plan="pro", wrap=without_me) as service:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        status, _, err = cli.run("sync")
        assert status == 0, err
        status, out, _ = cli.run("status", "--json")
    state = json.loads(out)
    assert state["features"]["me"] is False and state["features"]["plan"] is None
    assert state["plan"] == "pro"
    assert 60 < state["limits_left"]["minute"] < 300
