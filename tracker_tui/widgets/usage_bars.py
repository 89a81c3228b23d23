"""The settings screen's usage tab: a bar per rate limit, what background sync will still
spend, and the day's alert (`tracker_tui.data.usage` measures; this draws)."""

from __future__ import annotations

import time

from textual.widgets import Static

from tracker_tui.data.usage import Usage

BAR = 24


class UsageBars(Static):
    """One line per limit: name, window, bar, used of limit; then what is done about it."""

    def show(self, usage: Usage) -> None:
        lines = [
            f"{limit.name:<18} {limit.window:<6} {_bar(limit.share)} "
            f"{limit.used:>6}/{limit.limit:<6}"
            for limit in (*usage.limits, usage.background)
        ]
        lines.append("")
        lines.append(usage.day_window.describe(time.time()).capitalize() + ".")
        lines.append(
            f"Background sync will spend at most {usage.background_will_spend} more today "
            f"(a poll every {usage.poll_every:.0f} s); the rest is yours."
        )
        alert = usage.alert_text()
        lines.append(
            f"[b $warning]{alert}[/]"
            if alert
            else f"Alert at {usage.alert_percent}% of the day (ui.usage_alert_percent)."
        )
        self.update("\n".join(lines))


def _bar(share: float) -> str:
    filled = round(share * BAR)
    return "█" * filled + "░" * (BAR - filled)
