"""Where committed changes are announced (the seam the webhook outbox plugs into).

Every write (single endpoints and each bulk operation) calls `EventSink.emit` once per changed
record, after its transaction has committed, so a sink never announces a change that was rolled
back. Event types are those of docs/service.md#webhooks: `issue.created`, `issue.updated`,
`issue.deleted`, and the same three for `project` and `comment`. `obj` is the record as the API
shows it (for a deletion, as it was); `previous` is given for `*.updated` only and holds the old
values of the changed fields.
"""

from __future__ import annotations

from typing import Any, Protocol


class EventSink(Protocol):
    def emit(
        self,
        workspace_id: str,
        event_type: str,
        obj: dict[str, Any],
        previous: dict[str, Any] | None,
    ) -> None: ...


class NullEventSink:
    """The sink of a service without webhooks: events go nowhere."""

    def emit(
        self,
        workspace_id: str,
        event_type: str,
        obj: dict[str, Any],
        previous: dict[str, Any] | None,
    ) -> None:
        return None


class FanOutSink:
    """Hands every event to several sinks in turn: the app's webhook dispatcher and a sink the
    caller of `create_app` passed in (a test's recorder, an embedding app's listener)."""

    def __init__(self, *sinks: EventSink) -> None:
        self.sinks = sinks

    def emit(
        self,
        workspace_id: str,
        event_type: str,
        obj: dict[str, Any],
        previous: dict[str, Any] | None,
    ) -> None:
        for sink in self.sinks:
            sink.emit(workspace_id, event_type, obj, previous)
