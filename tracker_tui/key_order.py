"""Keys are handled in the order they were typed, even when they arrive all at once.

Textual hands a key to the focused widget's own queue and moves on to the next key. A field
takes a letter there at once, but a key it does not take (tab, backspace, enter, the arrows)
climbs the widget tree and its binding runs only when it is back at the app, after the letters
that followed it. Keys arriving in one burst (typed while the app was busy drawing, sent by a
terminal multiplexer or a script) then took effect out of order: `url<tab>key` put the key in
the URL field, `ab<backspace>c` gave "ab", and ctrl+s (a priority binding, run before the
key is passed on) saved a form before its last letters were in it (Textualize/textual#6605).

So the app takes the next key only once the one before has finished: stopped by a widget, or
back at the app with its bindings run, and then what it set off has happened too. A binding
often only posts a message (`c` on the list asks the app for the new-issue form), and a message
climbs to the app one widget at a time: `c` followed at once by a title put the title's letters
on the list, where `E`, `x` and `o` are bindings of their own, and the form opened empty. So a
finished key is followed up the tree again, lap after lap, while messages it caused are still
on their way, and when the screen on top has changed, the next key waits until it is mounted;
a screen whose fields are read in a worker after its mount (the issue form) says when they are
there (`loading`, `loaded`). A key that takes longer than `KEY_WAIT` (a binding waiting for a
dialog to be answered) lets the next one go anyway, so typing never stalls, except into a
screen still being built (up to `MOUNT_WAIT`).
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from typing import Any

from textual import events, on
from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.timer import Timer

KEY_WAIT = 0.5
"""Seconds a key may take before the next one goes anyway."""
LAPS = 6
"""Most laps a key's follow-up makes up the widget tree before the next key goes."""
MOUNT_WAIT = 5.0
"""Seconds the next key waits for a screen being built (its first import on a loaded machine)."""


class KeyOrderApp(App[str | None]):
    """An app that handles keys one after the other (see the module docstring)."""

    class KeyDone(Message):
        """The key has been through every widget it will reach before the app."""

        __slots__ = ("key",)

        def __init__(self, key: events.Key) -> None:
            self.key = key
            super().__init__()

    def __init__(self) -> None:
        super().__init__()
        self._key_in_flight: events.Key | None = None
        self._key_sent = 0.0
        self._keys_held: deque[events.Key] = deque()
        self._key_timer: Timer | None = None
        self._screens_loading: weakref.WeakSet[Screen[object]] = weakref.WeakSet()

    @property
    def keys_waiting(self) -> int:
        """Keys typed and not yet handled: held, or one on its way (what a test waits for)."""
        return len(self._keys_held) + (self._key_in_flight is not None)

    async def on_event(self, event: events.Event) -> None:
        """Hold a key that arrives while the one before is still on its way. A key that comes
        after the last screen closed (typed on as the app quits, or one coming back up from a
        widget by then) has nowhere to go: it is dropped, where Textual's own handling would
        stop the app on an error."""
        if isinstance(event, events.Key) and self._top_screen() is None:
            return
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self._key_in_flight is not None or self._keys_held:
                self._keys_held.append(event)
                if self._key_timer is None:
                    self._key_timer = self.set_timer(KEY_WAIT, self._release_stuck)
                return
            await self._take_key(event)
            return
        await super().on_event(event)

    async def _take_key(self, key: events.Key) -> None:
        """Handle a key as Textual does; if it was passed to a widget, follow it up the tree.

        No timer is set per key (one costs more than the key): only held keys need one. A held
        key taken after the last screen closed is dropped, as `on_event` drops a new one."""
        screen = self._top_screen()
        if screen is None:
            return
        target = self.focused or screen
        await super().on_event(key)
        if not key.is_forwarded:
            return
        self._key_in_flight = key
        self._key_sent = time.monotonic()
        self._hop(target, key, target, None, 1, False)

    async def _release_stuck(self) -> None:
        """Keys are held: let them go if the key before has taken `KEY_WAIT` already."""
        self._key_timer = None
        key = self._key_in_flight
        if key is None or not self._keys_held:
            return
        waited = time.monotonic() - self._key_sent
        wait = KEY_WAIT if self._ready_for_keys(self._top_screen()) else MOUNT_WAIT
        if waited >= wait:
            await self._key_finished(key)
        else:
            self._key_timer = self.set_timer(min(wait - waited, KEY_WAIT), self._release_stuck)

    def _follow(
        self,
        key: events.Key,
        node: MessagePump,
        origin: MessagePump,
        end: MessagePump | None,
        lap: int = 1,
        busy: bool = False,
    ) -> None:
        """Runs on `node` right after it handled the key (`call_later` queues a callback behind
        what the node was already sent; `call_next` may run before): the key stopped there, or
        went on to the parent (the app: it is now in the app's queue, where the bindings run).
        Then, once the app has had its turn, more laps from `origin` to `end` (where the first
        one ended) while a lap finds messages queued behind it, up to `LAPS`: `enter` on the
        list runs the list's binding at the app, which posts "opened" to the list, which
        passes it up to the app, which opens the issue; only then may the next key go."""
        if key is not self._key_in_flight:
            return
        busy = busy or not node._message_queue.empty()
        parent = node._parent
        stops_here = key._stop_propagation if end is None else node is end
        last = stops_here or parent is None or parent is self
        if not last:
            assert parent is not None
            self._hop(parent, key, origin, end, lap, busy)
        elif lap == 1 or (busy and lap < LAPS):
            # Through the app's queue: a key that went on to the app runs its bindings there.
            self.call_later(self._hop, origin, key, origin, end or node, lap + 1, False)
        else:
            self.post_message(self.KeyDone(key))

    def _hop(
        self,
        node: MessagePump,
        key: events.Key,
        origin: MessagePump,
        end: MessagePump | None,
        lap: int,
        busy: bool,
    ) -> None:
        """Follow the key on `node`; a node already removed (the dialog `escape` closed) takes
        no more messages, and the key is done."""
        if not node.call_later(self._follow, key, node, origin, end, lap, busy):
            self.post_message(self.KeyDone(key))

    @on(KeyDone)
    async def next_key(self, message: KeyDone) -> None:
        """Take the next key, once the screen on top can take it: a screen the key opened
        handles its mount first, then this callback, queued behind it."""
        screen = self._top_screen()
        if message.key is self._key_in_flight and screen is not None:
            if not screen.is_mounted and screen.call_later(
                self.post_message, self.KeyDone(message.key)
            ):
                return
            if screen in self._screens_loading:
                return  # `loaded` posts it again
        await self._key_finished(message.key)

    def _ready_for_keys(self, screen: Screen[object] | None) -> bool:
        return screen is None or (screen.is_mounted and screen not in self._screens_loading)

    def _top_screen(self) -> Screen[object] | None:
        """The screen keys go to; none while the app closes."""
        stack = self.screen_stack
        return stack[-1] if stack else None

    async def _key_finished(self, key: events.Key) -> None:
        """Take the held keys, in order, until one is on its way again."""
        if key is not self._key_in_flight:
            return
        self._key_in_flight = None
        while self._keys_held and self._key_in_flight is None:
            await self._take_key(self._keys_held.popleft())
        if not self._keys_held and self._key_timer is not None:
            self._key_timer.stop()
            self._key_timer = None


def loading(screen: Screen[Any]) -> None:
    """From `screen`'s mount until `loaded`: keys typed on the way to it wait (its fields are
    read in a worker, and a key before them would go to the screen, not to its first field)."""
    app = screen.app
    if isinstance(app, KeyOrderApp):
        app._screens_loading.add(screen)


def loaded(screen: Screen[Any]) -> None:
    """`screen` has its fields and focus: the keys that waited go to it."""
    app = screen.app
    if isinstance(app, KeyOrderApp) and screen in app._screens_loading:
        app._screens_loading.discard(screen)
        if (key := app._key_in_flight) is not None:
            app.post_message(app.KeyDone(key))
