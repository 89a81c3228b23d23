"""`outbox` and `conflicts`: what is waiting to be sent, and what the user must settle.

`outbox` lists the writes not yet on the server (pending, sending, failed, conflicting) with the
server's message for the failed ones; `outbox retry` puts failed ones back in the queue and
pushes, `outbox discard` drops one. `conflicts` lists fields changed both here and on the
server; `conflicts resolve ID --mine|--theirs` settles one (mine: send my value anyway;
theirs: drop my change of that field) and pushes what is then ready.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cache import (
    ACTIVE_STATES,
    Cache,
    EntryState,
    Operation,
    OutboxStateError,
    Resolution,
)
from tracker_tui.commands.refs import Names
from tracker_tui.commands.write import add_push_option, open_local_cache, outcome
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit


def register(subparsers: Any, issue_commands: Any) -> None:
    outbox = subparsers.add_parser("outbox", help="local writes waiting to be sent")
    outbox.add_argument("--json", action="store_true", help="one JSON object per line")
    outbox.set_defaults(run=run_list)
    actions = outbox.add_subparsers(dest="outbox_command", metavar="ACTION")
    retry = actions.add_parser("retry", help="queue failed writes again and push")
    which = retry.add_mutually_exclusive_group(required=True)
    which.add_argument("id", metavar="ID", nargs="?", type=int, help="outbox entry number")
    which.add_argument("--all", action="store_true", help="every failed write")
    add_push_option(retry)
    retry.set_defaults(run=run_retry)
    discard = actions.add_parser("discard", help="drop a write that is not being sent")
    discard.add_argument("id", metavar="ID", type=int, help="outbox entry number")
    discard.set_defaults(run=run_discard)

    conflicts = subparsers.add_parser("conflicts", help="fields changed here and on the server")
    conflicts.add_argument("--json", action="store_true", help="one JSON object per line")
    conflicts.set_defaults(run=run_conflicts)
    settle = conflicts.add_subparsers(dest="conflicts_command", metavar="ACTION")
    resolve = settle.add_parser("resolve", help="keep mine or take theirs")
    resolve.add_argument("id", metavar="ID", type=int, help="conflict number")
    side = resolve.add_mutually_exclusive_group(required=True)
    side.add_argument("--mine", action="store_true", help="send my value anyway")
    side.add_argument("--theirs", action="store_true", help="keep the server's value")
    add_push_option(resolve)
    resolve.set_defaults(run=run_resolve)


def run_list(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        names = Names(cache)
        entries = cache.outbox(ACTIVE_STATES)
        for entry in entries:
            what = names.entry(entry)
            if args.json:
                row = {
                    "id": entry.id,
                    "state": entry.state.value,
                    "operation": entry.operation.value,
                    "resource": entry.resource.value,
                    "record_id": entry.target_id,
                    "what": what,
                    "changes": entry.changes,
                    "attempts": entry.attempts,
                    "error": entry.last_error,
                }
                print(json.dumps(row, sort_keys=True))
            else:
                fields = (
                    ", ".join(sorted(entry.changes)) if entry.operation is Operation.UPDATE else ""
                )
                error = f"  ({entry.last_error})" if entry.last_error else ""
                print(
                    f"{entry.id:>5}  {entry.state.value:<8}  {what}"
                    f"{'  ' + fields if fields else ''}{error}"
                )
        if not entries and not args.json:
            print("the outbox is empty: everything is on the server")
        return Exit.OK


def run_retry(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        if args.all:
            ids = [e.id for e in cache.outbox((EntryState.FAILED,))]
        else:
            ids = [_failed(cache, args.id)]
        entries = [cache.retry(entry_id) for entry_id in ids]
        return outcome(args, cache, entries)


@contextmanager
def _numbered_by_the_user() -> Iterator[None]:
    """An outbox entry or conflict number that names nothing (or nothing in that state) is
    a mistake in the command, not a failure."""
    try:
        yield
    except OutboxStateError as error:
        raise UsageError(str(error)) from None


def _failed(cache: Cache, entry_id: int) -> int:
    with _numbered_by_the_user():
        entry = cache.outbox_entry(entry_id)
    if entry.state is not EntryState.FAILED:
        raise UsageError(f"outbox entry {entry_id} is {entry.state.value}, not failed")
    return entry.id


def run_discard(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        with _numbered_by_the_user():
            what = Names(cache).entry(cache.outbox_entry(args.id))
            cache.discard(args.id)
        print(f"discarded: {what}")
        return Exit.OK


def run_conflicts(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        names = Names(cache)
        found = cache.conflicts()
        for conflict in found:
            entry = cache.outbox_entry(conflict.entry_id)
            if args.json:
                row = {
                    "id": conflict.id,
                    "entry_id": conflict.entry_id,
                    "record_id": entry.target_id,
                    "what": names.entry(entry),
                    "field": conflict.field,
                    "base": conflict.base,
                    "mine": conflict.mine,
                    "theirs": conflict.theirs,
                }
                print(json.dumps(row, sort_keys=True))
            else:
                field = conflict.field
                print(
                    f"{conflict.id:>5}  {names.entry(entry)}  {field}: was "
                    f"{names.value(field, conflict.base)!r}, mine "
                    f"{names.value(field, conflict.mine)!r}, theirs "
                    f"{names.value(field, conflict.theirs)!r}"
                )
        if not found and not args.json:
            print("no conflicts")
        return Exit.OK


def run_resolve(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        resolution = Resolution.MINE if args.mine else Resolution.THEIRS
        with _numbered_by_the_user():
            entry = cache.resolve_conflict(args.id, resolution)
        ready = entry is not None and entry.state is EntryState.PENDING
        return outcome(args, cache, [entry] if ready and entry is not None else [])
