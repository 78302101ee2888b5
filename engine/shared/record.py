"""`@record`: the class `@dataclass(frozen=True, slots=True)` makes, made without `dataclasses`.

A fresh `kb route` (a prompt hook runs it on every prompt) builds each result type on its path
when it imports the engine: 29 classes. `import dataclasses` brings inspect, ast, dis and
tokenize, and each class compiles six generated methods: measured side by side on a fresh
route at 60,000 chunks, the dataclasses cost more than 10% of its CPU (the figure is in
docs/decisions.md, "Records on the one-shot path"). A record keeps the look (annotated fields,
defaults, `factory(list)` for a default made per instance) and what a caller sees of the
dataclass: the same constructor (positional or keyword, `__post_init__` after), slots and no
instance dict, equality and hash over the fields in order, the same repr, assignment refused,
pickling, `__match_args__`. Only `__init__` is compiled per class; the rest is shared.

The dataclasses module reads a record as its own: `dataclasses.fields`, `replace`, `asdict`
and `is_dataclass` work on one, importing `dataclasses` only then (a twin of the class is made
once, and its fields read). On the one-shot path use `replace`, `as_dict` and `fields` below,
which import nothing. A base that is a dataclass is refused: its fields would be dropped.
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
    """`cls` as a record over its annotated fields (a record base's fields first)."""

    def wrap(c: type) -> type:
        return _build(c, frozen)

    return wrap if cls is None else wrap(cls)


def fields(rec: Any) -> tuple[str, ...]:
    """The field names of a record or a record class, in order."""
    return rec.__record_fields__


def replace(rec: Any, /, **changes: Any) -> Any:
    """A copy of `rec` with `changes`, built through its constructor (so `__post_init__` runs)."""
    for name in _record_fields(rec):
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
    names, defaults, own = _fields_of(cls)
    body = {k: v for k, v in cls.__dict__.items() if k not in own and k not in ("__dict__", "__weakref__")}
    # Slots as the dataclass has them: one per field no base already holds, and no instance dict.
    held = {s for base in cls.__mro__[1:] for s in base.__dict__.get("__slots__", ())}
    body["__slots__"] = tuple(n for n in own if n not in held)
    body.update(__record_fields__=names, __record_defaults__=defaults, __record_frozen__=frozen, __match_args__=names,
                __record_values__=staticmethod(_values_getter(names)),
                __dataclass_fields__=_DataclassView(), __dataclass_params__=_DataclassView())
    new = type(cls)(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    new.__init__ = _make_init(new, names, defaults, frozen)
    _methods(new, cls.__dict__, frozen)
    return new


def _fields_of(cls: type) -> tuple[tuple[str, ...], dict[str, Any], list[str]]:
    """The fields in order (a base record's first), their defaults, and those this class annotates."""
    inherited = [n for base in reversed(cls.__mro__[1:]) for n in getattr(base, "__record_fields__", ())]
    # every field this class annotates: a base's field declared again keeps its place and
    # takes this class's default (or none), as a dataclass's does
    own = [n for n, kind in cls.__dict__.get("__annotations__", {}).items() if not _is_class_var(kind)]
    names = tuple(dict.fromkeys(inherited + own))
    defaults: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        defaults.update(getattr(base, "__record_defaults__", {}))
    for name in own:
        if name not in cls.__dict__:
            defaults.pop(name, None)
            continue
        default = defaults[name] = cls.__dict__[name]
        if not isinstance(default, factory) and type(default).__hash__ is None:
            # a list, dict or set given once would be every instance's: refused as dataclasses does
            raise ValueError(f"mutable default {type(default)} for field {name} is not allowed: use factory")
    return names, defaults, own


def _methods(new: type, written: dict, frozen: bool) -> None:
    """repr, eq, hash and (frozen) the refusals, each unless the class wrote its own."""
    # A class body defining __eq__ gets __hash__ = None from Python itself: a hash the class
    # wrote is one of another value (dataclasses reads it the same way).
    own_hash = written.get("__hash__", _MISSING)
    wrote_hash = own_hash is not _MISSING and not (own_hash is None and "__eq__" in written)
    for name, method in (("__repr__", _repr), ("__eq__", _eq)):
        if name not in written:
            setattr(new, name, method)
    if frozen:
        if not wrote_hash:
            new.__hash__ = _hash  # a frozen dataclass's hash: the hash of the tuple of its fields
        for name, method in (("__setattr__", _refuse_set), ("__delattr__", _refuse_delete),
                             ("__getstate__", _getstate), ("__setstate__", _setstate)):
            if name not in written:
                setattr(new, name, method)
    elif "__hash__" not in written:
        new.__hash__ = None  # equal by value and mutable: unhashable, as a dataclass is


def _is_class_var(annotation: Any) -> bool:
    """A `ClassVar[...]` annotation (a string under `from __future__ import annotations`):
    the class's own value, not a field, as dataclasses reads it."""
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


def _make_init(cls: type, names: tuple[str, ...], defaults: dict[str, Any], frozen: bool) -> Callable:
    """The one compiled method: `def __init__(self, a, b=<default>):` and one line per field."""
    scope: dict[str, Any] = {"__record_missing": _MISSING, "__record_set": object.__setattr__}
    params, lines = [], []
    for name in names:
        default = defaults.get(name, _MISSING)
        if default is _MISSING:
            if any("=" in p for p in params):
                raise TypeError(f"non-default argument {name!r} follows default argument")
            params.append(name)
        elif isinstance(default, factory):
            scope[f"__record_make_{name}"] = default.make
            params.append(f"{name}=__record_missing")
            lines.append(f"if {name} is __record_missing: {name} = __record_make_{name}()")
        else:
            scope[f"__record_default_{name}"] = default
            params.append(f"{name}=__record_default_{name}")
    # frozen: past the refusing __setattr__, as the dataclass's own __init__ goes
    lines += [f"__record_set(self, {n!r}, {n})" if frozen else f"self.{n} = {n}" for n in names]
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


def _repr(self: Any) -> str:
    parts = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__)
    return f"{self.__class__.__qualname__}({parts})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        values = self.__record_values__
        return values(self) == values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__record_values__(self))


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list:
    return [getattr(self, name) for name in self.__record_fields__]  # as a frozen slotted dataclass pickles


def _setstate(self: Any, state: list) -> None:
    for name, value in zip(self.__record_fields__, state):
        object.__setattr__(self, name, value)


class _DataclassView:
    """`__dataclass_fields__` / `__dataclass_params__` of a record, made when first read: by the
    dataclasses module (fields, replace, asdict, is_dataclass), never on the one-shot path. They
    are a twin dataclass's, of the same fields and defaults; once made they replace this."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Any:
        import dataclasses  # here: the reason records exist is not to import it on a one-shot

        made = dataclasses.make_dataclass(owner.__name__, [_twin_field(dataclasses, owner, n)
                                                            for n in owner.__record_fields__],
                                          frozen=owner.__record_frozen__)
        type.__setattr__(owner, "__dataclass_fields__", made.__dataclass_fields__)
        type.__setattr__(owner, "__dataclass_params__", made.__dataclass_params__)
        return getattr(owner, self.name)


def _twin_field(dataclasses: Any, owner: type, name: str) -> tuple:
    default = owner.__record_defaults__.get(name, _MISSING)
    annotation = next((c.__dict__["__annotations__"][name] for c in owner.__mro__
                       if name in c.__dict__.get("__annotations__", {})), Any)
    if default is _MISSING:
        return (name, annotation)
    if isinstance(default, factory):
        return (name, annotation, dataclasses.field(default_factory=default.make))
    return (name, annotation, dataclasses.field(default=default))
