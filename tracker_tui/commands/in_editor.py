"""`--editor` for `issues create|edit|comment`: the issue as a template (the fields on top, the
description below, as in the app's `E`), or the comment, written in the user's editor.

Fields given as options too (`issues edit 12 --priority high --editor`) are filled in the
template; what the editor gives back is what is written. Drafts are the app's
(`tracker_tui.data.draft_keys`), so either one continues a text the other left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from cache import ME_STATE_KEY, JsonObject, JsonValue
from issuefields import COMMENT_BODY, new_issue_defaults, problem
from tracker_tui.commands import texts
from tracker_tui.commands.refs import Names
from tracker_tui.data import issue_text
from tracker_tui.data.draft_keys import comment_key, editor_key
from tracker_tui.data.people import Directory
from tracker_tui.editor import TemplateError, with_help, without_help
from tracker_tui.errors import UsageError

if TYPE_CHECKING:
    from cache import Cache

COMMENT_HELP = (
    "Your comment, as Markdown; it is queued and sent once you save and quit.",
    "An empty file, or one saved unchanged, cancels.",
)


def _directory(cache: Cache) -> Directory:
    me = cache.state.get(ME_STATE_KEY)
    return texts.directory(cache, me if isinstance(me, str) else None)


def create(cache: Cache, given: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """A new issue's fields, from the template filled with `given` and the defaults."""
    directory = _directory(cache)
    empty: JsonObject = {"title": "", **cast(JsonObject, new_issue_defaults())}
    values = {**empty, **given}
    return texts.edit(
        cache,
        editor_key(None),
        issue_text.render(empty, directory, new=True),
        lambda text: issue_text.parse(text, directory, None),
        help=issue_text.help_lines(values, directory, new=True),
        again="`tracker-tui issues create --editor` opens it again",
        start=issue_text.render(values, directory, new=True),
    )


def edit(cache: Cache, issue_id: str, given: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The fields changed in the issue's template (filled with `given`), checked against the
    issue as the cache has it (a status move by the workflow)."""
    detail = cache.reads.issue(issue_id)
    if detail is None:
        raise UsageError(f"no issue {issue_id} in the local cache")
    directory = _directory(cache)
    current: JsonObject = {**detail.record, "description": detail.description}
    values = {**current, **given}
    number = Names(cache).issue(issue_id)
    fields = texts.edit(
        cache,
        editor_key(issue_id),
        issue_text.render(current, directory, new=False),
        lambda text: issue_text.parse(text, directory, current),
        help=issue_text.help_lines(current, directory, new=False),
        again=f"`tracker-tui issues edit {number} --editor` opens it again",
        start=issue_text.render(values, directory, new=False),
    )
    return dict(issue_text.changes(fields, current))


def comment(cache: Cache, issue_id: str, body: str) -> str:
    """A comment written in the editor, starting from `body` (or the comment kept as a draft,
    in the app's comment box or by an earlier `--editor`)."""

    def parse(text: str) -> str:
        found = without_help(text, COMMENT_HELP)
        if (wrong := problem(COMMENT_BODY, found)) is not None:
            raise TemplateError(None, wrong)
        return found

    def draft(text: str) -> JsonObject | None:
        found = without_help(text, COMMENT_HELP)
        return {"body": found} if found.strip() else None

    number = Names(cache).issue(issue_id)
    return texts.edit(
        cache,
        comment_key(issue_id),
        with_help(body, COMMENT_HELP),
        parse,
        help=COMMENT_HELP,
        again=f"`tracker-tui issues comment {number} --editor` opens it again",
        draft_of=draft,
    )
