"""Watchers that leave with the widget that set them.

A widget that watches a reactive of a longer-lived one (`self.watch(self.app, ...)`, a
`data_bind`) leaves an entry holding itself and its callback on the watched object, and
Textual drops the entries of closed widgets only when the watched value next changes
(textual#6666, open upstream). Until then the closed widget, its screen and every line it drew
stay alive. In this app that was:

- every key widget the footer ever built: each `FooterKey` binds to the footer's `compact`,
  which never changes, and the footer rebuilds its keys whenever the keys shown change (the
  search field opened or closed: some 2,100 objects kept a time, issue 18), so the frozen heap
  that the idle collector sweeps grew by some 60,000 objects a minute of mixed typing;
- every issue, inbox, settings or sync screen ever closed, each watching the app's
  `key_permissions` or `inbox_unread`, which may never change in a session, and every text
  area, watching the app's `theme`.

`install()` has each new watch first drop the entries of closed widgets from the list it joins,
so a list holds the watchers of live widgets and of those closed since its last new watcher:
the next footer key, the next screen opened, the next text area.
"""

from __future__ import annotations

import textual.dom
from textual._types import WatchCallbackType
from textual.dom import DOMNode
from textual.reactive import _watch as _textual_watch


def _watch(
    node: DOMNode,
    obj: DOMNode,
    attribute_name: str,
    callback: WatchCallbackType,
    *,
    init: bool = True,
) -> None:
    """Textual's `_watch`, after dropping the closed widgets' entries for the same attribute
    (the test Textual applies as the value changes: the watching widget is closing)."""
    entries = getattr(obj, "__watchers", {}).get(attribute_name)
    if entries:
        entries[:] = [(watcher, call) for watcher, call in entries if not watcher._closing]
    _textual_watch(node, obj, attribute_name, callback, init=init)


def install() -> None:
    """Route `DOMNode.watch` (and so `data_bind`) through `_watch` (idempotent)."""
    textual.dom._watch = _watch  # type: ignore[attr-defined]
