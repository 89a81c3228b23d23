"""`tracker-tui issues list|show` and `projects list`: reads from the local cache only.

Instant and offline: no network, no key needed. What is shown is the cache's effective view
(server copy with pending local edits laid over it), each record with its `sync_state`.
"""

from __future__ import annotations

import argparse
from typing import Any

from cache import Cache, IssueFilter, IssueRow, IssueSort, PickerField, SortKey, open_cache
from cache.models import JsonValue
from sync.credentials import resolve_profile
from tracker_tui.commands import refs
from tracker_tui.commands.refs import NONE_WORDS, Names
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_json, print_table

DEFAULT_LIMIT = 50


def open_profile_cache(args: argparse.Namespace) -> Cache:
    """The cache of the chosen profile (or of env-only mode), without touching the network."""
    return open_cache(resolve_profile(args.profile).cache_name)


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
        "--assignee",
        action="append",
        default=[],
        help="'me', a user id, or a user's name or the start of it; 'none' for unassigned",
    )
    listing.add_argument(
        "--project", action="append", default=[], help="project id or key; 'none' for no project"
    )
    listing.add_argument("--label", action="append", default=[], help="a label")
    listing.add_argument("--query", "-q", default="", help="words in the title or description")
    listing.add_argument(
        "--sort",
        default="-updated",
        help=f"one of {', '.join(k.value for k in SortKey)}; prefix '-' for descending, as "
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
    return Exit.USAGE


def run_list(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    with open_profile_cache(args) as cache:
        rows = cache.window(_filter(cache, args), _sort(args.sort), 0, args.limit)
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
    columns = [("ref", "ID"), ("status", "STATUS"), ("priority", "PRIORITY"), ("who", "ASSIGNEE")]
    columns += [("title", "TITLE"), ("state", "")]
    print_table(table, columns, widest={"title": 70, "who": 20, "ref": 24})
    return Exit.OK


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
    """The filter as typed, each value checked: statuses and priorities the cache knows (the
    client's and any a server sent), users as `--assignee` takes them for writes."""
    projects = cache.projects()

    def project(value: str) -> str | None:
        if value.lower() in NONE_WORDS:
            return None
        for found in projects:
            if value in (found.id, found.key) or (found.key or "").lower() == value.lower():
                return found.id
        raise UsageError(f"--project: no project {value!r} in the local cache")

    return IssueFilter(
        status=frozenset(
            refs.listed_value(cache, value, PickerField.STATUS, "--status") for value in args.status
        ),
        priority=frozenset(
            refs.listed_value(cache, value, PickerField.PRIORITY, "--priority")
            for value in args.priority
        ),
        assignee=frozenset(refs.user_id(cache, value) for value in args.assignee),
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


def run_show(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        detail = cache.issue(refs.issue_id(cache, args.id))
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
        print(f"#{issue.number} {issue.title}" if issue.number is not None else issue.title)
        print(f"  id        {issue.id}")
        for label, value in (
            ("status", issue.status),
            ("priority", issue.priority),
            ("assignee", names.user(issue.assignee)),
            ("project", names.project(issue.project_id)),
            ("labels", ", ".join(issue.labels) or None),
            ("updated", issue.updated_at),
            ("sync", issue.sync_state.value),
        ):
            print(f"  {label:<9} {value if value is not None else '-'}")
        if detail.description:
            print()
            print(detail.description)
        for comment in detail.comments:
            print(f"\n--- {names.user(comment.author) or '?'} at {comment.created_at}")
            print(comment.body)
    return Exit.OK


def run_projects(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        rows = cache.projects()
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
