"""`issues create|edit|delete|comment|bulk-edit`: local writes from the command line.

Every write is checked here first (CONTRACT's fields, values and limits, the workflow's moves)
so a mistake is refused with one clear line before it reaches the outbox. It is then queued
in the profile's cache, durably, and pushed at once unless `--no-push` (offline work; the next
`sync` or the app sends it). Exit status: 0 when the write is on the server or queued for
later (a line on stderr says which, when it could not be sent now); 1 when refused, locally or
by the server, or when it conflicts with a change made elsewhere.

Errors of the cache and sync packages reach the CLI's edge, which tells them in one line. The
helpers that open the cache, validate and push are used by `tracker_tui.commands.outbox` too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from cache import (
    Cache,
    CacheError,
    EntryState,
    IssueFilter,
    IssueSort,
    JsonValue,
    OutboxEntry,
    PickerField,
    Resource,
    SortKey,
    open_cache,
)
from sync.credentials import resolve_profile
from sync.errors import SyncError
from sync.push import PushReport, push_outbox
from sync.session import cache_name, open_session
from sync.workflow import TRANSITIONS
from tracker_tui.data.workflow import (
    can_move,
    description_problem,
    labels_problem,
    title_problem,
)
from tracker_tui.errors import UsageError

STATUSES = ("backlog", "todo", "in_progress", "in_review", "done", "canceled")
PRIORITIES = ("urgent", "high", "medium", "low", "none")
BODY_MAX = 65_535
NONE_WORDS = frozenset({"none", "null", "-"})
"""What unassigns (`--assignee none`) or clears the project (`--project none`)."""
SCAN_PAGE = 1000


def open_local_cache(args: argparse.Namespace) -> Cache:
    return open_cache(cache_name(resolve_profile(args.profile)))


def push_now(args: argparse.Namespace, cache: Cache) -> PushReport:
    """Push the whole outbox (ours and any earlier offline writes) and return what happened."""

    async def run() -> PushReport:
        async with open_session(resolve_profile(args.profile), cache=cache) as session:
            return await push_outbox(session)

    try:
        return asyncio.run(run())
    except SyncError as error:
        return PushReport(stopped=str(error))


def outcome(args: argparse.Namespace, cache: Cache, entries: Sequence[OutboxEntry]) -> int:
    """Push unless `--no-push`, then report on `entries`: one stderr line per one not sent."""
    if args.no_push or not entries:
        return 0
    report = push_now(args, cache)
    status = 0
    for entry in entries:
        try:
            now = cache.outbox_entry(entry.id)
        except CacheError:
            continue
        if now.state in (EntryState.FAILED, EntryState.CONFLICT, EntryState.UNSURE):
            status = 1
            reason = now.last_error or now.state.value
            print(f"tracker-tui: {_what(now)} {now.state.value}: {reason}", file=sys.stderr)
        elif now.state is not EntryState.DONE:
            why = report.stopped or now.last_error or "not sent yet"
            print(f"tracker-tui: {_what(now)} stays queued ({why})", file=sys.stderr)
    return status


def _what(entry: OutboxEntry) -> str:
    noun = entry.resource.value.rstrip("s")
    return f"{entry.operation.value} of {noun} {entry.target_id} (outbox #{entry.id})"


def find_issue(cache: Cache, given: str) -> str:
    """An issue id from a server id, a local id or `#42` (the number the server shows)."""
    text = given.strip()
    if text.startswith("#"):
        return _by_number(cache, text)
    found = cache.issue(text)
    if found is None:
        raise UsageError(f"no issue {text} in the local cache (run `tracker-tui sync`?)")
    return found.issue.id


def _by_number(cache: Cache, text: str) -> str:
    try:
        number = int(text[1:])
    except ValueError:
        raise UsageError(f"{text} is not an issue number like #42") from None
    sort = IssueSort(SortKey.NUMBER, descending=False)
    offset = 0
    while True:
        rows = cache.window(IssueFilter(), sort, offset, SCAN_PAGE)
        for row in rows:
            if row.number == number:
                return row.id
        if len(rows) < SCAN_PAGE:
            raise UsageError(f"no issue {text} in the local cache (run `tracker-tui sync`?)")
        offset += SCAN_PAGE


def add_field_options(parser: argparse.ArgumentParser, *, title_required: bool) -> None:
    parser.add_argument("--title", required=title_required, help="1 to 255 characters")
    parser.add_argument("--description", help="up to 65,535 characters")
    parser.add_argument("--priority", help=", ".join(PRIORITIES))
    parser.add_argument("--status", help=", ".join(STATUSES) + " (moves per the workflow)")
    parser.add_argument("--assignee", help="a user id, or `none` to unassign")
    parser.add_argument("--project", help="a project id or key, or `none`")
    parser.add_argument(
        "--label", action="append", metavar="L", help="a label; repeat for more (replaces all)"
    )


def add_push_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-push", action="store_true", help="only queue the write (sent at the next sync)"
    )


def issue_fields(args: argparse.Namespace, cache: Cache) -> dict[str, JsonValue]:
    """The fields given on the command line, checked against CONTRACT; refused otherwise."""
    fields: dict[str, JsonValue] = {}
    if args.title is not None:
        _refuse(title_problem(args.title), "--title")
        fields["title"] = args.title.strip()
    if args.description is not None:
        _refuse(description_problem(args.description), "--description")
        fields["description"] = args.description
    if args.priority is not None:
        fields["priority"] = _choice(args.priority, PRIORITIES, "--priority")
    if args.status is not None:
        known = {v for v in cache.distinct_values(PickerField.STATUS) if v is not None}
        fields["status"] = _choice(args.status, (*STATUSES, *sorted(known)), "--status")
    if args.assignee is not None:
        fields["assignee"] = None if args.assignee.lower() in NONE_WORDS else args.assignee
    if args.project is not None:
        fields["project_id"] = _project(cache, args.project)
    if args.label is not None:
        labels = list(dict.fromkeys(label.strip() for label in args.label if label.strip()))
        _refuse(labels_problem(labels), "--label")
        fields["labels"] = list(labels)
    return fields


def _refuse(problem: str | None, option: str) -> None:
    if problem is not None:
        raise UsageError(f"{option}: {problem}")


def _choice(value: str, allowed: Sequence[str], option: str) -> str:
    if value not in allowed:
        raise UsageError(f"{option} {value!r} is not one of: {', '.join(allowed)}")
    return value


def _project(cache: Cache, given: str) -> str | None:
    if given.lower() in NONE_WORDS:
        return None
    for project in cache.projects():
        if given in (project.id, project.key):
            return project.id
    raise UsageError(f"--project: no project {given!r} in the local cache")


def check_move(cache: Cache, issue_id: str, fields: dict[str, JsonValue]) -> None:
    """Refuse a status move the workflow forbids, naming the moves it allows."""
    target = fields.get("status")
    found = cache.issue(issue_id)
    current = None if found is None else found.issue.status
    if not isinstance(target, str) or current is None or current not in TRANSITIONS:
        return
    if target in TRANSITIONS and not can_move(current, target):
        moves = ", ".join(TRANSITIONS[current])
        raise UsageError(f"{issue_id} cannot move from {current} to {target}; allowed: {moves}")


def register(subparsers: Any, issue_commands: Any) -> None:
    create = issue_commands.add_parser("create", help="create an issue")
    add_field_options(create, title_required=True)
    add_push_option(create)
    create.set_defaults(run=run_create)

    edit = issue_commands.add_parser("edit", help="change fields of an issue")
    edit.add_argument("id", metavar="ID", help="issue id or #number")
    add_field_options(edit, title_required=False)
    add_push_option(edit)
    edit.set_defaults(run=run_edit)

    delete = issue_commands.add_parser("delete", help="delete an issue")
    delete.add_argument("id", metavar="ID", help="issue id or #number")
    add_push_option(delete)
    delete.set_defaults(run=run_delete)

    comment = issue_commands.add_parser("comment", help="comment on an issue")
    comment.add_argument("id", metavar="ID", help="issue id or #number")
    comment.add_argument("--body", required=True, help="1 to 65,535 characters")
    add_push_option(comment)
    comment.set_defaults(run=run_comment)

    bulk = issue_commands.add_parser(
        "bulk-edit",
        help="change the same fields of many issues",
        description="IDs as arguments, or `-` to read them from stdin: one per line, plain "
        "or as JSON objects with an `id` (so `issues list --json | jq -c ... |` works).",
    )
    bulk.add_argument("ids", metavar="ID", nargs="+", help="issue ids or #numbers, or -")
    add_field_options(bulk, title_required=False)
    add_push_option(bulk)
    bulk.set_defaults(run=run_bulk_edit)


def run_create(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        fields = issue_fields(args, cache)
        local = cache.create(Resource.ISSUES, fields)
        [entry] = [e for e in cache.outbox() if e.record_id == local]
        status = outcome(args, cache, [entry])
        print(cache.resolve_id(local))
        return status


def run_edit(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        issue_id = find_issue(cache, args.id)
        fields = issue_fields(args, cache)
        if not fields:
            raise UsageError("nothing to change: give at least one of --title, --status, ...")
        check_move(cache, issue_id, fields)
        entry = cache.update(Resource.ISSUES, issue_id, fields)
        status = outcome(args, cache, [] if entry is None else [entry])
        print(cache.resolve_id(issue_id))
        return status


def run_delete(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        issue_id = find_issue(cache, args.id)
        entry = cache.delete(Resource.ISSUES, issue_id)
        return outcome(args, cache, [] if entry is None else [entry])


def run_comment(args: argparse.Namespace) -> int:
    body = args.body
    if not body.strip() or len(body) > BODY_MAX:
        raise UsageError(f"--body: 1 to {BODY_MAX:,} characters ({len(body):,} given)")
    with open_local_cache(args) as cache:
        issue_id = find_issue(cache, args.id)
        local = cache.create(Resource.COMMENTS, {"issue_id": issue_id, "body": body})
        entries = [e for e in cache.outbox() if e.record_id == local]
        status = outcome(args, cache, entries)
        print(cache.resolve_id(local))
        return status


def run_bulk_edit(args: argparse.Namespace) -> int:
    with open_local_cache(args) as cache:
        ids = [find_issue(cache, given) for given in read_ids(args.ids)]
        if not ids:
            raise UsageError("no issue ids given")
        fields = issue_fields(args, cache)
        if not fields:
            raise UsageError("nothing to change: give at least one of --title, --status, ...")
        for issue_id in ids:
            check_move(cache, issue_id, fields)
        batch = cache.update_many(Resource.ISSUES, ids, fields)
        entries = [e for e in cache.outbox() if e.batch_id == batch]
        status = outcome(args, cache, entries)
        print(f"{len(entries)} of {len(set(ids))} issues changed")
        return status


def read_ids(given: Iterable[str]) -> list[str]:
    """The ids of the arguments; `-` reads stdin: plain ids, JSON objects with an `id`, or
    JSON arrays of them, one per line."""
    found: list[str] = []
    for item in given:
        if item != "-":
            found.append(item)
            continue
        for line in sys.stdin:
            found.extend(_ids_in(line.strip()))
    return found


def _ids_in(line: str) -> list[str]:
    if not line:
        return []
    if line[0] not in "[{":
        return [line]
    try:
        value = json.loads(line)
    except ValueError:
        raise UsageError(f"stdin: not an id nor JSON: {line[:60]}") from None
    items = value if isinstance(value, list) else [value]
    ids = [item.get("id") for item in items if isinstance(item, dict)]
    if not ids or not all(isinstance(i, str | int) for i in ids):
        raise UsageError(f"stdin: a JSON line without an `id`: {line[:60]}")
    return [str(i) for i in ids]
