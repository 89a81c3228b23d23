"""The next keyset request goes out before the current page is parsed (sync.pull.ahead), and a
guess the parsed page contradicts costs one request, never a record."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_pull_support import (
    FAST_RETRY,
    Scope,
    local_issues,
    rewriting_bodies,
    served,
    server_issues,
    session_on,
)

import sync.client
from cache import Cache
from sync.models import Issue
from sync.pull import Mode, pull
from sync.pull.stamps import before

ISSUES = 450
"""Five pages of 100 (the last one with the overlap's re-read records)."""


class IssueRequests(httpx.AsyncBaseTransport):
    """The service's transport, noting each issue list request (what `note` reads of it) as
    it is sent."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        noted: list[str],
        note: Callable[[httpx.Request], str],
    ) -> None:
        self._inner = inner
        self._noted = noted
        self._note = note

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/issues"):
            self._noted.append(self._note(request))
        return await self._inner.handle_async_request(request)


async def test_the_next_page_is_asked_for_before_this_one_is_parsed(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    parse = sync.client.parse_page

    def noting(payload: object, model: Any) -> Any:
        if model is Issue:
            events.append("parse")
        return parse(payload, model)

    monkeypatch.setattr(sync.client, "parse_page", noting)
    async with served(tmp_path, ISSUES) as service:
        transport = IssueRequests(service.transport(), events, lambda _: "send")
        async with session_on(service, cache, transport=transport) as session:
            report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    issues = report.resources["issues"]
    assert issues.mode is Mode.KEYSET
    assert issues.requests == 6  # five pages and the count check: no guess was wasted
    parses = [n for n, event in enumerate(events) if event == "parse"]
    sent_before = [events[:n].count("send") for n in parses]
    # The first page is parsed before any guess (its page size is learnt from it); each later
    # page but the last had the next one on its way before it was parsed.
    assert sent_before[:5] == [1, 2, 4, 5, 6]


class Unreadable:
    """A variant's rewrite: the issue `target` gets a title no client can read whenever it ends
    a full page of the pull."""

    target = ""

    def __call__(self, scope: Scope, body: bytes) -> bytes:
        if not scope["path"].endswith("/issues") or b"updated_after" not in scope["query_string"]:
            return body
        page = json.loads(body)
        data = page.get("data") or []
        if len(data) == 100 and data[-1]["id"] == self.target:
            data[-1]["title"] = {"not": "text"}
        return json.dumps(page).encode()


async def test_a_guess_the_parsed_page_contradicts_costs_a_request_not_a_record(
    tmp_path: Path, cache: Cache
) -> None:
    """The guess reads the raw last record; the pull moves on from the last one it could
    read, so the query it sends next is not the guessed one."""
    unreadable = Unreadable()
    asked: list[str] = []
    async with served(
        tmp_path, ISSUES, wrap=lambda app: rewriting_bodies(app, unreadable)
    ) as service:
        in_order = sorted((stamp, key) for key, stamp in (await server_issues(service)).items())
        unreadable.target = in_order[198][1]  # page 2 re-reads the 100th
        transport = IssueRequests(
            service.transport(), asked, lambda request: request.url.params.get("updated_after", "")
        )
        async with session_on(service, cache, transport=transport) as session:
            report = await pull(session, retry=FAST_RETRY)
        assert local_issues(cache) == await server_issues(service)
    issues = report.resources["issues"]
    assert [skipped.id for skipped in issues.skipped] == [unreadable.target]
    guessed, real = before(in_order[198][0]), before(in_order[197][0])
    assert guessed in asked and real in asked
    assert asked.index(guessed) < asked.index(real)
    assert issues.requests == 6 + 1  # the pages, the count check, the contradicted guess
