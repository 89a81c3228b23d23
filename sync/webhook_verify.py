"""Is this webhook delivery genuine, recent and new? (docs/sync.md#webhooks,
docs/api.md#webhooks)

`X-Tracker-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`: the HMAC proves
the body came from a holder of the secret, the time bound (5 minutes either way, judged on the
*server's* clock as measured from `Date` headers, since the local one may be minutes off)
stops a captured delivery being replayed later, and the delivery id (`X-Tracker-Delivery`)
drops the duplicates at-least-once delivery sends within that window. Several `v1` values
may be present (secret rotation): any one matching is enough. The comparison is constant-time.

The delivery id header is not covered by the signature, so it is trusted only when it names the
event id inside the signed body (`delivery_id`): otherwise a captured delivery could be replayed
under a fresh id and pass as new.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import OrderedDict

MAX_AGE = 300.0
MAX_BODY = 1024 * 1024
"""The reference service's request limit (docs/api.md#field-limits); one event holds one record, far
smaller."""
REMEMBERED_DELIVERIES = 10_000


class WebhookRejected(Exception):
    """A delivery refused; `status` is what the receiver answers."""

    def __init__(self, status: int, reason: str) -> None:
        self.status = status
        self.reason = reason
        super().__init__(f"{status}: {reason}")


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The header value a sender with `secret` puts on `body` at `timestamp`."""
    return f"t={timestamp},v1={_digest(secret, timestamp, body)}"


def _digest(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def verify(secret: str, header: str | None, body: bytes, now: float) -> None:
    """Raise `WebhookRejected` unless `header` signs `body` with `secret` near `now`."""
    if not header:
        raise WebhookRejected(401, "no signature")
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t" and value.isdigit():
            timestamp = int(value)
        elif name == "v1" and value:
            candidates.append(value)
    if timestamp is None or not candidates:
        raise WebhookRejected(401, "malformed signature")
    if abs(now - timestamp) > MAX_AGE:
        raise WebhookRejected(401, "signature timestamp too old or in the future")
    expected = _digest(secret, timestamp, body)
    if not any(hmac.compare_digest(expected, given) for given in candidates):
        raise WebhookRejected(401, "bad signature")


def delivery_id(header: str | None, body: bytes) -> str:
    """The delivery's id: the signed body's event `id`, which the header must repeat."""
    try:
        event = json.loads(body)
    except ValueError:
        raise WebhookRejected(400, "the body is not JSON") from None
    event_id = event.get("id") if isinstance(event, dict) else None
    if not isinstance(event_id, str) or not event_id:
        raise WebhookRejected(400, "the body names no event id")
    if header != event_id:
        raise WebhookRejected(400, "the delivery id is not the signed event's id")
    return event_id


class DeliveryLog:
    """Delivery ids seen lately; the oldest are forgotten past `size` (they are long stale)."""

    def __init__(self, size: int = REMEMBERED_DELIVERIES) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._size = size

    def first_time(self, delivery: str) -> bool:
        """Record `delivery`; False when it was seen before."""
        if delivery in self._seen:
            return False
        self._seen[delivery] = None
        if len(self._seen) > self._size:
            self._seen.popitem(last=False)
        return True
