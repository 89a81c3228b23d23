"""`tracker-tui status` (what the cache knows, offline) and `doctor` (why something fails)."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from accounts.credentials import ResolvedProfile, resolve_profile
from accounts.errors import ConfigError
from cache import ACTIVE_STATES, EntryState, Resource
from tracker_tui import errors
from tracker_tui.collector import collect_again
from tracker_tui.command_summaries import SUMMARIES
from tracker_tui.commands.read import open_profile_cache
from tracker_tui.errors import describe
from tracker_tui.exit_codes import Exit
from tracker_tui.output import print_json

if TYPE_CHECKING:
    from sync.features import ServerFeatures
    from sync.ratelimit import Plan
    from sync.ratelimit.learned import Learned

DAY = 86_400.0
MINUTE = 60.0


def register(subparsers: Any, issue_commands: Any) -> None:
    status = subparsers.add_parser(
        "status",
        help=SUMMARIES["status"],
        description=(
            "What the local cache knows: when it last synced, where each resource's cursor "
            "stands, how many local edits wait in the outbox, how much of the rate limits "
            "this profile used, and the server's plan and features."
        ),
    )
    status.add_argument("--json", action="store_true", help="print as JSON")
    status.set_defaults(run=run_status)
    doctor = subparsers.add_parser(
        "doctor",
        help=SUMMARIES["doctor"],
        description=(
            "Which keyring backend is used and why, where config and data live, the profiles, "
            "the local cache's integrity and whether the server answers with the key."
        ),
    )
    doctor.set_defaults(run=run_doctor)


def run_status(args: argparse.Namespace) -> int:
    # Here, not at the top: every command imports this module (docs/architecture.md#start-up).
    from sync.backfill_progress import backfill_text
    from sync.backfill_progress import pending as backfill_pending
    from sync.backfill_progress import progress as backfill_progress
    from sync.remembered import (
        LAST_PULL_STATE_KEY,
        remembered_features,
        remembered_limits,
        unreadable_records,
    )

    with open_profile_cache(args) as cache:
        now = time.time()
        last = cache.state.get(LAST_PULL_STATE_KEY)
        features = remembered_features(cache)
        plan = _plan(remembered_limits(cache), features)
        used_minute = len(cache.requests.request_times(now - MINUTE))
        used_day = len(cache.requests.request_times(now - DAY))
        cursors = {}
        for resource in (Resource.ISSUES, Resource.PROJECTS, Resource.USERS, Resource.COMMENTS):
            cursor = cache.server.cursor(resource)
            cursors[resource.value] = {
                "cursor": cursor.updated_at if cursor else None,
                "records": cache.server.local_count(resource),
                "last_full_sweep": cache.server.last_full_sweep(resource),
            }
        backfill = backfill_progress(cache) if backfill_pending(cache) else None
        pending = len(cache.outbox.entries(ACTIVE_STATES))
        unsure = len(cache.outbox.entries((EntryState.UNSURE,)))
        unreadable = unreadable_records(cache)
    state: dict[str, Any] = {
        "last_sync": last if isinstance(last, dict) else None,
        "resources": cursors,
        "pending_writes": pending,
        "unsure_writes": unsure,
        "plan": plan.name,
        "limits_left": {
            "minute": max(0, plan.per_minute - used_minute),
            "day": max(0, plan.per_day - used_day),
        },
        "features": None if features is None else _feature_flags(features),
        "backfill": None if backfill is None else backfill.to_json(),
        "unreadable": [item.to_json() for item in unreadable],
    }
    if args.json:
        print_json(state)
        return Exit.OK
    at = state["last_sync"].get("at") if state["last_sync"] else None
    print(f"last sync      {_ago(now, at) if isinstance(at, int | float) else 'never'}")
    doubt = f" ({unsure} may be a duplicate: see `tracker-tui outbox`)" if unsure else ""
    print(f"pending edits  {pending}{doubt}")
    left = state["limits_left"]
    print(f"limits left    {left['minute']}/{plan.per_minute} this minute, "
          f"{left['day']}/{plan.per_day} today ({plan.name} plan)")  # fmt: skip
    for name, info in cursors.items():
        print(f"{name:<14} {info['records']} records, cursor {info['cursor'] or '-'}")
    shown = backfill_text(backfill, long=True)
    if shown:
        print(f"{'backfill':<14} {shown.removeprefix('backfill ')}")
    if unreadable:
        print(f"{'unreadable':<14} {len(unreadable)} records the server sent could not be read "
              "(the cache holds no copy, or an older one):")  # fmt: skip
        for item in unreadable:
            print(f"{'':<14} {item.resource} {item.id or '(no id)'}: {item.reason}")
    if features is not None:
        flags = _feature_flags(features)
        print("features       " + (", ".join(k for k, v in flags.items() if v is True) or "-"))
    return Exit.OK


def _plan(learned: Learned | None, features: ServerFeatures | None) -> Plan:
    """The limits the sync engine last learned (from `/me` or the rate-limit headers), else the
    plan `/me` named when the server was probed, else Free, as the engine itself assumes."""
    from sync.ratelimit.plans import PLANS, Plan

    if learned is not None and learned.plan in PLANS:
        return Plan(learned.plan, learned.per_minute, learned.per_day)
    return PLANS.get((features.plan if features else None) or "free", PLANS["free"])


def _feature_flags(features: ServerFeatures) -> dict[str, Any]:
    names = (
        *("me", "updated_after", "tombstones", "keyset_order", "etag", "bulk"),
        *("comments_list", "users_list", "idempotency", "page_size", "plan"),
    )
    return {name: getattr(features, name) for name in names}


def _ago(now: float, at: float) -> str:
    seconds = max(0.0, now - at)
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def run_doctor(args: argparse.Namespace) -> int:
    from accounts.doctor import Level, doctor_report

    failed = False
    said: list[str] = []
    for line in doctor_report():
        failed |= line.level is Level.ERROR
        said.append(line.text)
        print(f"[{line.level.value:<5}] {line.topic:<9} {line.text}")
    try:
        resolved = resolve_profile(args.profile)
    except ConfigError as error:
        print(f"[info ] {'profile':<9} none in use: {describe(error)}")
        return Exit.FAILED if failed else Exit.OK
    for warning in resolved.warnings:
        if not any(text.startswith(warning) for text in said):
            print(f"[warn ] {'profile':<9} {warning}")
    try:
        with open_profile_cache(args) as cache:
            found = cache.integrity_check()
            ok = found == ["ok"]
            text = f"{cache.path} is intact" if ok else f"{cache.path}: {'; '.join(found)}"
    except errors.EXPECTED as error:
        ok, text = False, describe(error)
    failed |= not ok
    print(f"[{'ok' if ok else 'error':<5}] {'cache':<9} {text}")
    reached, text = _reach(resolved)
    failed |= not reached
    print(f"[{'ok' if reached else 'error':<5}] {'server':<9} {text}")
    return Exit.FAILED if failed else Exit.OK


def _reach(resolved: ResolvedProfile) -> tuple[bool, str]:
    key = resolved.key
    if key is None:
        return False, f"{resolved.server}: no API key to try it with (log in or set one)"

    import asyncio

    from sync.client import ApiClient

    async def probe() -> None:
        async with ApiClient(resolved.server, key, timeout=5.0) as client:
            await client.list_issues(per_page=1)

    collect_again()
    try:
        asyncio.run(probe())
    except errors.EXPECTED as error:
        return False, f"{resolved.server}: {describe(error)}"
    source = resolved.key_source.value
    return True, f"{resolved.server} answers and accepts the key (from {source})"
