"""`tracker-tui issues list|show` and `projects list`: reads from the local cache only.

Instant and offline: no network, no key needed. What is shown is the cache's effective view
(server copy with pending local edits laid over it), each record with its `sync_state`.
"""

from __future__ import annotations

import argparse
from typing import Any

from cache import Cache, IssueFilter, IssueRow, IssueSort, SortKey, open_cache
from cache.models import JsonValue
from sync.credentials import resolve_profile
from sync.session import cache_name
from tracker_tui.errors import UsageError
from tracker_tui.output import print_json, print_table

DEFAULT_LIMIT = 50
NONE_WORDS = frozenset({"none", "null", "-"})
"""What a user types for "unassigned" or "no project"."""


def open_profile_cache(args: argparse.Namespace) -> Cache:
    """The cache of the chosen profile (or of env-only mode), without touching the network."""
    return open_cache(cache_name(resolve_profile(args.profile)))


def register(subparsers: Any, issue_commands: Any) -> None:
    listing = issue_commands.add_parser(
        "list",
        help="list issues from the local cache (offline)",
        description=(
            "List issues from the local cache, newest update first. Filters combine with AND; "
            "repeat a filter to accept several values. Run `tracker-tui sync` to refresh."
        ),
    )
    listing.add_argument("--status", action="append", default=[], help="e.g. todo, in_progress")
    listing.add_argument("--priority", action="append", default=[], help="e.g. urgent, high")
    listing.add_argument(
        "--assignee", action="append", default=[], help="user id or name; 'none' for unassigned"
    )
    listing.add_argument(
        "--project", action="append", default=[], help="project id or key; 'none' for no project"
    )
    listing.add_argument("--label", action="append", default=[], help="a label")
    listing.add_argument("--query", "-q", default="", help="words in the title or description")
    listing.add_argument(
        "--sort",
        default="-updated",
        help=f"one of {', '.join(k.value for k in SortKey)}; prefix '-' for descending "
        "(default -updated)",
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

    projects = subparsers.add_parser(
        "projects",
        help="list projects from the local cache (offline)",
        description="Projects, from the local cache.",
    )
    project_commands = projects.add_subparsers(dest="projects_command", metavar="COMMAND")
    projects.set_defaults(run=lambda _args: _usage(projects))
    plist = project_commands.add_parser(
        "list", help="list projects", description="List the projects held in the local cache."
    )
    plist.add_argument("--json", action="store_true", help="JSON with the API's field names")
    plist.set_defaults(run=run_projects)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def run_list(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    with open_profile_cache(args) as cache:
        rows = cache.window(_filter(cache, args), _sort(args.sort), 0, args.limit)
        names = {user.id: user.name for user in cache.users()}
    if args.json:
        print_json([issue_json(row) for row in rows])
        return 0
    table = [
        {
            **issue_json(row),
            "ref": f"#{row.number}" if row.number is not None else row.id,
            "who": names.get(row.assignee or "", row.assignee),
            "state": "" if row.sync_state == "synced" else row.sync_state.value,
        }
        for row in rows
    ]
    columns = [("ref", "ID"), ("status", "STATUS"), ("priority", "PRIORITY"), ("who", "ASSIGNEE")]
    columns += [("title", "TITLE"), ("state", "")]
    print_table(table, columns, widest={"title": 70, "who": 20})
    return 0


def issue_json(row: IssueRow) -> dict[str, JsonValue]:
    return {
        "id": row.id,
        "number": row.number,
        "title": row.title,
        "status": row.status,
        "priority": row.priority,
        "assignee": row.assignee,
        "project_id": row.project_id,
        "labels": list(row.labels),
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "sync_state": row.sync_state.value,
    }


def _filter(cache: Cache, args: argparse.Namespace) -> IssueFilter:
    users = cache.users()
    projects = cache.projects()

    def user(value: str) -> str | None:
        if value.lower() in NONE_WORDS:
            return None
        for found in users:
            if value in (found.id, found.name) or value.lower() == found.name.lower():
                return found.id
        return value

    def project(value: str) -> str | None:
        if value.lower() in NONE_WORDS:
            return None
        for found in projects:
            if value in (found.id, found.key) or (found.key or "").lower() == value.lower():
                return found.id
        return value

    return IssueFilter(
        status=frozenset(args.status),
        priority=frozenset(args.priority),
        assignee=frozenset(user(value) for value in args.assignee),
        project=frozenset(project(value) for value in args.project),
        label=frozenset(args.label),
        text=args.query,
    )


def _sort(text: str) -> IssueSort:
    descending = text.startswith("-")
    name = text.lstrip("+-")
    try:
        return IssueSort(SortKey(name), descending=descending)
    except ValueError:
        known = ", ".join(key.value for key in SortKey)
        raise UsageError(f"unknown sort key {name!r}; use one of {known}") from None


def resolve_issue_id(cache: Cache, given: str) -> str:
    """The id of the issue the user named: a server (or local) id, or a number (#42, 42).

    The cache has no lookup by number, so the number is found by bisecting the list sorted by
    number (a handful of one-row windows).
    """
    text = given.strip()
    digits = text.removeprefix("#")
    if not digits.isdigit():
        return text
    number = int(digits)
    everything, by_number = IssueFilter(), IssueSort(SortKey.NUMBER, descending=False)
    low, high = 0, cache.count(everything)
    while low < high:
        middle = (low + high) // 2
        (row,) = cache.window(everything, by_number, middle, 1)
        if row.number is None or row.number < number:  # NULLs sort first
            low = middle + 1
        else:
            high = middle
    found = cache.window(everything, by_number, low, 1)
    if found and found[0].number == number:
        return found[0].id
    if text.startswith("#"):
        raise UsageError(f"no issue {text} in the local cache; run `tracker-tui sync`")
    return text


def run_show(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        detail = cache.issue(resolve_issue_id(cache, args.id))
        if detail is None:
            raise UsageError(f"no issue {args.id!r} in the local cache; run `tracker-tui sync`")
        names = {user.id: user.name for user in cache.users()}
    record: dict[str, JsonValue] = {**detail.record, "sync_state": detail.issue.sync_state.value}
    comments = [{**c.record, "sync_state": c.sync_state.value} for c in detail.comments]
    if args.json:
        print_json({**record, "comments": comments})
        return 0
    issue = detail.issue
    ref = f"#{issue.number} " if issue.number is not None else ""
    print(f"{ref}{issue.title}")
    print(f"  id        {issue.id}")
    for label, value in (
        ("status", issue.status),
        ("priority", issue.priority),
        ("assignee", names.get(issue.assignee or "", issue.assignee)),
        ("project", issue.project_id),
        ("labels", ", ".join(issue.labels) or None),
        ("updated", issue.updated_at),
        ("sync", issue.sync_state.value),
    ):
        print(f"  {label:<9} {value if value is not None else '-'}")
    if detail.description:
        print()
        print(detail.description)
    for comment in detail.comments:
        author = names.get(comment.author or "", comment.author)
        print(f"\n--- {author or '?'} at {comment.created_at}")
        print(comment.body)
    return 0


def run_projects(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        rows = cache.projects()
    if args.json:
        print_json([{**row.record, "sync_state": row.sync_state.value} for row in rows])
        return 0
    table = [{"key": row.key, "name": row.name, "state": row.state, "id": row.id} for row in rows]
    print_table(table, [("key", "KEY"), ("name", "NAME"), ("state", "STATE"), ("id", "ID")])
    return 0
