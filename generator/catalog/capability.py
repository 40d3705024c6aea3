"""Compute capabilities ("8.0", sm80) and the sets of them that kernels and builds declare."""

from __future__ import annotations

import re
from functools import lru_cache, total_ordering
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic only builds these schemas when a catalog is validated
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import core_schema

_CC = re.compile(r"^(?:sm_?)?(\d{1,2})\.?(\d)[a-z]?$", re.IGNORECASE)


@total_ordering
class Capability:
    """A CUDA compute capability such as 8.0 (sm80) or 12.1 (sm121)."""

    __slots__ = ("major", "minor")

    def __init__(self, major: int, minor: int) -> None:
        self.major = major
        self.minor = minor

    @classmethod
    def parse(cls, text: str | float | int) -> Capability:
        raw = str(text).strip()
        match = _CC.match(raw)
        if match is None:
            raise ValueError(f"not a compute capability: {raw!r} (write 8.0, 12.1, sm80 or sm_121)")
        return cls(int(match.group(1)), int(match.group(2)))

    @property
    def sm(self) -> str:
        return f"sm{self.major}{self.minor}"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def __repr__(self) -> str:
        return f"Capability({self})"

    def _key(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Capability) and self._key() == other._key()

    def __lt__(self, other: Capability) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            _coerce_capability,
            serialization=core_schema.to_string_ser_schema(),
            json_schema_input_schema=core_schema.str_schema(),
        )


def _coerce_capability(value: Any) -> Capability:
    if isinstance(value, Capability):
        return value
    if isinstance(value, (str, int, float)):
        return Capability.parse(value)
    raise ValueError(f"not a compute capability: {value!r}")


class CapabilitySet:
    """Which compute capabilities a kernel or build covers.

    Written in YAML as a list of terms: an exact capability ("9.0"), a major family ("10.x"),
    an inclusive range ("7.5-8.9") or an open bound (">=7.5", "<8.9").
    """

    __slots__ = ("_known", "_matchers", "terms")

    def __init__(self, terms: tuple[str, ...]) -> None:
        self._matchers = tuple(_term_matcher(term) for term in terms)  # parsed once, validated eagerly
        self._known: dict[tuple[int, int], bool] = {}  # answers by capability: the gates ask the same few often
        self.terms = terms

    def __contains__(self, cc: object) -> bool:
        if not isinstance(cc, Capability):
            return False
        key = (cc.major, cc.minor)
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = any(match(cc) for match in self._matchers)
        return known

    def __reduce__(self) -> tuple[type[CapabilitySet], tuple[tuple[str, ...]]]:
        return (CapabilitySet, (self.terms,))

    def __str__(self) -> str:
        return ", ".join(self.terms)

    def __repr__(self) -> str:
        return f"CapabilitySet({self})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CapabilitySet) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(self.terms)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            _coerce_set,
            serialization=core_schema.plain_serializer_function_ser_schema(lambda s: list(s.terms)),
            json_schema_input_schema=core_schema.list_schema(core_schema.str_schema()),
        )


def _coerce_set(value: Any) -> CapabilitySet:
    if isinstance(value, CapabilitySet):
        return value
    if isinstance(value, (str, int, float)):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty list of capability terms such as ['9.0', '10.x', '>=7.5']")
    return capability_set(tuple(str(v) for v in value))


@lru_cache(maxsize=4096)
def capability_set(terms: tuple[str, ...]) -> CapabilitySet:
    # every release file re-validates its parent's sets when the loader merges it (and the validated-catalog
    # cache rebuilds them all): parse each list once
    return CapabilitySet(terms)


def _term_matcher(term: str) -> Any:
    t = term.strip()
    if t.endswith(".x"):
        major = int(t[:-2])
        return lambda cc: cc.major == major
    for op in (">=", "<=", ">", "<"):
        if t.startswith(op):
            bound = Capability.parse(t[len(op) :])
            checks = {
                ">=": lambda cc, b=bound: cc >= b,
                "<=": lambda cc, b=bound: cc <= b,
                ">": lambda cc, b=bound: cc > b,
                "<": lambda cc, b=bound: cc < b,
            }
            return checks[op]
    if "-" in t:
        low_text, high_text = t.split("-", 1)
        low, high = Capability.parse(low_text), Capability.parse(high_text)
        return lambda cc: low <= cc <= high
    exact = Capability.parse(t)
    return lambda cc: cc == exact
