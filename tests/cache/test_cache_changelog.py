"""The inbox's change log (cache.changelog): what a pull stores that someone else changed in the
issues that concern the user is logged field by field; our own writes, issues of no concern
and a first load are not; the log is pruned by age and size."""

from __future__ import annotations

import pytest
from cache_factories import Clock, comment, issue, stamp

from cache import ME_STATE_KEY, Cache, ChangeKind, Resource, changelog

ME = "usr_me"
OTHER = "usr_grace"


@pytest.fixture
def mine(cache: Cache) -> Cache:
    """A cache that knows who the user is and holds issue 1 (assigned to them) and issue 2
    (someone else's), as a first pull leaves it."""
    cache.state.set(ME_STATE_KEY, ME)
    cache.server.apply_page(
        Resource.ISSUES, [issue(1, assignee=ME, priority="low"), issue(2, assignee=OTHER)]
    )
    return cache


def pulled(cache: Cache, *records: dict[str, object], news: bool = True) -> None:
    cache.server.apply_page(Resource.ISSUES, list(records), news=news)


def fields(cache: Cache) -> list[tuple[str, str, object, object]]:
    return [
        (change.issue_id, change.field, change.old, change.new)
        for change in reversed(cache.inbox.changes())
    ]


def test_a_colleagues_edit_pulled_is_logged_field_by_field(mine: Cache) -> None:
    pulled(mine, issue(1, assignee=ME, priority="high", status="in_progress", updated_at=stamp(50)))
    assert fields(mine) == [
        ("iss_000001", "priority", "low", "high"),
        ("iss_000001", "status", "todo", "in_progress"),
    ]
    [first, _] = mine.inbox.changes()
    assert first.kind is ChangeKind.FIELD and first.at == stamp(50) and not first.read
    assert mine.inbox.unread() == (2, 1)


def test_an_issue_of_no_concern_is_not_logged(mine: Cache) -> None:
    pulled(mine, issue(2, assignee=OTHER, priority="urgent", updated_at=stamp(50)))
    assert fields(mine) == []


def test_an_issue_assigned_to_me_or_away_from_me_is_logged(mine: Cache) -> None:
    pulled(mine, issue(2, assignee=ME, updated_at=stamp(50)))
    pulled(mine, issue(1, assignee=OTHER, priority="low", updated_at=stamp(51)))
    assert fields(mine) == [
        ("iss_000002", "assignee", OTHER, ME),
        ("iss_000001", "assignee", ME, OTHER),
    ]


def test_an_issue_i_commented_on_or_created_here_concerns_me(mine: Cache) -> None:
    mine.server.apply_page(Resource.COMMENTS, [comment(3, "iss_000002", "me too", author=ME)])
    pulled(mine, issue(2, assignee=OTHER, title="Renamed", updated_at=stamp(50)))
    mine.outbox.create(Resource.ISSUES, {"title": "Mine"})
    [entry] = mine.push.sendable()
    mine.push.mark_sending(entry.id)
    mine.push.mark_done(entry.id, issue(7, title="Mine"))
    pulled(mine, issue(7, title="Mine", priority="high", updated_at=stamp(60)))
    assert fields(mine) == [
        ("iss_000002", "title", "Issue 2", "Renamed"),
        ("iss_000007", "priority", "none", "high"),
    ]


def test_our_own_edit_is_not_news(mine: Cache) -> None:
    entry = mine.outbox.update(Resource.ISSUES, "iss_000001", {"priority": "urgent"})
    assert entry is not None
    mine.push.mark_sending(entry.id)
    mine.push.mark_done(entry.id, issue(1, assignee=ME, priority="urgent", updated_at=stamp(40)))
    pulled(mine, issue(1, assignee=ME, priority="urgent", updated_at=stamp(40)))
    assert fields(mine) == []


def test_our_edit_landed_without_its_answer_is_not_news_when_pulled(mine: Cache) -> None:
    entry = mine.outbox.update(Resource.ISSUES, "iss_000001", {"status": "in_progress"})
    assert entry is not None
    mine.push.mark_sending(entry.id)
    mine.push.mark_done(entry.id)
    pulled(
        mine,
        issue(1, assignee=ME, priority="high", status="in_progress", updated_at=stamp(40)),
    )
    assert fields(mine) == [("iss_000001", "priority", "low", "high")]


def test_a_pull_that_races_our_push_shows_only_the_colleagues_field(mine: Cache) -> None:
    entry = mine.outbox.update(Resource.ISSUES, "iss_000001", {"status": "in_progress"})
    assert entry is not None
    mine.push.mark_sending(entry.id)
    theirs = issue(1, assignee=ME, priority="low", title="Theirs", status="in_progress")
    pulled(mine, {**theirs, "updated_at": stamp(40)})
    assert fields(mine) == [("iss_000001", "title", "Issue 1", "Theirs")]


def test_a_landed_answer_carrying_a_colleagues_change_logs_only_theirs(mine: Cache) -> None:
    entry = mine.outbox.update(Resource.ISSUES, "iss_000001", {"status": "in_progress"})
    assert entry is not None
    mine.push.mark_sending(entry.id)
    answer = issue(1, assignee=ME, priority="urgent", status="in_progress", updated_at=stamp(40))
    mine.push.mark_done(entry.id, answer)
    assert fields(mine) == [("iss_000001", "priority", "low", "urgent")]


def test_a_value_we_set_long_ago_set_again_by_a_colleague_is_news(mine: Cache) -> None:
    entry = mine.outbox.update(Resource.ISSUES, "iss_000001", {"priority": "high"})
    assert entry is not None
    mine.push.mark_sending(entry.id)
    mine.push.mark_done(entry.id, issue(1, assignee=ME, priority="high", updated_at=stamp(40)))
    pulled(mine, issue(1, assignee=ME, priority="medium", updated_at=stamp(50)))
    pulled(mine, issue(1, assignee=ME, priority="high", updated_at=stamp(60)))
    assert fields(mine) == [
        ("iss_000001", "priority", "high", "medium"),
        ("iss_000001", "priority", "medium", "high"),
    ]


def test_a_new_comment_by_someone_else_is_news_ours_is_not(mine: Cache) -> None:
    mine.server.apply_page(
        Resource.COMMENTS,
        [
            comment(10, "iss_000001", "Looks good", author=OTHER),
            comment(11, "iss_000001", "thanks", author=ME),
            comment(12, "iss_000002", "not mine", author=OTHER),
        ],
        news=True,
    )
    [change] = mine.inbox.changes()
    assert (change.issue_id, change.kind, change.field) == ("iss_000001", "comment", "cmt_000010")
    assert (change.new, change.who, change.at) == ("Looks good", OTHER, stamp(10))


def test_a_first_load_is_not_news(mine: Cache) -> None:
    mine.server.apply_page(
        Resource.COMMENTS, [comment(10, "iss_000001", "old", author=OTHER)], news=False
    )
    pulled(mine, issue(5, assignee=ME), news=False)
    assert fields(mine) == []


def test_a_new_issue_assigned_to_me_is_news_when_pulled_incrementally(mine: Cache) -> None:
    pulled(mine, issue(5, assignee=ME, title="Fix the login"), issue(6, assignee=OTHER))
    [change] = mine.inbox.changes()
    assert (change.issue_id, change.kind, change.new) == (
        "iss_000005",
        "new_issue",
        "Fix the login",
    )


def test_an_older_copy_read_again_is_not_news(mine: Cache) -> None:
    pulled(mine, issue(1, assignee=ME, priority="low"))
    pulled(mine, issue(1, assignee=ME, priority="high", updated_at=stamp(0)))
    assert fields(mine) == []


def test_a_long_value_is_not_kept_only_said_changed(mine: Cache) -> None:
    pulled(mine, issue(1, assignee=ME, priority="low", description="x" * 5000, updated_at=stamp(9)))
    [change] = mine.inbox.changes()
    assert (change.field, change.old, change.new, change.elided) == ("description", "", None, True)


def test_read_state_by_issue_and_up_to_what_was_shown(mine: Cache) -> None:
    pulled(mine, issue(1, assignee=ME, priority="high", updated_at=stamp(50)))
    pulled(mine, issue(2, assignee=ME, updated_at=stamp(51)))
    assert mine.inbox.mark_read(["iss_000001"]) == 1
    assert [c.issue_id for c in mine.inbox.changes()] == ["iss_000002"]
    shown = mine.inbox.latest()
    pulled(mine, issue(1, assignee=ME, priority="urgent", updated_at=stamp(52)))
    assert mine.inbox.mark_read(up_to=shown) == 1
    assert fields(mine) == [("iss_000001", "priority", "high", "urgent")]
    assert len(mine.inbox.changes(unread_only=False)) == 3


def test_the_log_is_pruned_by_age_and_by_size(
    mine: Cache, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changelog, "KEEP_ENTRIES", 3)
    for n, priority in enumerate(["high", "low", "high", "low"]):
        pulled(mine, issue(1, assignee=ME, priority=priority, updated_at=stamp(50 + n)))
    assert [c.new for c in mine.inbox.changes()] == ["low", "high", "low"]
    clock.now += changelog.KEEP_SECONDS
    pulled(mine, issue(1, assignee=ME, priority="urgent", updated_at=stamp(60)))
    assert fields(mine) == [("iss_000001", "priority", "low", "urgent")]
    clock.now += changelog.KEEP_SECONDS
    assert mine.inbox.prune() == 1
    assert mine.inbox.changes(unread_only=False) == []
