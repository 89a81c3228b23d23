"""The keys drafts are kept under in the cache (`Cache.drafts`), shared by the app and the
command line (which must not import Textual, as `tracker_tui.drafts` does): a comment begun in
the app is the one `issues comment --editor` opens, and the other way round. A key ending in
":<record id>" follows its record when an offline id gives way to the server's."""

from __future__ import annotations


def comment_key(issue_id: str) -> str:
    """The comment being written on an issue (the comment box's, and the editor's)."""
    return f"comment:{issue_id}"


def issue_key(issue_id: str | None) -> str:
    """The issue form's draft: one for a new issue, one per issue edited."""
    return f"issue:{issue_id or 'new'}"


def editor_key(issue_id: str | None) -> str:
    """An issue's template being written in `$EDITOR`: one per issue, one for a new issue."""
    return f"editor:issue:{issue_id or 'new'}"


BULK_EDITOR_KEY = "editor:bulk"
"""The table of issues being written in `$EDITOR`."""
