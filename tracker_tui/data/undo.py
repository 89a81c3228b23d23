"""Undoing the last bulk change by allowed moves only, and saying first what cannot be undone.

The cache does the undo (`Cache.outbox.undo_batch`) but knows no workflow; `route` gives it the
workflow's (docs/api.md#statuses-and-workflow), the one the bulk preview checks moves against: a
status goes back along allowed moves (In progress → Todo → Backlog, two writes sent in order), never
as a move the server would refuse and leave as a failed write. `check` previews the undo without
changing anything, so the app can name the issues it cannot restore before it does anything; `run`
does it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from cache import JsonValue, Resource
from cache.models import Frozen
from cache.undo import CHANGED, NO_ROUTE, UndoResult, Unrestored
from issuefields import STATUS, status_path
from tracker_tui.data.cache_source import CacheIssueSource
from tracker_tui.data.changes import field_name, value_text
from tracker_tui.formatting import count_label, issue_reference

SHOWN_AT_MOST = 6
"""Issues named one by one in a message; the rest are counted."""


def route(
    resource: Resource, name: str, current: JsonValue, wanted: JsonValue
) -> tuple[JsonValue, ...] | None:
    """How a field may go back: a status by allowed moves, anything else directly."""
    statuses = isinstance(current, str) and isinstance(wanted, str)
    if resource is Resource.ISSUES and name == STATUS.member and statuses:
        return status_path(str(current), str(wanted))
    return (wanted,)


class UndoCheck(Frozen):
    """What an undo does (or would do), with what a person needs to read it."""

    _fields = ("result", "refs", "names")
    __slots__ = _fields
    result: UndoResult
    refs: Mapping[str, str]
    """Issue id → "#12"."""
    names: Mapping[str, str]
    """User and project ids → names, for values."""

    def __init__(
        self,
        result: UndoResult,
        refs: Mapping[str, str] | None = None,
        names: Mapping[str, str] | None = None,
    ) -> None:
        self._init(result, {} if refs is None else refs, {} if names is None else names)

    def ref(self, record_id: str) -> str:
        return self.refs.get(record_id, record_id)

    def done_line(self) -> str:
        """ "3 issues restored (2 via Todo); 4 unsent changes dropped"."""
        result = self.result
        parts: list[str] = []
        if result.restored:
            via = Counter(
                " → ".join(value_text(d.field, step, self.names) for step in d.steps[:-1])
                for d in result.detours
            )
            ways = ", ".join(f"{count} via {path}" for path, count in via.items())
            parts.append(
                f"{count_label(len(result.restored), 'issue')} restored"
                + (f" ({ways})" if ways else "")
            )
        if result.dropped:
            parts.append(f"{count_label(len(result.dropped), 'unsent change')} dropped")
        return "; ".join(parts) or "nothing to undo"

    def unrestored_lines(self) -> list[str]:
        """One line per issue (or field) left as it is, at most `SHOWN_AT_MOST`."""
        kept = self.result.unrestored
        lines = [self._why(item) for item in kept[:SHOWN_AT_MOST]]
        if len(kept) > SHOWN_AT_MOST:
            lines.append(f"and {len(kept) - SHOWN_AT_MOST} more")
        return lines

    def _why(self, item: Unrestored) -> str:
        ref = self.ref(item.record_id)
        if item.field is None:
            return f"{ref}: {item.reason}"
        name = field_name(item.field)
        now = value_text(item.field, item.current, self.names)
        was = value_text(item.field, item.wanted, self.names)
        if item.reason == CHANGED:
            return f"{ref} {name}: changed since (now {now})"
        if item.reason == NO_ROUTE:
            return f"{ref} {name}: no allowed move from {now} back to {was}"
        return f"{ref} {name}: {item.reason}"

    def question(self) -> str:
        """For the confirmation asked before an undo that cannot restore everything."""
        kept = self.result.unrestored
        lines = [
            "Undo the last bulk change?",
            f"It would leave {count_label(len(kept), 'change')} as it is:",
            *(f"  {line}" for line in self.unrestored_lines()),
            f"and undo the rest: {self.done_line()}.",
        ]
        return "\n".join(lines)

    def notice(self) -> str:
        """What the undo did, for a notification."""
        text = f"Bulk change undone: {self.done_line()}."
        if self.result.unrestored:
            left = "; ".join(self.unrestored_lines())
            text += f" Left as they are: {left}."
        return text


def _described(source: CacheIssueSource, result: UndoResult) -> UndoCheck:
    ids = {*result.restored, *result.dropped, *(item.record_id for item in result.unrestored)}
    refs: dict[str, str] = {}
    for record_id in ids:
        record = source.cache.server.server_record(Resource.ISSUES, record_id) or {}
        number = record.get("number")
        refs[record_id] = issue_reference(number if isinstance(number, int) else None, record_id)
    return UndoCheck(result, refs, {**source.user_names(), **source.project_keys()})


def check(source: CacheIssueSource, batch_id: str) -> UndoCheck:
    """What undoing the batch would do; changes nothing (run it in a worker)."""
    return _described(source, source.cache.outbox.undo_batch(batch_id, route, preview=True))


def run(source: CacheIssueSource, batch_id: str) -> UndoCheck:
    """Undo the batch (run it in a worker)."""
    return _described(source, source.cache.outbox.undo_batch(batch_id, route))
