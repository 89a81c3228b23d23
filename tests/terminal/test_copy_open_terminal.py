"""Issue 17's copy and open, as a terminal sees them: `Yy` writes the OSC 52 escape that puts
`#N` on the clipboard (through ssh and tmux too), `O` runs `$BROWSER` with the issue's address
from the profile's `web_url`. The issue is opened with `#` and its number, typed as a person
would."""

from __future__ import annotations

import base64
from pathlib import Path

from terminal_service import WORKSPACE, eventually
from terminal_user import on_issue
from terminal_world import SEEDED_ISSUES, Tracker

from accounts.profiles import AppPaths, Profile, ProfileStore

TEMPLATE = "https://tracker.example/issue/{number}"


def stub_browser(folder: Path) -> tuple[Path, Path]:
    """A `$BROWSER` that records its arguments, one per line, and the file it records to."""
    record = folder / "browser-argv.txt"
    script = folder / "browser.sh"
    script.write_text(f'#!/bin/sh\nfor arg in "$@"; do printf "%s\\n" "$arg"; done >> "{record}"\n')
    script.chmod(0o755)
    return script, record


def test_y_copies_through_osc_52_and_o_runs_the_browser(tracker: Tracker, tmp_path: Path) -> None:
    paths = AppPaths.from_env({"TRACKER_HOME": str(tracker.home)})
    profile = Profile("work", tracker.server.base_url, WORKSPACE, ui={"web_url": TEMPLATE})
    ProfileStore(paths).add(profile, make_default=True)
    browser, record = stub_browser(tmp_path)
    app = tracker.open_app(env=tracker.env(BROWSER=str(browser)))
    app.wait_for_text(f"{SEEDED_ISSUES} issues", timeout=60)
    number = SEEDED_ISSUES - 3
    app.press("#")
    app.wait_for_text("Go to issue")
    app.type(str(number))
    app.press("enter")
    app.wait_for(lambda shown: on_issue(shown, number), what=f"the screen of #{number}")
    app.press("Y")
    app.wait_for_text("Copy")
    app.press("y")
    app.wait_for_text(f"Copied #{number}")
    escape = b"\x1b]52;c;" + base64.b64encode(f"#{number}".encode()) + b"\x07"
    assert escape in app.output(), app.dump()
    app.press("O")
    url = TEMPLATE.format(number=number)
    argv = eventually(lambda: record.exists() and record.read_text(), what="the browser ran")
    assert argv.splitlines() == [url]
    app.wait_for_text(f"Opening {url}")
