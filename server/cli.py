"""`tracker-server`: run the service, create keys, seed demo data.

Bad input ends with a one-line message on stderr and exit status 2 (argparse) or 1 (everything
else), never a traceback. A key is printed alone on the last line of stdout, so scripts can take
it with `tail -n 1`.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from server.db import Database
from server.keys import create_key, revoke_key
from server.models import PERMISSIONS, PLANS
from server.seed import seed_workspace

DEMO_WORKSPACE = "Demo"
DEMO_ISSUES = 1_000


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def _port(text: str) -> int:
    value = _count(text)
    if value > 65_535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return value


def _database(path: Path) -> Path:
    """The parent folder is created, so `--db .demo/tracker.db` works in a fresh clone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from server.app import create_app

    db = _database(args.db)
    if args.demo:
        print(_demo_key(db), flush=True)
    app = create_app(
        db,
        window_seconds=args.window_seconds,
        allow_private_webhooks=args.allow_private_webhooks,
    )
    # No proxy is part of this service: trusting `X-Forwarded-For` from loopback peers (uvicorn's
    # default) would let any local client pick the address its failed authentications count to.
    uvicorn.run(app, host=args.host, port=args.port, proxy_headers=False)
    return 0


def _demo_key(db: Path) -> str:
    """Seed the demo workspace into a database without workspaces; otherwise just make a key
    for the demo workspace, so restarting the demo keeps what was changed in it."""
    database = Database(db)
    try:
        with database.reading() as conn:
            (workspaces,) = conn.execute("SELECT count(*) FROM workspaces").fetchone()
    finally:
        database.close()
    if workspaces == 0:
        return seed_workspace(db, DEMO_WORKSPACE, DEMO_ISSUES)
    return create_key(db, DEMO_WORKSPACE, "demo")


def _keys_create(args: argparse.Namespace) -> int:
    key = create_key(
        _database(args.db),
        args.workspace,
        args.name,
        permissions=args.permissions,
        plan=args.plan,
        expires_in_days=args.expires_in,
        user=args.user,
    )
    print(key)
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    revoke_key(args.db, args.key)
    print("revoked")
    return 0


def _seed(args: argparse.Namespace) -> int:
    key = seed_workspace(_database(args.db), args.workspace, args.issues, plan=args.plan)
    print(f"seeded {args.issues} issues into workspace {args.workspace!r}")
    print(key)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracker-server", description="The reference issue-tracking service."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the service", description="Run the service.")
    serve.add_argument("--db", type=Path, required=True, help="SQLite database file")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=_port, default=8000, help="port to listen on")
    serve.add_argument(
        "--window-seconds",
        type=_positive_float,
        default=60.0,
        help="length of a rate-limit minute, in seconds (tests shrink it); scales the day "
        "and the webhook retry schedule too",
    )
    serve.add_argument(
        "--allow-private-webhooks",
        action="store_true",
        help="let webhooks call any host, not only loopback ones (trusted users only)",
    )
    serve.add_argument(
        "--demo",
        action="store_true",
        help="seed a demo workspace if the database is empty, and print a key for it",
    )
    serve.set_defaults(run=_serve)

    keys = commands.add_parser("keys", help="manage API keys", description="Manage API keys.")
    key_commands = keys.add_subparsers(dest="keys_command", required=True, metavar="COMMAND")
    create = key_commands.add_parser(
        "create",
        help="create a key and print it",
        description="Create an API key (and its workspace and user if missing); the key is "
        "printed once.",
    )
    create.add_argument("--db", type=Path, required=True, help="SQLite database file")
    create.add_argument("--workspace", required=True, help="workspace name")
    create.add_argument("--name", required=True, help="a descriptive name for the key")
    create.add_argument(
        "--permissions", nargs="+", choices=PERMISSIONS, metavar="P",
        help=f"permissions to grant (default: all): {', '.join(PERMISSIONS)}",
    )  # fmt: skip
    create.add_argument(
        "--plan", choices=PLANS, help="plan of the workspace (default: free for a new one)"
    )
    create.add_argument(
        "--expires-in", type=_positive_float, metavar="DAYS", help="expire after DAYS days"
    )
    create.add_argument("--user", help="member owning the key (default: the first member)")
    create.set_defaults(run=_keys_create)
    revoke = key_commands.add_parser(
        "revoke", help="revoke a key", description="Revoke an API key by its value."
    )
    revoke.add_argument("--db", type=Path, required=True, help="SQLite database file")
    revoke.add_argument("key", help="the key to revoke")
    revoke.set_defaults(run=_keys_revoke)

    seed = commands.add_parser(
        "seed",
        help="load demo data and print a key",
        description="Load realistic demo data into a workspace and print a key for it.",
    )
    seed.add_argument("--db", type=Path, required=True, help="SQLite database file")
    seed.add_argument("--issues", type=_count, required=True, help="number of issues")
    seed.add_argument("--workspace", default=DEMO_WORKSPACE, help="workspace name")
    seed.add_argument("--plan", choices=PLANS, help="plan of the workspace")
    seed.set_defaults(run=_seed)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except (ValueError, OSError, sqlite3.Error) as error:
        print(f"tracker-server: error: {error}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
