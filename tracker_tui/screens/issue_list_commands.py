"""The command palette's commands for the issue list screen (ctrl+p).

Every described key binding of the screen and the list becomes a command, so anything that can
be done with a key can be found by name; on top come the commands that need a value: sort by a
column, filter by a value, show a saved view. The app's own commands (help, theme, quit) come
from the app's system commands.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Protocol, runtime_checkable

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.types import IgnoreReturnCallbackType

from issuefields import FILTERS, SORTS, Field, Kind
from tracker_tui.data.source import FilterValue, IssueQuery
from tracker_tui.data.views import SavedView

Command = tuple[str, str, IgnoreReturnCallbackType]
"""Name, help text, and what running it does."""


@runtime_checkable
class CommandTarget(Protocol):
    """What the provider reads off the screen it serves."""

    choices: dict[Field, list[tuple[FilterValue, str]]]
    views: list[SavedView]
    issue_query: IssueQuery


class IssueListCommands(Provider):
    """Binding commands, sorts and views on discovery; filters too when searching."""

    async def discover(self) -> Hits:
        """The commands shown before anything is typed (filters would swamp them)."""
        for name, help_text, callback in self._commands(with_filters=False):
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        """Every command whose name fuzzily matches what was typed."""
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands(with_filters=True):
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)

    def _commands(self, *, with_filters: bool) -> Iterator[Command]:
        """All commands, filters optional."""
        screen = self.screen
        app = self.app
        seen: set[str] = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            if (
                not binding.description
                or isinstance(active.node, App)
                or binding.action.startswith("apply_view")
                or binding.action in seen
            ):
                continue
            seen.add(binding.action)
            keys = app.get_key_display(binding)
            yield binding.description, f"key: {keys}", self._run(binding.action, active.node)
        for sort in SORTS:
            yield f"Sort by {sort.label.lower()}", "", self._run(f"sort_by({sort.key!r})")
        if not isinstance(screen, CommandTarget):
            return
        for slot, view in enumerate(screen.views, start=1):
            yield f"View: {view.name}", f"key: {slot}", self._run(f"apply_view({slot - 1})")
        if with_filters:
            yield from self._filter_commands(screen)

    def _filter_commands(self, screen: CommandTarget) -> Iterator[Command]:
        """A toggle per known filter value: "Filter status: Todo"."""
        for field in FILTERS:
            offered: list[tuple[FilterValue, str]] = [
                (choice.value, choice.label) for choice in field.choices
            ]
            if field.kind is not Kind.CHOICE:
                offered = screen.choices.get(field, [])
            for value, label in offered:
                active = value in screen.issue_query.values(field)
                yield (
                    f"Filter {field.word}: {label}",
                    "remove this filter" if active else "add this filter",
                    self._run(f"filter_value({field.word!r}, {value!r})"),
                )

    def _run(self, action: str, namespace: DOMNode | None = None) -> IgnoreReturnCallbackType:
        """A callback running `action` on `namespace` (the screen unless given)."""
        target = namespace if namespace is not None else self.screen
        return partial(self.app.run_action, action, target)
