"""The day's usage alert: its threshold and what the status bar says past it.

Apart from `tracker_tui.data.usage` (which measures use from the request log and the limits
the limiter learned) because the status bar of the first screen needs only this, and that
module brings the rate limiter's tables with it (docs/architecture.md#start-up).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

DEFAULT_ALERT_PERCENT = 80
ALERT_SETTING = "usage_alert_percent"
"""The profile's `ui` member that moves the alert (a whole percentage, 1 to 100)."""


def day_used_percent(left: int | None, limit: int | None) -> int | None:
    """The day's use in whole percent, from what a status report says is left of it."""
    if left is None or limit is None or limit <= 0:
        return None
    return math.floor(100 * max(0, limit - left) / limit)


def alert_words(percent: int, *, short: bool = False) -> str:
    """What the status bar says once the day's use passes the alert, and what the client
    does about it (the limiter's rules, `sync.ratelimit.limits`)."""
    if short:
        return f"⚠ day budget {percent}% used"
    return f"⚠ day budget {percent}%: background sync slows, stops at its half; yours is kept"


def alert_percent(ui: Mapping[str, Any]) -> int:
    """The profile's alert threshold, or the default when unset or not a percentage."""
    value = ui.get(ALERT_SETTING)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 100:
        return value
    return DEFAULT_ALERT_PERCENT
