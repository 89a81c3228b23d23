"""NO_COLOR (no-color.org) in a real terminal: the app draws in shades of grey only, while
without it the highlighted row has a colour."""

from __future__ import annotations

import re

from terminal_reading import highlighted_issue
from terminal_world import Tracker

SGR = re.compile(rb"\x1b\[([0-9;]*)m")
CUBE = (0, 95, 135, 175, 215, 255)


def _grey_256(n: int) -> bool:
    if n in (0, 7, 8, 15) or n >= 232:
        return True
    if 16 <= n <= 231:
        r, g, b = CUBE[(n - 16) // 36], CUBE[(n - 16) // 6 % 6], CUBE[(n - 16) % 6]
        return r == g == b
    return False


def colours(output: bytes) -> list[str]:
    """Every foreground or background colour set, as `5;N`, `2;R;G;B` or the basic code, that
    is not a shade of grey."""
    found: list[str] = []
    for match in SGR.finditer(output):
        params = [int(p) if p else 0 for p in match.group(1).split(b";")]
        i = 0
        while i < len(params):
            code = params[i]
            if code in (38, 48) and i + 2 < len(params) and params[i + 1] == 5:
                if not _grey_256(params[i + 2]):
                    found.append(f"5;{params[i + 2]}")
                i += 3
            elif code in (38, 48) and i + 4 < len(params) and params[i + 1] == 2:
                r, g, b = params[i + 2 : i + 5]
                if not r == g == b:
                    found.append(f"2;{r};{g};{b}")
                i += 5
            else:
                if code in (*range(31, 37), *range(41, 47), *range(91, 97), *range(101, 107)):
                    found.append(str(code))
                i += 1
    return found


def synced_app_output(tracker: Tracker, **env: str) -> bytes:
    app = tracker.open_app(env=tracker.env(**env))
    app.wait_for(
        lambda shown: "online" in shown and highlighted_issue(app) is not None,
        timeout=60,
        what="the list, online",
    )
    app.press("j")
    app.wait_for(lambda _: highlighted_issue(app) is not None, what="the highlight")
    output = app.output()
    app.press("ctrl+q")
    app.wait_exit()
    return output


def test_no_color_draws_the_app_in_greys(tracker: Tracker) -> None:
    assert colours(synced_app_output(tracker)), "the app has colours without NO_COLOR"
    assert colours(synced_app_output(tracker, NO_COLOR="1")) == []
