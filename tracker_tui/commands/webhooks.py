"""`tracker-tui webhooks list | create | edit | delete | deliveries | redeliver` (online; the
key needs `webhooks:manage`).

A webhook's secret signs its deliveries; the server shows it in the answer to the creation
only, so `create` prints it once (unless it came from stdin with `--secret-stdin`: the user has
it already). A secret is never taken from argv, where every user of the machine sees it.
`redeliver` exists only where the server has the operation: the reference service has none
(docs/api.md#workspace-keys-and-webhook-administration), so it is tried, and a server without it
is said to lack it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from sync.permissions import WEBHOOKS
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.online import chosen_profile, note_permission, require, run_online
from tracker_tui.errors import UsageError
from tracker_tui.exit_codes import Exit
from tracker_tui.output import ask, notice, print_json, print_table

if TYPE_CHECKING:
    from sync.admin import AdminApi
    from sync.models import DeliveryAttempt, Webhook

EVENTS = (
    *("issue.created", "issue.updated", "issue.deleted"),
    *("project.created", "project.updated", "project.deleted"),
    *("comment.created", "comment.updated", "comment.deleted"),
)
FAILED_STATES = frozenset({"failed", "retrying"})


def register(subparsers: Any, issue_commands: Any) -> None:
    hooks = subparsers.add_parser(
        "webhooks",
        help=SUMMARIES["webhooks"],
        description=(
            "Webhook receivers of the workspace: the server POSTs a signed event to each on "
            "every change it subscribes to. The key needs `webhooks:manage`."
        ),
    )
    hooks.set_defaults(run=lambda _args: _usage(hooks))
    commands = hooks.add_subparsers(dest="webhooks_command", metavar="COMMAND")

    listing = commands.add_parser("list", help="list the webhooks (never their secrets)")
    listing.add_argument("--json", action="store_true", help="JSON with the API's field names")
    listing.set_defaults(run=run_list)

    create = commands.add_parser(
        "create",
        help="register a receiver; its secret is shown once",
        description=(
            "Register URL as a receiver of EVENTs (repeat --event; '*' for all). The server "
            "makes a signing secret and shows it this once, unless --secret-stdin gives one."
        ),
    )
    create.add_argument("url", metavar="URL", help="where the server POSTs events")
    _event_option(create, required=True)
    create.add_argument(
        "--secret-stdin", action="store_true", help="read the signing secret from stdin"
    )
    create.add_argument("--json", action="store_true", help="the webhook as JSON")
    create.set_defaults(run=run_create)

    edit = commands.add_parser(
        "edit",
        help="change a webhook's URL, events or secret",
        description="Change what is given; pending deliveries go to the new URL and secret.",
    )
    edit.add_argument("id", metavar="ID", help="the webhook's id (whk_...)")
    edit.add_argument("--url", help="a new receiver URL")
    _event_option(edit, required=False)
    edit.add_argument("--secret-stdin", action="store_true", help="a new secret, from stdin")
    edit.add_argument("--json", action="store_true", help="the webhook as JSON")
    edit.set_defaults(run=run_edit)

    delete = commands.add_parser(
        "delete",
        help="delete a webhook (asks first on a terminal)",
        description="Delete a webhook; its pending deliveries are dropped. Scripts pass --yes.",
    )
    delete.add_argument("id", metavar="ID", help="the webhook's id (whk_...)")
    delete.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    delete.set_defaults(run=run_delete)

    deliveries = commands.add_parser(
        "deliveries",
        help="a webhook's delivery attempts, with status and response code",
        description="Every attempt to deliver an event to the webhook, oldest first.",
    )
    deliveries.add_argument("id", metavar="ID", help="the webhook's id (whk_...)")
    deliveries.add_argument(
        "--failed", action="store_true", help="only attempts that failed or will be retried"
    )
    deliveries.add_argument("--json", action="store_true", help="JSON with the API's field names")
    deliveries.set_defaults(run=run_deliveries)

    redeliver = commands.add_parser(
        "redeliver",
        help="deliver an event again, where the server can",
        description=(
            "Ask the server to deliver an event to the webhook again. Not every server can "
            "(the reference service cannot: it retries failed deliveries by itself); this "
            "says so when it cannot."
        ),
    )
    redeliver.add_argument("id", metavar="ID", help="the webhook's id (whk_...)")
    redeliver.add_argument("event", metavar="EVENT_ID", help="the event's id (evt_...)")
    redeliver.set_defaults(run=run_redeliver)
    for parser in (hooks, listing, create, edit, delete, deliveries, redeliver):
        note_permission(parser, WEBHOOKS)


def _event_option(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--event",
        action="append",
        default=[],
        required=required,
        metavar="E",
        help=f"repeat for each: {', '.join(EVENTS)}, or '*' for all",
    )


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return Exit.USAGE


def _events(given: list[str]) -> list[str]:
    chosen = list(dict.fromkeys(event.strip() for event in given))
    unknown = [event for event in chosen if event not in (*EVENTS, "*")]
    if unknown:
        raise UsageError(f"unknown event {unknown[0]!r}: choose from {', '.join(EVENTS)}, or '*'")
    return chosen


def _url(url: str) -> str:
    url = url.strip()
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"a webhook URL starts with http:// or https://, not {url!r}")
    return url


def _secret_from_stdin() -> str:
    if sys.stdin.isatty():
        raise UsageError("--secret-stdin reads the secret from a pipe: `... < secret-file`")
    secret = sys.stdin.read().strip()
    if not secret or not secret.isprintable():
        raise UsageError("the secret read from stdin is empty or has control characters")
    return secret


def _as_json(hook: Webhook) -> dict[str, Any]:
    return hook.model_dump(mode="json", exclude={"secret"}, exclude_none=True)


def run_list(args: argparse.Namespace) -> int:
    resolved = chosen_profile(args)
    require(resolved, WEBHOOKS, "manage webhooks")

    async def work(api: AdminApi) -> list[Webhook]:
        return await api.list_webhooks()

    found = run_online(resolved, work)
    if args.json:
        print_json([_as_json(hook) for hook in found])
        return Exit.OK
    if not found:
        print("no webhooks: `tracker-tui webhooks create URL --event E` registers one")
        return Exit.OK
    rows = [
        {
            "id": hook.id,
            "url": hook.url,
            "events": ",".join(hook.events),
            "created_at": hook.created_at.strftime("%Y-%m-%d %H:%M") if hook.created_at else None,
        }
        for hook in found
    ]
    columns = [("id", "ID"), ("url", "URL"), ("events", "EVENTS"), ("created_at", "CREATED (UTC)")]
    print_table(rows, columns, widest={"url": 50})
    return Exit.OK


def run_create(args: argparse.Namespace) -> int:
    url, events = _url(args.url), _events(args.event)
    secret = _secret_from_stdin() if args.secret_stdin else None
    resolved = chosen_profile(args)
    require(resolved, WEBHOOKS, "manage webhooks")

    async def work(api: AdminApi) -> Webhook:
        return (await api.create_webhook(url, events, secret)).value

    made = run_online(resolved, work)
    shown = None if secret is not None else made.secret
    if args.json:
        print_json({**_as_json(made), **({"secret": shown} if shown else {})})
        return Exit.OK
    print(f"Registered webhook {made.id}: {made.url} on {', '.join(made.events)}")
    if shown:
        print(f"\n    {shown}\n")
        print("This signing secret is shown once: keep it where the receiver checks signatures.")
    return Exit.OK


def run_edit(args: argparse.Namespace) -> int:
    changes: dict[str, Any] = {}
    if args.url is not None:
        changes["url"] = _url(args.url)
    if args.event:
        changes["events"] = _events(args.event)
    if args.secret_stdin:
        changes["secret"] = _secret_from_stdin()
    if not changes:
        raise UsageError("nothing to change: give --url, --event or --secret-stdin")
    resolved = chosen_profile(args)
    require(resolved, WEBHOOKS, "manage webhooks")

    async def work(api: AdminApi) -> Webhook:
        return (await api.update_webhook(args.id, changes)).value

    changed = run_online(resolved, work)
    if args.json:
        print_json(_as_json(changed))
    else:
        print(f"Webhook {changed.id}: {changed.url} on {', '.join(changed.events)}")
    return Exit.OK


def run_delete(args: argparse.Namespace) -> int:
    resolved = chosen_profile(args)
    require(resolved, WEBHOOKS, "manage webhooks")
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"not deleting webhook {args.id} without a yes: add --yes in scripts")
        if ask(f"Delete webhook {args.id}? [y/N] ").strip().lower() not in ("y", "yes"):
            notice(f"tracker-tui: webhook {args.id} not deleted")
            return Exit.INTERRUPTED

    async def work(api: AdminApi) -> None:
        await api.delete_webhook(args.id)

    run_online(resolved, work)
    print(f"Deleted webhook {args.id}")
    return Exit.OK


def run_deliveries(args: argparse.Namespace) -> int:
    resolved = chosen_profile(args)
    require(resolved, WEBHOOKS, "manage webhooks")

    async def work(api: AdminApi) -> list[DeliveryAttempt]:
        return await api.deliveries(args.id)

    found = run_online(resolved, work)
    if args.failed:
        found = [attempt for attempt in found if attempt.status in FAILED_STATES]
    if args.json:
        print_json([attempt.model_dump(mode="json") for attempt in found])
        return Exit.OK
    if not found:
        print("no failed delivery attempts" if args.failed else "no delivery attempts yet")
        return Exit.OK
    rows = [
        {
            "event": attempt.event_id,
            "type": attempt.event_type,
            "attempt": attempt.attempt,
            "status": attempt.status,
            "code": attempt.response_code,
            "at": _when(attempt),
            "error": attempt.error,
        }
        for attempt in found
    ]
    columns = [("event", "EVENT"), ("type", "TYPE"), ("attempt", "#"), ("status", "STATUS")]
    print_table(
        rows,
        [*columns, ("code", "CODE"), ("at", "AT (UTC)"), ("error", "ERROR")],
        widest={"error": 40},
    )
    return Exit.OK


def _when(attempt: DeliveryAttempt) -> str | None:
    at = attempt.attempted_at or attempt.scheduled_at
    return at.strftime("%Y-%m-%d %H:%M:%S") if at else None


def run_redeliver(args: argparse.Namespace) -> int:
    resolved = chosen_profile(args)
    require(resolved, WEBHOOKS, "manage webhooks")

    async def work(api: AdminApi) -> None:
        await api.redeliver(args.id, args.event)

    run_online(resolved, work)
    print(f"Event {args.event} is queued for delivery to webhook {args.id} again")
    return Exit.OK
