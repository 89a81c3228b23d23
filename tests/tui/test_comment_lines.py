"""Multi-line comments (issue 17, writing): a comment typed on several lines shows on several
lines, as GitHub draws one, where CommonMark would join single newlines into one paragraph; lists
and code blocks stay Markdown. Descriptions are drawn the same way."""

from __future__ import annotations

from tui_support import AppFactory, screen_lines, settle

from cache import Cache, Resource
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.widgets.markdown_text import line_break_parser

SIZE = (100, 50)
TOP = "iss_000000"
"""The most recently updated demo issue: the list's first row."""


def inline_types(source: str) -> list[list[str]]:
    parsed = line_break_parser().parse(source)
    return [[child.type for child in token.children or ()] for token in parsed if token.children]


def test_a_single_newline_is_a_line_break_and_markdown_stays_markdown() -> None:
    assert inline_types("one\ntwo") == [["text", "hardbreak", "text"]]
    parsed = line_break_parser().parse("- a\n- b\n\n```\nx = 1\ny = 2\n```\n\n# Title")
    types = [token.type for token in parsed]
    assert types.count("list_item_open") == 2
    [fence] = [token for token in parsed if token.type == "fence"]
    assert fence.content == "x = 1\ny = 2\n"
    assert "heading_open" in types


def stripped(app: object) -> list[str]:
    return [line.strip(" │▎▌") for line in screen_lines(app)]


async def test_a_comment_typed_on_three_lines_shows_on_three_lines(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        await pilot.press("c", *"Done.", "enter", *"Deployed to staging.", "enter", *"Bye.")
        await pilot.press("enter", "enter", "-", "space", *"first", "enter")
        await pilot.press("-", "space", *"second", "ctrl+s")
        await settle(pilot)
        lines = stripped(app)
        assert "Done." in lines
        assert "Deployed to staging." in lines
        assert "Bye." in lines
        assert not [line for line in lines if "Done. Deployed" in line]
        bullets = [line for line in lines if line.endswith(("first", "second"))]
        assert len(bullets) == 2
        assert all(line.startswith("•") for line in bullets), bullets


async def test_a_description_keeps_its_lines_too(app_factory: AppFactory, cache: Cache) -> None:
    cache.outbox.update(
        Resource.ISSUES, TOP, {"description": "Seen on Safari 17.\nNot on Firefox.\n\n    code"}
    )
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        lines = stripped(app)
        assert "Seen on Safari 17." in lines
        assert "Not on Firefox." in lines
        assert "code" in lines
