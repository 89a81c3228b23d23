"""`$EDITOR` from the app (issue 17, Writing): `E` on an issue, ctrl+e in the comment box and
in the issue form, run with a stub editor script (`tests/harness/stub_editor.py`) that edits
the file as each test scripts it."""

from __future__ import annotations

from pathlib import Path

import pytest
from stub_editor import StubEditor
from textual.pilot import Pilot
from textual.widgets import Input, TextArea
from textual.widgets._footer import FooterKey
from tui_support import AppFactory, Notices, settle

from cache import Cache, EntryState, Resource
from tracker_tui.data.draft_keys import comment_key, editor_key
from tracker_tui.screens.confirm import ConfirmDialog
from tracker_tui.screens.help import help_groups
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_form import IssueFormScreen
from tracker_tui.widgets.comment_box import CommentBox

SIZE = (120, 36)
TOP = "iss_000000"
"""The most recently updated demo issue: the list's first row."""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StubEditor:
    return StubEditor(tmp_path / "editor").install(monkeypatch)


async def asked(pilot: Pilot[object]) -> None:
    """Wait for the question the editor's worker waits on (`settle` would wait for that worker
    to end, which it does only once the question is answered)."""
    for _ in range(200):
        if isinstance(pilot.app.screen, ConfirmDialog):
            return
        await pilot.pause(0.05)
    raise AssertionError(f"no question asked; on {pilot.app.screen!r}")


def top(cache: Cache) -> dict[str, object]:
    detail = cache.reads.issue(TOP)
    assert detail is not None
    return {**detail.record, "description": detail.description}


async def test_E_on_an_issue_queues_the_fields_changed_in_the_editor(
    app_factory: AppFactory, cache: Cache, editor: StubEditor, notices: Notices
) -> None:
    before = top(cache)
    other = "urgent" if before["priority"] != "urgent" else "low"
    editor.steps([{"replace": [f"Priority: {before['priority']}", f"Priority: {other}"]}])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
    [given] = editor.seen
    assert given.startswith(f"Title: {before['title']}\nStatus: {before['status']}\n")
    assert f"\n\n{before['description']}\n" in given
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.changes == {"priority": other}
    assert cache.drafts.get(editor_key(TOP)) is None
    assert any(text.startswith("Changes to #") for text in notices.texts())


async def test_E_on_the_list_edits_the_highlighted_issue_and_its_description(
    app_factory: AppFactory, cache: Cache, editor: StubEditor
) -> None:
    """The description is everything after the fields, '# Heading' lines included."""
    before = top(cache)
    editor.steps([{"replace": [str(before["description"]), "# Seen again\n\nOn 2.3 too."]}])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.target_id == TOP
    assert entry.changes == {"description": "# Seen again\n\nOn 2.3 too."}


@pytest.mark.parametrize(
    ("step", "says"),
    [({"write": ""}, "Cancelled: the text was empty."), ({}, "Cancelled: nothing was changed.")],
)
async def test_an_empty_or_unchanged_text_cancels_and_says_so(
    app_factory: AppFactory,
    cache: Cache,
    editor: StubEditor,
    notices: Notices,
    step: dict[str, object],
    says: str,
) -> None:
    editor.steps([step])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
    assert len(editor.seen) == 1
    assert says in notices.texts()
    assert cache.outbox.entries() == []
    assert cache.drafts.get(editor_key(TOP)) is None


async def test_an_editor_that_fails_keeps_the_text_as_a_draft_which_E_opens_again(
    app_factory: AppFactory, cache: Cache, editor: StubEditor, notices: Notices
) -> None:
    before = top(cache)
    title = f"Title: {before['title']}"
    editor.steps([{"replace": [title, "Title: Typed before :cq"], "exit": 1}, {}])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
        assert cache.outbox.entries() == []
        kept = cache.drafts.get(editor_key(TOP))
        assert kept is not None and "Title: Typed before :cq" in str(kept["text"])
        assert any("exited with status 1: your text is kept" in text for text in notices.texts())
        await pilot.press("E")  # saved as it was: the draft, changed from the issue
        await settle(pilot)
    assert "Title: Typed before :cq\n" in editor.seen[1]
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.changes == {"title": "Typed before :cq"}
    assert cache.drafts.get(editor_key(TOP)) is None


async def test_a_bad_field_names_its_line_and_the_editor_reopens_on_the_same_text(
    app_factory: AppFactory, cache: Cache, editor: StubEditor
) -> None:
    before = top(cache)
    status = f"Status: {before['status']}"
    editor.steps(
        [
            {"replace": [status, f"Statsu: {before['status']}"]},
            {
                "replace": [
                    ["Statsu:", "Status:"],
                    [str(before["description"]), f"{before['description']}\nMore."],
                ]
            },
        ]
    )
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await asked(pilot)
        await pilot.press("y")  # edit again
        await settle(pilot)
    again = editor.seen[1]
    assert f"Statsu: {before['status']}" in again
    assert "# Not saved: line 2: unknown field 'Statsu'" in again
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.changes == {"description": f"{before['description']}\nMore."}


async def test_a_refused_status_move_can_be_kept_as_a_draft(
    app_factory: AppFactory, cache: Cache, editor: StubEditor, notices: Notices
) -> None:
    before = top(cache)
    status = f"Status: {before['status']}"
    stuck = "done" if before["status"] in ("backlog", "todo") else "backlog"
    editor.steps([{"replace": [status, f"Status: {stuck}"]}])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await asked(pilot)
        await pilot.press("n")  # keep as draft
        await settle(pilot)
    assert cache.outbox.entries() == []
    kept = cache.drafts.get(editor_key(TOP))
    assert kept is not None and f"Status: {stuck}" in str(kept["text"])
    assert "Kept as a draft (E on the issue opens it again)." in notices.texts()


async def test_ctrl_e_in_the_comment_box_puts_the_editors_text_back_to_send(
    app_factory: AppFactory, cache: Cache, editor: StubEditor
) -> None:
    editor.steps([{"replace": ["First line", "First line\n\n- a list item\n- another"]}])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("c", *"First line", "ctrl+e")
        await settle(pilot)
        box = app.screen.query_one(CommentBox)
        assert box.text == "First line\n\n- a list item\n- another"
        assert app.focused is box
        await pilot.pause(0.6)
        await settle(pilot)
        assert cache.drafts.get(comment_key(TOP)) == {"body": box.text}
        await pilot.press("enter", *"Typed after", "ctrl+s")
        await settle(pilot)
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.resource is Resource.COMMENTS
    assert entry.changes["body"] == "First line\n\n- a list item\n- another\nTyped after"
    assert cache.drafts.get(comment_key(TOP)) is None


async def test_ctrl_e_in_a_new_issue_form_fills_it_from_the_template(
    app_factory: AppFactory, cache: Cache, editor: StubEditor
) -> None:
    new_title = ["Title:", "Title: Export drops the last row"]
    editor.steps([{"replace": [new_title, ["Labels:\n\n", "Labels:\n\nSteps: export 3 rows.\n"]]}])
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("ctrl+e")
        await settle(pilot)
        assert isinstance(app.screen, IssueFormScreen)
        assert app.screen.query_one("#title", Input).value == "Export drops the last row"
        assert "Steps: export 3 rows." in app.screen.query_one("#description", TextArea).text
        await pilot.press("ctrl+s")
        await settle(pilot)
    [entry] = cache.outbox.entries([EntryState.PENDING])
    assert entry.changes["title"] == "Export drops the last row"
    assert str(entry.changes["description"]).startswith("Steps: export 3 rows.")
    assert cache.drafts.get(editor_key(None)) is None


async def test_the_comment_box_keys_are_in_the_footer_and_the_help(app_factory: AppFactory) -> None:
    """Enter writes a new line; ctrl+s sends and ctrl+e opens the editor, both shown while the
    box has the focus."""
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("c", *"one", "enter", *"two")
        screen = app.screen
        assert screen.query_one(CommentBox).text == "one\ntwo"
        shown = {(key.key_display, key.description) for key in screen.query(FooterKey)}
        assert {("^s", "Send comment"), ("^e", "Edit in $EDITOR")} <= shown
        groups = {g.title: g for g in help_groups(screen.active_bindings, app.get_key_display)}
        described = {(e.keys, e.description) for e in groups["Comment box"].entries}
        assert {(("^s",), "Send comment"), (("^e",), "Edit in $EDITOR")} <= described
