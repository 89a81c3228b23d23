"""Keys are handled in the order they were typed, even when they arrive all at once.

Textual hands a key to the focused widget's own queue and moves on to the next key. A field
takes a letter there at once, but a key it does not take (tab, backspace, enter, the arrows)
climbs the widget tree and its binding runs only when it is back at the app, after the letters
that followed it. Keys arriving in one burst (typed while the app was busy drawing, sent by a
terminal multiplexer or a script) then took effect out of order: `url<tab>key` put the key in
the URL field, `ab<backspace>c` gave "ab", and ctrl+s (a priority binding, run before the
key is passed on) saved a form before its last letters were in it (Textualize/textual#6605).

So the app takes the next key only once the one before has finished: stopped by a widget, or
back at the app with its bindings run. A key that takes longer than `KEY_WAIT` (its binding
opens a screen that is slow to build, say) lets the next one go anyway, so typing never stalls.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from textual import events, on
from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.timer import Timer

KEY_WAIT = 0.5
"""Seconds a key may take before the next one goes anyway."""


class KeyOrderApp(App[str | None]):
    """An app that handles keys one after the other (see the module docstring)."""

    @dataclass
    class KeyDone(Message):
        """The key has been through every widget it will reach before the app."""

        key: events.Key

    def __init__(self) -> None:
        super().__init__()
        self._key_in_flight: events.Key | None = None
        self._key_sent = 0.0
        self._keys_held: deque[events.Key] = deque()
        self._key_timer: Timer | None = None

    async def on_event(self, event: events.Event) -> None:
        """Hold a key that arrives while the one before is still on its way."""
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

        No timer is set per key (one costs more than the key): only held keys need one."""
        target = self.focused or self.screen
        await super().on_event(key)
        if not key.is_forwarded:
            return
        self._key_in_flight = key
        self._key_sent = time.monotonic()
        target.call_later(self._follow, key, target)

    async def _release_stuck(self) -> None:
        """Keys are held: let them go if the key before has taken `KEY_WAIT` already."""
        self._key_timer = None
        key = self._key_in_flight
        if key is None or not self._keys_held:
            return
        waited = time.monotonic() - self._key_sent
        if waited >= KEY_WAIT:
            await self._key_finished(key)
        else:
            self._key_timer = self.set_timer(KEY_WAIT - waited, self._release_stuck)

    def _follow(self, key: events.Key, node: MessagePump) -> None:
        """Runs on `node` right after it handled the key (`call_later` queues a callback behind
        what the node was already sent; `call_next` may run before): the key stopped there, or
        went on to the parent (the app: it is now in the app's queue, ahead of the message
        saying it is done)."""
        parent = node._parent
        if key._stop_propagation or parent is None or parent is self:
            self.post_message(self.KeyDone(key))
        else:
            parent.call_later(self._follow, key, parent)

    @on(KeyDone)
    async def next_key(self, message: KeyDone) -> None:
        await self._key_finished(message.key)

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
