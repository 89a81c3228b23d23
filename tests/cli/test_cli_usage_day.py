"""`tracker-tui usage`'s "today" (issue 20), against the reference service on a loopback port:
the server's day where the client knows it (from 00:00 UTC on a server with the reference
service's extensions; from the reset of the day's window once the headers described it),
otherwise the last 24 hours, and `--json` says which."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from cli_support import Loopback, loopback, make_cli, without_me

from cache import open_cache

DAY = 86_400


def _usage(cli: object) -> dict[str, object]:
    status, out, err = cli.run("usage", "--json")  # type: ignore[attr-defined]
    assert status == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def _day(usage: dict[str, object]) -> dict[str, object]:
    [day] = [limit for limit in usage["limits"] if limit["window"] == "day"]  # type: ignore[attr-defined,index]
    return day  # type: ignore[no-any-return]


def test_on_a_server_with_the_extensions_today_is_the_servers_utc_day(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request logged just before 00:00 UTC is within the last 24 h but not today."""
    with loopback(tmp_path, 2) as service:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        assert cli.run("sync")[0] == 0
        before = _usage(cli)
        window = before["day_window"]
        assert window["kind"] == "server_day" and window["source"] == "utc_day"  # type: ignore[index]
        midnight = time.time() // DAY * DAY
        assert window["start"] == midnight  # type: ignore[index]
        # The reset comes back through the estimated clock offset, good to a second or so.
        assert abs(window["resets_at"] - (midnight + DAY)) <= 2  # type: ignore[index,operator]
        with open_cache("env") as cache:
            offset = cache.state.clock_offset()
            cache.requests.reserve_request(midnight - offset - 1, "other", [])
        after = _usage(cli)
        assert _day(after)["used"] == _day(before)["used"]
        _, out, _ = cli.run("usage")
        assert "day = the server's day (UTC days): since " in out and " 00:00:00 UTC" in out


def _spend_the_day(service: Loopback, used: int) -> None:
    """Others used `used` of the workspace's day (the service's own counter of it)."""
    now_us = time.time_ns() // 1_000
    day_us = DAY * 1_000_000
    end = (now_us // day_us + 1) * day_us
    with sqlite3.connect(service.db) as conn:
        [workspace] = [row[0] for row in conn.execute("SELECT id FROM workspaces")]
        conn.execute(
            "INSERT INTO ratelimit_counters (scope, subject, window_end_us, count) "
            "VALUES ('workspace-day', ?, ?, ?) ON CONFLICT (scope, subject, window_end_us) "
            "DO UPDATE SET count = excluded.count",
            (workspace, end, used),
        )


def test_elsewhere_today_is_the_last_24_h_until_the_headers_name_the_days_reset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `/me` nothing says how the server counts days; once the day is the tightest
    limit its `X-RateLimit-Reset` does. (Fails within two minutes of 00:00 UTC, where a day's
    reset cannot be told from a minute's.)"""
    with loopback(tmp_path, 2, plan="free", wrap=without_me) as service:
        cli = make_cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        assert cli.run("sync")[0] == 0
        usage = _usage(cli)
        assert usage["day_window"]["kind"] == "last_24h"  # type: ignore[index]
        assert usage["day_window"]["resets_at"] is None  # type: ignore[index]
        _, out, _ = cli.run("usage")
        assert "day = the last 24 h (the server's day is not known to this client)" in out
        _spend_the_day(service, 975)  # the day is the tightest limit: 25 left, this minute more
        assert cli.run("sync")[0] == 0
        usage = _usage(cli)
        window = usage["day_window"]
        assert window["kind"] == "server_day" and window["source"] == "reset_header"  # type: ignore[index]
        midnight = time.time() // DAY * DAY
        # The reset comes back through the estimated clock offset, good to a second or so.
        assert abs(window["resets_at"] - (midnight + DAY)) <= 2  # type: ignore[index,operator]
        _, out, _ = cli.run("usage")
        assert "day = the server's day (by the reset the server sent)" in out
