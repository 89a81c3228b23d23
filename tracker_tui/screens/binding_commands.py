"""The command palette's commands for the screens beyond the list: one per described binding.

Whatever a key does on a screen can be found by name too; the app's own bindings come from
`TrackerApp.get_system_commands`, so they are left out here.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.types import IgnoreReturnCallbackType


class BindingCommands(Provider):
    """A command per described binding of the screen in front."""

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)

    def _commands(self) -> Iterator[tuple[str, str, IgnoreReturnCallbackType]]:
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.description or isinstance(active.node, App) or binding.action in seen:
                continue
            seen.add(binding.action)
            keys = self.app.get_key_display(binding)
            run = partial(self.app.run_action, binding.action, active.node)
            yield binding.description, f"key: {keys}", run
