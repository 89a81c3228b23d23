"""The model of issue 15 part 3 (`model_machine`), bounded for `make test`, and the programs
it found, pinned: each replays the steps of a failing run, invariants checked after every
step and in full after the quiet sync. The long run is `benchmarks/model_run.py`."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from model_machine import PRIORITIES, Model, model_for
from model_wire import Fault, Kill
from model_world import FULL, PUBLISHED_ONLY, Config

BOUNDED = settings(
    max_examples=12,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def test_model_against_the_full_service() -> None:
    run_state_machine_as_test(model_for(FULL), settings=BOUNDED)


def test_model_against_a_spec_only_service() -> None:
    run_state_machine_as_test(model_for(PUBLISHED_ONLY), settings=BOUNDED)


class Steps:
    """A machine driven by hand: each rule called checks the invariants after it, as a
    Hypothesis run does; `end` is the quiet sync and the full check."""

    def __init__(self, config: Config) -> None:
        random.seed(0)  # as Hypothesis does for each example: the limiters' jitter replays
        self.machine: Model = model_for(config)()
        self.ended = False

    def __getattr__(self, name: str) -> Callable[..., None]:
        rule = getattr(self.machine, name)

        def step(**args: Any) -> None:
            rule(**args)
            self.machine.holds()

        return step

    def end(self) -> None:
        self.ended = True
        self.machine.teardown()

    def close(self) -> None:
        """After a step that failed: the world closed all the same (its event loop and the
        service's connections left open failed the next test, under `filterwarnings=error`)."""
        if not self.ended and self.machine.world is not None:
            self.ended = True
            self.machine.world.close()
            shutil.rmtree(self.machine.tmp, ignore_errors=True)


@pytest.fixture
def steps() -> Iterator[Callable[[Config], Steps]]:
    made: list[Steps] = []

    def start(config: Config) -> Steps:
        made.append(Steps(config))
        return made[-1]

    yield start
    for state in made:
        state.close()


def test_three_identical_creates_the_first_dropped_before_the_service_are_three(
    steps: Callable[[Config], Steps],
) -> None:
    """Issue 15 part 1, as the model meets it: on a server with only the published API, the first of
    three identical creates is dropped before the service saw it; the look for it must not take a
    sibling's record for it."""
    state = steps(PUBLISHED_ONLY)
    state.start(clients=2)
    for _ in range(3):
        state.create(c=0, title=0, priority=None)
    state.push(c=0, faults=[Fault.DROP_BEFORE], kill=None)
    state.end()


def test_an_older_write_kept_mine_after_a_newer_one_landed_does_not_go_over_it(
    steps: Callable[[Config], Steps],
) -> None:
    """A title edit held as a conflict did not hold back the next edit of the same title: that
    one was settled first and landed, then "keep mine" on the first sent its older title over
    the newer one (the known suspect of issue 15)."""
    state = steps(PUBLISHED_ONLY)
    state.start(clients=2)
    state.edit(c=0, pick=0, name="title", choice=0)
    state.colleague_edit(pick=0, name="title", choice=0)
    state.push(c=0, faults=[], kill=None)
    state.edit(c=0, pick=0, name="title", choice=0)
    state.push(c=0, faults=[], kill=None)
    state.resolve(c=0, pick=1, mine=True)
    state.push(c=0, faults=[], kill=None)
    state.resolve(c=0, pick=0, mine=True)
    state.push(c=0, faults=[], kill=None)
    state.end()


def test_a_colleagues_identical_comment_made_while_ours_was_lost_is_not_taken_for_it(
    steps: Callable[[Config], Steps],
) -> None:
    """Our "+1" dropped before the service saw it, the process killed before it could look; a
    colleague's "+1" on the same issue: a comment names its author, and `/me` ours."""
    state = steps(FULL)
    state.start(clients=2)
    state.comment(c=0, pick=0, body=0)
    state.push(c=0, faults=[Fault.DROP_BEFORE], kill=Kill(at=1, after=False))
    state.colleague_comment(pick=0, body=0)
    state.push(c=0, faults=[], kill=None)
    state.end()


def test_an_issue_deleted_under_a_refused_comment_stays_in_sight(
    steps: Callable[[Config], Steps],
) -> None:
    """A comment refused because a colleague deleted its issue: the issue vanished from the
    list (its tombstone was kept only for writes to the issue itself), the comment with it."""
    state = steps(FULL)
    state.start(clients=2)
    state.comment(c=0, pick=0, body=2)
    state.colleague_delete(pick=0)
    state.end()


def test_an_edit_back_of_an_issue_a_colleague_deleted_is_not_dropped(
    steps: Callable[[Config], Steps],
) -> None:
    """Found by the long run (seed 6004): a priority edit pending, a colleague deletes the
    issue, the pull keeps it in sight for the edit, the user sets the priority back to what
    it was: the edit was dropped as an edit back, and the issue vanished with it."""
    state = steps(FULL)
    state.start(clients=2)
    state.edit(c=0, pick=0, name="priority", choice=0)
    state.colleague_delete(pick=0)
    state.pull(c=0, faults=[], kill=None, full=False)
    state.edit(c=0, pick=0, name="priority", choice=2)
    state.end()


def test_an_edit_back_over_a_conflict_settled_for_theirs_is_asked_again_truthfully(
    steps: Callable[[Config], Steps],
) -> None:
    """Found by the long run (seed 12008): a priority edit in conflict with a colleague's,
    the user sets the priority back to what it was, then settles the conflict for theirs.
    The edit back was rebased onto the value it restores, and its conflict with the
    colleague's value showed the user's value as the base: medium against medium."""
    state = steps(FULL)
    state.start(clients=2)
    machine = state.machine
    client = machine.client(0)
    key = machine.visible(client)[0]
    original = machine._shown(client, key)["priority"]
    back = PRIORITIES.index(original)
    state.edit(c=0, pick=0, name="priority", choice=back + 1)
    state.colleague_clash(pick=0, choice=back + 2)
    state.push(c=0, faults=[], kill=None)
    assert client.cache.outbox.conflicts(), "the colleague's value makes a conflict"
    state.edit(c=0, pick=0, name="priority", choice=back)
    state.resolve(c=0, pick=0, mine=False)
    state.push(c=0, faults=[], kill=None)
    [conflict] = client.cache.outbox.conflicts()
    assert conflict.mine == original and conflict.base != original
    state.end()
