"""What the app may do with the profile's key now: the permissions known of it, and whether
changes are off (chosen with `--read-only`, or because the key cannot write issues).

One mutable value shared by the app and every screen (through `Services`), because what the
key may do is learned while the app runs too: `/me` read when the engine connects, or a 403
that names a permission (`sync.permissions`). The engine link says so (`PermissionsChanged`),
the app updates this value and bumps its `key_permissions`, and the screens watching it hide
or disable what the key may no longer do.
"""

from __future__ import annotations

from sync.permissions import ISSUES_WRITE, KNOWN, KeyPermissions


class KeyAccess:
    """The key's permissions as last learned, and the user's own read-only choice."""

    def __init__(
        self, permissions: KeyPermissions | None = None, *, chosen_read_only: bool = False
    ):
        self.permissions = permissions or KeyPermissions()
        self.chosen_read_only = chosen_read_only

    @property
    def read_only(self) -> bool:
        """Changes are off: chosen, or the key is known not to write issues."""
        return self.chosen_read_only or self.permissions.lacks(ISSUES_WRITE)

    def learn(self, permissions: KeyPermissions) -> list[str]:
        """Take newer knowledge of the key; returns the known permissions it now lacks that
        it was not known to lack before (what screens must take away, in `KNOWN`'s order)."""
        before, self.permissions = self.permissions, permissions
        return [p for p in KNOWN if permissions.lacks(p) and not before.lacks(p)]


def lost_notice(lost: list[str]) -> str:
    """One line saying what the key turned out to lack and what the app does about it."""
    named = ", ".join(f"`{permission}`" for permission in lost)
    doing: list[str] = []
    if ISSUES_WRITE in lost:
        doing.append("changes are off (read-only); writes already queued wait in the outbox")
    unread = [p.removesuffix(":read") for p in lost if p.endswith(":read")]
    if unread:
        doing.append(f"{' and '.join(unread)} are not synced")
    said = "; ".join(doing) or "what needs it is disabled"
    return f"This API key lacks {named} (the server said so): {said}."
