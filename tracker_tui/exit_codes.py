"""What the exit status of every `tracker-tui` command means: the one table scripts rely on.

README.md's "Exit status" table is this enum, row for row (a test keeps them equal). The
numbers are a promise: a new meaning gets a new number, an old number never changes meaning.
When several apply, the first in this order wins: USAGE, FAILED, PARTLY_DONE, OFFLINE, OK
(a conflict to settle matters more than a queue that a later sync sends by itself).
"""

from __future__ import annotations

import signal
from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    """Everything asked for was done: writes are on the server, reads were answered."""
    FAILED = 1
    """Nothing was done: the server refused the key or the request, the cache is damaged, or
    the server could not be reached for a command that needs it and queued nothing."""
    USAGE = 2
    """The command was given wrong (an option, a value, an issue, user or project that does
    not exist, a status move the workflow forbids), or needs what is not installed (`demo`
    without the `service` extra); nothing was done."""
    PARTLY_DONE = 3
    """Done except for what is named: writes the server refused or that conflict with a change
    made elsewhere remain (`tracker-tui outbox`, `tracker-tui conflicts`), or some issues of a
    bulk edit could not make the change."""
    OFFLINE = 4
    """The server could not be reached (or kept failing); the writes stay queued and the next
    `tracker-tui sync` sends them."""
    INTERRUPTED = 130
    """Stopped by the user: Ctrl-C, end of input (Ctrl-D) at a prompt, or "no" to a question;
    what was done before stays done. SIGHUP and SIGTERM end as cleanly, with 128 + the
    signal's number (129, 143)."""


def for_signal(signum: int) -> int:
    """The shell's convention for a process ended by a signal."""
    return 128 + signal.Signals(signum).value
