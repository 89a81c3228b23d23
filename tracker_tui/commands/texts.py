"""Long texts for `issues create|edit|comment`: `--editor` (the issue as a template, or the
comment, in `$VISUAL`/`$EDITOR`/`vi`), `--description-file` and `--body-file` (a file, or `-`
for stdin).

The editor's text is kept as a draft in the profile's cache before its file is removed (the
same drafts the app keeps: `editor:issue:<id>`, `editor:issue:new`, `comment:<issue id>`), so
a failed editor, or a text with a mistake in it, loses nothing: the next `--editor` on the same
issue opens it again. An empty or unchanged text cancels (exit status 130); a line that cannot
be taken names itself and, on a terminal, offers the editor again.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from cache import JsonObject
from tracker_tui.data.people import Directory
from tracker_tui.errors import UsageError
from tracker_tui.output import ask, notice

if TYPE_CHECKING:
    from cache import Cache

T = TypeVar("T")

STDIN = "-"


class Cancelled(Exception):
    """The text came back empty or unchanged: nothing is written (exit status 130)."""


def add_editor_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--editor",
        action="store_true",
        help=f"write {what} in $VISUAL or $EDITOR (else vi); an empty or unchanged text cancels",
    )


def add_file_option(parser: argparse.ArgumentParser, name: str, what: str) -> None:
    parser.add_argument(name, metavar="FILE", help=f"read {what} from FILE, or from stdin with '-'")


def read_text(path: str, option: str) -> str:
    """A file's text (stdin for `-`), refused with one line when it cannot be read."""
    if path == STDIN:
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise UsageError(f"{option}: cannot read {path!r}: {reason}") from None


def refuse_stdin_with_editor(editor: bool, *files: str | None) -> None:
    """The editor needs the terminal that `-` would read from."""
    if editor and STDIN in files:
        raise UsageError("--editor reads the terminal: give a file instead of '-' with it")


def directory(cache: Cache, me: str | None) -> Directory:
    return Directory(cache.reads.users(), cache.reads.projects(), me)


def edit(
    cache: Cache,
    key: str,
    baseline: str,
    parse: Callable[[str], T],
    *,
    help: Sequence[str],
    again: str,
    start: str | None = None,
    draft_of: Callable[[str], JsonObject | None] | None = None,
) -> T:
    """The text the user saved in the editor, parsed. It starts from `start` (else
    `baseline`, what "unchanged" compares with), or from the draft under `key` when one is
    kept. Raises `Cancelled` for an empty or unchanged text, `UsageError` for one kept as a
    draft with a mistake in it, `EditorError` when the editor failed (the text kept)."""
    from tracker_tui.editor import TemplateError, edited, run_editor, with_help, without_help

    keep_as = draft_of or (lambda text: {"text": text} if text.strip() else None)

    def keep(text: str) -> None:
        draft = keep_as(text)
        if draft is not None:
            cache.drafts.save(key, draft)

    kept = cache.drafts.get(key)
    text = baseline if start is None else start
    if kept is not None:
        found = kept.get("text", kept.get("body"))
        if isinstance(found, str) and found.strip():
            text = found if "text" in kept else with_help(found, help)
            notice("tracker-tui: your unsaved text is back in the editor")
    while True:
        after = run_editor(text, keep)
        result = edited(baseline, after, help)
        if result.cancelled is not None:
            if draft_of is None:
                cache.drafts.discard(key)
            raise Cancelled(result.cancelled)
        try:
            return parse(after)
        except TemplateError as error:
            if not sys.stdin.isatty():
                raise UsageError(f"{error}; the text is kept as a draft ({again})") from None
            answer = ask(f"tracker-tui: {error}. Edit again? [Y/n] ")
            if answer.strip().lower() in ("n", "no"):
                raise UsageError(f"not saved; the text is kept as a draft ({again})") from None
            text = with_help(without_help(after, help), [f"Not saved: {error}", *help])
