"""What the app's screens say, read off the terminal's text and colours.

`terminal_screen` knows terminals; this module knows this app: where its status bar is, how a
list dialog draws its options, which issue row is highlighted or marked, which keys a help
screen lists. Everything here reads what a user would look at, never the widget tree.
"""

from __future__ import annotations

import collections
import re

from terminal_screen import ScreenTimeout, Terminal


def dialog_options(shown: str, title: str) -> list[str]:
    """The options of the list in the dialog titled `title` (between its ▔ and ▁ edges).

    Only the columns inside that dialog's frame are read, so a dialog opened over another
    (a picker over the bulk dialog) is read alone."""
    lines = shown.split("\n")
    for y, line in enumerate(lines):
        found = re.search(rf"│ {re.escape(title)}(\s|$)", line)
        if found is None or y == 0:
            continue
        left = found.start()
        top = lines[y - 1]
        if top[left : left + 1] != "╭" or "╮" not in top[left:]:
            continue
        right = top.index("╮", left)
        return _options([row[left + 1 : right] for row in lines[y + 1 :]])
    return []


def _options(rows: list[str]) -> list[str]:
    options: list[str] = []
    for row in rows:
        inside = re.search(r"▊(.*)▎", row)
        if inside is None:
            if options:
                break
            continue
        text = inside.group(1).strip()
        if set(text) <= {"▔"}:
            continue
        if set(text) <= {"▁"}:
            break
        options.append(text)
    return options


def status_line(shown: str) -> str:
    """The status bar: the row above the footer on every screen of the app."""
    lines = shown.split("\n")
    return lines[-2].strip() if len(lines) >= 2 else ""


ISSUE_ROW = re.compile(r"^[^\w#]{0,4}#(\d+)\s")
"""A row of the issue list: glyphs (the mark, sync state), then the issue's number."""


def highlighted(terminal: Terminal) -> list[str]:
    """The issue rows drawn in the cursor's style: bold, on a background most rows lack.

    The list draws every row alike but the cursor's (marked rows get a background of their
    own, not bold); this finds it from the colours on screen, whatever the theme.
    """
    lines, styles = terminal.lines(), terminal.row_styles()
    rows = [y for y, line in enumerate(lines) if ISSUE_ROW.search(line)]
    if not rows:
        return []
    usual = collections.Counter(styles[y][1] for y in rows).most_common(1)[0][0]
    return [lines[y].rstrip() for y in rows if styles[y][1] != usual and styles[y][2]]


def highlighted_issue(terminal: Terminal) -> int | None:
    """The number of the one highlighted issue row, or None when there is not exactly one."""
    rows = highlighted(terminal)
    if len(rows) != 1:
        return None
    found = ISSUE_ROW.search(rows[0])
    return int(found.group(1)) if found else None


def shown_highlight(terminal: Terminal, timeout: float = 5.0) -> int | None:
    """The highlighted issue once one is drawn (a frame being redrawn may show none for a
    moment); None when none shows within `timeout`."""
    try:
        terminal.wait_for(lambda _: highlighted_issue(terminal) is not None, timeout=timeout)
    except ScreenTimeout:
        return None
    return highlighted_issue(terminal)


def marked_issues(shown: str) -> set[int]:
    """The numbers of the rows drawn with the mark glyph."""
    found = (ISSUE_ROW.search(line) for line in shown.split("\n") if "●" in line.split("#")[0])
    return {int(match.group(1)) for match in found if match}


def visible_issues(shown: str) -> list[int]:
    """The issue numbers in the list, top to bottom."""
    found = (ISSUE_ROW.search(line) for line in shown.split("\n"))
    return [int(match.group(1)) for match in found if match]


DISPLAYED = {
    "⏎": "enter",
    "esc": "escape",
    "space": "space",
    "tab": "tab",
    "shift+tab": "shift+tab",
    "↑": "up",
    "↓": "down",
    "←": "left",
    "→": "right",
    "shift+↑": "shift+up",
    "shift+↓": "shift+down",
    "pgup": "pageup",
    "pgdn": "pagedown",
    "home": "home",
    "end": "end",
}
"""How the help screen writes a key (`App.get_key_display`), and the key's name."""
NEVER = {"ctrl+q", "ctrl+c", "ctrl+p", "ctrl+z", "super+c"}
"""Keys a random walk never presses: quitting is not a crash, the palette runs any command by
name, ctrl+z suspends the process."""


def help_keys(text: str) -> list[str]:
    """The keys listed on a help screen: each line holds one or two `keys  description` pairs
    (keys separated by one space, columns by two or more)."""
    found: list[str] = []
    for line in text.split("\n"):
        inside = line.strip().strip("│").strip()
        cells = [cell for cell in re.split(r"\s{2,}", inside) if cell]
        for keys in cells[0::2]:
            names = [_key_name(token) for token in keys.split(" ")]
            if names and all(names):
                found += [name for name in names if name and name not in NEVER]
    return list(dict.fromkeys(found))


def _key_name(token: str) -> str | None:
    if token in DISPLAYED:
        return DISPLAYED[token]
    if token.startswith("^") and len(token) == 2:
        return f"ctrl+{token[1]}"
    if len(token) == 1 and token.isascii() and token.isprintable():
        return token
    return None
