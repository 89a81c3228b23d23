"""`tracker-tui sync [--full] [--json]`: push the outbox, then pull (`sync.engine.sync_once`).

The exit status says how it ended (`tracker_tui.exit_codes`): every write sent and the cache
up to date (0); writes the server refused or in conflict remain, or the key may not read some
resources, which were left out (3, each named); the server could not be reached and writes stay
queued (4); or the sync failed (1), as when the key may not read issues. On a terminal it says
what it is waiting for (a failing server, with when it gives up; the rate limit).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from accounts.credentials import ResolvedProfile, resolve_profile
from cache import ACTIVE_STATES, ME_STATE_KEY, EntryState, open_cache
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.refs import Names
from tracker_tui.errors import describe
from tracker_tui.exit_codes import Exit
from tracker_tui.output import notice, print_json

if TYPE_CHECKING:
    from cache import Cache
    from sync.connection import ConnectionState
    from sync.engine import SyncProgress, SyncReport
    from sync.errors import SyncError
    from sync.pull import PullReport
    from sync.push import PushReport
    from sync.session import SyncSession

NAMED = 20
"""Refused writes (and conflicts) named one per line; `outbox` and `conflicts` list them all."""
GIVE_UP_AFTER = 20.0
"""Seconds of failing server after which `sync` stops retrying and says so (`--give-up-after`)."""


def register(subparsers: Any, issue_commands: Any) -> None:
    parser = subparsers.add_parser(
        "sync",
        help=SUMMARIES["sync"],
        description=(
            "Send the outbox of local edits, then pull every change since the last sync into "
            "the local cache, within the server's rate limits. Safe to interrupt: the next "
            "sync resumes where this one stopped. A key that may read only some resources "
            "pulls those and names the rest. Exit status: 0 done, 1 failed, 3 writes refused "
            "or in conflict remain, or resources the key may not read were left out (named), "
            "4 server unreachable with writes queued."
        ),
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="also list every id to find deletions the server did not report",
    )
    parser.add_argument(
        "--give-up-after",
        type=float,
        default=GIVE_UP_AFTER,
        metavar="SECONDS",
        help=f"stop retrying a server that keeps failing after this long (default "
        f"{GIVE_UP_AFTER:.0f})",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(run=run)


@dataclasses.dataclass
class Outcome:
    """What a sync did, and what it learned of the server doing it."""

    report: SyncReport | None
    key_refused: bool
    gave_up: str | None
    error: SyncError | None = None


def run(args: argparse.Namespace) -> int:
    import asyncio

    resolved = resolve_profile(args.profile)
    for warning in resolved.warnings:
        notice(f"warning: {warning}")
    with open_cache(resolved.cache_name) as cache:
        done = asyncio.run(_sync(resolved, cache, args))
        status = exit_status(cache, done)
        if status is Exit.FAILED:
            if done.error is not None:
                raise done.error
            notice(f"tracker-tui: {failure(done)}")
            return status
        if args.json:
            stopped = failure(done) if status is not Exit.OK else None
            print_json({**report_json(done.report), "stopped": stopped, **outbox_json(cache)})
        else:
            print(summary(done))
            for line in left_over(cache, done):
                print(line)
    return status


def failure(done: Outcome) -> str:
    """Why the sync did not finish, in one line."""
    if done.error is not None:
        return describe(done.error)
    if done.gave_up is not None:
        return done.gave_up
    stopped = done.report.push.stopped if done.report is not None else None
    if stopped is not None:
        return stopped.message
    withheld = _withheld(done)
    if withheld:
        return withheld_line(withheld)
    return "the sync did not finish"


def _withheld(done: Outcome) -> dict[str, str]:
    """The resources the key may not read, left out of the pull, with what it lacks."""
    pulled = done.report.pull if done.report is not None else None
    return {} if pulled is None else pulled.withheld


def withheld_line(withheld: dict[str, str]) -> str:
    """Once per sync: what was not pulled, why, and what to do."""
    named = ", ".join(f"{name} (lacks {permission})" for name, permission in withheld.items())
    return (
        f"not pulled, the API key may not read them: {named}; use a profile whose key has "
        "the permission, or ask a workspace admin for such a key"
    )


async def _sync(resolved: ResolvedProfile, cache: Cache, args: argparse.Namespace) -> Outcome:
    import asyncio

    from sync.connection import ConnectionWatch
    from sync.errors import SyncError
    from sync.session import open_session
    from tracker_tui.commands.waiting import Waits
    from tracker_tui.progress import ProgressDisplay

    display = ProgressDisplay(quiet=args.json)
    with display:
        waits = Waits(display.note, give_up_after=args.give_up_after)

        def heard(state: ConnectionState) -> None:
            waits.heard(state)
            display.update(state)  # counts down a wait for the rate limit

        watch = ConnectionWatch(on_change=heard)
        try:
            async with open_session(
                resolved, cache=cache, observer=watch.observe, sleep=watch.sleep
            ) as session:
                await learn_me(session)
                work = asyncio.ensure_future(
                    _until_reached(session, args.full, display.update, waits.retry)
                )
                report = await waits.run(work)
        except SyncError as error:
            watch.failed(error)
            return Outcome(None, waits.key_refused, waits.gave_up, error)
    return Outcome(report, waits.key_refused, waits.gave_up)


async def _until_reached(
    session: SyncSession,
    full: bool,
    progress: Callable[[SyncProgress], None],
    sleep: Callable[[float], Awaitable[None]],
) -> SyncReport:
    """`sync_once`, again after a backoff while the server cannot be reached (the push stops at
    the first connection refused); `sleep` says what it waits for and gives up in time."""
    from sync.engine import sync_once
    from sync.push import Backoff, StopReason

    backoff = Backoff(sleep=sleep)
    failures = 0
    while True:
        report = await sync_once(
            session, full=full, progress=progress, backoff=backoff, retry=backoff
        )
        if not report.push.stopped_for(StopReason.UNREACHABLE):
            return report
        failures += 1
        await sleep(backoff.delay(failures))


async def learn_me(session: SyncSession) -> None:
    """Who the key belongs to (`--assignee me` needs it offline later) and what it may do
    (write commands check it before anything is sent), once per key. Only a help: when it
    fails, the sync's own requests meet the same failure and say it."""
    from sync.permissions import learn_from_me

    unknown = session.cache.state.get(ME_STATE_KEY) is None
    me = await learn_from_me(session, who=unknown)
    if unknown and me is not None and me.user is not None:
        session.cache.state.set(ME_STATE_KEY, me.user.id)


def exit_status(cache: Cache, done: Outcome) -> Exit:
    """Refused key or a failed sync with nothing queued: failed; writes refused, in conflict
    or unsure remain: partly done; writes queued but the server unreachable: offline."""
    from sync.errors import NetworkError, ServerError

    states = {entry.state for entry in cache.outbox.entries(ACTIVE_STATES)}
    unreachable = isinstance(done.error, NetworkError | ServerError)
    if done.key_refused or (done.error is not None and not unreachable):
        return Exit.FAILED
    if _withheld(done):
        return Exit.PARTLY_DONE
    if states & {EntryState.FAILED, EntryState.CONFLICT, EntryState.UNSURE}:
        return Exit.PARTLY_DONE
    pulled = done.report is not None and done.report.pull is not None
    if not pulled or done.error is not None:
        return Exit.OFFLINE if states else Exit.FAILED
    return Exit.OFFLINE if states else Exit.OK


def summary(done: Outcome) -> str:
    """The closing line: what was sent, what came back, what was skipped, and why it stopped."""
    if done.report is None:
        why = done.gave_up or (describe(done.error) if done.error else "stopped")
        return f"sync stopped: {why}"
    report = done.report
    pushed = report.push
    parts = [f"sent {pushed.done} edit{'s' if pushed.done != 1 else ''}"]
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
    notes = [
        f"{name}: {r.note}"
        for name, r in pulled.resources.items()
        if r.note and name not in pulled.withheld
    ]
    return "; ".join(parts + notes)


def _creates(count: int) -> str:
    return f"{count} create{'s' if count != 1 else ''}"


def left_over(cache: Cache, done: Outcome) -> list[str]:
    """One line per write refused, in conflict or unsure (the first `NAMED` of each), then
    how many stay queued and why."""
    names = Names(cache)
    conflicts: dict[int, list[str]] = {}
    for conflict in cache.outbox.conflicts():
        conflicts.setdefault(conflict.entry_id, []).append(
            f"{conflict.field} (conflict {conflict.id})"
        )
    entries = cache.outbox.entries(ACTIVE_STATES)
    failed = [e for e in entries if e.state is EntryState.FAILED]
    conflicting = [e for e in entries if e.state is EntryState.CONFLICT]
    unsure = [e for e in entries if e.state is EntryState.UNSURE]
    queued = len(entries) - len(failed) - len(conflicting) - len(unsure)
    withheld = _withheld(done)
    lines = [withheld_line(withheld)] if withheld else []
    lines += [f"failed: {names.entry(e)}: {e.last_error or 'refused'}" for e in failed[:NAMED]]
    if failed:
        more = f"{len(failed) - NAMED} more; " if len(failed) > NAMED else ""
        lines.append(f"  {more}`tracker-tui outbox` lists them; `outbox retry` or `outbox discard`")
    for entry in conflicting[:NAMED]:
        fields = ", ".join(conflicts.get(entry.id, [])) or "changed on the server too"
        lines.append(f"conflict: {names.entry(entry)}: {fields}")
    if conflicting:
        more = f"{len(conflicting) - NAMED} more; " if len(conflicting) > NAMED else ""
        lines.append(f"  {more}settle with `tracker-tui conflicts resolve N --mine|--theirs`")
    lines += [f"unsure: {names.entry(e)}: {e.last_error or 'may be a duplicate'}" for e in unsure]
    if unsure:
        lines.append("  `tracker-tui outbox` says how to settle them")
    if queued:
        noun = "write stays" if queued == 1 else "writes stay"
        lines.append(
            f"{queued} {noun} queued ({failure(done)}): the next `tracker-tui sync` sends them"
        )
    return lines


def outbox_json(cache: Cache) -> dict[str, Any]:
    """What is left in the outbox after the sync, for scripts."""
    names = Names(cache)
    entries = cache.outbox.entries(ACTIVE_STATES)
    return {
        "queued": sum(e.state in (EntryState.PENDING, EntryState.SENDING) for e in entries),
        "unsure": [
            {"entry": e.id, "what": names.entry(e), "error": e.last_error}
            for e in entries
            if e.state is EntryState.UNSURE
        ],
        "failed": [
            {"entry": e.id, "what": names.entry(e), "error": e.last_error}
            for e in entries
            if e.state is EntryState.FAILED
        ],
        "conflicts": [
            {"id": c.id, "entry": c.entry_id, "field": c.field} for c in cache.outbox.conflicts()
        ],
    }


def report_json(report: SyncReport | None) -> dict[str, Any]:
    pulled = None if report is None else report.pull
    return {
        "push": None if report is None else _push_json(report.push),
        "pull": None
        if pulled is None
        else {
            **_plain(pulled),
            "requests": pulled.requests,
            "changed": pulled.changed,
        },
    }


def _push_json(pushed: PushReport) -> dict[str, Any]:
    """The push's report as scripts read it: `stopped` is the stop's words, `key_refused` them
    again when the key was refused, `unreachable` whether the server could not be reached."""
    from sync.push import StopReason

    plain: dict[str, Any] = {}
    for name, value in _plain(pushed).items():
        if name != "stopped":
            plain[name] = value
            continue
        stop = pushed.stopped
        plain["stopped"] = None if stop is None else stop.message
        refused = pushed.stopped_for(StopReason.KEY_REFUSED)
        plain["key_refused"] = stop.message if refused and stop is not None else None
        plain["unreachable"] = pushed.stopped_for(StopReason.UNREACHABLE)
    return plain


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
