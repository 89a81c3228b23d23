"""`tracker-tui inbox` and `tracker-tui watch`: what changed in the issues that concern you.

`inbox` reads the cache's change log (offline): the unread changes, grouped by issue, newest
first; `--all` adds those already read, `--mark-read` marks what it printed read. `watch`
(tracker_tui.commands.watch) prints each change as a pull stores it, one a line (`--json`: one
JSON object a line, the same object as `inbox --json`'s items), until Ctrl-C (status 130).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cache import ME_STATE_KEY
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.read import open_profile_cache
from tracker_tui.exit_codes import Exit
from tracker_tui.output import notice, print_json

if TYPE_CHECKING:
    from cache import Cache, Change
    from tracker_tui.data.inbox import IssueChanges


def register(subparsers: Any, issue_commands: Any) -> None:
    inbox = subparsers.add_parser(
        "inbox",
        help=SUMMARIES["inbox"],
        description=(
            "Changes the last syncs found in the issues assigned to you, created from this "
            "client or commented on by you: each field changed by someone else (old and new "
            "value) and each new comment, grouped by issue, newest first. Your own edits are "
            "not listed. Reads the local cache; `tracker-tui sync` (or the app, or `watch`) "
            "brings changes in. Kept for 30 days."
        ),
    )
    inbox.add_argument("--json", action="store_true", help="a JSON list, one object a change")
    inbox.add_argument("--all", action="store_true", help="also the changes already read")
    inbox.add_argument("--mark-read", action="store_true", help="mark the changes printed as read")
    inbox.set_defaults(run=run_inbox)
    watch = subparsers.add_parser(
        "watch",
        help=SUMMARIES["watch"],
        description=(
            "Pull changes from the server at the background pace the rate limits allow (or "
            "every --interval seconds, never faster than the limits) and print each change the "
            "inbox would list as a pull finds it, one a line; local edits waiting in the outbox "
            "are sent on the way, as `sync` does. Runs until Ctrl-C (exit status 130)."
        ),
    )
    watch.add_argument(
        "--json",
        action="store_true",
        help="one JSON object a line: id, issue {id, number, title}, kind (field, comment, "
        "new_issue), field, old, new, text, at, who {id, name} or null, seen_at, read",
    )
    watch.add_argument(
        "--interval",
        type=float,
        metavar="SECONDS",
        help="seconds between pulls (default: the rate limiter's background pace)",
    )
    watch.set_defaults(run=_run_watch)


def _run_watch(args: argparse.Namespace) -> int:
    """`watch`, whose module (asyncio, the engine) loads only when it runs: every command
    imports this one (docs/architecture.md#start-up)."""
    from tracker_tui.commands.watch import run_watch

    return run_watch(args)


def run_inbox(args: argparse.Namespace) -> int:
    from tracker_tui.data.inbox import Names, all_json, load  # the change log's modules

    with open_profile_cache(args) as cache:
        groups, newest = load(cache, unread_only=not args.all)
        if args.json:
            names = Names(cache)
            print_json(all_json((c for group in groups for c in group.changes), names))
        else:
            _print_groups(cache, groups, args.all)
        if args.mark_read and newest:
            cache.inbox.mark_read(up_to=newest)
    return Exit.OK


def _print_groups(cache: Cache, groups: list[IssueChanges], everything: bool) -> None:
    if not groups:
        print("nothing changed" if everything else "nothing new since you last looked")
        if cache.state.get(ME_STATE_KEY) is None:
            notice(
                "who you are is not known yet (run `tracker-tui sync`): until then only issues "
                "created from this client count as yours"
            )
        return
    for group in groups:
        number = f"#{group.number}" if group.number is not None else group.issue_id
        unread = f"  ({group.unread} new)" if group.unread else ""
        print(f"{number} {group.title}{unread}")
        for change, line in zip(group.changes, group.lines, strict=True):
            mark = " " if change.read else "•"
            print(f"  {mark} {line}{_when(change)}")


def _when(change: Change) -> str:
    return f"  ({change.at[:16].replace('T', ' ')} UTC)" if change.at else ""
