"""`tracker-tui sync [--full] [--json]`: push the outbox, then pull (`sync.engine.sync_once`)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from typing import Any

from sync.connection import ConnectionWatch
from sync.credentials import resolve_profile
from sync.engine import SyncReport, sync_once
from sync.pull import PullReport
from sync.session import open_session
from tracker_tui.output import ProgressDisplay, notice, print_json


def register(subparsers: Any, issue_commands: Any) -> None:
    parser = subparsers.add_parser(
        "sync",
        help="send local edits, then fetch what changed on the server",
        description=(
            "Send the outbox of local edits, then pull every change since the last sync into "
            "the local cache, within the server's rate limits. Safe to interrupt: the next "
            "sync resumes where this one stopped."
        ),
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="also list every id to find deletions the server did not report",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    resolved = resolve_profile(args.profile)
    for warning in resolved.warnings:
        notice(f"warning: {warning}")
    report = asyncio.run(_sync(resolved, full=args.full, quiet=args.json))
    if args.json:
        print_json(report_json(report))
    else:
        print(summary(report))
    return 0


async def _sync(resolved: Any, *, full: bool, quiet: bool) -> SyncReport:
    with ProgressDisplay(quiet=quiet) as progress:
        watch = ConnectionWatch(on_change=progress)  # shows the waits for the rate limit
        async with open_session(resolved, observer=watch.observe, sleep=watch.sleep) as session:
            return await sync_once(session, full=full, progress=progress)


def summary(report: SyncReport) -> str:
    """The closing line: what was sent, what came back, what was skipped."""
    pushed = report.push
    parts = [f"sent {pushed.sent} edit{'s' if pushed.sent != 1 else ''}"]
    if pushed.unsure:
        parts.append(f"{_creates(pushed.unsure)} may be a duplicate: see `tracker-tui outbox`")
    if pushed.unknown:
        parts.append(f"{_creates(pushed.unknown)} not confirmed: kept, looked for next sync")
    if report.pull is None:
        parts.append(f"pull skipped: {pushed.stopped}")
        return "; ".join(parts)
    pulled: PullReport = report.pull
    records = sum(r.received for r in pulled.resources.values())
    parts.append(f"received {records} records ({pulled.changed} changed locally)")
    parts.append(f"{pulled.requests} requests in {pulled.seconds:.1f} s")
    if pulled.skipped:
        parts.append(f"{len(pulled.skipped)} unreadable records skipped")
    notes = [f"{name}: {r.note}" for name, r in pulled.resources.items() if r.note]
    return "; ".join(parts + notes)


def _creates(count: int) -> str:
    return f"{count} create{'s' if count != 1 else ''}"


def report_json(report: SyncReport) -> dict[str, Any]:
    pulled = report.pull
    return {
        "push": _plain(report.push),
        "pull": None
        if pulled is None
        else {
            **_plain(pulled),
            "requests": pulled.requests,
            "changed": pulled.changed,
        },
    }


def _plain(value: Any) -> Any:
    """A report as JSON-ready data; skipped records keep their id and reason, not the raw."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _plain(getattr(value, field.name))
            for field in dataclasses.fields(value)
            if field.name != "raw"
        }
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
