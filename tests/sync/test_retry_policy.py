"""One backoff for every retry of the sync (`sync.retry`): its waits stay within their step and
the cap, a server's `Retry-After` is a floor, a 429 waits in the limiter only, and a loop that
has failed for days still computes its next wait."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.errors import ErrorBody, NetworkError, error_for
from sync.ratelimit import ResponseMeta, read_meta
from sync.retry import Backoff, Retrier, read_wait

START = 1_800_000_000.0


def step(backoff: Backoff, failures: int) -> float:
    """The ceiling of the wait after `failures` failures in a row, by the documented formula."""
    return min(backoff.cap, backoff.base * 2.0 ** min(failures - 1, 64))


@settings(max_examples=300, deadline=None)
@given(
    base=st.floats(min_value=0.001, max_value=10.0),
    cap_over_base=st.floats(min_value=1.0, max_value=10_000.0),
    failures=st.integers(min_value=1, max_value=100_000),
    random=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
)
def test_every_wait_is_within_half_its_step_and_never_past_the_cap(
    base: float, cap_over_base: float, failures: int, random: float
) -> None:
    backoff = Backoff(base=base, cap=base * cap_over_base, random=lambda: random)
    wait = backoff.delay(failures)
    ceiling = step(backoff, failures)
    assert ceiling / 2 <= wait <= ceiling <= backoff.cap


@pytest.mark.parametrize("random", [0.0, 0.5, 0.999_999])
def test_the_waits_double_from_the_base_up_to_the_cap(random: float) -> None:
    backoff = Backoff(base=0.5, cap=30.0, random=lambda: random)
    waits = [backoff.delay(failures) for failures in range(1, 12)]
    factor = (1 + random) / 2
    expected = [min(30.0, 0.5 * 2**n) * factor for n in range(11)]
    assert waits == pytest.approx(expected)
    assert max(waits) <= 30.0


def test_a_servers_retry_after_is_a_floor_and_may_pass_the_cap() -> None:
    backoff = Backoff(base=1.0, cap=10.0, random=lambda: 0.0)
    assert backoff.delay(1, retry_after=0.2) == 0.5
    assert backoff.delay(1, retry_after=7.0) == 7.0
    assert backoff.delay(9, retry_after=120.0) == 120.0


def test_a_loop_that_failed_for_days_still_computes_its_wait() -> None:
    """The background loop counts failed passes for as long as the server is away: at its
    60 s cap, 5,000 failures are about three days. `2 ** 4999` overflowed a float."""
    backoff = Backoff(base=1.0, cap=60.0, random=lambda: 0.5)
    assert backoff.delay(5_000) == 45.0


def meta(status: int, retry_after: str | None = None) -> ResponseMeta:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return read_meta("GET", "/issues", status, headers, server_now=START)


def test_a_429_read_adds_no_wait_to_the_limiters_and_a_503s_retry_after_is_a_floor() -> None:
    backoff = Backoff(base=1.0, cap=10.0, random=lambda: 0.0)
    limited = error_for(meta(429, "30"), ErrorBody())
    failing = error_for(meta(503, "8"), ErrorBody())
    plain = error_for(meta(503), ErrorBody())
    assert read_wait(backoff, 1, limited) == 0.0
    assert read_wait(backoff, 1, failing) == 8.0
    assert read_wait(backoff, 3, plain) == 2.0


async def test_a_run_of_reads_waits_by_the_formula_and_gives_up_after_its_tries() -> None:
    """The pull's and the push's reads: every wait within the cap (the pull's went up to 1.5
    times its 30 s cap), `tries` attempts in all."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    backoff = Backoff(base=1.0, cap=30.0, tries=9, sleep=record, random=lambda: 0.999_999)
    retrier = Retrier(backoff)

    async def lost() -> None:
        raise NetworkError("reset", method="GET", path="/issues", request_sent=True)

    with pytest.raises(NetworkError):
        await retrier.run(lost)
    assert (retrier.requests, retrier.retries) == (9, 8)
    assert waits == pytest.approx([backoff.delay(n) for n in range(1, 9)])
    assert max(waits) <= 30.0 and max(waits) == pytest.approx(30.0, rel=1e-5)
