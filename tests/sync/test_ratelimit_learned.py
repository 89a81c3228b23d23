"""What a limiter learned, handed on to the next process's limiter (`sync.ratelimit.learned`):
taken up before the first request, corrected by the first answer, a lower figure at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from test_ratelimit_learning import elapsed, make, response

from sync.ratelimit import RateLimiter
from sync.ratelimit.learned import Learned

if TYPE_CHECKING:
    from conftest import InMemoryRequestLog, VirtualTime


def answer(limiter: RateLimiter, vtime: VirtualTime, limit: int, remaining: int = 5) -> None:
    """A response whose headers describe a minute window with `limit`."""
    limiter.on_response(
        response(
            limiter,
            X_RateLimit_Limit=str(limit),
            X_RateLimit_Remaining=str(remaining),
            X_RateLimit_Reset=str(int(vtime.now + 40)),
        )
    )


def handed_on(
    first: RateLimiter, log: InMemoryRequestLog, vtime: VirtualTime
) -> tuple[RateLimiter, list[Learned]]:
    """The next process's limiter, started from what `first` learned, and what it tells."""
    told: list[Learned] = []
    second = make(log, vtime)
    second.restore(Learned.from_json(first.learned().to_json()))
    second.on_learned = told.append
    return second, told


async def test_a_learned_plan_paces_the_next_limiter_from_its_first_request(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    first = make(request_log, vtime)
    answer(first, vtime, 300)
    await vtime.run(*(first.acquire("other") for _ in range(200)))
    second, told = handed_on(first, request_log, vtime)
    assert (second.plan.name, second.learned().source) == ("pro", "headers")
    await vtime.run(second.acquire("other"))
    assert second.waits.first == 0.0 and told == []


@pytest.mark.parametrize(
    ("learned_from", "header", "now"), [("pro", 60, "free"), ("free", 300, "pro")]
)
async def test_the_first_answer_corrects_a_stored_plan_either_way(
    request_log: InMemoryRequestLog, vtime: VirtualTime, learned_from: str, header: int, now: str
) -> None:
    first = make(request_log, vtime)
    first.set_plan(learned_from)
    second, told = handed_on(first, request_log, vtime)
    assert second.plan.name == learned_from
    answer(second, vtime, header)
    assert second.plan.name == now
    assert [(t.plan, t.source) for t in told] == [(now, "headers")]


async def test_me_stored_is_no_stronger_than_the_next_headers(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    """In the process that asked `/me`, its answer outranks a higher header figure; once
    stored, it is only a starting point: a header naming another plan replaces it."""
    first = make(request_log, vtime)
    first.set_plan("free")
    answer(first, vtime, 300)
    assert first.plan.name == "free"
    second, _ = handed_on(first, request_log, vtime)
    answer(second, vtime, 300)
    assert second.plan.name == "pro"


async def test_a_spent_window_stays_spent_for_the_next_limiter(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    first = make(request_log, vtime)
    told: list[Learned] = []
    first.on_learned = told.append
    answer(first, vtime, 60, remaining=0)
    assert len(told) == 1 and "" in told[0].blocked
    second, _ = handed_on(first, request_log, vtime)
    assert 40 <= await elapsed(vtime, second) <= 42
    third, _ = handed_on(second, request_log, vtime)  # the window is over: nothing to hand on
    assert third.learned().blocked == {} and await elapsed(vtime, third) == 0


async def test_only_changes_are_told(request_log: InMemoryRequestLog, vtime: VirtualTime) -> None:
    limiter = make(request_log, vtime)
    told: list[Learned] = []
    limiter.on_learned = told.append
    for _ in range(5):
        answer(limiter, vtime, 300)
    limiter.set_plan("pro")
    assert [(t.plan, t.source) for t in told] == [("pro", "headers"), ("pro", "me")]


@pytest.mark.parametrize(
    "text",
    [
        "not json at all",
        '{"version": 2, "plan": "pro", "per_minute": 300, "per_day": 10000, "source": "me"}',
        '{"version": 1, "plan": "pro", "per_minute": 0, "per_day": 10000, "source": "me",'
        ' "blocked": {}}',
        '{"version": 1, "plan": "pro", "per_minute": 300, "per_day": 10000, "source": "me",'
        ' "blocked": {"": "soon"}}',
    ],
)
def test_an_unreadable_store_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Learned.from_json(text)


def test_stored_figures_never_exceed_the_plans_and_far_blocks_are_dropped(
    request_log: InMemoryRequestLog, vtime: VirtualTime
) -> None:
    limiter = make(request_log, vtime)
    blocked = {"": vtime.now + 10 * 86_400, "search": vtime.now + 30, "nowhere": vtime.now + 30}
    limiter.restore(Learned("pro", 5_000, 10**9, "me", blocked))
    learned = limiter.learned()
    assert (learned.plan, learned.per_minute, learned.per_day) == ("pro", 300, 10_000)
    assert learned.blocked == {"search": vtime.now + 30}
    limiter.restore(Learned("platinum", 5, 5, "me"))  # a plan not published: ignored
    assert limiter.plan.name == "pro"
