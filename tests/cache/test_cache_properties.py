"""Property tests: coalescing never changes what the user meant, and the effective view always
equals the model of server rows with local writes applied in order."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cache_factories import Clock, Record, issue, stamp
from cache_oracle import Row, expected
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cache import (
    Cache,
    EntryState,
    IssueFilter,
    IssueSort,
    Operation,
    OutboxEntry,
    RecordNotFoundError,
    Resource,
)
from issuefields import SORT_KEYS

ISSUE = Resource.ISSUES
FIELDS = {
    "title": ["alpha", "beta", "Gamma one", "delta"],
    "status": ["backlog", "todo", "done", "triage"],
    "priority": ["urgent", "low", "none", "p9"],
    "assignee": [None, "usr_1", "usr_2"],
}
DEFAULTS: Record = {"status": "todo", "priority": "none", "assignee": None, "description": ""}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

field_value = st.sampled_from(sorted(FIELDS)).flatmap(
    lambda name: st.tuples(st.just(name), st.sampled_from(FIELDS[name]))
)
target = st.integers(min_value=0, max_value=5)
operation = st.one_of(
    st.tuples(
        st.just("update"),
        target,
        st.lists(field_value, min_size=1, max_size=3),
        st.sampled_from([None, "batch"]),
    ),
    st.tuples(st.just("create"), st.sampled_from(FIELDS["title"])),
    st.tuples(st.just("delete"), target),
    st.just(("send",)),
)


@contextmanager
def fresh_cache() -> Iterator[Cache]:
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache.open(Path(tmp) / "cache.db", clock=Clock(start=1000.0))
        try:
            yield cache
        finally:
            cache.close()


class Server:
    """The service, reduced to applying writes in the order they arrive."""

    def __init__(self, records: list[Record]) -> None:
        self.records = {r["id"]: dict(r) for r in records}
        self.clock = 1000

    def apply(self, entry: OutboxEntry) -> Record | None:
        self.clock += 1
        if entry.operation is Operation.CREATE:
            record = {**DEFAULTS, **entry.changes, "id": f"iss_{self.clock:06d}"}
        elif entry.operation is Operation.DELETE:
            return self.records.pop(entry.target_id, None)
        elif entry.target_id in self.records:
            record = {**self.records[entry.target_id], **entry.changes}
        else:
            return None
        record["updated_at"] = stamp(self.clock)
        self.records[record["id"]] = record
        return record


def deliver(cache: Cache, server: Server) -> None:
    """Send the whole queue the way the sync engine would, one entry at a time."""
    while True:
        active = [e for e in cache.outbox.entries() if e.state is EntryState.SENDING]
        entry = active[0] if active else next(iter(cache.push.sendable()), None)
        if entry is None:
            return
        if entry.state is EntryState.PENDING:
            entry = cache.push.mark_sending(entry.id)
        cache.push.mark_done(entry.id, server.apply(entry))


def effective(cache: Cache, ids: list[str]) -> dict[str, Record | None]:
    out: dict[str, Record | None] = {}
    for key in ids:
        detail = cache.reads.issue(key)
        out[key] = None if detail is None else {f: detail.record.get(f) for f in FIELDS}
    return out


@SETTINGS
@given(st.lists(operation, max_size=25))
def test_coalesced_writes_mean_what_the_edits_meant_in_order(ops: list[tuple[Any, ...]]) -> None:
    initial = [issue(n, title=f"Issue {n}") for n in (1, 2, 3)]
    model: dict[str, Record | None] = {r["id"]: {f: r[f] for f in FIELDS} for r in initial}
    known = list(model)
    with fresh_cache() as cache:
        cache.server.apply_page(ISSUE, initial)
        for op in ops:
            if op[0] == "send":
                ready = cache.push.sendable()
                if ready:
                    cache.push.mark_sending(ready[0].id)
                continue
            if op[0] == "create":
                local = cache.outbox.create(ISSUE, {"title": op[1]})
                model[local] = {**{f: DEFAULTS.get(f) for f in FIELDS}, "title": op[1]}
                known.append(local)
                continue
            key = known[op[1] % len(known)]
            try:
                if op[0] == "update":
                    cache.outbox.update(ISSUE, key, dict(op[2]), batch_id=op[3])
                else:
                    cache.outbox.delete(ISSUE, key)
            except RecordNotFoundError:
                assert model[key] is None
                continue
            assert model[key] is not None
            if op[0] == "update":
                model[key] = {**model[key], **dict(op[2])}
            else:
                model[key] = None
        assert effective(cache, known) == model
        keys = [e.idempotency_key for e in cache.outbox.entries()]
        assert len(keys) == len(set(keys))
        server = Server(initial)
        deliver(cache, server)
        assert [e.state for e in cache.outbox.entries()] == [EntryState.DONE] * len(
            cache.outbox.entries()
        )
        after = effective(cache, known)
        assert after == model
        on_server = {
            cache.outbox.resolve_id(key): {f: r.get(f) for f in FIELDS}
            for key in known
            if (r := server.records.get(cache.outbox.resolve_id(key))) is not None
        }
        assert on_server == {
            cache.outbox.resolve_id(k): v for k, v in model.items() if v is not None
        }


random_record = st.fixed_dictionaries(
    {
        "title": st.sampled_from(["alpha", "Beta", "beta two", "gamma", "ALPHA x"]),
        "status": st.sampled_from([*FIELDS["status"], None]),
        "priority": st.sampled_from(FIELDS["priority"]),
        "assignee": st.sampled_from(FIELDS["assignee"]),
        "labels": st.lists(st.sampled_from(["bug", "ui"]), max_size=2, unique=True),
        "updated_at": st.sampled_from([stamp(1), stamp(2), stamp(3), None]),
        "number": st.sampled_from([1, 2, None]),
    }
)
local_op = st.one_of(
    st.tuples(st.just("update"), target, st.lists(field_value, min_size=1, max_size=2)),
    st.tuples(st.just("create"), st.sampled_from(FIELDS["title"])),
    st.tuples(st.just("delete"), target),
)
issue_filter = st.builds(
    IssueFilter,
    status=st.frozensets(st.sampled_from(FIELDS["status"]), max_size=2),
    priority=st.frozensets(st.sampled_from(FIELDS["priority"]), max_size=2),
    assignee=st.frozensets(st.sampled_from(FIELDS["assignee"]), max_size=2),
    label=st.frozensets(st.sampled_from(["bug", "ui"]), max_size=1),
    text=st.sampled_from(["", "alpha", "bet", "gamma one", "two "]),
    mine=st.sampled_from([None, "usr_1"]),
)
issue_sort = st.builds(IssueSort, st.sampled_from(list(SORT_KEYS)), st.booleans())


PLAIN_ALPHA: Record = {
    "title": "alpha",
    "status": "backlog",
    "priority": "urgent",
    "assignee": None,
    "labels": [],
    "updated_at": stamp(1),
    "number": None,
}


@SETTINGS
@given(
    st.lists(random_record, min_size=1, max_size=25),
    st.lists(local_op, max_size=12),
    issue_filter,
    issue_sort,
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=0, max_value=12),
)
@example(  # found on 2026-11-27: the edited create sorts after the other, by its edit time
    [PLAIN_ALPHA, PLAIN_ALPHA],
    [("create", "alpha"), ("create", "alpha"), ("update", 2, [("assignee", None)])],
    IssueFilter(),
    IssueSort("updated", False),
    0,
    1,
)
def test_the_effective_view_is_the_model_in_order(
    records: list[Record],
    ops: list[tuple[Any, ...]],
    flt: IssueFilter,
    sort: IssueSort,
    offset: int,
    limit: int,
) -> None:
    page = [{**r, "id": f"iss_{n:03d}"} for n, r in enumerate(records)]
    rows = {r["id"]: Row(r["id"], n + 1, dict(r), []) for n, r in enumerate(page)}
    with fresh_cache() as cache:
        cache.server.apply_page(ISSUE, page)
        for op in ops:
            keys = list(rows)
            if op[0] == "create":
                local = cache.outbox.create(ISSUE, {"title": op[1]})
                detail = cache.reads.issue(local)
                assert detail is not None
                position = (1 << 62) + detail.entries[0].id
                rows[local] = Row(local, position, dict(detail.record), [])
            elif keys:
                key = keys[op[1] % len(keys)]
                if op[0] == "update":
                    cache.outbox.update(ISSUE, key, dict(op[2]))
                    rows[key].record.update(dict(op[2]))
                    if key.startswith("local_"):
                        # A create edited before it is sent shows the edit's time
                        # (cache/overlay.py), taken from the cache's clock as the create's.
                        detail = cache.reads.issue(key)
                        assert detail is not None
                        assert detail.record["updated_at"] > rows[key].record["updated_at"]
                        rows[key].record["updated_at"] = detail.record["updated_at"]
                else:
                    cache.outbox.delete(ISSUE, key)
                    del rows[key]
        want = expected(list(rows.values()), flt, sort)
        assert cache.reads.count(flt) == len(want)
        got = [row.id for row in cache.reads.window(flt, sort, offset, limit)]
        assert got == want[offset : offset + limit]


@SETTINGS
@given(
    st.lists(random_record, min_size=1, max_size=25),
    st.lists(local_op, max_size=12),
    issue_filter,
    issue_sort,
)
def test_every_issue_is_positioned_where_its_window_shows_it(
    records: list[Record],
    ops: list[tuple[Any, ...]],
    flt: IssueFilter,
    sort: IssueSort,
) -> None:
    """`position` counts on the sort index where `window` walks it: the two must agree for
    every issue shown, edited or created ones included, counted from either end, and hidden
    ones have none."""
    page = [{**r, "id": f"iss_{n:03d}"} for n, r in enumerate(records)]
    with fresh_cache() as cache:
        cache.server.apply_page(ISSUE, page)
        known = [record["id"] for record in page]
        for op in ops:
            if op[0] == "create":
                known.append(cache.outbox.create(ISSUE, {"title": op[1]}))
                continue
            key = known[op[1] % len(known)]
            try:
                if op[0] == "update":
                    cache.outbox.update(ISSUE, key, dict(op[2]))
                else:
                    cache.outbox.delete(ISSUE, key)
            except RecordNotFoundError:
                continue
        shown = [row.id for row in cache.reads.window(flt, sort, 0, len(known))]
        want = {key: shown.index(key) if key in shown else None for key in known}
        for near in (None, 0, len(shown)):
            assert {key: cache.reads.position(flt, sort, key, near=near) for key in known} == want
