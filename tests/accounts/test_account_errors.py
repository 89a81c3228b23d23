"""The accounts package has one error tree: every exception it defines lives in
`accounts.errors`, under `ConfigError`, and is drawn in that module's docstring."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import accounts
from accounts import errors


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined (not imported) by a module of `accounts`."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(accounts.__path__, "accounts."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_error_of_accounts_is_in_its_one_tree() -> None:
    found = defined_exceptions()
    assert found, "no exception found: the walk is broken"
    elsewhere = sorted(name for name in found if not name.startswith("accounts.errors."))
    assert not elsewhere
    assert all(issubclass(kind, errors.ConfigError) for kind in found.values())


def drawn_tree() -> set[str]:
    """The class names of the tree drawn in `accounts.errors`' docstring."""
    names = set()
    for line in (errors.__doc__ or "").splitlines():
        words = line.replace("│", " ").replace("├──", " ").replace("└──", " ").split()
        if words and words[0].endswith("Error") and words[0].isidentifier():
            names.add(words[0])
    return names


def test_the_tree_in_the_docstring_is_the_tree_in_the_code() -> None:
    assert drawn_tree() == {kind.__name__ for kind in defined_exceptions().values()}
