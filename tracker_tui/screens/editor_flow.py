"""Handing a text from the app to `$EDITOR` and back: the terminal, the draft, the questions.

The app suspends itself (`App.suspend`: the editor gets the real terminal, and the app draws
again once it exits), runs the editor (`tracker_tui.editor`), and keeps what the file held as a
draft in the cache before the file is removed. Then, on the event loop again:

- an empty text, or one saved unchanged, cancels, and says so (the draft is dropped);
- an editor that exited with a failure (`:cq` in vim) keeps the text as the draft, and says so;
- a text that cannot be taken (`TemplateError`, naming its line) asks: edit again (the editor
  reopens on the same text, the error written above the help), or keep it as a draft (the next
  edit of the same thing starts from it).

What the text became is the caller's to queue; it drops the draft once that is in the outbox
(`discard_after`). Runs in an async worker of the screen (`run`), which may wait on a dialog.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from textual.app import SuspendNotSupported
from textual.screen import Screen

from cache import Cache, JsonObject
from tracker_tui.editor import (
    EditorError,
    TemplateError,
    edited,
    editor_name,
    run_editor,
    with_help,
    without_help,
)
from tracker_tui.screens.confirm import ConfirmDialog

T = TypeVar("T")


def text_draft(text: str) -> JsonObject | None:
    """How an editor's text is kept: as it came back, help and all."""
    return {"text": text} if text.strip() else None


@dataclass
class EditorFlow(Generic[T]):
    """One text to edit, kept under `key` in the drafts; `parse` turns it into `T`."""

    screen: Screen[Any]
    cache: Cache
    key: str
    parse: Callable[[str], T]
    help: Sequence[str] = ()
    suffix: str = ".md"
    draft_of: Callable[[str], JsonObject | None] = text_draft
    """The draft kept for the text (None: keep nothing, an empty text)."""
    again_hint: str = "open it again"
    """How the user gets back to a kept draft, for the messages ("E opens it again")."""
    drop_on_cancel: bool = True
    """Whether a cancel drops the draft (not when the draft is a comment box's as well)."""
    kept: str | None = None
    """The text left as the draft when `run` ended without a result and without a cancel."""
    _last: str | None = None

    async def run(self, text: str, baseline: str) -> T | None:
        """Edit `text` until it parses, is cancelled, or is kept as a draft; `baseline` is
        what "unchanged" compares with (the value before any draft)."""
        app = self.screen.app
        while True:
            try:
                after = self._hand_over(text)
            except EditorError as error:
                again = f" ({self.again_hint})" if error.kept else ""
                self.kept = self._last if error.kept else None
                app.notify(f"{error}{again}.", title="Editor", severity="error", timeout=8)
                return None
            result = edited(baseline, after, self.help)
            if result.cancelled is not None:
                if self.drop_on_cancel:
                    self.cache.drafts.discard(self.key)
                app.notify(f"Cancelled: {result.cancelled}.", title="Editor", timeout=4)
                return None
            try:
                return self.parse(after)
            except TemplateError as error:
                question = f"Not saved: {error}.\n\nOpen the editor again on your text?"
                dialog = ConfirmDialog(question, yes="Edit again", no="Keep as draft")
                if not await app.push_screen(dialog, wait_for_dismiss=True):
                    self.kept = after
                    app.notify(f"Kept as a draft ({self.again_hint}).", title="Editor", timeout=6)
                    return None
                text = with_note(after, str(error), self.help)

    def _hand_over(self, text: str) -> str:
        """Run the editor on the real terminal; the text comes back once it exits. A headless
        app (tests) has no terminal to hand over, and runs the editor as it is.

        Nothing may leave `App.suspend` by an exception: Textual resumes the app only when the
        block ends normally, and an editor that failed (`:cq`) left the app suspended for good
        (the keys echoed by the shell's terminal, nothing drawn)."""
        app = self.screen.app
        suspended = contextlib.nullcontext() if app.is_headless else app.suspend()
        failure: EditorError | None = None
        try:
            with suspended:
                try:
                    return run_editor(text, self._keep, suffix=self.suffix)
                except EditorError as error:
                    failure = error  # raised once the app has the terminal back
        except SuspendNotSupported:
            raise EditorError(
                f"this terminal cannot be handed over to {editor_name()}", kept=False
            ) from None
        assert failure is not None
        raise failure

    def _keep(self, text: str) -> None:
        """Store the file's text before the file is removed (on the event loop: the app is
        suspended, nothing else runs, and one row is written)."""
        self._last = text
        draft = self.draft_of(text)
        if draft is not None:
            self.cache.drafts.save(self.key, draft)

    def discard_after(self, write: Callable[[], object]) -> Callable[[], object]:
        """`write` (queueing what the text became), then dropping the draft, for one worker."""

        def run() -> object:
            result = write()
            self.cache.drafts.discard(self.key)
            return result

        return run


def with_note(text: str, note: str, help_lines: Sequence[str]) -> str:
    """The user's text again, with what was wrong written first in the help."""
    return with_help(without_help(text, help_lines), [f"Not saved: {note}", *help_lines])
