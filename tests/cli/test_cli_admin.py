"""The commands that manage the service (issue 20), run in-process against the reference
service on a loopback port: `workspace`, `keys`, `webhooks` and `usage`; the messages of a
revoked, an expired and an under-permitted key; and a key with `issues:read` only, whose write
commands are refused before any request is sent."""

from __future__ import annotations

import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import Cli, Loopback, loopback, make_cli, without_me
from webhook_sink import Sink

from cache import open_cache
from server.keys import create_key
from sync.webhook_verify import verify


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch) -> Cli:
    return make_cli(tmp_path, capsys, mp)


def _key(service: Loopback, *permissions: str, days: float | None = None) -> str:
    return create_key(
        service.db, "Acme", "test key", permissions=permissions or None, expires_in_days=days
    )


def _login(cli: Cli, service: Loopback, key: str) -> None:
    """A stored profile (its key in a 0600 file: the tests' keyring refuses everything)."""
    cli.monkeypatch.setattr(sys, "stdin", io.StringIO(key + "\n"))
    status, _, err = cli.run(
        "login", "--server", service.base_url, "--with-key", "--insecure-storage"
    )
    assert status == 0, err


def test_workspace_shows_and_renames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 2) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        status, out, err = cli.run("workspace", "--json")
        assert status == 0, err
        shown = json.loads(out)
        assert (shown["name"], shown["plan"]) == ("Acme", "enterprise")
        status, out, _ = cli.run("workspace", "rename", "Acme Labs")
        assert status == 0 and "renamed to 'Acme Labs'" in out
        assert json.loads(cli.run("workspace", "--json")[1])["name"] == "Acme Labs"
        status, _, err = cli.run("workspace", "rename", "  ")
        assert status == 2 and "1 to 100 characters" in err


def test_a_403_names_the_missing_permission_and_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With TRACKER_API_KEY nothing is known of the key yet: the rename is queued, the
    server's 403 leaves it failed in the outbox (never dropped), saying what to do."""
    with loopback(tmp_path, 2) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, _key(service, "issues:read", "issues:write"))
        status, out, err = cli.run("workspace", "rename", "Mine now")
        assert status == 3 and out == ""
        [line] = err.splitlines()
        assert "rename of the workspace to 'Mine now' failed" in line
        assert "the API key lacks admin" in line
        assert "log in with one" in line and "outbox retry" in line and "outbox discard" in line
        status, out, _ = cli.run("outbox", "--json")
        [entry] = [json.loads(row) for row in out.splitlines()]
        assert (entry["resource"], entry["state"]) == ("workspaces", "failed")
        assert entry["changes"] == {"name": "Mine now"} and "lacks admin" in entry["error"]
        status, out, _ = cli.run("workspace", "--json")
        assert json.loads(out)["name"] == "Acme"


def test_a_rename_queued_offline_shows_at_once_and_the_next_sync_sends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 2) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        status, _, err = cli.run("workspace", "rename", "Offline", "--no-push")
        assert status == 2 and "run `tracker-tui workspace` or `tracker-tui sync`" in err
        assert cli.run("sync")[0] == 0
        with open_cache("env") as cache:
            sent = len(cache.requests.request_times(0))
        status, out, err = cli.run("workspace", "rename", "Offline", "--no-push")
        assert status == 0, err
        assert "Rename of workspace 'Acme' to 'Offline' queued (outbox entry" in out
        with open_cache("env") as cache:
            assert len(cache.requests.request_times(0)) == sent
            shown = cache.reads.workspace()
            assert shown is not None and shown.name == "Offline"
            assert shown.sync_state.value == "pending"
        status, out, _ = cli.run("outbox")
        assert "pending   rename of the workspace to 'Offline'  name" in out
        status, out, _ = cli.run("status", "--json")
        assert json.loads(out)["pending_writes"] == 1
        assert cli.run("sync")[0] == 0
        assert json.loads(cli.run("workspace", "--json")[1])["name"] == "Offline"
        with open_cache("env") as cache:
            shown = cache.reads.workspace()
            assert shown is not None and shown.sync_state.value == "synced"


def test_a_key_is_made_shown_once_listed_and_revoked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 2) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        status, out, err = cli.run(
            *("keys", "create", "--name", "CI bot", "--permission", "issues:read"),
            *("--expires-in", "30"),
        )
        assert status == 0, err
        [value] = [word for word in out.split() if word.startswith("trk_")]
        assert "only time it is shown" in out
        status, out, _ = cli.run("keys", "list", "--json")
        listed = {key["name"]: key for key in json.loads(out)}
        made = listed["CI bot"]
        assert made["permissions"] == ["issues:read"] and not made["revoked"]
        assert value not in out and "key" not in made
        status, out, _ = cli.run("keys", "list")
        assert "CI bot" in out and "active" in out and value not in out

        cli.use(service.base_url, value)
        assert cli.run("workspace")[0] == 0
        cli.use(service.base_url, service.key)
        status, out, err = cli.run("keys", "revoke", made["id"], "--yes")
        assert status == 0 and f"Revoked key {made['id']}" in out, err
        cli.use(service.base_url, value)
        status, _, err = cli.run("workspace")
        assert status == 1
        assert "the server refused the API key: it has been revoked (401" in err
        status, _, err = cli.run("keys", "create", "--name", "x", "--permission", "nope")
        assert status == 2 and "unknown permission 'nope'" in err


def test_an_expired_key_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 2) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, _key(service, days=0.2 / 86_400))
        time.sleep(0.3)
        status, _, err = cli.run("workspace")
        assert status == 1
        assert "the server refused the API key: it has expired (401" in err.splitlines()[-1]


def test_revoke_asks_only_for_a_key_that_may_be_the_profiles_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No answer names the key a request used, but the caller's is among the listed keys
    with exactly `/me`'s permissions: a key with others is revoked without a question, one
    of two look-alikes asks (scripts need --yes), and a key alone with them is named."""
    with loopback(tmp_path, 2) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        reader = _key(service, "issues:read")
        twin = _key(service)
        listed = json.loads(cli.run("keys", "list", "--json")[1])
        by_permissions = {len(key["permissions"]): key["id"] for key in listed}
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        status, out, err = cli.run("keys", "revoke", by_permissions[1])
        assert status == 0 and f"Revoked key {by_permissions[1]}" in out, err
        cli.use(service.base_url, reader)
        assert cli.run("workspace")[0] == 1
        twins = [key["id"] for key in listed if len(key["permissions"]) == 8]
        assert len(twins) == 2 and not any(key["this_profile"] for key in listed)
        cli.use(service.base_url, service.key)
        status, _, err = cli.run("keys", "revoke", twins[0])
        assert status == 2 and "cannot tell whether" in err and "add --yes" in err
        cli.use(service.base_url, twin)
        assert cli.run("workspace")[0] == 0

        alone = _key(service, "issues:read", "admin")
        cli.use(service.base_url, alone)
        listed = json.loads(cli.run("keys", "list", "--json")[1])
        [mine] = [key["id"] for key in listed if key["this_profile"]]
        assert sorted(next(k for k in listed if k["id"] == mine)["permissions"]) == [
            "admin",
            "issues:read",
        ]
        status, _, err = cli.run("keys", "revoke", mine)
        assert status == 2 and f"{mine} is the key profile the environment's uses" in err
        assert cli.run("workspace")[0] == 0


def test_a_webhook_made_here_receives_a_signed_delivery(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 2) as service, Sink() as sink:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        status, out, err = cli.run(
            "webhooks", "create", sink.url, "--event", "issue.created", "--json"
        )
        assert status == 0, err
        made = json.loads(out)
        secret = made["secret"]
        assert cli.run("sync")[0] == 0
        status, _, err = cli.run("issues", "create", "--title", "Hooked")
        assert status == 0, err
        delivery = sink.next(timeout=20)
        verify(secret, delivery.headers.get("X-Tracker-Signature"), delivery.body, time.time())
        assert json.loads(delivery.body)["data"]["object"]["title"] == "Hooked"

        attempts: list[dict[str, object]] = []
        for _ in range(100):
            attempts = json.loads(cli.run("webhooks", "deliveries", made["id"], "--json")[1])
            if attempts and attempts[0]["status"] == "succeeded":
                break
            time.sleep(0.05)
        assert attempts[0]["status"] == "succeeded" and attempts[0]["response_code"] == 200
        status, out, _ = cli.run("webhooks", "deliveries", made["id"], "--failed")
        assert status == 0 and "no failed delivery attempts" in out
        status, out, _ = cli.run("webhooks", "list")
        assert made["id"] in out and secret not in out
        status, _, err = cli.run("webhooks", "redeliver", made["id"], str(attempts[0]["event_id"]))
        assert status == 1 and "cannot redeliver" in err

        monkeypatch.setattr(sys, "stdin", io.StringIO("my-own-secret\n"))
        status, out, err = cli.run("webhooks", "edit", made["id"], "--secret-stdin", "--event", "*")
        assert status == 0 and "on *" in out, err
        status, out, _ = cli.run("webhooks", "delete", made["id"], "--yes")
        assert status == 0
        assert json.loads(cli.run("webhooks", "list", "--json")[1]) == []
        status, _, err = cli.run("webhooks", "create", sink.url, "--event", "issue.moved")
        assert status == 2 and "unknown event 'issue.moved'" in err


def test_a_read_only_key_is_refused_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 3) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        _login(cli, service, _key(service, "issues:read"))
        assert cli.run("issues", "list")[0] == 0
        with open_cache("default") as cache:
            sent = len(cache.requests.request_times(0))
        for argv in (
            ("issues", "create", "--title", "Not allowed"),
            ("issues", "edit", "#1", "--title", "Not allowed"),
            ("issues", "delete", "#1", "--yes"),
            ("issues", "comment", "#1", "--body", "Not allowed"),
            ("workspace", "rename", "Not allowed"),
            ("keys", "list"),
            ("webhooks", "list"),
        ):
            status, _, err = cli.run(*argv)
            assert status == 1, argv
            [line] = err.splitlines()
            assert "it lacks the `" in line and "nothing was sent" in line, line
        with open_cache("default") as cache:
            assert len(cache.requests.request_times(0)) == sent
            assert cache.outbox.entries() == []
        for argv, permission in (
            (("issues", "create"), "issues:write"),
            (("issues", "comment"), "comments:write"),
            (("keys", "create"), "admin"),
            (("webhooks",), "webhooks:manage"),
        ):
            with pytest.raises(SystemExit):
                cli.run(*argv, "--help")
            shown = capsys.readouterr().out
            assert f"lacks `{permission}`: this command would be refused" in shown, argv


def _creates(usage: dict[str, Any]) -> int:
    """Issue creations this minute, by either endpoint a push may use."""
    names = ("POST /issues", "bulk operations")
    return sum(limit["used"] for limit in usage["limits"] if limit["name"] in names)


def test_usage_counts_this_profiles_requests_per_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 3, plan="pro") as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, service.key)
        assert cli.run("sync")[0] == 0
        before = json.loads(cli.run("usage", "--json")[1])
        assert cli.run("issues", "create", "--title", "Counted")[0] == 0
        status, out, err = cli.run("usage", "--json")
    assert status == 0, err
    usage = json.loads(out)
    assert usage["plan"] == "pro"
    limits = {(limit["name"], limit["window"]): limit for limit in usage["limits"]}
    day, minute = limits[("pro plan", "day")], limits[("pro plan", "minute")]
    assert day["limit"] == 10_000 and minute["limit"] == 300
    assert day["used"] == minute["used"] > 1
    assert _creates(usage) == _creates(before) + 1
    assert usage["background"]["limit"] == 5_000
    assert usage["background_will_spend"] == 5_000 - usage["background"]["used"]
    assert usage["alert"] is None
    status, out, _ = cli.run("usage")
    assert "POST /issues" in out and "background sync will spend" in out
    assert re.search(r"^pro plan +day +\d+ +10000 +\d+ +[#.]{20}$", out, re.M)


def test_usage_past_the_alert_says_what_background_sync_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No server needed: 850 requests of a Free day in the log, 430 of them background."""
    cli = _cli(tmp_path, capsys, monkeypatch)
    cli.use("http://127.0.0.1:9/v1", "trk_" + "x" * 40)
    now = time.time()
    with open_cache("env") as cache:
        for index in range(850):
            bucket = "background" if index < 430 else "other"
            cache.requests.reserve_request(now - 80_000 + index * 90, bucket, [])
    status, out, err = cli.run("usage", "--json")
    assert status == 0, err
    usage = json.loads(out)
    assert usage["plan"] == "free" and usage["background_will_spend"] == 70
    assert usage["alert"] == (
        "Daily API budget 85% used (850/1000): background sync slows to fit its 70 left "
        "and stops there; your actions keep the rest"
    )
    status, out, _ = cli.run("usage")
    assert "alert (at 80%): Daily API budget 85% used" in out


def test_without_me_a_403_is_learned_and_the_next_try_is_not_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback(tmp_path, 2, wrap=without_me) as service:
        cli = _cli(tmp_path, capsys, monkeypatch)
        cli.use(service.base_url, _key(service, "issues:read", "issues:write"))
        status, _, err = cli.run("keys", "list")
        assert status == 1 and "lacks the permission admin (403)" in err
        with open_cache("env") as cache:
            sent = len(cache.requests.request_times(0))
        status, _, err = cli.run("workspace", "rename", "Mine now")
        assert status == 1 and "lacks the `admin` permission, so nothing was sent" in err
        with open_cache("env") as cache:
            assert len(cache.requests.request_times(0)) == sent
        cli.use(service.base_url, service.key)
        assert cli.run("workspace", "rename", "Ours")[0] == 0


def test_offline_keys_and_webhooks_are_not_made_nor_queued_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = _cli(tmp_path, capsys, monkeypatch)
    cli.use("http://127.0.0.1:9/v1", "trk_" + "x" * 40)
    for argv in (
        ("keys", "create", "--name", "bot"),
        ("webhooks", "create", "http://127.0.0.1:5/hook", "--event", "*"),
    ):
        status, out, err = cli.run(*argv)
        assert status == 1 and out == "", argv
        [line] = err.splitlines()
        assert "cannot reach the server" in line and "never queued" in line, line
    status, _, err = cli.run("workspace", "rename", "Away")
    assert status == 1 and "the workspace is not known here yet, so the rename was not" in err
    with open_cache("env") as cache:
        assert cache.outbox.entries() == []
