"""`@record`: the frozen dataclass of the route's result types, without `dataclasses`.

A one-shot `kb route` / `kb boot` builds every result type of the route's path when it
imports the engine, on every prompt of a hook. `@dataclass(frozen=True)` compiles six
generated methods per class (~0.4 ms each class, 29 of them), and importing `dataclasses`
brings inspect, ast, dis and tokenize. `@record` keeps the look (annotated fields, defaults,
`factory(list)` for a default made per instance) and what a frozen dataclass does: the
same constructor (positional or keyword, `__post_init__` after), equality and hash over the
fields in order, the same repr, assignment refused. Only `__init__` is compiled per class,
one small function; equality, hash and repr are shared. `replace` and `as_dict` are
`dataclasses.replace` and `dataclasses.asdict` for records (those two refuse a record). A base
that is a dataclass is refused at class creation: its fields would be silently dropped.

Used where a class is built on every one-shot (docs/speed.md, "Importing only what a plain
question needs"); elsewhere the style is `@dataclass`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable, ClassVar


class _Missing:
    def __repr__(self) -> str:
        return "<factory>"  # how a signature shows a default made per instance, as dataclasses shows it


_MISSING = _Missing()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record (dataclasses' error of the same name)."""


class factory:  # noqa: N801  (reads as `field(default_factory=...)` does: a marker in a class body)
    """A field's default made per instance: `skipped: list[str] = factory(list)`."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]):
        self.make = make


def record(cls: type | None = None, *, frozen: bool = True):
    """Make `cls` a record over its annotated fields (a record base's fields first)."""

    def wrap(c: type) -> type:
        return _build(c, frozen)

    return wrap if cls is None else wrap(cls)


def fields(rec: Any) -> tuple[str, ...]:
    """The field names of a record or a record class, in order."""
    return rec.__record_fields__


def replace(rec: Any, /, **changes: Any) -> Any:
    """A copy of `rec` with `changes`, built through its constructor (so `__post_init__` runs)."""
    names = _record_fields(rec)
    for name in names:
        if name not in changes:
            changes[name] = getattr(rec, name)
    return rec.__class__(**changes)


def as_dict(rec: Any) -> dict[str, Any]:
    """`rec` as a dict, records inside it (and in its tuples, lists and dicts) as dicts too."""
    return {name: _plain(getattr(rec, name)) for name in _record_fields(rec)}


def _record_fields(rec: Any) -> tuple[str, ...]:
    names = getattr(type(rec), "__record_fields__", None)
    if names is None:
        raise TypeError(f"not a record: {type(rec).__name__}")
    return names


def _plain(value: Any) -> Any:
    if hasattr(type(value), "__record_fields__"):
        return as_dict(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_plain(v) for v in value))  # a namedtuple takes its fields one by one
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return type(value)((_plain(k), _plain(v)) for k, v in value.items())
    return value


def _build(cls: type, frozen: bool) -> type:
    for base in cls.__mro__[1:]:
        if "__dataclass_fields__" in base.__dict__ and "__record_fields__" not in base.__dict__:
            # Its fields live in dataclasses' own table, which a record does not read: the
            # class would be built without them (an __init__ missing them, equality blind to them).
            raise TypeError(f"@record {cls.__name__}: its base {base.__name__} is a dataclass, whose "
                            f"fields a record does not carry: make {base.__name__} a @record too")
    inherited = [n for base in reversed(cls.__mro__[1:]) for n in getattr(base, "__record_fields__", ())]
    # every field this class annotates: a base's field declared again keeps its place and
    # takes this class's default (or none), as a dataclass's does
    own = [n for n, kind in cls.__dict__.get("__annotations__", {}).items() if not _is_class_var(kind)]
    names = tuple(dict.fromkeys(inherited + own))
    defaults = {}
    for base in reversed(cls.__mro__[1:]):
        defaults.update(getattr(base, "__record_defaults__", {}))
    for name in own:
        if name not in cls.__dict__:
            defaults.pop(name, None)
            continue
        default = defaults[name] = cls.__dict__[name]
        if isinstance(default, factory):
            delattr(cls, name)  # no class attribute standing in for a per-instance default
        elif type(default).__hash__ is None:
            # a list, dict or set given once would be every instance's: refused as dataclasses does
            raise ValueError(f"mutable default {type(default)} for field {name} is not allowed: use factory")
    cls.__record_fields__ = names
    cls.__record_defaults__ = defaults
    cls.__match_args__ = names
    cls.__init__ = _make_init(cls, names, defaults, frozen)
    values = _values_getter(names)
    cls.__record_values__ = staticmethod(values)
    # A class body defining __eq__ gets __hash__ = None from Python itself: a hash the class
    # wrote is one of another value (dataclasses reads it the same way).
    own_hash = cls.__dict__.get("__hash__", _MISSING)
    wrote_hash = own_hash is not _MISSING and not (own_hash is None and "__eq__" in cls.__dict__)
    _set_new(cls, "__repr__", _repr)
    _set_new(cls, "__eq__", _eq)
    if frozen:
        if not wrote_hash:
            # a frozen dataclass's hash: the hash of the tuple of its fields
            cls.__hash__ = lambda self: hash(values(self))
        _set_new(cls, "__setattr__", _refuse_set)
        _set_new(cls, "__delattr__", _refuse_delete)
    elif "__hash__" not in cls.__dict__:
        cls.__hash__ = None  # equal by value and mutable: unhashable, as a dataclass is
    return cls


def _is_class_var(annotation: Any) -> bool:
    """A `ClassVar[...]` annotation (a string under `from __future__ import annotations`):
    the class's own value, not a field, as dataclasses reads it."""
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


def _make_init(cls: type, names: tuple[str, ...], defaults: dict[str, Any], frozen: bool) -> Callable:
    """The one compiled method: `def __init__(self, a, b=<default>):` and one line per field."""
    scope: dict[str, Any] = {"__record_missing": _MISSING}
    params, lines = [], []
    for name in names:
        default = defaults.get(name, _MISSING)
        if default is _MISSING:
            if len(params) != len([p for p in params if "=" not in p]):
                raise TypeError(f"non-default argument {name!r} follows default argument")
            params.append(name)
        elif isinstance(default, factory):
            scope[f"__record_make_{name}"] = default.make
            params.append(f"{name}=__record_missing")
            lines.append(f"if {name} is __record_missing: {name} = __record_make_{name}()")
        else:
            scope[f"__record_default_{name}"] = default
            params.append(f"{name}=__record_default_{name}")
    if frozen and names:
        # one call filling the instance's dict: a third of the compile time (and of the
        # construction) of a `object.__setattr__` line per field, as dataclasses writes it
        lines.append(f"self.__dict__.update({', '.join(f'{n}={n}' for n in names)})")
    elif not frozen:
        lines += [f"self.{n} = {n}" for n in names]
    if hasattr(cls, "__post_init__"):
        lines.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "".join(f"    {line}\n" for line in lines or ["pass"])
    exec(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _values_getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """The fields' values as a tuple (attrgetter gives a bare value for one name)."""
    if len(names) >= 2:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _set_new(cls: type, name: str, value: Any) -> None:
    if name not in cls.__dict__:  # a method the class writes itself is kept, as dataclass keeps it
        setattr(cls, name, value)


def _repr(self: Any) -> str:
    parts = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__)
    return f"{self.__class__.__qualname__}({parts})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_values__(self) == other.__record_values__(other)
    return NotImplemented


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
