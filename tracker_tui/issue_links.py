"""Copying an issue's number, id or web address, and opening it in a browser.

The web address comes from the profile's `web_url` template (`[profiles.NAME.ui]` in
config.toml), e.g. `https://tracker.example/issue/{number}`; `{number}` and `{id}` are filled
in. Copying goes through the terminal (OSC 52, which also works over
ssh and inside tmux), opening through `App.open_url` (the `BROWSER` variable, else the
system's opener).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cache import IssueRow
from issuefields.frozen import Frozen
from tracker_tui.formatting import issue_reference

WEB_URL_KEY = "web_url"
"""The key of the template in a profile's `ui` table."""
EXAMPLE_TEMPLATE = "https://tracker.example/issue/{number}"


class LinkError(Exception):
    """An issue's web address cannot be made; the message says how to fix it."""


def saved_web_url(ui: Mapping[str, Any]) -> str | None:
    """The profile's template, None when it has none (a hand-edited file may hold anything)."""
    template = ui.get(WEB_URL_KEY)
    return template.strip() if isinstance(template, str) and template.strip() else None


def how_to_set(profile: str, config_file: str) -> str:
    """What to write where, for a profile without a template."""
    table = f"[profiles.{profile}.ui]" if profile else "[profiles.<name>.ui]"
    return (
        f'No web address is set for this profile: add web_url = "{EXAMPLE_TEMPLATE}" '
        f"under {table} in {config_file}."
    )


class IssueLinks(Frozen):
    """The profile's template and the words to say when it has none."""

    _fields = ("template", "missing")
    __slots__ = _fields
    template: str | None
    missing: str

    def __init__(self, template: str | None, missing: str) -> None:
        self._init(template, missing)

    def url(self, issue: IssueRow) -> str:
        """The issue's web address; `LinkError` when there is no template, or it names a field
        the issue has not got yet (an issue created offline has no number until it is sent)."""
        if self.template is None:
            raise LinkError(self.missing)
        numbered = "{number}" in self.template
        number = _number(issue) if numbered else None
        if number is None and numbered:
            raise LinkError("This issue has no number until the server has it: sync first.")
        try:
            return self.template.format(number=number, id=issue.id)
        except (KeyError, IndexError, ValueError) as error:
            raise LinkError(
                f"The web_url template {self.template!r} is not usable ({error!r}): "
                "use {number} or {id}."
            ) from None


def copied_text(issue: IssueRow, what: str, links: IssueLinks) -> tuple[str, str]:
    """The text to copy for `what` (number, id or url) and how the status line names it."""
    if what == "number":
        number = _number(issue)
        if number is None:
            raise LinkError("This issue has no number until the server has it: copy its id.")
        return f"#{number}", f"#{number}"
    if what == "id":
        return issue.id, f"the id {issue.id}"
    url = links.url(issue)
    return url, url


def _number(issue: IssueRow) -> int | None:
    """The number to copy or link: none but an integer. One beyond the cache's 64-bit
    integers is a float in its row (docs/sync.md#records-the-cache-cannot-hold), whose digits
    are not the server's."""
    if issue.number is None and issue.cells.get("number") is not None:
        raise LinkError("This issue's number is too large for this client to copy: use its id.")
    return issue.number


def reference(issue: IssueRow) -> str:
    """How a message names the issue."""
    number = issue.cells.get("number")
    return issue_reference(number if isinstance(number, int) else None, issue.id)
