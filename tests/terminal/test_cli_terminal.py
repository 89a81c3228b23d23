"""The command line as a script and a person meet it: exit statuses, messages, signals.

Defects of issue 14 covered here:
6. a refused write became the base of later writes: the next valid edit of the same field was
   reported as a conflict against the user's own refused value, and `issues show` kept
   showing the refused value;
8. `sync` with writes pending and the server down printed nothing for 46 s and exited 0;
9. Ctrl-D at `login`'s key prompt printed a traceback; a demo ended by SIGHUP or SIGTERM left
   its `tracker-demo-*` folders (~19 MB) behind.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from terminal_screen import Terminal
from terminal_service import CLIENT, client_env
from terminal_world import Tracker

PARTLY_DONE, OFFLINE, INTERRUPTED = 3, 4, 130
"""Exit statuses from the README's table."""


def projects(tracker: Tracker) -> list[dict[str, str]]:
    response = tracker.check.request("GET", "/projects", params={"per_page": 100})
    response.raise_for_status()
    data: list[dict[str, str]] = response.json()["data"]
    return data


def test_a_refused_write_is_never_the_base_of_a_later_one(tracker: Tracker) -> None:
    code, _, err = tracker.cli("sync")
    assert code == 0, err
    issue = tracker.check.issue(50)
    gone, kept = [p for p in projects(tracker) if p["id"] != issue["project_id"]][:2]
    # A colleague deletes a project this cache still lists: moving the issue there is refused.
    response = tracker.colleague.request("DELETE", f"/projects/{gone['id']}")
    assert response.status_code == 200, response.text
    code, _, err = tracker.cli("issues", "edit", "#50", "--project", gone["key"])
    assert code != 0, err
    # The same field, to a valid value: sent as a plain edit, not a conflict with the refusal.
    code, out, err = tracker.cli("issues", "edit", "#50", "--project", kept["key"])
    assert code == 0, err
    assert tracker.check.issue(50)["project_id"] == kept["id"]
    code, out, err = tracker.cli("issues", "show", "#50", "--json")
    assert code == 0, err
    assert json.loads(out)["project_id"] == kept["id"], "shown: the server's value"
    # And again: the base is the value the server took, so nothing conflicts.
    code, out, err = tracker.cli("issues", "edit", "#50", "--project", "none")
    assert code == 0, err
    assert tracker.check.issue(50)["project_id"] is None
    code, out, err = tracker.cli("conflicts", "--json")
    assert (code, out.strip()) == (0, ""), out


def test_sync_with_writes_queued_and_the_server_down_says_so_and_fails(
    own_tracker: Tracker,
) -> None:
    tracker = own_tracker
    code, _, err = tracker.cli("sync")
    assert code == 0, err
    code, _, err = tracker.cli("issues", "edit", "#50", "--priority", "urgent", "--no-push")
    assert code == 0, err
    tracker.server.stop()
    sync = tracker.open_app("sync", columns=100, rows=10)
    # On a terminal, within moments, it says what it is waiting for (it was silent for 46 s).
    shown = sync.wait_for(
        lambda shown: "cannot reach" in shown, timeout=10, what="what sync waits for"
    )
    assert "Traceback" not in shown
    ended = sync.wait_exit(timeout=120)
    said = sync.after_app()
    assert ended.status == OFFLINE, said
    assert "1 write stays queued" in said, said


def test_ctrl_d_at_the_login_key_prompt_ends_without_a_traceback(tracker: Tracker) -> None:
    env = client_env(tracker.home, None, None)
    login = Terminal(
        [str(CLIENT), "login", "--server", tracker.server.base_url], env=env, columns=100
    )
    tracker.terminals.append(login)
    login.wait_for(lambda shown: "key" in shown.lower(), what="the key prompt")
    login.press("ctrl+d")
    ended = login.wait_exit()
    said = login.after_app()
    assert "Traceback" not in said, said
    assert ended.status == INTERRUPTED, said
    assert not (tracker.home / "config" / "config.toml").exists()


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_a_demo_ended_by_a_signal_leaves_nothing_behind(
    tracker: Tracker, tmp_path: Path, sig: signal.Signals
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = client_env(tracker.home, None, None, TMPDIR=str(scratch))
    demo = Terminal([str(CLIENT), "demo", "--issues", "40"], env=env, columns=100, rows=30)
    tracker.terminals.append(demo)
    demo.wait_for_text("40 issues", "online", timeout=60)
    assert any(scratch.iterdir()), "the demo keeps its service and cache under TMPDIR"
    demo.signal(sig)
    ended = demo.wait_exit()
    assert sorted(path.name for path in scratch.iterdir()) == []
    assert "Traceback" not in demo.after_app(), demo.after_app()
    assert ended.status == 128 + sig, "ended by the signal, cleanly"


def test_sync_names_a_refused_write_and_says_it_is_partly_done(tracker: Tracker) -> None:
    code, _, err = tracker.cli("sync")
    assert code == 0, err
    issue = tracker.check.issue(50)
    gone = next(p for p in projects(tracker) if p["id"] != issue["project_id"])
    response = tracker.colleague.request("DELETE", f"/projects/{gone['id']}")
    assert response.status_code == 200, response.text
    code, _, err = tracker.cli("issues", "edit", "#50", "--project", gone["key"], "--no-push")
    assert code == 0, err
    code, out, err = tracker.cli("sync")
    said = out + err
    # Not "ok": the refused write remains, and the summary says which.
    assert code == PARTLY_DONE, said
    assert "#50" in said, said
