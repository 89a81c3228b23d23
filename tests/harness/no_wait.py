"""A push backoff that retries at once, for tests that count retries rather than wait them out.

The engine's `Backoff` sleeps 1 s, 2 s ... between attempts; a test of what is retried (not of
when) would spend those seconds idle, so it passes this one instead.
"""

from __future__ import annotations

from sync.retry import Backoff


async def _no_sleep(_seconds: float) -> None:
    return None


QUICK = Backoff(sleep=_no_sleep)
