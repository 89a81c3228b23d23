"""How the issue's screen reads Markdown: a single newline is a line break.

CommonMark joins lines split by one newline into one paragraph (a "soft break"), which suits
prose wrapped by hand at 72 columns but not what people type into a tracker: a comment of
three short lines ("Done.\nDeployed to staging.\nClosing tomorrow.") showed as one run-on line.
GitHub renders issue bodies and comments with each newline kept, and so does this app, for
comments and descriptions alike: each soft break becomes a hard one (markdown-it's `breaks`
option only tells its HTML renderer, and Textual draws a soft break as a space whatever the
options say). Everything else is the
GitHub-flavoured Markdown Textual uses by default: lists, code blocks, tables and headings
are unchanged, and a blank line still starts a new paragraph.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore


def line_break_parser() -> MarkdownIt:
    """Textual's default parser ("gfm-like") with single newlines kept as line breaks."""
    parser = MarkdownIt("gfm-like", {"breaks": True})
    parser.core.ruler.push("soft_breaks_kept", _keep_soft_breaks)
    return parser


def _keep_soft_breaks(state: StateCore) -> None:
    """A newline inside a paragraph (a soft break) is drawn as the line break it was typed as;
    code blocks hold no inline tokens, so they are left as they are."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"
