"""Every key binding the app defines, found in its classes: what the keymap is checked against.

Bindings are class attributes (`BINDINGS`) of the app, its screens and widgets, so the table
imports every module of `tracker_tui.screens` and `tracker_tui.widgets` and reads the classes
defined there. That costs a few imports the app mostly makes anyway, and is only paid when a
keymap is given. `tracker_tui.config_schema` builds the schema's `[keymap]` part from the
same table, so `tracker-tui config check` knows the ids without loading Textual.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType

from textual.binding import Binding
from textual.dom import DOMNode

from tracker_tui.data.keymap import BindingInfo, normalize_key

ROOTS = ("tracker_tui.app", "tracker_tui.navigation", "tracker_tui.copy_open")
"""The modules of the app class and its mixins (their bindings reach every screen)."""
PACKAGES = ("tracker_tui.screens", "tracker_tui.widgets")


def app_bindings() -> list[BindingInfo]:
    """Each binding with an id, once, in module order, with all its keys as Textual matches
    them (`Binding.make_bindings` gives one binding per key)."""
    keys: dict[str, list[str]] = {}
    described: dict[str, str] = {}
    for binding in _bindings():
        if binding.id is None:
            continue
        found = keys.setdefault(binding.id, [])
        for key in binding.key.split(","):
            if (normal := normalize_key(key)) not in found:
                found.append(normal)
        described.setdefault(binding.id, binding.description or binding.action)
    return [BindingInfo(ident, tuple(keys[ident]), described[ident]) for ident in keys]


def unnamed_bindings() -> list[str]:
    """Bindings without an id, as `key -> action`: none should be (the keymap cannot reach
    them)."""
    return [f"{b.key} -> {b.action}" for b in _bindings() if b.id is None]


def _bindings() -> Iterator[Binding]:
    for module in _modules():
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, DOMNode)
                and value.__module__ == module.__name__
            ):
                yield from Binding.make_bindings(value.__dict__.get("BINDINGS", ()))


def _modules() -> Iterator[ModuleType]:
    for name in ROOTS:
        yield importlib.import_module(name)
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            yield importlib.import_module(f"{package_name}.{info.name}")
