"""`tracker-tui projects create|edit|archive|delete`: the projects screen's writes from the
command line, through the same outbox (queued, then pushed unless `--no-push`), checked as
the screen's form checks them before anything is queued."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from cache import CacheError, EntryState, IssueFilter, JsonValue, OutboxEntry, Resource
from sync.permissions import PROJECTS_WRITE
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.read import run_projects
from tracker_tui.commands.write import add_push_option, open_for_writing, outcome
from tracker_tui.data.project_checks import key_problem, name_problem
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import ask, notice

if TYPE_CHECKING:
    from cache import Cache

PROJECT_HELP = "project key (WEB) or id"


def register(subparsers: Any, _issue_commands: Any) -> None:
    """`projects`: its list (a read, tracker_tui.commands.read) and its writes."""
    projects = subparsers.add_parser(
        "projects",
        help=SUMMARIES["projects"],
        description="Projects: listed from the local cache (offline); created, edited, "
        "archived and deleted through the outbox, like issue writes.",
    )
    project_commands = projects.add_subparsers(dest="projects_command", metavar="COMMAND")
    projects.set_defaults(run=lambda _args: _usage(projects))
    plist = project_commands.add_parser(
        "list", help="list projects", description="List the projects held in the local cache."
    )
    plist.add_argument("--json", action="store_true", help="JSON with the API's field names")
    plist.set_defaults(run=run_projects)
    create = project_commands.add_parser(
        "create",
        help="create a project",
        description="Create a project; prints its id.",
    )
    create.add_argument("--key", required=True, help="2 to 10 capital letters, e.g. WEB")
    create.add_argument("--name", required=True, help="1 to 100 characters")
    create.add_argument("--description", default="", help="what the project is for")
    add_push_option(create)
    create.set_defaults(run=run_create)

    edit = project_commands.add_parser("edit", help="change a project's key, name or description")
    edit.add_argument("project", metavar="PROJECT", help=PROJECT_HELP)
    edit.add_argument("--key", help="2 to 10 capital letters")
    edit.add_argument("--name", help="1 to 100 characters")
    edit.add_argument("--description", help="what the project is for")
    add_push_option(edit)
    edit.set_defaults(run=run_edit)

    archive = project_commands.add_parser(
        "archive",
        help="archive a project (or --restore it)",
        description="Archive a project: its issues stay, it is no longer offered for new "
        "ones. --restore makes it active again.",
    )
    archive.add_argument("project", metavar="PROJECT", help=PROJECT_HELP)
    archive.add_argument("--restore", action="store_true", help="make it active again")
    add_push_option(archive)
    archive.set_defaults(run=run_archive)

    delete = project_commands.add_parser(
        "delete",
        help="delete a project",
        description="Delete a project, after asking on a terminal; scripts pass --yes.",
    )
    delete.add_argument("project", metavar="PROJECT", help=PROJECT_HELP)
    delete.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    add_push_option(delete)
    delete.set_defaults(run=run_delete)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return Exit.USAGE


def project_id(cache: Cache, given: str) -> str:
    """The project a user means by its key (any case) or id."""
    for project in cache.reads.projects():
        if given == project.id or given.lower() == (project.key or "").lower():
            return project.id
    raise UsageError(f"no project {given!r} in the local cache (`tracker-tui projects list`)")


def _checked(key: str | None, name: str | None) -> None:
    """Refuse what the server would, before anything is queued (None: not given)."""
    if key is not None and (found := key_problem(key)):
        raise UsageError(f"--key: {found}")
    if name is not None and (found := name_problem(name)):
        raise UsageError(f"--name: {found}")


def _named(cache: Cache, project_id: str) -> str:
    for project in cache.reads.projects():
        if project.id == project_id:
            return f"{project.key or project.id} ({project.name})"
    return project_id


def _said(cache: Cache, entry: OutboxEntry | None, done: str) -> str:
    """`done` once the server has it, else where the write stands."""
    if entry is None:
        return f"already {done}" if done != "deleted" else done
    try:
        state = cache.outbox.entry(entry.id).state
    except CacheError:
        return done
    return {
        EntryState.DONE: done,
        EntryState.FAILED: "refused by the server (`tracker-tui outbox`)",
        EntryState.CONFLICT: "in conflict (`tracker-tui conflicts`)",
    }.get(state, "queued for the next sync")


def run_create(args: argparse.Namespace) -> int:
    _checked(args.key, args.name)
    fields: dict[str, JsonValue] = {
        "key": args.key,
        "name": args.name.strip(),
        "description": args.description,
    }
    with open_for_writing(args, PROJECTS_WRITE, "change projects") as cache:
        local = cache.outbox.create(Resource.PROJECTS, fields)
        entries = [e for e in cache.outbox.entries() if e.record_id == local]
        status = outcome(args, cache, entries)
        print(cache.outbox.resolve_id(local))
        return status


def run_edit(args: argparse.Namespace) -> int:
    _checked(args.key, args.name)
    given = {"key": args.key, "name": args.name, "description": args.description}
    fields: dict[str, JsonValue] = {
        name: value.strip() if name == "name" else value
        for name, value in given.items()
        if value is not None
    }
    if not fields:
        raise UsageError("nothing to change: give at least one of --key, --name, --description")
    with open_for_writing(args, PROJECTS_WRITE, "change projects") as cache:
        found = project_id(cache, args.project)
        entry = cache.outbox.update(Resource.PROJECTS, found, fields)
        status = outcome(args, cache, [] if entry is None else [entry])
        print(f"{_named(cache, found)} {_said(cache, entry, 'changed')}")
        return status


def run_archive(args: argparse.Namespace) -> int:
    state, done = ("active", "restored") if args.restore else ("archived", "archived")
    with open_for_writing(args, PROJECTS_WRITE, "change projects") as cache:
        found = project_id(cache, args.project)
        entry = cache.outbox.update(Resource.PROJECTS, found, {"state": state})
        status = outcome(args, cache, [] if entry is None else [entry])
        print(f"{_named(cache, found)} {_said(cache, entry, done)}")
        return status


def run_delete(args: argparse.Namespace) -> int:
    with open_for_writing(args, PROJECTS_WRITE, "change projects") as cache:
        found = project_id(cache, args.project)
        named = _named(cache, found)
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError(f"not deleting {named} without a yes: add --yes in scripts")
            issues = cache.reads.count(IssueFilter(project=frozenset({found})))
            answer = ask(f"Delete project {named}, which holds {issues:,} issues? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                notice(f"tracker-tui: {named} not deleted")
                return Exit.INTERRUPTED
        entry = cache.outbox.delete(Resource.PROJECTS, found)
        status = outcome(args, cache, [] if entry is None else [entry])
        print(f"{named} {_said(cache, entry, 'deleted')}")
        return status
