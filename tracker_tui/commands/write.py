"""`issues create|edit|delete|comment|bulk-edit`: local writes from the command line.

Every write is checked here first (the fields, values and limits the client knows, the workflow's
moves: docs/api.md#known-values) so a mistake is refused with one clear line before it reaches the
outbox. It is then queued in the profile's cache, durably, and pushed at once unless `--no-push`
(offline work; the next `sync` or the app sends it). The exit status (`tracker_tui.exit_codes`): 0
when the writes are on the server (or only queued, with `--no-push`); 2 when refused before anything
was queued; 3 when the server refused a write or it conflicts with a change made elsewhere, or when
some issues of a bulk edit could not make the change (each is named); 4 when the server could not be
reached and the write stays queued.

Errors of the cache and sync packages reach the CLI's edge, which tells them in one line. The
helpers that open the cache, validate and push are used by `tracker_tui.commands.outbox` too.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from accounts.credentials import cache_name_of, resolve_profile
from cache import CacheError, EntryState, JsonValue, OutboxEntry, Resource, open_cache
from issuefields import (
    COMMENT_BODY,
    DESCRIPTION,
    EDITABLE,
    STATUS,
    TRANSITIONS,
    Field,
    Kind,
    problem,
)
from sync.permissions import (
    COMMENTS_WRITE,
    ISSUES_WRITE,
    PERMISSIONS_STATE_KEY,
    remembered_permissions,
)
from tracker_tui.collector import collect_again
from tracker_tui.commands import refs, texts
from tracker_tui.commands.online import require
from tracker_tui.commands.refs import Names, option
from tracker_tui.data.draft_keys import comment_key, editor_key
from tracker_tui.data.people import NONE_WORDS
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import ask, notice

if TYPE_CHECKING:
    from cache import Cache
    from sync.push import PushReport
    from tracker_tui.commands.waiting import Waits

PUSH_GIVE_UP_AFTER = 5.0
"""Seconds a write command keeps retrying a failing server: the write is safe in the queue,
and the next sync sends it."""


def open_local_cache(args: argparse.Namespace) -> Cache:
    return open_cache(cache_name_of(args.profile))


def open_for_writing(
    args: argparse.Namespace, permission: str = ISSUES_WRITE, doing: str = "change issues"
) -> Cache:
    """The cache to queue a write in, once the key is not known to lack `permission`: a write
    it may not make is refused here, before it is queued or anything is sent.

    The cache remembers the permissions of one key (`sync.permissions`). Unless that key lacks
    `permission`, no key of this profile is known to, and the key is not looked up: reading it
    loads the keyring, which cost a queued write more than everything else it does
    (docs/architecture.md#start-up)."""
    cache = open_local_cache(args)
    try:
        stored = cache.state.get(PERMISSIONS_STATE_KEY)
        if isinstance(stored, dict) and remembered_permissions(
            cache, str(stored.get("server")), str(stored.get("key"))
        ).lacks(permission):
            require(resolve_profile(args.profile), permission, doing)
    except BaseException:
        cache.close()
        raise
    return cache


def push_now(args: argparse.Namespace, cache: Cache) -> tuple[PushReport, Waits]:
    """Push the whole outbox (ours and any earlier offline writes): what happened, and what
    the server was seen to do."""
    import asyncio

    from sync.connection import ConnectionWatch
    from sync.errors import SyncError
    from sync.push import Backoff, PushReport, Stop, StopReason, push_outbox
    from sync.session import open_session
    from tracker_tui.commands.waiting import Waits
    from tracker_tui.progress import ProgressDisplay

    waits = Waits(
        ProgressDisplay(quiet=True).note, give_up_after=PUSH_GIVE_UP_AFTER, tell_rate_limit=True
    )
    watch = ConnectionWatch(on_change=waits.heard)

    async def run() -> PushReport:
        async with open_session(
            resolve_profile(args.profile),
            cache=cache,
            observer=watch.observe,
            sleep=watch.sleep,
        ) as session:
            work = asyncio.ensure_future(push_outbox(session, backoff=Backoff(sleep=waits.retry)))
            done = await waits.run(work)
            gave_up = Stop(StopReason.INTERRUPTED, waits.gave_up or "stopped retrying")
            return done if isinstance(done, PushReport) else PushReport(stopped=gave_up)

    collect_again()
    try:
        return asyncio.run(run()), waits
    except SyncError as error:
        watch.failed(error)
        return PushReport(stopped=Stop(StopReason.INTERRUPTED, str(error))), waits


def outcome(args: argparse.Namespace, cache: Cache, entries: Sequence[OutboxEntry]) -> Exit:
    """Push unless `--no-push`, then report on `entries`: one stderr line per one not sent."""
    if args.no_push or not entries:
        return Exit.OK
    report, waits = push_now(args, cache)
    names = Names(cache)
    status = Exit.OK
    for entry in entries:
        try:
            now = cache.outbox.entry(entry.id)
        except CacheError:
            continue
        if now.state in (EntryState.FAILED, EntryState.CONFLICT, EntryState.UNSURE):
            status = worst(status, Exit.PARTLY_DONE)
            reason = now.last_error or now.state.value
            notice(f"tracker-tui: {names.entry(now)} {now.state.value}: {reason}")
        elif now.state is not EntryState.DONE:
            why = report.stopped or now.last_error or "not sent yet"
            notice(f"tracker-tui: {names.entry(now)} stays queued ({why})")
            status = worst(status, Exit.FAILED if waits.key_refused else Exit.OFFLINE)
    return status


def worst(*statuses: Exit) -> Exit:
    """The status that tells most, in the order of `tracker_tui.exit_codes`."""
    order = (Exit.USAGE, Exit.FAILED, Exit.PARTLY_DONE, Exit.OFFLINE, Exit.OK)
    return min(statuses, key=order.index)


def _help(field: Field) -> str:
    """What an option takes, from the field's kind and check."""
    check = field.check
    if field.kind is Kind.CHOICE:
        moves = " (moves per the workflow)" if field is STATUS else ""
        return ", ".join(field.values) + moves
    if field.kind is Kind.USER:
        return "`me`, a user id, or a user's name or the start of it; `none` to unassign"
    if field.kind is Kind.PROJECT:
        return "a project id or key, or `none`"
    if field.kind is Kind.LABELS:
        return "a label; repeat for more (replaces all)"
    if check.max_chars is not None:
        low = "1 to" if check.required else "up to"
        return f"{low} {check.max_chars:,} characters"
    return field.label.lower()


def add_field_options(parser: argparse.ArgumentParser, *, creating: bool) -> None:
    """An option per editable field (a required one, the title, is checked by the command:
    `--editor` may give it instead)."""
    for field in EDITABLE:
        if field.kind is Kind.LABELS:
            parser.add_argument(option(field), action="append", metavar="L", help=_help(field))
        else:
            need = " (required unless --editor)" if creating and field.check.required else ""
            parser.add_argument(option(field), help=_help(field) + need)


def add_push_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-push", action="store_true", help="only queue the write (sent at the next sync)"
    )


def issue_fields(args: argparse.Namespace, cache: Cache) -> dict[str, JsonValue]:
    """The fields given on the command line, checked against the known values and limits
    (docs/api.md#known-values); refused otherwise.
    Status and priority take the values the client knows, and only those: a value a server
    sent that the client does not know is shown, but not offered to set."""
    fields: dict[str, JsonValue] = {}
    for field in EDITABLE:
        given = getattr(args, field.word)
        if given is not None:
            fields[field.member] = _value(cache, field, given)
    return fields


def _value(cache: Cache, field: Field, given: Any) -> JsonValue:
    """One option's value checked, as the write sends it: one line trimmed (and null when
    left empty, but for a required field, which is refused)."""
    name = option(field)
    if field.kind is Kind.CHOICE:
        return refs.known_value(given, field.values, name)
    if field.kind is Kind.USER:
        return refs.user_id(cache, given)
    if field.kind is Kind.PROJECT:
        return _project(cache, given)
    if field.kind is Kind.LABELS:
        labels = list(dict.fromkeys(label.strip() for label in given if label.strip()))
        _refuse(problem(field, labels), name)
        return list[JsonValue](labels)
    _refuse(problem(field, given), name)
    if field.kind is Kind.MARKDOWN:
        return str(given)
    text = str(given).strip()
    return text if text or field.kind is Kind.TEXT else None


def _refuse(problem: str | None, option: str) -> None:
    if problem is not None:
        raise UsageError(f"{option}: {problem}")


def _project(cache: Cache, given: str) -> str | None:
    if given.lower() in NONE_WORDS:
        return None
    for project in cache.reads.projects():
        if given in (project.id, project.key):
            return project.id
    raise UsageError(f"--project: no project {given!r} in the local cache")


def workflow_refusals(
    cache: Cache, issue_ids: Sequence[str], fields: dict[str, JsonValue]
) -> dict[str, str]:
    """The issues that cannot make the status move, with why: the bulk preview's plan
    (`tracker_tui.data.bulk`), so the command line and the app refuse the same moves."""
    target = fields.get(STATUS.member)
    if not isinstance(target, str):
        return {}
    from tracker_tui.data.bulk import BulkChange, plan

    rows = [found.issue for i in issue_ids if (found := cache.reads.issue(i)) is not None]
    blocked = plan(rows, BulkChange(STATUS.member, target)).blocked
    return {issue_id: reason for issue_id, _ref, reason in blocked}


def register(subparsers: Any, issue_commands: Any) -> None:
    create = issue_commands.add_parser(
        "create", help="create an issue", description="Create an issue; prints its id."
    )
    add_field_options(create, creating=True)
    texts.add_file_option(create, "--description-file", "the description")
    texts.add_editor_option(create, "the issue (fields on top, description below)")
    add_push_option(create)
    create.set_defaults(run=run_create)

    edit = issue_commands.add_parser("edit", help="change fields of an issue")
    edit.add_argument("id", metavar="ID", help="issue id, or its number as '#42' or '42'")
    add_field_options(edit, creating=False)
    texts.add_file_option(edit, "--description-file", "the description")
    texts.add_editor_option(edit, "the issue (fields on top, description below)")
    add_push_option(edit)
    edit.set_defaults(run=run_edit)

    delete = issue_commands.add_parser(
        "delete",
        help="delete an issue",
        description="Delete an issue, after asking on a terminal; scripts pass --yes.",
    )
    delete.add_argument("id", metavar="ID", help="issue id, or its number as '#42' or '42'")
    delete.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    add_push_option(delete)
    delete.set_defaults(run=run_delete)

    comment = issue_commands.add_parser("comment", help="comment on an issue")
    comment.add_argument("id", metavar="ID", help="issue id, or its number as '#42' or '42'")
    comment.add_argument("--body", help=_help(COMMENT_BODY))
    texts.add_file_option(comment, "--body-file", "the comment")
    texts.add_editor_option(comment, "the comment (starting from --body or --body-file)")
    add_push_option(comment)
    comment.set_defaults(run=run_comment)

    bulk = issue_commands.add_parser(
        "bulk-edit",
        help="change the same fields of many issues",
        description="IDs as arguments, or `-` to read them from stdin: one per line, plain "
        "or as JSON objects with an `id` (so `issues list --json | jq -c ... |` works). "
        "Issues the workflow does not let make a status move are left alone and named; "
        "the others change (exit status 3 then).",
    )
    bulk.add_argument(
        "ids", metavar="ID", nargs="+", help="issue ids or numbers ('#42' or '42'), or -"
    )
    add_field_options(bulk, creating=False)
    add_push_option(bulk)
    bulk.set_defaults(run=run_bulk_edit)


def run_create(args: argparse.Namespace) -> int:
    texts.refuse_stdin_with_editor(args.editor, args.description_file)
    if args.title is None and not args.editor:
        raise UsageError("--title is required (or write the issue with --editor)")
    with open_for_writing(args) as cache:
        fields = issue_fields(args, cache) | _description_file(args)
        if args.editor:
            from tracker_tui.commands import in_editor  # the editor's modules

            try:
                fields = in_editor.create(cache, fields)
            except texts.Cancelled as why:
                return _cancelled(why)
        local = cache.outbox.create(Resource.ISSUES, fields)
        if args.editor:
            cache.drafts.discard(editor_key(None))
        [entry] = [e for e in cache.outbox.entries() if e.record_id == local]
        status = outcome(args, cache, [entry])
        print(cache.outbox.resolve_id(local))
        return status


def run_edit(args: argparse.Namespace) -> int:
    texts.refuse_stdin_with_editor(args.editor, args.description_file)
    with open_for_writing(args) as cache:
        issue_id = refs.issue_id(cache, args.id)
        fields = issue_fields(args, cache) | _description_file(args)
        if args.editor:
            from tracker_tui.commands import in_editor  # the editor's modules

            try:
                fields = in_editor.edit(cache, issue_id, fields)
            except texts.Cancelled as why:
                return _cancelled(why)
            if not fields:
                cache.drafts.discard(editor_key(issue_id))
                return _cancelled(texts.Cancelled("no field changed"))
        if not fields:
            raise UsageError("nothing to change: give at least one of --title, --status, ...")
        refused = workflow_refusals(cache, [issue_id], fields)
        if refused:
            raise UsageError(_move_refused(cache, issue_id, refused[issue_id]))
        entry = cache.outbox.update(Resource.ISSUES, issue_id, fields)
        if args.editor:
            cache.drafts.discard(editor_key(issue_id))
        status = outcome(args, cache, [] if entry is None else [entry])
        what = "already so" if entry is None else _where(cache, entry, "changed", "change")
        print(f"{Names(cache).issue(issue_id)} {what}")
        return status


def _where(cache: Cache, entry: OutboxEntry, done: str, noun: str) -> str:
    """Where a write stands after the command: `changed` only once the server has it."""
    try:
        state = cache.outbox.entry(entry.id).state
    except CacheError:
        return done
    return {
        EntryState.DONE: done,
        EntryState.FAILED: f"{noun} refused by the server",
        EntryState.CONFLICT: f"{noun} in conflict (`tracker-tui conflicts`)",
    }.get(state, f"{noun} queued for the next sync")


def _move_refused(cache: Cache, issue_id: str, reason: str) -> str:
    found = cache.reads.issue(issue_id)
    current = found.issue.status if found is not None else None
    allowed = ", ".join(TRANSITIONS.get(current or "", ())) or "none known"
    return f"{Names(cache).issue(issue_id)} cannot move: {reason}; allowed: {allowed}"


def run_delete(args: argparse.Namespace) -> int:
    with open_for_writing(args) as cache:
        issue_id = refs.issue_id(cache, args.id)
        named = Names(cache).issue(issue_id, title=True)
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError(f"not deleting {named} without a yes: add --yes in scripts")
            answer = ask(f"Delete {named}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                notice(f"tracker-tui: {named} not deleted")
                return Exit.INTERRUPTED
        entry = cache.outbox.delete(Resource.ISSUES, issue_id)
        status = outcome(args, cache, [] if entry is None else [entry])
        print(
            f"{named} {'deleted' if entry is None else _where(cache, entry, 'deleted', 'delete')}"
        )
        return status


def run_comment(args: argparse.Namespace) -> int:
    texts.refuse_stdin_with_editor(args.editor, args.body_file)
    if args.body is not None and args.body_file is not None:
        raise UsageError("give --body or --body-file, not both")
    if args.body is None and args.body_file is None and not args.editor:
        raise UsageError("give the comment: --body TEXT, --body-file FILE (- is stdin), --editor")
    body = args.body if args.body_file is None else texts.read_text(args.body_file, "--body-file")
    with open_for_writing(args, COMMENTS_WRITE, "comment") as cache:
        issue_id = refs.issue_id(cache, args.id)
        if args.editor:
            from tracker_tui.commands import in_editor  # the editor's modules

            try:
                body = in_editor.comment(cache, issue_id, body or "")
            except texts.Cancelled as why:
                return _cancelled(why)
        given = "--body-file" if args.body_file is not None else "--body"
        if problem(COMMENT_BODY, body) is not None:
            raise UsageError(f"{given}: {_help(COMMENT_BODY)} ({len(body.strip()):,} given)")
        local = cache.outbox.create(Resource.COMMENTS, {"issue_id": issue_id, "body": body})
        if args.editor:
            cache.drafts.discard(comment_key(issue_id))
        entries = [e for e in cache.outbox.entries() if e.record_id == local]
        status = outcome(args, cache, entries)
        print(cache.outbox.resolve_id(local))
        return status


def _description_file(args: argparse.Namespace) -> dict[str, JsonValue]:
    """`--description-file`'s text (stdin for `-`), checked as `--description` is."""
    if args.description_file is None:
        return {}
    text = texts.read_text(args.description_file, "--description-file")
    _refuse(problem(DESCRIPTION, text), "--description-file")
    return {DESCRIPTION.member: text}


def _cancelled(why: texts.Cancelled) -> int:
    notice(f"tracker-tui: cancelled: {why}; nothing is written")
    return Exit.INTERRUPTED


def run_bulk_edit(args: argparse.Namespace) -> int:
    with open_for_writing(args) as cache:
        ids = list(dict.fromkeys(refs.issue_id(cache, given) for given in read_ids(args.ids)))
        if not ids:
            raise UsageError("no issue ids given")
        fields = issue_fields(args, cache)
        if not fields:
            raise UsageError("nothing to change: give at least one of --title, --status, ...")
        names = Names(cache)
        refused = workflow_refusals(cache, ids, fields)
        allowed = [issue_id for issue_id in ids if issue_id not in refused]
        if not allowed:
            reasons = "; ".join(f"{names.issue(i)}: {why}" for i, why in refused.items())
            raise UsageError(f"no issue can make this change ({reasons})")
        batch = cache.outbox.update_many(Resource.ISSUES, allowed, fields)
        entries = [e for e in cache.outbox.entries() if e.batch_id == batch]
        status = outcome(args, cache, entries)
        print(f"{len(entries)} of {len(ids)} issues changed")
        for issue_id, why in refused.items():
            print(f"not changed: {names.issue(issue_id, title=True)}: {why}")
        return worst(status, Exit.PARTLY_DONE) if refused else status


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
