"""A write the server refuses, met from the command line against a service process.

Defects of issue 14 covered here:
6. a refused write became the base of later writes: the next valid edit of the same field was
   reported as a conflict against the user's own refused value, and `issues show` kept
   showing the refused value;
8. `sync` exited 0 with a refused write left, and its summary did not name it.

The rest of defects 8 and 9 on a terminal (Ctrl-D at a key prompt, `sync` saying what it waits
for with the server down, a demo ended by a closed terminal or a signal) are in
`tests/cli/test_cli_terminal.py`, on the same harness.
"""

from __future__ import annotations

import json

from terminal_world import Tracker

from tracker_tui.exit_codes import Exit


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
    assert code == Exit.PARTLY_DONE, said
    assert "#50" in said, said
