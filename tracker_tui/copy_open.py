"""The app's keys for the issue on screen (the highlighted row of the list, or the issue the
detail screen shows): `Y` copies its number, id or web address, `O` opens it in a browser.

The issue is taken when the key is pressed, so the menu's answer acts on that issue even if
the list moves under it meanwhile. Copying goes through the terminal (OSC 52); opening runs in
a thread, since a browser launcher may take a while to return.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any, ClassVar, Protocol, runtime_checkable

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.screen import Screen

from accounts.profiles import AppPaths
from cache import IssueRow
from tracker_tui.issue_links import IssueLinks, LinkError, copied_text, how_to_set, reference
from tracker_tui.services import Services
from tracker_tui.widgets.status_bar import StatusBar


@runtime_checkable
class ShowsIssue(Protocol):
    """A screen with one issue in front of the user."""

    @property
    def shown_issue(self) -> IssueRow | None:
        """The issue on screen, None while none is (loading, an empty list)."""
        ...


class CopyOpenApp(App[object]):
    """`Y` and `O` on whichever screen shows an issue; hidden elsewhere."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("Y", "copy_menu", "Copy #, id or URL…", show=False, id="app.copy_menu"),
        Binding("O", "open_in_browser", "Open in browser", show=False, id="app.open_in_browser"),
    ]

    services: Services | None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The keys show only where an issue is on screen."""
        if action in ("copy_menu", "open_in_browser"):
            return isinstance(self.screen, ShowsIssue)
        return True

    def issue_commands(self, screen: Screen[Any]) -> Iterator[SystemCommand]:
        """The palette's copy and open commands, for the issue `screen` shows (taken now)."""
        issue = screen.shown_issue if isinstance(screen, ShowsIssue) else None
        if issue is None:
            return
        named = reference(issue)
        for what, title, keys in (
            ("number", "number", "Y y"),
            ("id", "id", "Y i"),
            ("url", "web address", "Y u"),
        ):
            yield SystemCommand(
                f"Copy {named}'s {title}", f"key: {keys}", partial(self._copy, issue, what)
            )
        yield SystemCommand(f"Open {named} in a browser", "key: O", partial(self._open, issue))

    def _links(self) -> IssueLinks:
        services = self.services
        profile = services.profile if services else ""
        missing = how_to_set(profile, str(AppPaths.from_env().config_file))
        return IssueLinks(services.web_url if services else None, missing)

    def _shown(self) -> IssueRow | None:
        screen = self.screen
        issue = screen.shown_issue if isinstance(screen, ShowsIssue) else None
        if issue is None:
            self.notify("No issue is on screen.", severity="warning")
        return issue

    def action_copy_menu(self) -> None:
        """Ask what to copy of the issue on screen (number, id, web address)."""
        from tracker_tui.screens.copy_menu import CopyMenu  # docs/architecture.md#start-up

        if (issue := self._shown()) is None:
            return
        links = self._links()
        try:
            url = links.url(issue)
        except LinkError:
            url = "(no web_url set for this profile)"
        self.push_screen(
            CopyMenu(reference(issue), issue.id, url), lambda what: self._copy(issue, what)
        )

    def _copy(self, issue: IssueRow, what: str | None) -> None:
        if what is None:
            return
        try:
            text, named = copied_text(issue, what, self._links())
        except LinkError as error:
            self.notify(str(error), severity="warning", timeout=10)
            return
        self.copy_to_clipboard(text)
        self.echo(f"Copied {named}")

    def action_open_in_browser(self) -> None:
        """Open the issue on screen at its web address, from the profile's template."""
        if (issue := self._shown()) is not None:
            self._open(issue)

    def _open(self, issue: IssueRow) -> None:
        try:
            url = self._links().url(issue)
        except LinkError as error:
            self.notify(str(error), severity="warning", timeout=10)
            return
        self.run_worker(
            lambda: self.open_url(url), thread=True, exit_on_error=False, group="open-url"
        )
        self.echo(f"Opening {url}")

    def echo(self, text: str) -> None:
        """Say it in the screen's status bar, or as a notice where there is none."""
        try:
            self.screen.query_one(StatusBar).echo(text)
        except NoMatches:
            self.notify(text)
