"""Handing a text to the user's editor (`$VISUAL`, else `$EDITOR`, else `vi`) and taking it back.

Used by the command line (`--editor`) and the app (`ctrl+e`, `E`, which suspend Textual around
it), so it imports no Textual. The text goes into a temporary file of the user's alone; once the
editor exits, what the file holds is handed to `keep` (the caller stores it as a draft in the
cache) *before* the file is removed, so nothing typed is lost to an editor that failed, a parse
error or a crash after it: the draft is there the next time the same text is edited.

A template keeps its help below a scissors line, as `git commit --cleanup=scissors` does: the
help is `#` lines, but a Markdown body may hold `# Heading` lines of its own, which are kept;
everything from the scissors line on is dropped. When the user deleted that line, the help lines
written are dropped one by one instead.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tracker_tui.errors import TrackerTuiError

FALLBACK = "vi"
SCISSORS = "# ------------------------ >8 ------------------------"
SCISSORS_HELP = "# Everything from the line above on is help, and is dropped."


class EditorError(TrackerTuiError):
    """The editor could not be started, or it exited with a failure; `kept` says whether the
    text was kept as a draft (it always is once the editor ran)."""

    def __init__(self, message: str, *, kept: bool) -> None:
        super().__init__(message)
        self.kept = kept


class TemplateError(TrackerTuiError):
    """A line of an edited text that cannot be taken: the message names the line."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line


def editor_command(environ: Mapping[str, str] | None = None) -> list[str]:
    """The editor's command line, split as a shell would (`code --wait` is two words)."""
    env = os.environ if environ is None else environ
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            return shlex.split(value)
    return [FALLBACK]


def editor_name(environ: Mapping[str, str] | None = None) -> str:
    """The editor's program, for messages ("vim exited with status 1")."""
    return Path(editor_command(environ)[0]).name


def run_editor(
    text: str,
    keep: Callable[[str], None],
    *,
    suffix: str = ".md",
    environ: Mapping[str, str] | None = None,
) -> str:
    """`text` edited by the user: what the file holds once the editor exits with success.

    `keep` gets that text before the file is removed, on success and failure alike. The
    editor inherits this process's terminal: the caller hands it over (the app suspends).
    Raises `EditorError` when the editor cannot start or exits with a failure."""
    command = editor_command(environ)
    folder = tempfile.mkdtemp(prefix="tracker-tui-")
    path = Path(folder) / f"edit{suffix}"
    try:
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
        status = _run([*command, str(path)], command[0])
        edited = path.read_text(encoding="utf-8", errors="replace")
        keep(edited)
    finally:
        path.unlink(missing_ok=True)
        os.rmdir(folder)
    if status != 0:
        raise EditorError(
            f"{Path(command[0]).name} exited with status {status}: your text is kept as a draft",
            kept=True,
        )
    return edited


def _run(argv: Sequence[str], program: str) -> int:
    try:
        return subprocess.run(argv, check=False).returncode
    except FileNotFoundError:
        raise EditorError(
            f"no editor {program!r} found: set $VISUAL or $EDITOR to the one you use",
            kept=False,
        ) from None
    except OSError as error:
        raise EditorError(f"could not start the editor {program!r}: {error}", kept=False) from None


def with_help(body: str, help_lines: Sequence[str]) -> str:
    """The text to edit: `body`, then the help below a scissors line."""
    lines = [SCISSORS, SCISSORS_HELP, *(f"# {line}".rstrip() for line in help_lines)]
    return body.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"


def without_help(text: str, help_lines: Sequence[str] = ()) -> str:
    """The edited text with the help dropped (from the scissors line on; when that line was
    deleted, the help lines themselves), trailing blank lines trimmed."""
    lines = text.splitlines()
    if SCISSORS in (stripped := [line.rstrip() for line in lines]):
        lines = lines[: stripped.index(SCISSORS)]
    else:
        written = {SCISSORS_HELP, *(f"# {line}".rstrip() for line in help_lines)}
        lines = [line for line in lines if line.rstrip() not in written]
    return "\n".join(line.rstrip() for line in lines).strip("\n")


@dataclass(frozen=True)
class Edited:
    """What came back from the editor, the help dropped."""

    text: str
    changed: bool
    """Whether it differs from what was handed to the editor (help dropped from both)."""

    @property
    def cancelled(self) -> str | None:
        """Why the edit cancels (an empty or unchanged text), None when it goes on."""
        if not self.text.strip():
            return "the text was empty"
        if not self.changed:
            return "nothing was changed"
        return None


def edited(before: str, after: str, help_lines: Sequence[str] = ()) -> Edited:
    """Compare the text handed to the editor with what came back, help dropped."""
    text = without_help(after, help_lines)
    return Edited(text, text.strip() != without_help(before, help_lines).strip())
