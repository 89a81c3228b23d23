"""Remapped keys (issue 17, configuring): every binding has an id, `[keymap]` moves a binding to
other keys, the footer, help and palette show the keys as moved, and a keymap that cannot work
(an unknown id, two bindings of a screen on one key) is refused before the app starts."""

from __future__ import annotations

import re

import pytest
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey
from tui_support import AppFactory, screen_lines, settle

from tracker_tui.app import TrackerApp
from tracker_tui.bindings_table import app_bindings, unnamed_bindings
from tracker_tui.data.keymap import KeymapError, parse_keymap
from tracker_tui.screens.copy_menu import CopyMenu
from tracker_tui.screens.help import HelpScreen
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.widgets.issue_list import IssueList

SIZE = (120, 36)


def test_every_binding_has_an_id_naming_its_screen_and_action() -> None:
    assert unnamed_bindings() == []
    ids = [binding.id for binding in app_bindings()]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 89
    assert not [ident for ident in ids if not re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", ident)]


def test_the_app_classes_bindings_are_all_in_the_table() -> None:
    """The app's mixins (copy and open, navigation) bind keys on every screen: a keymap naming
    one (`app.copy_menu`) was refused as an unknown id while their module was not read."""
    ids = {binding.id for binding in app_bindings()}
    declared = [
        binding.id
        for cls in TrackerApp.__mro__
        if cls.__module__.startswith("tracker_tui.")
        for binding in Binding.make_bindings(cls.__dict__.get("BINDINGS", ()))
    ]
    assert {"app.copy_menu", "app.open_in_browser", "app.jump", "app.help"} <= set(declared)
    assert [ident for ident in declared if ident not in ids] == []


async def test_the_copy_menus_key_can_be_moved(app_factory: AppFactory) -> None:
    app = app_factory(keymap=parse_keymap({"app": {"copy_menu": "ctrl+y"}}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert isinstance(app.screen, CopyMenu)


async def test_a_remapped_key_works_and_the_old_one_no_longer_does(
    app_factory: AppFactory,
) -> None:
    app = app_factory(keymap=parse_keymap({"list": {"next": "n", "open": "l"}}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = app.screen.query_one(IssueList)
        assert issues.cursor == 0
        await pilot.press("n", "n")
        await settle(pilot)
        assert issues.cursor == 2
        await pilot.press("j")
        await settle(pilot)
        assert issues.cursor == 2, "j was list.next's key; the keymap moved it to n"
        await pilot.press("down")
        await settle(pilot)
        assert issues.cursor == 2, "a remap replaces every key of the binding"
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)


async def test_footer_help_and_palette_show_the_remapped_keys(app_factory: AppFactory) -> None:
    keymap = parse_keymap({"list": {"search": "ctrl+f", "open": "l"}, "app": {"projects": "f2"}})
    app = app_factory(keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = " ".join(screen_lines(app)[-2:])
        assert "^f Search" in footer
        assert "/ Search" not in footer
        assert "l Open" in footer
        assert app.screen.query_one(Footer) is not None
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        entries = {
            entry.description: entry.keys for group in app.screen.groups for entry in group.entries
        }
        assert entries["Search"] == ("^f",)
        assert entries["Open"] == ("l",)
        assert entries["Projects"] == ("f2",)
        rows = next(group for group in app.screen.groups if group.title == "Issue list")
        descriptions = [entry.description for entry in rows.entries]
        assert descriptions.index("Open") < descriptions.index("Mark"), "as declared, not last"
        await pilot.press("escape")
        commands = {command.title: command.help for command in app.get_system_commands(app.screen)}
        assert commands["Projects"] == "key: f2"
        assert commands["Sync panel"] == "key: y"


@pytest.mark.parametrize(
    ("keymap", "named"),
    [
        ({"list": {"edit": "c"}}, ("list.edit", "list.create", "'c'")),
        ({"list": {"next": "slash"}}, ("list.next", "list.search", "'slash'")),
        ({"app": {"sync_panel": "e"}}, ("app.sync_panel", "detail.edit", "list.edit")),
        ({"form": {"save": "space"}}, ("form.save", "picker.toggle")),
    ],
)
async def test_a_clash_fails_at_start_naming_both_bindings(
    app_factory: AppFactory, keymap: dict[str, dict[str, str]], named: tuple[str, ...]
) -> None:
    with pytest.raises(KeymapError) as refused:
        app_factory(keymap=parse_keymap(keymap))
    for name in named:
        assert name in str(refused.value)


async def test_swapping_two_keys_is_no_clash(app_factory: AppFactory) -> None:
    app = app_factory(keymap=parse_keymap({"list": {"next": "k", "previous": "j"}}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        issues = app.screen.query_one(IssueList)
        await pilot.press("k", "k", "k", "j")
        await settle(pilot)
        assert issues.cursor == 2


def test_an_unknown_id_names_the_nearest(app_factory: AppFactory) -> None:
    with pytest.raises(KeymapError) as refused:
        app_factory(keymap=parse_keymap({"list": {"nxet": "n"}, "detial": {"edit": "E"}}))
    message = str(refused.value)
    assert "2 problems" in message
    assert "'list.nxet'; nearest: list.next" in message
    assert "'detial.edit'; nearest: detail.edit" in message


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"list": {"next": "ctlr+n"}}, "'ctlr' is no modifier"),
        ({"list": {"next": "pgdown"}}, "'pgdown' is no key name; did you mean 'pagedown'?"),
        ({"app": {"help": "F1"}}, "'F1' is no key name; did you mean 'f1'?"),
        ({"list": {"next": 3}}, "list.next must be keys"),
        ({"list": {"next": ""}}, "list.next must be keys"),
    ],
)
def test_a_key_no_terminal_sends_is_refused(table: dict[str, object], problem: str) -> None:
    with pytest.raises(KeymapError, match=re.escape(problem)):
        parse_keymap(table)


def test_the_keymap_reads_every_way_toml_writes_it() -> None:
    assert parse_keymap({"list.next": "n", "list": {"previous": ["e", "up"]}, "app": {}}) == {
        "list.next": "n",
        "list.previous": "e,up",
    }
    assert parse_keymap({"app": {"help": "?", "settings": ","}}) == {
        "app.help": "question_mark",
        "app.settings": "comma",
    }


async def test_the_help_says_which_keys_close_it(app_factory: AppFactory) -> None:
    app = app_factory(keymap=parse_keymap({"help": {"close": ["escape", "h"]}}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert "esc or h to close" in "\n".join(screen_lines(app))
        await pilot.press("q")
        assert isinstance(app.screen, HelpScreen), "q no longer closes it"
        await pilot.press("h")
        assert not isinstance(app.screen, HelpScreen)


async def footer_keys(app_factory: AppFactory, keymap: dict[str, str]) -> list[list[str]]:
    """The footer's keys, left to right, on the list and then on an issue's screen."""
    app = app_factory(keymap=keymap)
    shown: list[list[str]] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _screen in ("list", "detail"):
            keys = app.screen.query_one(Footer).query(FooterKey)
            shown.append([f"{key.key_display} {key.description}" for key in keys])
            await pilot.press(keymap.get("list.open", "enter"))
            await settle(pilot)
    return shown


async def test_a_remapped_key_keeps_its_place_in_the_footer(app_factory: AppFactory) -> None:
    """Textual re-adds a moved binding last; the footer lists it where it is declared."""
    default = await footer_keys(app_factory, {})
    keymap = {"list": {"search": "ctrl+f", "open": "l"}, "detail": {"edit": "w"}}
    moved = await footer_keys(app_factory, parse_keymap(keymap))
    on_list = {"/ Search": "^f Search", "⏎ Open": "l Open"}
    assert "^f Search" in moved[0]
    assert moved[0] == [on_list.get(entry, entry) for entry in default[0]], "as declared"
    assert "w Edit" in moved[1]
    assert moved[1] == ["w Edit" if e == "e Edit" else e for e in default[1]], "as declared"
