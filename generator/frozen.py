"""`@frozen`: a frozen dataclass whose methods are shared, not written per class.

`dataclasses.dataclass` compiles `__init__`, `__repr__`, `__eq__`, `__hash__` and the frozen
`__setattr__`/`__delattr__` anew for every class (one `exec` each on Python 3.11, ~1 ms a class),
and a start-up defines ~100 such classes: that was the largest cost of `recipegen explain` after
pydantic. `@frozen` keeps the dataclass (its fields, `dataclasses.fields/replace/asdict`, type
checking through `dataclass_transform`) and gives every class one generic copy of those methods,
with the same behaviour: positional or keyword arguments (keyword-only with `kw_only=True`),
defaults and default factories, frozen instances, equality and hashing by fields. The generic
`__init__` fills the instance dict in bulk, which is also faster than a frozen dataclass's
generated one (that sets each field through `object.__setattr__`).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any, TypeVar, overload

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    from typing_extensions import dataclass_transform

V = TypeVar("V")

_REQUIRED = object()  # placeholders in the defaults, replaced or refused by __init__
_FACTORY = object()


# Instances of one class after which its __init__, __eq__ and __hash__ are compiled for it: the few classes
# the resolver makes by the ten thousand (gate results, settings) get dataclass-speed methods, while the
# ~100 others, most made a handful of times or never in a run, are spared compiling theirs.
COMPILE_AFTER = 200


class _Spec:
    __slots__ = ("calls", "defaults", "factories", "fields", "kw_only", "name", "names", "required")

    def __init__(self, cls: type, kw_only: bool) -> None:
        fields = dataclasses.fields(cls)
        self.fields = fields
        self.calls = 0
        self.name = cls.__name__
        self.names = tuple(f.name for f in fields)
        self.kw_only = kw_only
        self.defaults: dict[str, Any] = {}
        required: list[str] = []
        factories: list[tuple[str, Callable[[], Any]]] = []
        for f in fields:
            if f.default is not dataclasses.MISSING:
                self.defaults[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                self.defaults[f.name] = _FACTORY
                factories.append((f.name, f.default_factory))
            else:
                self.defaults[f.name] = _REQUIRED
                required.append(f.name)
        self.required = tuple(required)
        self.factories = tuple(factories)


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    spec: _Spec = cls.__value_spec__
    spec.calls += 1
    if spec.calls > COMPILE_AFTER and cls.__init__ is _init:
        _compile(cls, spec)
        cls.__init__(self, *args, **kwargs)
        return
    fields = self.__dict__
    fields.update(spec.defaults)
    if args:
        if spec.kw_only or len(args) > len(spec.names):
            raise TypeError(f"{spec.name}() takes {0 if spec.kw_only else len(spec.names)} positional arguments")
        given = spec.names[: len(args)]
        if kwargs and not kwargs.keys().isdisjoint(given):
            raise TypeError(f"{spec.name}() got multiple values for {', '.join(sorted(kwargs.keys() & set(given)))}")
        fields.update(zip(given, args, strict=False))
    if kwargs:
        fields.update(kwargs)
        if len(fields) != len(spec.names):
            unknown = ", ".join(repr(k) for k in kwargs if k not in spec.defaults)
            raise TypeError(f"{spec.name}() got unexpected keyword arguments {unknown}")
    for name in spec.required:
        if fields[name] is _REQUIRED:
            raise TypeError(f"{spec.name}() missing argument {name!r}")
    for name, factory in spec.factories:
        if fields[name] is _FACTORY:
            fields[name] = factory()


def _setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _eq(self: Any, other: Any) -> bool:
    if type(other) is not type(self):
        return NotImplemented  # type: ignore[no-any-return]
    mine, theirs = self.__dict__, other.__dict__
    return all(mine[name] == theirs[name] for name in type(self).__value_spec__.names)


def _hash(self: Any) -> int:
    fields = self.__dict__
    return hash(tuple(fields[name] for name in type(self).__value_spec__.names))


def _repr(self: Any) -> str:
    fields = self.__dict__
    shown = ", ".join(f"{name}={fields[name]!r}" for name in type(self).__value_spec__.names)
    return f"{type(self).__qualname__}({shown})"


def _compile(cls: type, spec: _Spec) -> None:
    """Write this class's __init__, __eq__ and __hash__ as dataclass would (filling __dict__ directly)."""
    scope: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for index, f in enumerate(spec.fields):
        default = spec.defaults[f.name]
        param = f.name
        if default is not _REQUIRED:
            scope[f"_d{index}"] = default
            param += f"=_d{index}"
        (keyword if f.kw_only else positional).append(param)
        if default is _FACTORY:
            scope[f"_f{index}"] = f.default_factory
            body.append(f"d[{f.name!r}] = _f{index}() if {f.name} is _FACTORY else {f.name}")
        else:
            body.append(f"d[{f.name!r}] = {f.name}")
    params = ", ".join(["__frozen_self", *positional, *(["*", *keyword] if keyword else [])])
    values = "".join(f"d[{name!r}], " for name in spec.names)
    others = "".join(f"o[{name!r}], " for name in spec.names)
    source = "\n".join(
        [
            f"def __init__({params}):",
            "    d = __frozen_self.__dict__",
            *(f"    {line}" for line in body),
            "def __hash__(self):",
            "    d = self.__dict__",
            f"    return hash(({values}))",
            "def __eq__(self, other):",
            "    if type(other) is not type(self):",
            "        return NotImplemented",
            "    d, o = self.__dict__, other.__dict__",
            f"    return ({values}) == ({others})",
        ]
    )
    exec(source, scope)  # field names only: identifiers, as dataclasses checked
    for name in ("__init__", "__hash__", "__eq__"):
        method = scope[name]
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        if cls.__dict__.get(name) is _METHODS[name]:  # never one the class wrote itself
            setattr(cls, name, method)


_METHODS = {
    "__init__": _init,
    "__setattr__": _setattr,
    "__delattr__": _delattr,
    "__eq__": _eq,
    "__hash__": _hash,
    "__repr__": _repr,
}


def _make(cls: type[V], kw_only: bool) -> type[V]:
    if cls.__doc__ is None:
        # dataclass writes a class without a docstring one from `inspect.signature(cls)`: ~0.3 ms a class,
        # for half the classes a start-up defines, and read by nothing here
        cls.__doc__ = cls.__name__
    cls = dataclasses.dataclass(init=False, repr=False, eq=False, kw_only=kw_only)(cls)
    for name, method in _METHODS.items():
        if name not in cls.__dict__:  # a method the class writes itself stays its own
            setattr(cls, name, method)
    cls.__value_spec__ = _Spec(cls, kw_only)  # type: ignore[attr-defined]
    return cls


@overload
def frozen(cls: type[V], /) -> type[V]: ...
@overload
def frozen(*, kw_only: bool = False) -> Callable[[type[V]], type[V]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[V] | None = None, /, *, kw_only: bool = False) -> type[V] | Callable[[type[V]], type[V]]:
    """Decorator: a frozen dataclass with shared methods (see the module docstring)."""
    if cls is None:
        return lambda inner: _make(inner, kw_only)
    return _make(cls, kw_only)


def evolve(instance: V, **changes: Any) -> V:
    """A copy of a `@frozen` instance with these fields replaced, as `dataclasses.replace` but without calling
    `__init__` again (the resolver makes ~14k such copies for the default matrix)."""
    spec: _Spec = type(instance).__value_spec__  # type: ignore[attr-defined]
    unknown = changes.keys() - spec.defaults.keys()
    if unknown:
        raise TypeError(f"{spec.name} has no field {', '.join(sorted(unknown))}")
    copy = object.__new__(type(instance))
    fields = copy.__dict__
    fields.update(instance.__dict__)
    fields.update(changes)
    return copy
