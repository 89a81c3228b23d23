"""Running cache calls off the event loop, with failures turned into messages.

SQLite blocks, so every read and write runs in a thread worker; what comes back is posted as a
message (the node's own typed message for a read, the app-wide `WriteQueued` for a write), and
an exception becomes `SourceFailed`, which the app shows as a notification. Nothing is awaited
on the event loop and no traceback reaches the screen; the traceback of an error the cache does
not name (a bug rather than a busy or damaged file) goes to the error log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from textual.dom import DOMNode
from textual.message import Message

from cache import CacheError
from tracker_tui.error_log import logger
from tracker_tui.messages import SourceFailed, WriteQueued

T = TypeVar("T")


def describe(error: BaseException) -> str:
    """An exception as one line for a notification."""
    return str(error) or type(error).__name__


def failed(what: str, error: Exception) -> SourceFailed:
    """The message saying a worker failed; an unexpected error is logged with its traceback."""
    if isinstance(error, CacheError):
        logger.warning("Could not %s: %s", what, describe(error))
    else:
        logger.error("Could not %s", what, exc_info=error)
    return SourceFailed(what, describe(error))


def read_in_thread(
    node: DOMNode, what: str, read: Callable[[], T], deliver: Callable[[T], Message]
) -> None:
    """Run `read` in a worker (a newer read of the same node replaces an older one) and post
    `deliver(result)` to `node`."""

    def job() -> None:
        try:
            result = read()
        except Exception as error:
            node.post_message(failed(what, error))
            return
        node.post_message(deliver(result))

    node.run_worker(job, thread=True, exclusive=True, exit_on_error=False, group=f"read-{id(node)}")


def write_in_thread(
    node: DOMNode,
    what: str,
    write: Callable[[], object],
    *,
    done: str | None = None,
    bulk: bool = False,
) -> None:
    """Run an outbox write in a worker; the app hears `WriteQueued` (and pokes the sync engine)
    or `SourceFailed`. With `bulk`, the write returns the batch id to remember for undo.

    The worker is the app's, not `node`'s: screens queue a write and close at once, and a
    closing screen's workers are cancelled, which drops one still waiting for a thread."""
    app = node.app

    def job() -> None:
        try:
            result = write()
        except Exception as error:
            app.post_message(failed(what, error))
            return
        batch = result if bulk and isinstance(result, str) else None
        app.post_message(WriteQueued(done, batch_id=batch))

    app.run_worker(job, thread=True, exit_on_error=False, group="writes")
