"""An issue's comments, each a heading (who, when, whether it is on the server yet) over its
body rendered as Markdown, like the description above them (a single newline a line break:
`tracker_tui.widgets.markdown_text`).

The issue's screen re-reads on every change of the cache (a pull, a write queued), mostly with
the same comments: the thread rebuilds its widgets only when what it shows changed, so a pull
elsewhere does not re-parse every comment's Markdown or move the reader's scroll.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Markdown, Static

from tracker_tui.widgets.markdown_text import line_break_parser

ShownComment = tuple[str, str, str]
"""(author, when and whether sent, Markdown body): one comment as drawn."""


class CommentThread(Vertical):
    """The comments of one issue, oldest first; a dim line when there are none."""

    DEFAULT_CSS: ClassVar[str] = """
    CommentThread {
        height: auto;
        & .comment-heading { color: $text-muted; }
        & Markdown { margin: 0; padding: 0; }
        & .comment-empty { color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: tuple[ShownComment, ...] | None = None
        self._empty = ""

    async def show(self, comments: Sequence[ShownComment], empty: str) -> None:
        """Draw `comments` (or `empty` when there are none), unless that is drawn already."""
        wanted = tuple(comments)
        if wanted == self.shown and empty == self._empty:
            return
        self.shown, self._empty = wanted, empty
        widgets: list[Widget] = []
        for author, when, body in wanted:
            heading = Text.assemble((author, "bold"), f" · {when}")
            widgets.append(Static(heading, classes="comment-heading"))
            widgets.append(Markdown(body, classes="comment-body", parser_factory=line_break_parser))
        if not widgets:
            widgets.append(Static(empty, classes="comment-empty"))
        async with self.batch():
            await self.remove_children()
            await self.mount_all(widgets)

    @property
    def text(self) -> str:
        """Every heading and body as plain text (what a test or a copy looks for)."""
        if not self.shown:
            return self._empty
        return "\n".join(f"{author} · {when}\n{body}" for author, when, body in self.shown)
