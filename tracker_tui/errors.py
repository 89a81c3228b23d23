"""Errors of the command line and the app, and how every other package's errors reach a user.

    TrackerTuiError            anything this package raises on purpose
    └── UsageError             the user asked for something that cannot be done as asked

Errors from `cache`, `sync` and `server` are not wrapped where they happen: the edge (the CLI's
`main`, the app's notification handler) turns any of them into one line through `describe`, so a
user mistake or a server problem never shows a traceback.
"""

from __future__ import annotations


class TrackerTuiError(Exception):
    """Base of this package's errors; its message is written for the user."""


class UsageError(TrackerTuiError):
    """A request that is well-formed for the parser but impossible as asked."""
