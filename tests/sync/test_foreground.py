"""A pull's requests wait for a pause in the user's typing (sync.foreground; issue 18, goal 4):
never while no key came, until `quiet` after the last key, and never longer than `longest`."""

from __future__ import annotations

from pathlib import Path

from test_pull_support import FAST_RETRY, local_issues, served, server_issues, session_on

from cache import Cache
from sync.foreground import Foreground
from sync.pull import pull


class Keys:
    """A clock the test moves, and keys typed at the times it says, as the sleeps pass."""

    def __init__(self, at: list[float] | None = None) -> None:
        self.now = 100.0
        self.at = sorted(at or [])
        self.slept: list[float] = []
        self.foreground = Foreground(quiet=0.2, longest=1.0, clock=self.clock, sleep=self.sleep)

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Sleep, but wake at the next key typed meanwhile, as the app's keys come."""
        self.slept.append(round(seconds, 6))
        until = self.now + seconds
        while self.at and self.at[0] <= until:
            self.now = self.at.pop(0)
            self.foreground.typed()
        self.now = until


async def test_a_pull_asks_at_once_when_no_key_came() -> None:
    keys = Keys()
    await keys.foreground.quiet()
    assert keys.slept == [] and keys.foreground.waited == 0.0


async def test_a_pull_waits_until_a_pause_after_the_last_key() -> None:
    keys = Keys(at=[100.1, 100.25])
    keys.now = 100.05
    keys.foreground.typed()  # at 100.05: quiet at 100.25, then 100.45 after the later keys
    await keys.foreground.quiet()
    assert keys.now == 100.45
    assert keys.slept == [0.2, 0.2]
    assert abs(keys.foreground.waited - 0.4) < 1e-9


async def test_a_pull_waits_at_most_its_longest_under_keys_that_never_pause() -> None:
    keys = Keys(at=[100.0 + n / 20 for n in range(1, 100)])
    keys.foreground.typed()
    await keys.foreground.quiet()
    assert keys.now == 101.0
    await keys.foreground.quiet()
    assert keys.now == 102.0
    assert abs(keys.foreground.waited - 2.0) < 1e-9


class Counted(Foreground):
    """Counts the waits a pull asked for."""

    def __init__(self, *, quiet: float, longest: float) -> None:
        super().__init__(quiet=quiet, longest=longest)
        self.asked = 0

    async def quiet(self) -> None:
        self.asked += 1
        await super().quiet()


async def test_each_request_of_a_pull_waits_for_a_pause_in_the_keys(
    tmp_path: Path, cache: Cache
) -> None:
    """Against the reference service: every request of a cold pull asked first (the views'
    pages and the count checks too), and waited for nothing with no key typed; a key typed
    just before the next pull held its first request until a pause after it."""
    async with served(tmp_path, 250) as service, session_on(service, cache) as session:
        idle = session.foreground = Counted(quiet=1.0, longest=2.0)
        report = await pull(session, retry=FAST_RETRY)
        assert idle.asked == sum(part.requests for part in report.resources.values()) > 4
        assert idle.waited < 0.05
        assert local_issues(cache) == await server_issues(service)
        typing = session.foreground = Counted(quiet=1.0, longest=2.0)
        typing.typed()
        again = await pull(session, retry=FAST_RETRY)
        assert typing.asked == sum(part.requests for part in again.resources.values())
        assert typing.waited >= 0.5
