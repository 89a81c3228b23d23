"""Records with integers the cache cannot hold as they came: an issue `number` beyond SQLite's
64-bit integers, ids sent as JSON numbers (docs/sync.md#records-the-cache-cannot-hold). The
reference service stores its numbers in SQLite and its ids as text, so a variant rewrites its
list bodies; every other byte is the service's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from test_pull_support import (
    FAST_RETRY,
    App,
    Scope,
    local_issues,
    rewriting_bodies,
    served,
    server_issues,
    session_on,
)

from cache import Cache, IssueFilter, IssueSort, Resource
from sync.pull import pull

HUGE = {7: 2**70, 150: -(2**70), 160: 2**63}
"""Issue number on the server -> the number the variant sends instead."""


def numbers_sent_as(sent: Mapping[int, object]) -> Callable[[Scope, bytes], bytes]:
    """A rewriter of issue list bodies: each issue whose number is a key of `sent` goes out
    with the value it maps to instead."""

    def rewrite(scope: Scope, body: bytes) -> bytes:
        if not scope["path"].endswith("/issues") or b'"data"' not in body:
            return body
        payload = json.loads(body)
        for item in payload["data"]:
            if item.get("number") in sent:
                item["number"] = sent[item["number"]]
        return json.dumps(payload).encode()

    return rewrite


async def test_numbers_beyond_sqlite_land_with_their_pages_and_later_pulls_go_on(
    tmp_path: Path, cache: Cache
) -> None:
    """One group of pages held three numbers SQLite's integers cannot: the group's storing
    raised OverflowError and the pull failed there, at every pull, and no issue after it in
    sync order ever arrived. Now every issue lands, each keeps its exact number, and the next
    pull goes on from the cursor."""

    def wrap(app: App) -> App:
        return rewriting_bodies(app, numbers_sent_as(HUGE))

    async with served(tmp_path, 250, wrap=wrap) as service, session_on(service, cache) as session:
        first = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
        assert first.resources["issues"].inserted == 250 and not first.skipped
        ((last_id,),) = service.sql("SELECT id FROM issues WHERE number = 250")
        async with service.api() as api:
            edited = await api.patch(f"/issues/{last_id}", json={"title": "after the huge ones"})
            assert edited.status_code == 200
        second = await pull(session, retry=FAST_RETRY)
    assert second.resources["issues"].updated == 1
    assert local_issues(cache) == await server_issues(service)
    for number, sent in HUGE.items():
        ((issue_id,),) = service.sql("SELECT id FROM issues WHERE number = ?", (number,))
        record = cache.server.server_record(Resource.ISSUES, issue_id)
        assert record is not None and record["number"] == sent
        assert cache.reads.resolve_issue(f"#{sent}" if sent > 0 else issue_id) == issue_id
    by_number = cache.reads.window(IssueFilter(), IssueSort("number", False), 0, 250)
    ends = [by_number[0], *by_number[-2:]]
    assert [cache.server.server_record(Resource.ISSUES, row.id)["number"] for row in ends] == [
        -(2**70),
        2**63,
        2**70,
    ]


async def test_ids_sent_as_numbers_are_stored_as_their_text(tmp_path: Path, cache: Cache) -> None:
    """The models read an id `7` as `"7"`; the pull stored the record as received, whose id
    the cache refuses, and the page failed at every pull (the projects never arrived, nor the
    resources after them). Now each is stored under the id the models read."""
    numbers: dict[str, int] = {}

    def numeric_ids(scope: Scope, body: bytes) -> bytes:
        """A server whose ids are JSON numbers: each project's id a number of its own."""
        if not scope["path"].endswith("/projects") or b'"data"' not in body:
            return body
        payload = json.loads(body)
        for item in payload["data"]:
            item["id"] = numbers.setdefault(item["id"], len(numbers) + 1)
        return json.dumps(payload).encode()

    def wrap(app: App) -> App:
        return rewriting_bodies(app, numeric_ids)

    async with served(tmp_path, 20, wrap=wrap) as service, session_on(service, cache) as session:
        report = await pull(session, retry=FAST_RETRY)
    projects = {str(project_id) for (project_id,) in service.sql("SELECT id FROM projects")}
    assert projects and set(numbers) == projects
    assert report.resources["projects"].inserted == len(projects)
    for number in numbers.values():
        record = cache.server.server_record(Resource.PROJECTS, str(number))
        assert record is not None and record["id"] == str(number)
    assert cache.server.local_count(Resource.ISSUES) == 20


def lone_surrogates(scope: Scope, body: bytes) -> bytes:
    """Issue 5's title holds half a surrogate pair, as JSON may escape one, issue 7 a member
    named with one; issue 6's title a whole pair (an emoji, escaped)."""
    if not scope["path"].endswith("/issues") or b'"data"' not in body:
        return body
    payload = json.loads(body)
    for item in payload["data"]:
        if item.get("number") == 5:
            item["title"] = "half \ud800 a pair"
        elif item.get("number") == 6:
            item["title"] = "a whole \U0001f600 pair"
        elif item.get("number") == 7:
            item["note\udc01"] = ["\udfff"]
    return json.dumps(payload).encode()  # ASCII, the surrogates as \u escapes


async def test_text_with_half_a_surrogate_pair_lands_as_the_replacement_character(
    tmp_path: Path, cache: Cache
) -> None:
    """A title no UTF-8 encoder takes passed the models and failed its page in the cache
    (UnicodeEncodeError) at every pull; a member named so made the models skip its issue,
    which never reached the cache. Now half a pair reads as U+FFFD, the rest of the text
    and the page as sent, and a whole pair escaped is the character it names."""

    def wrap(app: App) -> App:
        return rewriting_bodies(app, lone_surrogates)

    async with served(tmp_path, 120, wrap=wrap) as service, session_on(service, cache) as session:
        report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert report.resources["issues"].inserted == 120 and not report.skipped
    ids = {n: service.sql("SELECT id FROM issues WHERE number = ?", (n,))[0][0] for n in (5, 6, 7)}
    half = cache.server.server_record(Resource.ISSUES, ids[5])
    assert half is not None and half["title"] == "half \ufffd a pair"
    whole = cache.server.server_record(Resource.ISSUES, ids[6])
    assert whole is not None and whole["title"] == "a whole \U0001f600 pair"
    named = cache.server.server_record(Resource.ISSUES, ids[7])
    assert named is not None and named["note\ufffd"] == ["\ufffd"]
    found = cache.reads.window(IssueFilter(text="half"), IssueSort(), 0, 5)
    assert [row.id for row in found] == [ids[5]]


NOT_INTEGERS: dict[int, object] = {3: "forty-two", 4: 1e30, 9: 42.5}
"""Issue number on the server -> what the variant sends instead: no integer."""


async def test_an_issue_whose_number_is_no_integer_is_stored_and_shown_by_its_id(
    tmp_path: Path, cache: Cache
) -> None:
    """The models refused such an issue: skipped from its page, never stored, and the cursor
    moved on past it, so only `tracker-tui sync`'s closing line ever said so. Now it is
    stored without a number, its value kept as sent."""

    def wrap(app: App) -> App:
        return rewriting_bodies(app, numbers_sent_as(NOT_INTEGERS))

    async with served(tmp_path, 30, wrap=wrap) as service, session_on(service, cache) as session:
        report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    assert not report.skipped and report.resources["issues"].inserted == 30
    rows = {row.id: row for row in cache.reads.window(IssueFilter(), IssueSort(), 0, 30)}
    for number, sent in NOT_INTEGERS.items():
        ((issue_id,),) = service.sql("SELECT id FROM issues WHERE number = ?", (number,))
        record = cache.server.server_record(Resource.ISSUES, issue_id)
        assert record is not None and record["number"] == sent
        assert rows[issue_id].number is None
