"""The sync engine's report in words, the same on every screen that shows it.

The status bar of each screen and the sync panel draw the connection, the outbox counts and a
pull's progress with these functions, from the one report the app keeps (`SyncStatusChanged`),
so no screen can say "online" while another says "offline". Countdowns (a wait for the rate
limit, the next retry) are computed against the `now` given, from `time.monotonic()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from sync.backfill_progress import backfill_text
from sync.connection import Connection, ConnectionState, seconds_until
from tracker_tui.data.outbox_counts import OutboxCounts

if TYPE_CHECKING:
    from sync.pull import PullProgress

__all__ = ["backfill_text"]

_LOOKS: dict[Connection, tuple[str, str]] = {
    Connection.CONNECTING: ("◌ connecting", "$text-muted"),
    Connection.ONLINE: ("● online", "$text-success"),
    Connection.OFFLINE: ("○ offline", "$text-warning"),
    Connection.SERVER_ERROR: ("○ server failing", "$text-warning"),
    Connection.KEY_REFUSED: ("✗ key refused", "$text-error"),
    Connection.RATE_LIMITED: ("◷ waiting for the rate limit", "$text-warning"),
}
NO_ENGINE = ("○ offline", "$text-warning")
"""Before the engine reports, or with no engine at all."""


def has_countdown(state: ConnectionState | None) -> bool:
    """Whether the connection's text changes as time passes (redraw it every second)."""
    if state is None:
        return False
    return state.until is not None or state.retry_at is not None


def connection_text(state: ConnectionState | None, now: float) -> Content:
    """ "● online", "○ offline · retry in 12 s", "◷ waiting for the rate limit, 8 s"."""
    if state is None:
        return Content.styled(*NO_ENGINE)
    text, style = _LOOKS[state.kind]
    if state.kind is Connection.RATE_LIMITED and state.until is not None:
        text += f", {seconds_until(state.until, now)} s"
    parts: list[str | tuple[str, str]] = [(text, style)]
    if state.retry_at is not None and state.kind is not Connection.RATE_LIMITED:
        parts.append(f" · retry in {seconds_until(state.retry_at, now)} s")
    return Content.assemble(*parts)


def outbox_text(counts: OutboxCounts | None) -> Content:
    """ "↑ 3 pending", then "· 1 failed", "· 2 conflicts" and "· 1 unsure" when there are any."""
    if counts is None:
        return Content("↑ — pending")
    parts: list[str | tuple[str, str]] = [f"↑ {counts.pending:,} pending"]
    if counts.failed:
        parts += [" · ", (f"{counts.failed:,} failed", "$text-error")]
    if counts.conflicts:
        noun = "conflict" if counts.conflicts == 1 else "conflicts"
        parts += [" · ", (f"{counts.conflicts:,} {noun}", "$text-warning")]
    if counts.unsure:
        parts += [" · ", (f"{counts.unsure:,} unsure", "$text-error")]
    return Content.assemble(*parts)


def progress_text(progress: PullProgress | None) -> str | None:
    """ "syncing issues 1,200 of 10,000"; None when no pull runs."""
    if progress is None:
        return None
    doing = "checking for deletions:" if progress.phase == "sweep" else "syncing"
    done = f"{doing} {progress.resource} {progress.received:,}"
    if progress.total is None:
        return done
    return f"{done} of {max(progress.total, progress.received):,}"


def budget_text(minute: int | None, day: int | None) -> str:
    """ "58/min 9,800/day", with dashes for what is unknown."""

    def left(value: int | None) -> str:
        return "—" if value is None else f"{value:,}"

    return f"{left(minute)}/min {left(day)}/day"
