"""A key moved in config.toml's `[keymap]` works in a real terminal, the footer says so, and a
keymap that clashes stops the app before it takes the terminal, naming both bindings."""

from __future__ import annotations

from terminal_reading import highlighted_issue
from terminal_user import MOVE_WAIT, footer, on_issue
from terminal_world import Tracker

COLEMAK = """\
# Keys moved for a Colemak keyboard.
[keymap]
list.next = "n"       # was j
list.open = "l"
"""


def write_config(tracker: Tracker, text: str) -> None:
    config = tracker.home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(text)


def test_a_remapped_key_moves_the_highlight_and_opens_the_issue(tracker: Tracker) -> None:
    write_config(tracker, COLEMAK)
    app = tracker.open_synced_app()
    assert "l Open" in footer(app.text())
    first = highlighted_issue(app)
    app.press("n")
    app.wait_for(lambda _: highlighted_issue(app) not in (first, None), what="the move down")
    second = highlighted_issue(app)
    app.press("j")
    app.stays(lambda _: highlighted_issue(app) == second, seconds=MOVE_WAIT, what="j unbound")
    app.press("l")
    app.wait_for(lambda shown: on_issue(shown, second), what=f"the screen of #{second}")


def test_a_clashing_keymap_stops_the_app_before_it_starts(tracker: Tracker) -> None:
    write_config(tracker, '[keymap]\nlist.next = "e"\n')
    app = tracker.open_app()
    end = app.wait_exit()
    assert end.code == 2
    said = " ".join(app.after_app().split())
    assert "list.next (Next issue) and list.edit (Edit) would both be 'e'" in said
    assert "config.toml" in said
