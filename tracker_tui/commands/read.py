"""`tracker-tui issues list|show` and `projects list` (registered with the projects' writes,
tracker_tui.commands.projects_write): reads from the local cache only.

Instant and offline: no network, no key needed. What is shown is the cache's effective view
(server copy with pending local edits laid over it), each record with its `sync_state`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from accounts.credentials import cache_name_of
from cache import ME_STATE_KEY, IssueFilter, IssueRow, IssueSort, open_cache, search_syntax
from cache.models import JsonValue
from issuefields import (
    ASSIGNEE,
    FILTERS,
    ISSUE_FIELDS,
    LISTED,
    PRIORITY,
    SORT_KEYS,
    STATUS,
    TITLE,
    Field,
    Kind,
)
from tracker_tui.commands import refs
from tracker_tui.commands.refs import Names, option
from tracker_tui.data.people import NONE_WORDS
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_json, print_table

if TYPE_CHECKING:
    from cache import Cache

DEFAULT_LIMIT = 50


def open_profile_cache(args: argparse.Namespace) -> Cache:
    """The cache of the chosen profile (or of env-only mode), without touching the network or
    the keyring."""
    return open_cache(cache_name_of(args.profile))


def register(_subparsers: Any, issue_commands: Any) -> None:
    listing = issue_commands.add_parser(
        "list",
        help="list issues from the local cache (offline)",
        description=(
            "List issues from the local cache, newest update first. Filters combine with AND; "
            "repeat a filter to accept several values. Run `tracker-tui sync` to refresh."
        ),
    )
    for field in FILTERS:
        listing.add_argument(option(field), action="append", default=[], help=_help(field))
    listing.add_argument(
        "--search",
        "--query",
        "-q",
        dest="query",
        default="",
        metavar="TEXT",
        help="search as in the app: words (title, description, comments, labels), "
        "'\"a phrase\"', -word to exclude, status:todo, priority:high, assignee:me, "
        "label:bug, project:KEY, #123",
    )
    listing.add_argument(
        "--sort",
        default="-updated",
        help=f"one of {', '.join(SORT_KEYS)}; prefix '-' for descending, as "
        "in `--sort -priority` (urgent first) (default -updated)",
    )
    listing.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="at most N rows (50)")
    listing.add_argument("--json", action="store_true", help="JSON with the API's field names")
    listing.set_defaults(run=run_list)

    show = issue_commands.add_parser(
        "show",
        help="show one issue with its comments (offline)",
        description="Show one issue from the local cache. ID is the server id, '#42' or '42'.",
    )
    show.add_argument("id", metavar="ID", help="issue id, or its number as '#42' or '42'")
    show.add_argument("--json", action="store_true", help="the whole record as JSON")
    show.set_defaults(run=run_show)


def _help(field: Field) -> str:
    """What a filter option takes, from the field's kind."""
    if field.kind is Kind.CHOICE:
        return ", ".join(field.values) + ", or a value a server sent"
    if field.kind is Kind.USER:
        return "'me', a user id, or a user's name or the start of it; 'none' for unassigned"
    if field.kind is Kind.PROJECT:
        return "project id or key; 'none' for no project"
    return "a label" if field.kind is Kind.LABELS else field.label.lower()


def run_list(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    with open_profile_cache(args) as cache:
        rows = cache.reads.window(_filter(cache, args), _sort(args.sort), 0, args.limit)
        names = Names(cache)
        if args.json:
            print_json([issue_json(row) for row in rows])
            return Exit.OK
        table = [
            {
                **issue_json(row),
                "ref": f"#{row.number}" if row.number is not None else names.issue(row.id),
                "who": names.user(row.assignee),
                "state": "" if row.sync_state == "synced" else row.sync_state.value,
            }
            for row in rows
        ]
    columns = [("ref", "ID"), *_headed(STATUS, PRIORITY), ("who", ASSIGNEE.label.upper())]
    columns += [*_headed(TITLE), ("state", "")]
    print_table(table, columns, widest={"title": 70, "who": 20, "ref": 24})
    return Exit.OK


def _headed(*fields: Field) -> list[tuple[str, str]]:
    return [(field.member, field.label.upper()) for field in fields]


def issue_json(row: IssueRow) -> dict[str, JsonValue]:
    """A row with the API's names: its id, every field it carries, how it stands."""
    found: dict[str, JsonValue] = {"id": row.id}
    for field in ISSUE_FIELDS:
        if field.kind is Kind.LABELS:
            found[field.member] = list(row.labels)
        elif field.member in row.cells:
            found[field.member] = row.cells[field.member]
    found["sync_state"] = row.sync_state.value
    return found


def _filter(cache: Cache, args: argparse.Namespace) -> IssueFilter:
    """The filter as typed, each value checked: statuses and priorities the cache knows (the
    client's and any a server sent), users as `--assignee` takes them for writes."""
    projects = cache.reads.projects()

    def project(value: str) -> str | None:
        if value.lower() in NONE_WORDS:
            return None
        for found in projects:
            if value in (found.id, found.key) or (found.key or "").lower() == value.lower():
                return found.id
        raise UsageError(f"--project: no project {value!r} in the local cache")

    def value(field: Field, given: str) -> str | None:
        if field.kind is Kind.CHOICE:
            return refs.listed_value(cache, given, field, option(field))
        if field.kind is Kind.USER:
            return refs.user_id(cache, given)
        if field.kind is Kind.PROJECT:
            return project(given)
        return given

    values: dict[str, Any] = {
        field.word: frozenset(value(field, given) for given in getattr(args, field.word))
        for field in FILTERS
    }
    problems = search_syntax.parse(args.query).problems
    if problems:
        raise UsageError(f"--search: {' '.join(problems)}")
    me = cache.state.get(ME_STATE_KEY)
    return IssueFilter(**values, text=args.query, me=me if isinstance(me, str) else None)


def _sort(text: str) -> IssueSort:
    descending = text.startswith("-")
    name = text.lstrip("+-")
    try:
        return IssueSort(name, descending=descending)
    except ValueError:
        known = ", ".join(SORT_KEYS)
        raise UsageError(f"unknown sort key {name!r}; use one of {known}") from None


def run_show(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        detail = cache.reads.issue(refs.issue_id(cache, args.id))
        if detail is None:
            raise UsageError(f"issue {args.id} was just deleted")
        names = Names(cache)
        record: dict[str, JsonValue] = {
            **detail.record,
            "sync_state": detail.issue.sync_state.value,
        }
        comments = [{**c.record, "sync_state": c.sync_state.value} for c in detail.comments]
        if args.json:
            print_json({**record, "comments": comments})
            return Exit.OK
        issue = detail.issue
        number = detail.number
        print(f"#{number} {issue.title}" if number is not None else issue.title)
        print(f"  id        {issue.id}")
        for field in LISTED:
            print(f"  {field.label.lower():<9} {_shown(field, issue, names)}")
        print(f"  {'sync':<9} {issue.sync_state.value}")
        if detail.description:
            print()
            print(detail.description)
        for comment in detail.comments:
            print(f"\n--- {names.user(comment.author) or '?'} at {comment.created_at}")
            print(comment.body)
    return Exit.OK


def _shown(field: Field, issue: IssueRow, names: Names) -> str:
    """A field's value as `issues show` prints it: as stored, users and projects named."""
    if field.kind is Kind.LABELS:
        return ", ".join(issue.labels) or "-"
    value = issue.cells.get(field.member)
    if field.kind is Kind.USER:
        value = names.user(None if value is None else str(value))
    elif field.kind is Kind.PROJECT:
        value = names.project(None if value is None else str(value))
    return "-" if value is None else str(value)


def run_projects(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        rows = cache.reads.projects()
        names = Names(cache)
        if args.json:
            print_json([{**row.record, "sync_state": row.sync_state.value} for row in rows])
            return Exit.OK
        table = [
            {
                "key": row.key or row.id,
                "name": row.name,
                "state": row.state,
                "lead": names.user(row.lead),
            }
            for row in rows
        ]
    columns = [("key", "KEY"), ("name", "NAME"), ("state", "STATE"), ("lead", "LEAD")]
    print_table(table, columns)
    return Exit.OK
