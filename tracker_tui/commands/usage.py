"""`tracker-tui usage [--json]`: this profile's use of each rate limit, offline.

From the request log every process of the profile writes and the limits the rate limiter last
learned (`tracker_tui.data.usage`): the plan's minute and day, each per-endpoint minute, and
what background sync will still spend of its share of the day.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from accounts.credentials import keyless_profile
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.read import open_profile_cache
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_json, print_table

if TYPE_CHECKING:
    from tracker_tui.data.usage import LimitUse


def register(subparsers: Any, issue_commands: Any) -> None:
    usage = subparsers.add_parser(
        "usage",
        help=SUMMARIES["usage"],
        description=(
            "How much of each rate limit this profile used (every process of it: the app, "
            "sync, commands) in the last minute and today, by the client's own request log "
            "and the limits it learned from the server; and what background sync will still "
            "spend of its share (half of the day's limit). Today is the server's day where it "
            "is known (the reset of its day window, or 00:00 UTC on a server with the "
            "reference service's extensions), else the last 24 h; the output says which. "
            "Requests made elsewhere with the same key are not seen here."
        ),
    )
    usage.add_argument("--json", action="store_true", help="print as JSON")
    usage.set_defaults(run=run_usage)


def _alert_setting(args: argparse.Namespace) -> int:
    profile = keyless_profile(args.profile)
    from tracker_tui.data.usage import alert_percent

    return alert_percent(profile.ui if profile is not None else {})


def run_usage(args: argparse.Namespace) -> int:
    with open_profile_cache(args) as cache:
        from tracker_tui.data.usage import measure_usage  # the rate limits: only for this

        usage = measure_usage(cache, time.time(), alert_at=_alert_setting(args))
    if args.json:
        print_json(usage.to_json())
        return Exit.OK
    rows = [_row(limit) for limit in (*usage.limits, usage.background)]
    columns = [("name", "LIMIT"), ("window", "PER"), ("used", "USED"), ("limit", "OF")]
    print_table(rows, [*columns, ("left", "LEFT"), ("bar", ""), ("note", "")])
    source = {"me": "from /me", "headers": "from the rate-limit headers", "stored": "learned"}
    said = source.get(usage.plan_source, "assumed until the server says")
    print(f"\nplan: {usage.plan} ({said}); minute = the last 60 s")
    print(usage.day_window.describe(time.time()))
    print(
        f"background sync will spend at most {usage.background_will_spend} more requests in the "
        f"last 24 h as the client counts them, one poll every {usage.poll_every:.0f} s; the "
        "rest is yours"
    )
    alert = usage.alert_text()
    if alert:
        print(f"alert (at {usage.alert_percent}%): {alert}")
    return Exit.OK


def _row(limit: LimitUse) -> dict[str, Any]:
    filled = round(limit.share * 20)
    note = ""
    if limit.blocked_until is not None:
        note = f"spent until {datetime.fromtimestamp(limit.blocked_until):%H:%M:%S}"
    return {
        "name": limit.name,
        "window": limit.window,
        "used": limit.used,
        "limit": limit.limit,
        "left": limit.left,
        "bar": "#" * filled + "." * (20 - filled),
        "note": note,
    }
