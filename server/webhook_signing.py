"""Webhook signatures: ``X-Tracker-Signature: t=<unix>,v1=<hex HMAC-SHA256>``.

The HMAC covers ``"<t>.<raw body>"`` so that a receiver can tell both that the body came from a
holder of the secret and that it was signed recently; the age check is what stops a captured
delivery being replayed later. A header may carry several ``v1`` values (as when a secret is
being rotated); any one matching is enough.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_TOLERANCE_SECONDS = 300


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Tracker-Signature`` value for ``body`` sent at ``timestamp``."""
    return f"t={timestamp},v1={_digest(secret, timestamp, body)}"


def verify(
    secret: str,
    header: str,
    body: bytes,
    now: float,
    tolerance: float = SIGNATURE_TOLERANCE_SECONDS,
) -> bool:
    """Whether ``header`` signs ``body`` with ``secret`` at most ``tolerance`` seconds from ``now``.

    A timestamp further than ``tolerance`` in the future is refused too: it can only come from
    a badly wrong clock or a forgery, and accepting it would stretch the replay window.
    """
    parsed = _parse(header)
    if parsed is None:
        return False
    timestamp, candidates = parsed
    if abs(now - timestamp) > tolerance:
        return False
    expected = _digest(secret, timestamp, body)
    return any(hmac.compare_digest(expected, candidate) for candidate in candidates)


def _digest(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def _parse(header: str) -> tuple[int, list[str]] | None:
    """The timestamp and the ``v1`` signatures of a header, or None if it is malformed."""
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            return None
        if name == "t":
            if timestamp is not None or not value.isascii() or not value.isdigit():
                return None
            timestamp = int(value)
        elif name == "v1":
            candidates.append(value)
    if timestamp is None or not candidates:
        return None
    return timestamp, candidates
