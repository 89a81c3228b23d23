"""A sync's progress as a command shows it: a bar per resource on a terminal, a line per step
everywhere else, on stderr (stdout is the command's data).

Apart from `tracker_tui.output` because it needs rich and the connection states, which the
read commands never load (docs/architecture.md#start-up).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, TextIO, assert_never

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.text import Text

from sync.connection import Connection, ConnectionState, seconds_until

if TYPE_CHECKING:
    from sync.engine import SyncProgress
    from sync.pull import PullProgress
    from sync.push import PushReport


class ProgressDisplay:
    """Receives a sync's progress (`sync.engine.SyncProgress`: a pull's page by page, a push's
    round by round) and the engine's `ConnectionState`, and shows them: a rich bar per
    resource on a terminal, else a plain line per event. A wait for the rate limit shows with
    its seconds (counting down on a terminal), so a bar that stops moving says why. `quiet`
    shows nothing (for `--json`)."""

    def __init__(self, *, quiet: bool = False, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._quiet = quiet
        self._bar: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self.active: TaskID | None = None
        """The bar that moved last: a wait for the rate limit is shown on its line."""
        self.waiting_until: float | None = None
        """`time.monotonic()` when the current wait for the rate limit ends, if one runs."""
        self._last_line = ""
        if not quiet and self._stream.isatty():
            self._bar = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                MofNCompleteColumn(),
                _Waiting(self),
                console=Console(file=self._stream),
                transient=False,
            )

    def __enter__(self) -> Callable[[SyncProgress | ConnectionState], None]:
        if self._bar is not None:
            self._bar.start()
        return self.update

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def note(self, text: str) -> None:
        """A line about what is happening (what the command waits for), on a terminal only:
        elsewhere the closing summary says it, and a failure stays one line on stderr."""
        if not self._stream.isatty():
            return
        if self._bar is not None:
            self._bar.console.print(text, highlight=False, soft_wrap=True)
        else:
            self._stream.write(text + "\n")
            self._stream.flush()

    def update(self, event: SyncProgress | ConnectionState) -> None:
        # Here, not at the top: every command imports this module, and only a sync's progress
        # needs the engines (the read commands start without the network layer).
        from sync.pull import PullProgress
        from sync.push import PushReport

        if self._quiet:
            return
        match event:
            case ConnectionState():
                self._connection(event)
            case PushReport():
                self._line(event)
            case PullProgress():
                self._pulled(event)
            case _:
                assert_never(event)

    def _pulled(self, event: PullProgress) -> None:
        """A page of a pull: its resource's bar moves (a line per page off a terminal)."""
        phase = event.phase
        name = f"{event.resource} ({phase})" if phase and phase != "pull" else event.resource
        received = event.received
        total = None if event.total is None else max(event.total, received)
        if self._bar is not None:
            task = self._tasks.get(name)
            if task is None:
                task = self._bar.add_task(name, total=total)
                self._tasks[name] = task
            self._bar.update(task, completed=received, total=total)
            self.active = task
            return
        of = f"/{total}" if total is not None else ""
        self._stream.write(f"{name}: {received}{of}\n")

    def _connection(self, state: ConnectionState) -> None:
        """A wait for the rate limit starts (told once) or ends; other states are not news
        to a progress display."""
        until = state.until if state.kind is Connection.RATE_LIMITED else None
        starts = until is not None and self.waiting_until is None
        self.waiting_until = until
        if until is None or not starts:
            return
        if self._bar is None:
            self._stream.write(f"waiting for the rate limit, {_left(until)} s\n")
        elif self.active is None:
            self._bar.console.print(f"waiting for the rate limit, {_left(until)} s")

    def _line(self, event: PushReport) -> None:
        """A push's progress: counts of edits sent and left, when they say something (each
        round of a push reports, and an empty outbox said "push: 0 sent, 0 left" every time)."""
        sent, left = event.sent, event.remaining
        text = f"push: {sent} sent, {left} left"
        if not (sent or left) or text == self._last_line:
            return
        self._last_line = text
        if self._bar is not None:
            self._bar.console.print(text)
        else:
            self._stream.write(text + "\n")


def _left(until: float) -> int:
    return seconds_until(until, time.monotonic())


class _Waiting(ProgressColumn):
    """ "waiting for the rate limit, 12 s" on the line of the bar that moved last, counting
    down while the wait lasts (rich redraws the bars ten times a second)."""

    def __init__(self, display: ProgressDisplay) -> None:
        super().__init__()
        self._display = display

    def render(self, task: Task) -> Text:
        until = self._display.waiting_until
        if until is None or task.id != self._display.active:
            return Text("")
        return Text(f"waiting for the rate limit, {_left(until)} s", style="yellow")
