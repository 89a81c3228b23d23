"""The app's output outlives its terminal: after a hang-up, Textual's writer thread keeps
emptying its queue, so quitting never blocks on a frame nobody will see (a hung-up demo used
to stay running for good, `tracker_tui/terminal_driver.py`)."""

from __future__ import annotations

import contextlib
import io
import os
import pty
import threading
from collections.abc import Iterator

import pytest
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from tracker_tui.app import make_app
from tracker_tui.screens.login import LoginSetup
from tracker_tui.terminal_driver import SurvivingOutput, TerminalDriver


@pytest.fixture
def hung_up_terminal() -> Iterator[io.TextIOWrapper]:
    """The writing end of a pseudo-terminal whose other end has been closed."""
    controller, terminal = pty.openpty()
    stream = open(terminal, "w", encoding="utf-8", buffering=1)  # noqa: SIM115
    os.close(controller)
    yield stream
    with contextlib.suppress(OSError):
        stream.close()


def test_a_write_to_a_closed_terminal_is_dropped_and_remembered(
    hung_up_terminal: io.TextIOWrapper,
) -> None:
    with pytest.raises(OSError):
        hung_up_terminal.write("frame\n")
    output = SurvivingOutput(hung_up_terminal)
    assert output.write("frame\n") == len("frame\n")
    output.flush()
    assert output.gone


def test_the_writer_thread_keeps_emptying_its_queue_after_a_hang_up(
    hung_up_terminal: io.TextIOWrapper,
) -> None:
    writer = WriterThread(SurvivingOutput(hung_up_terminal))  # type: ignore[arg-type]
    writer.start()
    done = threading.Event()

    def quit_like_the_app() -> None:
        for frame in range(MAX_QUEUED_WRITES * 4):
            writer.write(f"frame {frame}\n")
        writer.stop()
        done.set()

    threading.Thread(target=quit_like_the_app, daemon=True).start()
    assert done.wait(timeout=10), "quitting blocked on a full queue"
    assert not writer.is_alive()


def test_other_failures_are_not_taken_for_a_closed_terminal() -> None:
    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    output = SurvivingOutput(Full())
    with pytest.raises(OSError, match="No space"):
        output.write("frame")
    assert not output.gone


def test_the_app_draws_through_it_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    assert make_app(login=LoginSetup()).driver_class is TerminalDriver
