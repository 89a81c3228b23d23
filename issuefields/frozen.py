"""The one base of the client's small immutable records (the field table's rows, the cache's
rows, the app's value classes).

Building a dataclass compiles its methods when its module loads, about a millisecond each on
this machine, and the modules that hold these records load before the app's first frame and on
every command line start (docs/architecture.md#start-up). It lives here, beside the field
table, because every client package may import `issuefields` and nothing else they share.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, NoReturn, Self, cast


class Frozen:
    """A record of fixed fields (`_fields`, in order, its `__slots__`): set once by `__init__`,
    compared and hashed by the fields of `_compared` (all by default), copied and pickled by
    value. What `@dataclass(frozen=True, slots=True)` would make, without its cost at import."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _compared: ClassVar[tuple[str, ...] | None] = None
    """The fields equality and the hash use; None: every field."""
    _setters: ClassVar[tuple[Callable[[object, object], None], ...]] = ()
    """The `__set__` of each field's slot, in `_fields`' order: they set a field past the
    frozen `__setattr__`, found once per class rather than by name on every record made
    (a list makes 64 to 128 rows a key; a quarter less time a row than by name)."""

    _key: ClassVar[Callable[..., object]] = staticmethod(lambda record: ())
    """What equality and the hash compare: the `_compared` fields' values, read by one
    `operator.attrgetter` made per class (a tuple of them; one field's value alone). Sort
    keys compare their parts for equality on every step of a bisect: a generator of getattr
    calls made a window of 50 rows over 50 pending edits take 10 ms where 4 had done."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._setters = tuple(getattr(cls, name).__set__ for name in cls._fields)
        names = cls._fields if cls._compared is None else cls._compared
        if names:
            cls._key = staticmethod(attrgetter(*names))

    def _init(self, *values: object) -> None:
        for setter, value in zip(self._setters, values, strict=True):
            setter(self, value)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = self._key
        return key(self) == key(other)

    def __hash__(self) -> int:
        return hash(self._key(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[Frozen], tuple[object, ...]]:
        return type(self), tuple(getattr(self, name) for name in self._fields)

    def replace(self, **changes: object) -> Self:
        """A copy with `changes` (by field name), made through `__init__` as
        `dataclasses.replace` makes one, so what `__init__` checks or derives holds again."""
        values = {name: getattr(self, name) for name in self._fields}
        unknown = sorted(changes.keys() - values.keys())
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {unknown[0]!r}")
        made: Self = cast(Any, type(self))(**{**values, **changes})
        return made
