"""Keeping what the user is typing (a comment, an issue form) in the cache as they type, so a
closed or killed app gives it back the next time that box or form is opened.

Each keystroke hands the keeper the draft as it stands; the keeper writes it at most every
`SAVE_INTERVAL` seconds, in a thread worker, so a burst of typing costs one write and a killed
process loses at most the last `SAVE_INTERVAL` seconds (plus one write). Writes and discards are
numbered on the event loop and applied in a thread only if nothing newer was applied first: a
save that started before the comment was queued can finish after the draft was dropped, and it
must not bring the sent comment back as a draft.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Protocol, TypeVar, runtime_checkable

from textual.timer import Timer
from textual.widget import Widget

from cache import Cache, JsonObject
from tracker_tui.messages import SourceFailed
from tracker_tui.workers import failed

T = TypeVar("T")

SAVE_INTERVAL = 0.4
"""Seconds between writes while the user types."""


@runtime_checkable
class KeepsDraft(Protocol):
    """A screen with a draft, asked by the app to keep it as the app exits."""

    def keep_draft(self) -> None:
        """Hand the keeper what the screen's fields hold now (`DraftKeeper.keep`)."""


class DraftKeeper:
    """One draft of one screen, kept in the cache under `key`."""

    def __init__(
        self,
        node: Widget,
        cache: Cache,
        key: str,
        *,
        kept: JsonObject | None = None,
        interval: float = SAVE_INTERVAL,
    ) -> None:
        self._node = node
        self._cache = cache
        self.key = key
        self._interval = interval
        self._kept = kept
        """What the cache holds, as far as this keeper knows (the draft restored, if any)."""
        self._latest = kept
        self._timer: Timer | None = None
        self._typing = False
        """Changed since the draft was last sent or discarded."""
        self._lock = threading.Lock()
        self._issued = 0
        self._applied = 0

    def holds(self, draft: JsonObject | None) -> None:
        """The cache holds `draft` (read when the screen loaded, before any typing)."""
        self._kept = self._latest = draft

    def changed(self, draft: JsonObject | None) -> None:
        """The user typed: keep `draft` (None: nothing worth keeping) within the interval."""
        self._latest = draft or None
        self._typing = True
        if self._timer is None:
            self._timer = self._node.set_timer(self._interval, self._write_latest)

    def discard(self) -> None:
        """Drop the draft: the user chose to, or it became nothing."""
        self._stop_timer()
        self._typing = False
        self._latest = None
        if self._kept is None and self._applied == self._issued:
            return
        self._start(self._ticket(), None)

    def then_discard(self, write: Callable[[], T]) -> Callable[[], T]:
        """`write` (queueing what the draft became), followed by dropping the draft, for the
        same worker: a draft is dropped only once its write is in the outbox."""
        self._stop_timer()
        self._typing = False
        self._latest = None
        ticket = self._ticket()

        def run() -> T:
            result = write()
            self._apply(ticket, None)
            return result

        return run

    def keep(self, draft: JsonObject | None) -> None:
        """Write `draft`, what the screen's fields hold now, on this thread: the app is
        exiting. Not what `changed` heard last: under load the last keystrokes' `Changed`
        messages can still be queued when ctrl+q arrives, and the draft kept was then a few
        characters short. Only while the user is typing: after a send or a discard, fields
        still showing their values are not a draft."""
        if not self._typing:
            self.flush()
            return
        self._stop_timer()
        self._latest = draft or None
        if self._latest == self._kept and self._applied == self._issued:
            return
        self._apply(self._ticket(), self._latest)

    def flush(self) -> None:
        """Write a waiting change now, on this thread: the screen is going away (the app may
        be closing), and a worker started now might not run before the cache is closed."""
        if self._timer is None:
            return
        self._stop_timer()
        self._apply(self._ticket(), self._latest)

    def _write_latest(self) -> None:
        self._timer = None
        if self._latest != self._kept:
            self._start(self._ticket(), self._latest)

    def _ticket(self) -> int:
        self._issued += 1
        self._kept = self._latest
        return self._issued

    def _start(self, ticket: int, draft: JsonObject | None) -> None:
        """Apply in a worker of the app's, not the screen's: a screen's workers are cancelled
        when it closes, and one still waiting for a thread then never runs."""
        app = self._node.app
        app.run_worker(
            partial(self._apply, ticket, draft, app.post_message),
            thread=True,
            group="drafts",
            exit_on_error=False,
        )

    def _apply(
        self,
        ticket: int,
        draft: JsonObject | None,
        tell: Callable[[SourceFailed], object] | None = None,
    ) -> None:
        """Store `draft` (None: drop it) unless a newer ticket was applied already; a failure
        is logged, and told to the app through `tell` when given."""
        with self._lock:
            if ticket <= self._applied:
                return
            self._applied = ticket
            try:
                if draft is None:
                    self._cache.drafts.discard(self.key)
                else:
                    self._cache.drafts.save(self.key, draft)
            except Exception as error:
                message = failed("keep the draft", error)
                if tell is not None:
                    tell(message)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
