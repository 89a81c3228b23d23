"""The comment box of an issue's screen: several lines, sent with ctrl+s.

A comment is Markdown: lists, code blocks and paragraphs need line breaks, so enter writes a
new line (as in the description's box of the issue form) and ctrl+s sends, as ctrl+s saves
everywhere else in the app; the footer and the help say so while the box has the focus. ctrl+e
hands the text to `$EDITOR`. The box only asks: the screen sends, keeps the draft, and runs
the editor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.message import Message
from textual.widgets import TextArea

from tracker_tui.key_names import hint_keys


def placeholder(box: DOMNode) -> str:
    """What the empty box says, naming the keys as the keymap has them."""
    send = hint_keys(box, "comment.send")
    editor = hint_keys(box, "comment.editor")
    leave = hint_keys(box, "detail.back")
    return f"Write a comment (Markdown; {send} sends, {editor} opens $EDITOR, {leave} leaves)"


class CommentBox(TextArea):
    """A multi-line comment field; posts `Send` on ctrl+s and `EditorRequested` on ctrl+e."""

    HELP_GROUP: ClassVar[str] = "Comment box"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "send", "Send comment", id="comment.send"),
        Binding("ctrl+e", "open_editor", "Edit in $EDITOR", id="comment.editor"),
    ]
    DEFAULT_CSS: ClassVar[str] = """
    CommentBox {
        height: auto;
        min-height: 3;
        max-height: 10;
    }
    """

    @dataclass
    class Send(Message):
        """Send what the box holds."""

        box: CommentBox
        text: str

    @dataclass
    class EditorRequested(Message):
        """Edit what the box holds in `$EDITOR`."""

        box: CommentBox
        text: str

    def __init__(self, *, id: str | None = None, disabled: bool = False) -> None:
        super().__init__(
            "",
            id=id,
            disabled=disabled,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
        )

    def on_mount(self) -> None:
        """Name the keys once the box is on its screen (esc leaving it is the screen's key)."""
        self.placeholder = placeholder(self)

    def action_send(self) -> None:
        self.post_message(self.Send(self, self.text))

    def action_open_editor(self) -> None:
        self.post_message(self.EditorRequested(self, self.text))
