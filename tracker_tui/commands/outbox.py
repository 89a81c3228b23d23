"""`outbox` and `conflicts`: what is waiting to be sent, and what the user must settle.

`outbox` lists the writes not yet on the server (pending, sending, failed, conflicting, unsure)
with the server's message for the failed ones; `outbox retry` puts failed ones back in the queue
and pushes, `outbox discard` drops one. An `unsure` create lost its answer while records like it
appeared on the server ("may be a duplicate: check #12"): `outbox same ID [--as RECORD]` says it
is one of them (nothing is sent), `outbox retry ID` sends it anyway. `conflicts` lists fields
changed both here and on the server; `conflicts resolve ID --mine|--theirs` settles one (mine:
send my value anyway; theirs: drop my change of that field) and pushes what is then ready.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cache import (
    ACTIVE_STATES,
    EntryState,
    Operation,
    OutboxEntry,
    OutboxStateError,
    Resolution,
    Resource,
)
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.refs import Names
from tracker_tui.commands.write import add_push_option, open_local_cache, outcome
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit

if TYPE_CHECKING:
    from cache import Cache


def register(subparsers: Any, issue_commands: Any) -> None:
    outbox = subparsers.add_parser("outbox", help=SUMMARIES["outbox"])
    outbox.add_argument("--json", action="store_true", help="one JSON object per line")
    outbox.set_defaults(run=run_list)
    actions = outbox.add_subparsers(dest="outbox_command", metavar="ACTION")
    retry = actions.add_parser(
        "retry", help="queue failed writes again and push; send an unsure create anyway"
    )
    which = retry.add_mutually_exclusive_group(required=True)
    which.add_argument("id", metavar="ID", nargs="?", type=int, help="outbox entry number")
    which.add_argument("--all", action="store_true", help="every failed write")
    add_push_option(retry)
    retry.set_defaults(run=run_retry)
    same = actions.add_parser(
        "same", help="an unsure create is already on the server: link it, send nothing"
    )
    same.add_argument("id", metavar="ID", type=int, help="outbox entry number")
    same.add_argument(
        "--as",
        dest="record",
        metavar="RECORD",
        help="which of the records it names (#12 or an id; needed when it names several)",
    )
    same.set_defaults(run=run_same)
    discard = actions.add_parser("discard", help="drop a write that is not being sent")
    discard.add_argument("id", metavar="ID", type=int, help="outbox entry number")
    discard.set_defaults(run=run_discard)

    conflicts = subparsers.add_parser("conflicts", help=SUMMARIES["conflicts"])
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


UNSURE_HELP = (
    "unsure: its answer was lost and records like it appeared on the server; if it is one of "
    "them, `tracker-tui outbox same ID [--as #N]`; if not, `outbox retry ID` sends it anyway; "
    "`outbox discard ID` drops it"
)


def run_list(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        names = Names(cache)
        entries = cache.outbox.entries(ACTIVE_STATES)
        for entry in entries:
            what = names.entry(entry)
            if args.json:
                row: dict[str, Any] = {
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
                if entry.state is EntryState.UNSURE:
                    row["may_be"] = [record.get("id") for record in cache.outbox.suspects(entry.id)]
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
        if any(e.state is EntryState.UNSURE for e in entries) and not args.json:
            print(UNSURE_HELP)
        return Exit.OK


def run_retry(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        if args.all:
            entries = [cache.outbox.retry(e.id) for e in cache.outbox.entries((EntryState.FAILED,))]
        else:
            entries = [_queue_again(cache, args.id)]
        return outcome(args, cache, entries)


@contextmanager
def _numbered_by_the_user() -> Iterator[None]:
    """An outbox entry or conflict number that names nothing (or nothing in that state) is
    a mistake in the command, not a failure."""
    try:
        yield
    except OutboxStateError as error:
        raise UsageError(str(error)) from None


def _queue_again(cache: Cache, entry_id: int) -> OutboxEntry:
    """A failed write back in the queue; an unsure create queued to be sent anyway."""
    with _numbered_by_the_user():
        entry = cache.outbox.entry(entry_id)
    if entry.state is EntryState.UNSURE:
        return cache.outbox.send_anyway(entry.id)
    if entry.state is not EntryState.FAILED:
        raise UsageError(f"outbox entry {entry_id} is {entry.state.value}, not failed")
    return cache.outbox.retry(entry.id)


def run_same(args: argparse.Namespace) -> int:
    from sync.push.reconcile import record_label

    with open_local_cache(args) as cache:
        with _numbered_by_the_user():
            entry = cache.outbox.entry(args.id)
        if entry.state is not EntryState.UNSURE:
            raise UsageError(f"outbox entry {args.id} is {entry.state.value}, not unsure")
        labels = {
            str(record.get("id")): record_label(record)
            for record in cache.outbox.suspects(entry.id)
        }
        chosen = _suspect(labels, args.record) if args.record else None
        if chosen is None and len(labels) != 1:
            names = ", ".join(labels.values())
            raise UsageError(f"outbox entry {args.id} may be any of {names}: say which with --as")
        done = cache.outbox.same_as(entry.id, chosen)
        record_id = cache.outbox.resolve_id(done.record_id)
        if done.resource is Resource.ISSUES:
            print(f"issue {Names(cache).issue(record_id, title=True)}")
        else:
            print(f"{done.resource.value.rstrip('s')} {record_id}")
        return Exit.OK


def _suspect(labels: dict[str, str], given: str) -> str:
    """The id of the suspect `given` names (its id, or its label as `record_label` makes it)."""
    text = given.strip()
    for record_id, label in labels.items():
        if text in (record_id, label, label.lstrip("#")):
            return record_id
    names = ", ".join(labels.values()) or "nothing"
    raise UsageError(f"{text} is not among the records this write may be ({names})")


def run_discard(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        with _numbered_by_the_user():
            what = Names(cache).entry(cache.outbox.entry(args.id))
            cache.outbox.discard(args.id)
        print(f"discarded: {what}")
        return Exit.OK


def run_conflicts(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        names = Names(cache)
        found = cache.outbox.conflicts()
        for conflict in found:
            entry = cache.outbox.entry(conflict.entry_id)
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
            entry = cache.outbox.resolve_conflict(args.id, resolution)
        ready = entry is not None and entry.state is EntryState.PENDING
        return outcome(args, cache, [entry] if ready and entry is not None else [])
