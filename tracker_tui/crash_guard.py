"""Keeping the app up when something in it fails: the failure is logged and shown, the part
that failed is closed, and the rest goes on.

Textual treats any exception escaping a handler as fatal: `App._handle_exception` records it,
sets `return_code` to 1 and ends the app (`_fatal_error`), and the node whose handler raised
stops its message loop and is removed. Textual has no public hook for this, so the guard uses
the two places every failure passes through, overriding as little as it can:

- `App.run_action` (public): every key binding, palette command and clickable action runs
  through it, on the app's own message loop. An action that raises is logged and notified and
  the key counts as handled; nothing else is disturbed, so the screen stays as it was.
- `App._handle_exception`: Textual calls it for everything else (a widget's or a screen's
  handler, compose and mount, a worker started with `exit_on_error`, a timer). By then the
  failing node's message loop has ended, so the screen holding it can no longer be trusted:
  the guard closes that screen (and any opened from it), reopens the first screen when it was
  the one that failed, and says so. A failure in the app's own loop, or too many in a row,
  cannot be survived: it is logged and handed on to Textual, which ends the app with return
  code 1, and `exit_status` turns that into the process's exit status.

Overriding `_handle_exception` alone would not do: the app's own loop ends after an error in
an action (issue Textualize/textual#2818: the app hangs), which is why actions are caught
before they reach it.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual._context import active_message_pump
from textual.actions import ActionParseResult
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen
from textual.worker import WorkerFailed

from tracker_tui.error_log import logger
from tracker_tui.workers import describe

BURST_LIMIT = 5
"""This many failures within `BURST_SECONDS` means recovering does not help: give up."""
BURST_SECONDS = 30.0


class GuardedApp(App[str | None]):
    """An app that survives failures in its screens (see the module docstring)."""

    error_log: Path | None = None
    """Where tracebacks go, named in the notification (None: nowhere is configured)."""

    def __init__(self) -> None:
        super().__init__()
        self._failures: deque[float] = deque(maxlen=BURST_LIMIT)
        self._screens_closing: set[int] = set()

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Run an action; one that raises is reported, and the key counts as handled."""
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except Exception as error:
            if self._too_many_failures():
                raise
            name = (action if isinstance(action, str) else action[1]).replace("_", " ")
            namespace = default_namespace or self
            what = name.capitalize() if namespace is self else f"{_title(namespace)}: {name}"
            self._report(what, error, closed=False)
            return True

    def _handle_exception(self, error: Exception) -> None:
        """Close the screen that failed instead of the app, unless the app itself failed."""
        node = active_message_pump.get(None)
        screen = _screen_of(node)
        if (
            self._exit
            or not self.is_running
            or screen is None
            or self._too_many_failures()
            or screen not in self.screen_stack
        ):
            logger.error("The app stopped on an error", exc_info=error)
            super()._handle_exception(error)
            return
        if isinstance(error, WorkerFailed):
            self._report(f"{_title(screen)}: a background task", error.error, closed=False)
            return
        if id(screen) in self._screens_closing:
            logger.error("%s failed again while closing", _title(screen), exc_info=error)
            return
        self._screens_closing.add(id(screen))
        self._report(_title(screen), error, closed=True)
        self.call_later(self._close_failed, screen)

    async def _close_failed(self, screen: Screen[Any]) -> None:
        """Pop `screen` and every screen above it; reopen the first screen if it was that."""
        try:
            while screen in self.screen_stack and len(self.screen_stack) > 1:
                await self.pop_screen()
        finally:
            self._screens_closing.discard(id(screen))
        if len(self.screen_stack) <= 1:
            self.open_first_screen()

    def open_first_screen(self) -> None:
        """Open the screen the app starts on (the app overrides this); the guard calls it when
        that screen failed and was closed."""

    def _report(self, what: str, error: BaseException, *, closed: bool) -> None:
        """Log the traceback and tell the user, in one line, what failed."""
        logger.error("%s failed", what, exc_info=error)
        outcome = " It was closed." if closed else ""
        where = f" Details: {self.error_log}" if self.error_log else ""
        self.notify(
            f"{what} failed ({type(error).__name__}: {describe(error)}).{outcome}{where}",
            title="Something went wrong",
            severity="error",
            timeout=10,
        )

    def _too_many_failures(self) -> bool:
        """Note a failure; True when this is one too many in too short a time."""
        now = time.monotonic()
        self._failures.append(now)
        return len(self._failures) == BURST_LIMIT and now - self._failures[0] < BURST_SECONDS


def _screen_of(node: object) -> Screen[Any] | None:
    """The screen a failing node belongs to (None: the app itself, or nothing known)."""
    if isinstance(node, Screen):
        return node
    while isinstance(node, DOMNode) and not isinstance(node, App):
        node = node._parent
        if isinstance(node, Screen):
            return node
    return None


def _title(node: DOMNode) -> str:
    """A node as the user knows it: its help group ("Issue screen"), else its class in words."""
    title = getattr(node, "HELP_GROUP", None)
    if isinstance(title, str):
        return title
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", type(node).__name__).capitalize()


def exit_status(app: App[Any]) -> int:
    """The process's exit status after `app.run()`: 1 when the app ended on an error."""
    return 1 if app.return_code else 0
