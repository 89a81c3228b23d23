"""`--editor`, `--description-file` and `--body-file` (issue 17, Writing) against the reference
service on a loopback port, with a stub editor script (`tests/harness/stub_editor.py`) that
edits the file as each test scripts it."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from stub_editor import StubEditor

from accounts.credentials import resolve_profile
from cache import EntryState, Resource, open_cache
from server.app import create_app
from server.seed import seed_workspace
from server.thread import ServiceThread
from sync.engine import sync_once
from sync.session import open_session
from tracker_tui.cli import main
from tracker_tui.data.draft_keys import comment_key, editor_key


@dataclass
class Setup:
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch
    editor: StubEditor

    def run(self, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            self.monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        status = main(list(argv))
        out, err = self.capsys.readouterr()
        return status, out, err

    def issue(self, ref: str) -> dict[str, object]:
        with open_cache(resolve_profile(None).cache_name) as cache:
            found = cache.reads.resolve_issue(ref)
            detail = cache.reads.issue(found) if found else None
            assert detail is not None
            return {**detail.record, "description": detail.description, "id": detail.issue.id}

    def draft(self, key: str) -> dict[str, object] | None:
        with open_cache(resolve_profile(None).cache_name) as cache:
            return cache.drafts.get(key)

    def pending(self) -> list[dict[str, object]]:
        with open_cache(resolve_profile(None).cache_name) as cache:
            return [dict(e.changes) for e in cache.outbox.entries([EntryState.PENDING])]


@pytest.fixture
def setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Setup]:
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 6, plan="enterprise")
    with ServiceThread(create_app(db, window_seconds=1.0)) as service:
        monkeypatch.setenv("TRACKER_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("TRACKER_SERVER", service.base_url)
        monkeypatch.setenv("TRACKER_API_KEY", key)

        async def first_sync() -> None:
            with open_cache(resolve_profile(None).cache_name) as cache:
                async with open_session(resolve_profile(None), cache=cache) as session:
                    await sync_once(session)

        asyncio.run(first_sync())
        editor = StubEditor(tmp_path / "editor").install(monkeypatch)
        yield Setup(capsys, monkeypatch, editor)


def test_create_with_the_editor_takes_the_template_and_sends_it(setup: Setup) -> None:
    setup.editor.steps(
        [
            {
                "replace": [
                    ["Title:", "Title: Written in the editor"],
                    ["Priority: none", "Priority: High"],
                    ["Labels:\n\n", "Labels: cli, editor\n\n## Steps\n\n1. Run it\n"],
                ]
            }
        ]
    )
    status, out, err = setup.run("issues", "create", "--editor")
    assert (status, err) == (0, "")
    [given] = setup.editor.seen
    assert given.startswith("Title:\nStatus: todo\nPriority: none\n")
    issue = setup.issue(out.strip())
    assert (issue["title"], issue["priority"], issue["labels"]) == (
        "Written in the editor",
        "high",
        ["cli", "editor"],
    )
    assert issue["description"] == "## Steps\n\n1. Run it"
    assert setup.draft(editor_key(None)) is None


def test_edit_with_the_editor_starts_from_the_options_given(setup: Setup) -> None:
    """Saved as it opened: the `--priority` given is the change (the issue had another)."""
    before = setup.issue("#1")
    target = "urgent" if before["priority"] != "urgent" else "low"
    status, out, err = setup.run("issues", "edit", "#1", "--priority", target, "--editor")
    assert (status, err) == (0, "")
    assert f"Priority: {target}\n" in setup.editor.seen[0]
    assert out.strip() == "#1 changed"
    assert setup.issue("#1")["priority"] == target


def test_description_and_body_files_read_stdin_with_a_dash(setup: Setup) -> None:
    text = "First paragraph.\n\n# A heading\n\n- item\n"
    status, _, err = setup.run("issues", "edit", "#2", "--description-file", "-", stdin=text)
    assert (status, err) == (0, "")
    assert setup.issue("#2")["description"] == text
    status, out, err = setup.run("issues", "comment", "#2", "--body-file", "-", stdin="a\nb\n")
    assert (status, err) == (0, "")
    with open_cache(resolve_profile(None).cache_name) as cache:
        comment = cache.server.server_record(Resource.COMMENTS, out.strip())
    assert comment is not None and comment["body"] == "a\nb\n"


def test_a_comment_written_in_the_editor_is_sent(setup: Setup) -> None:
    setup.editor.steps([{"replace": ["Seen too", "Seen too,\nand on staging."]}])
    status, out, err = setup.run("issues", "comment", "#3", "--body", "Seen too", "--editor")
    assert (status, err) == (0, "")
    with open_cache(resolve_profile(None).cache_name) as cache:
        comment = cache.server.server_record(Resource.COMMENTS, out.strip())
    assert comment is not None and comment["body"] == "Seen too,\nand on staging."
    assert setup.draft(comment_key(str(setup.issue("#3")["id"]))) is None


@pytest.mark.parametrize(
    ("step", "says"), [({"write": "\n\n"}, "the text was empty"), ({}, "nothing was changed")]
)
def test_an_empty_or_unchanged_text_cancels_with_130(
    setup: Setup, step: dict[str, object], says: str
) -> None:
    setup.editor.steps([step])
    status, out, err = setup.run("issues", "edit", "#1", "--editor")
    assert status == 130 and out == ""
    assert err == f"tracker-tui: cancelled: {says}; nothing is written\n"
    assert setup.pending() == []


def test_an_editor_that_fails_keeps_the_text_which_the_next_editor_opens(setup: Setup) -> None:
    before = setup.issue("#4")
    title = f"Title: {before['title']}"
    setup.editor.steps([{"replace": [title, "Title: Half done"], "exit": 1}, {}])
    status, _, err = setup.run("issues", "edit", "#4", "--editor", "--no-push")
    assert status == 1
    assert err == "tracker-tui: stub-editor exited with status 1: your text is kept as a draft\n"
    assert setup.pending() == []
    kept = setup.draft(editor_key(str(before["id"])))
    assert kept is not None and "Title: Half done\n" in str(kept["text"])
    status, _, err = setup.run("issues", "edit", "#4", "--editor", "--no-push")
    assert status == 0
    assert err == "tracker-tui: your unsaved text is back in the editor\n"
    assert "Title: Half done\n" in setup.editor.seen[1]
    assert setup.pending() == [{"title": "Half done"}]
    assert setup.draft(editor_key(str(before["id"]))) is None


def test_a_bad_field_names_its_line_and_keeps_the_text_off_a_terminal(setup: Setup) -> None:
    setup.editor.steps([{"replace": ["Priority:", "Priorty:"]}])
    status, _, err = setup.run("issues", "edit", "#5", "--editor", stdin="")
    assert status == 2
    assert err.startswith("tracker-tui: line 3: unknown field 'Priorty' (fields: Title, Status")
    assert "the text is kept as a draft (`tracker-tui issues edit #5 --editor` opens" in err
    kept = setup.draft(editor_key(str(setup.issue("#5")["id"])))
    assert kept is not None and "Priorty:" in str(kept["text"])
    assert setup.pending() == []


@pytest.mark.parametrize(
    "argv",
    [
        ["issues", "edit", "#1", "--editor", "--description-file", "-"],
        ["issues", "comment", "#1", "--editor", "--body-file", "-"],
    ],
)
def test_the_editor_with_stdin_for_a_file_is_refused(setup: Setup, argv: list[str]) -> None:
    status, _, err = setup.run(*argv, stdin="x")
    assert status == 2
    assert "--editor reads the terminal: give a file instead of '-' with it" in err
    assert setup.editor.seen == []


def test_a_missing_description_file_is_one_line(setup: Setup, tmp_path: Path) -> None:
    missing = tmp_path / "nope.md"
    status, _, err = setup.run("issues", "edit", "#1", "--description-file", str(missing))
    assert status == 2
    assert err == f"tracker-tui: --description-file: cannot read {str(missing)!r}: " + (
        "No such file or directory\n"
    )
