"""`python -m demo.screenshots OUTDIR`: SVGs of the main screens over demo data.

Made by a script, never by hand, so they can be regenerated whenever a screen changes: the app
runs headless (`run_test`) over a temporary cache filled by `demo.data`, on a fixed clock, and
is driven to each screen in turn with the keys a user would press.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import TabbedContent

from cache import ME_STATE_KEY, Cache, FieldConflict, IssueFilter, IssueSort, Resource
from demo.data import fill, generate
from issuefields import PRIORITY, STATUS
from sync.connection import Connection, ConnectionState
from sync.ratelimit import BACKGROUND_LOG_BUCKET
from sync.ratelimit.learned import Learned
from sync.remembered import keep_limits
from tracker_tui.app import TrackerApp, make_app
from tracker_tui.data.outbox_counts import OutboxCounts
from tracker_tui.messages import SyncStatusChanged

NOW = datetime(2026, 11, 21, 15, 30, tzinfo=UTC)
SEARCH = "status:todo label:bug"
"""What the search shot types: qualifiers beside words, shown as chips."""
EDITOR_SCRIPT = """import pathlib, re, sys
path = pathlib.Path(sys.argv[-1])
lines = path.read_text(encoding="utf-8").split("\\n")
rows = [i for i, line in enumerate(lines) if re.match(r"\\s*\\d+\\s*\\|", line)]
for n, i in enumerate(rows[:5]):
    cells = lines[i].split("|")
    cells[2] = " low "
    if n == 1:
        cells[1] = " done "
    if n == 3:
        cells[5] = " Speed up the export of large projects"
    lines[i] = "|".join(cells)
path.write_text("\\n".join(lines), encoding="utf-8")
"""
"""The editor of the bulk-edit shot: lowers five issues' priority, closes one and renames one,
as a user would in the table, so the preview shows changes and a refused move."""
SIZE = (130, 38)
Step = Callable[[Pilot[Any]], Awaitable[None]]


async def _settle(pilot: Pilot[Any]) -> None:
    """Let workers finish and their answers be drawn."""
    for _ in range(5):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def _prepare(cache: Cache) -> None:
    """Some local history, so the sync panel and markers have something to show: an issue
    closed, a refused title, and the most pressing priority against a colleague's lowest."""
    closing = STATUS.values[-1]
    most, least = PRIORITY.values[0], PRIORITY.values[-2]
    cache.outbox.update(Resource.ISSUES, "iss_000001", {STATUS.member: closing})
    failed = cache.outbox.update(Resource.ISSUES, "iss_000009", {"title": "Rename the export"})
    conflicting = cache.outbox.update(Resource.ISSUES, "iss_000014", {PRIORITY.member: most})
    if failed is not None:
        cache.push.mark_sending(failed.id)
        cache.push.mark_failed(failed.id, "invalid_request: title is reserved")
    if conflicting is not None:
        cache.push.mark_sending(conflicting.id)
        base = conflicting.base[PRIORITY.member]
        change = FieldConflict(PRIORITY.member, base, most, least)
        cache.push.record_conflicts(conflicting.id, [change])


def _colleague_changes(cache: Cache) -> None:
    """What a pull would bring in while Ada was away, so the inbox has something to show: a
    colleague's edits of three of her issues and a comment on one, stored as a pull stores
    them (the change log works them out: cache.changelog)."""
    cache.state.set(ME_STATE_KEY, "usr_ada")
    mine = cache.reads.window(
        IssueFilter(assignee=frozenset({"usr_ada"})), IssueSort("number", False), 0, 3
    )
    edits: list[dict[str, object]] = [
        {PRIORITY.member: PRIORITY.values[0], "title": "Checkout fails on Safari"},
        {STATUS.member: STATUS.values[2]},
        {"assignee": "usr_grace", PRIORITY.member: PRIORITY.values[1]},
    ]
    for minutes, (row, edit) in enumerate(zip(mine, edits, strict=True)):
        record = cache.server.server_record(Resource.ISSUES, row.id) or {}
        when = (NOW - timedelta(minutes=40 - 15 * minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        cache.server.apply_page(
            Resource.ISSUES, [{**record, **edit, "updated_at": when}], news=True
        )
    comment = {
        "id": "cmt_inbox_1",
        "issue_id": mine[0].id,
        "body": "Reproduced on Safari 18: the pay button stays disabled.",
        "author": "usr_grace",
        "created_at": (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "updated_at": (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    cache.server.apply_page(Resource.COMMENTS, [comment], news=True)


async def _report(pilot: Pilot[Any]) -> None:
    pilot.app.post_message(
        SyncStatusChanged(
            profile="demo",
            connection=ConnectionState(Connection.ONLINE),
            outbox=OutboxCounts(pending=1, failed=1, conflicts=1),
            budget_minute=55,
            budget_day=9_712,
            last_sync=NOW - timedelta(minutes=2),
        )
    )
    await _settle(pilot)


def _log_requests(cache: Cache) -> None:
    """A day of use past the alert on a Free key (845 of 1,000), so the usage tab and the status
    bar's warning have something to show; times are real ones, as the request log's are."""
    now = time.time()
    keep_limits(cache, "https://demo.invalid/v1", Learned("free", 60, 1_000, "me"))
    spread = [
        *((now - 86_000 + i * 190, BACKGROUND_LOG_BUCKET) for i in range(430)),
        *((now - 18_000 + i * 40, "other") for i in range(400)),
        *((now - 40 + i, "other") for i in range(12)),
        *((now - 20 + i, "issues.create") for i in range(3)),
    ]
    for at, bucket in spread:
        cache.requests.reserve_request(at, bucket, [])


async def _settings_usage(pilot: Pilot[Any], outdir: Path) -> None:
    """The settings screen's usage tab, with the day's alert in the status bar."""
    app = pilot.app
    app.post_message(
        SyncStatusChanged(
            profile="demo",
            connection=ConnectionState(Connection.ONLINE),
            outbox=OutboxCounts(),
            budget_minute=45,
            budget_day=155,
            day_limit=1_000,
            last_sync=NOW - timedelta(minutes=2),
        )
    )
    await pilot.press("escape", "comma")
    await _settle(pilot)
    app.screen.query_one(TabbedContent).active = "tab-usage"
    await _settle(pilot)
    app.clear_notifications()
    await _settle(pilot)
    app.save_screenshot("settings_usage.svg", str(outdir))


async def _save(pilot: Pilot[Any], outdir: Path, name: str) -> None:
    """The screen as it stands, without the notices left by the steps before."""
    pilot.app.clear_notifications()
    await _settle(pilot)
    pilot.app.save_screenshot(f"{name}.svg", str(outdir))


async def _search_palette_bulk_editor(pilot: Pilot[Any], outdir: Path, tmp: Path) -> None:
    """Search with qualifiers (the chips show them), the command palette, and the bulk edit
    in `$EDITOR` come back as its preview (the editor a script: `EDITOR_SCRIPT`)."""
    await pilot.press("escape", "x", "slash", *SEARCH, "enter")
    await _save(pilot, outdir, "search")
    await pilot.press("slash", "ctrl+u", "escape", "ctrl+p", *"sort by")
    await _settle(pilot)
    await _save(pilot, outdir, "palette")
    script = tmp / "editor.py"
    script.write_text(EDITOR_SCRIPT, encoding="utf-8")
    saved = {name: os.environ.pop(name, None) for name in ("VISUAL", "EDITOR")}
    os.environ["EDITOR"] = f"{sys.executable} {script}"
    try:
        await pilot.press("escape", "home", *["space", "j"] * 4, "space", "B")
        await _settle(pilot)
    finally:
        os.environ.pop("EDITOR")
        os.environ.update({name: value for name, value in saved.items() if value is not None})
    await _save(pilot, outdir, "bulk_editor_preview")


async def _shoot(
    app: TrackerApp, outdir: Path, shots: list[tuple[str, list[str]]], tmp: Path
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        await _report(pilot)
        for name, keys in shots:
            await pilot.press(*keys)
            await _settle(pilot)
            app.save_screenshot(f"{name}.svg", str(outdir))
        await _search_palette_bulk_editor(pilot, outdir, tmp)
        await _settings_usage(pilot, outdir)


async def make_screenshots(outdir: Path) -> list[Path]:
    """Write list, detail, bulk preview, sync panel, inbox, help, search, palette, bulk edit in
    the editor and settings (usage) SVGs into `outdir`."""
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache.open(Path(tmp) / "cache.db", clock=NOW.timestamp)
        try:
            fill(cache, generate(3_000, NOW))
            _prepare(cache)
            _colleague_changes(cache)
            _log_requests(cache)
            app = make_app(cache=cache, me="usr_ada", profile="demo", clock=lambda: NOW)
            await _shoot(
                app,
                outdir,
                [
                    ("list", ["j", "space", "j", "space", "j"]),
                    ("help", ["question_mark"]),
                    ("inbox", ["escape", "i"]),
                    ("detail", ["escape", "enter"]),
                    ("sync_panel", ["escape", "y"]),
                    ("bulk_preview", ["escape", "b", "enter", "down", "down", "enter"]),
                ],
                Path(tmp),
            )
        finally:
            cache.close()
    return sorted(outdir.glob("*.svg"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m demo.screenshots OUTDIR", file=sys.stderr)
        return 2
    for path in asyncio.run(make_screenshots(Path(args[0]))):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
