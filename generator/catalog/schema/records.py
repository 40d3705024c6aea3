"""Catalog entries are plain frozen dataclasses ("records"); pydantic checks them where they are read.

Using the catalog never imports pydantic's validation machinery: a run from the validated-catalog
cache builds records directly, and defining pydantic models alone costs more than the resolver's
whole work for a request. Validation builds a `TypeAdapter` per record type on first use, from the
same class: field types, `Limits` and `Check` markers in `Annotated` metadata, and `_check` for
rules across fields. Markers import pydantic only when a schema is generated from them.

Records are `@frozen(kw_only=True)` classes (generator/frozen.py): frozen dataclasses whose methods are
shared rather than compiled per class.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from ...frozen import frozen
from ..capability import Capability, CapabilitySet

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema

R = TypeVar("R")

# what every record accepts: nothing beyond its fields, and text with its surrounding whitespace removed
_CONFIG = {"extra": "forbid", "str_strip_whitespace": True}


@frozen(kw_only=True)
class Strict:
    """Base of every catalog record. Subclasses are `@frozen(kw_only=True)` too (keyword-only, so that fields with
    defaults may come before required ones); `_check` states rules across fields."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

    def _check(self) -> None:
        """Raise ValueError when the fields together break a rule (run after each field validated)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        if cls._check is Strict._check:
            return schema
        from pydantic_core import core_schema

        def checked(entry: Strict) -> Strict:
            entry._check()
            return entry

        # The class's reference goes on the checked schema, not the bare one: pydantic reuses the schema stored under
        # that reference for every later field of this type, which would otherwise skip `_check`.
        ref = None
        if schema["type"] != "definition-ref" and "ref" in schema:
            ref = str(schema["ref"])
            schema = cast("CoreSchema", {k: v for k, v in schema.items() if k != "ref"})
        return core_schema.no_info_after_validator_function(checked, schema, ref=ref)


class Limits:
    """Bounds on a number or a list's length, as pydantic's Field(gt=, ge=, le=, min_length=) takes them."""

    __slots__ = ("ge", "gt", "le", "min_length")

    def __init__(
        self,
        *,
        gt: float | None = None,
        ge: float | None = None,
        le: float | None = None,
        min_length: int | None = None,
    ) -> None:
        self.gt, self.ge, self.le, self.min_length = gt, ge, le, min_length

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic import Field

        bounds = Field(gt=self.gt, ge=self.ge, le=self.le, min_length=self.min_length)
        return handler(typing.Annotated[source, bounds])


class Check:
    """A check run on a value after its type validated: returns the value or raises ValueError."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[[str], str]) -> None:
        self.function = function

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.function, handler(source))


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(kind: Any) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        import os

        from pydantic import TypeAdapter

        # Building a validator would otherwise scan every installed distribution's entry points for pydantic
        # plugins (a tenth of a start-up); typer builds its option adapters the same way.
        previous = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
        os.environ["PYDANTIC_DISABLE_PLUGINS"] = "1"
        try:
            adapter = _ADAPTERS[kind] = TypeAdapter(kind)
        finally:
            if previous is None:
                del os.environ["PYDANTIC_DISABLE_PLUGINS"]
            else:
                os.environ["PYDANTIC_DISABLE_PLUGINS"] = previous
    return adapter


def validate(kind: type[R], data: Any) -> R:
    """A record of this type from YAML/JSON data; raises pydantic.ValidationError."""
    return typing.cast(R, _adapter(kind).validate_python(data))


def revalidated(entry: R, **changes: Any) -> R:
    """A copy with these fields replaced, validated again as a whole."""
    return validate(type(entry), {**to_data(entry), **to_data(changes)})


def field_names(kind: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


_FIELD_TYPES: dict[type[Any], dict[str, Any]] = {}


def field_types(kind: type[Any]) -> dict[str, Any]:
    """Each field's type, resolved (Annotated metadata kept)."""
    types = _FIELD_TYPES.get(kind)
    if types is None:
        hints = typing.get_type_hints(kind, include_extras=True)  # each class's own module resolves its names
        types = _FIELD_TYPES[kind] = {name: hints[name] for name in field_names(kind)}
    return types


def is_record(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, Strict)


def to_data(
    value: Any, *, exclude_none: bool = False, exclude_defaults: bool = False, exclude: frozenset[str] = frozenset()
) -> Any:
    """JSON-ready data: records and dicts as dicts, lists and tuples as lists, dates as ISO text, capability
    sets as their terms and capabilities as "8.0". `exclude*` apply to the outermost record only when given
    by name (`exclude`), and to every record when flags (as pydantic's dump does)."""
    if isinstance(value, Strict):
        out: dict[str, Any] = {}
        for spec in dataclasses.fields(value):
            if spec.name in exclude:
                continue
            item = getattr(value, spec.name)
            if exclude_none and item is None:
                continue
            if exclude_defaults and _is_default(spec, item):
                continue
            out[spec.name] = to_data(item, exclude_none=exclude_none, exclude_defaults=exclude_defaults)
        return out
    if isinstance(value, dict):
        return {
            to_data(k): to_data(v, exclude_none=exclude_none, exclude_defaults=exclude_defaults)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [to_data(v, exclude_none=exclude_none, exclude_defaults=exclude_defaults) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, CapabilitySet):
        return list(value.terms)
    if isinstance(value, Capability):
        return str(value)
    return value


def _is_default(spec: dataclasses.Field[Any], value: Any) -> bool:
    if spec.default is not dataclasses.MISSING:
        return bool(value == spec.default)
    if spec.default_factory is not dataclasses.MISSING:
        return bool(value == spec.default_factory())
    return False
