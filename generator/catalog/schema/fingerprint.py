"""fingerprints/*.yaml: a known failure as an engine prints it, and what it means in recipegen's terms."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from ...frozen import frozen
from .common import Sourced
from .records import Check
from .text import Id, Name, Text

Stage = Literal[
    "driver",
    "model-config",
    "weights-load",
    "gemm-kernel",
    "attention-backend",
    "kv-cache",
    "cuda-graph",
    "distributed",
    "oom",
    "parser",
    "request",
    "other",
]
GateName = Literal["architecture", "weight-format", "kernel", "platform", "memory", "topology"]

_VERSION_TERM = re.compile(r"^(>=|<=|==|>|<)\d+(\.\d+){0,2}$")


def _compiles(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    nested = _nested_repeat(value)
    if nested is not None:
        raise ValueError(
            f"{nested} inside a repeated group (as in (a+)+ or (a|ab)*) can take exponential time on one log line; "
            "write the pattern without repeating a group that itself repeats or alternates"
        )
    return value


def _nested_repeat(value: str) -> str | None:
    """The construct that makes this pattern backtrack catastrophically, or None: a repeat (or an
    alternation) inside a group that repeats more than once. Read from Python's own regex parser."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser as parser  # type: ignore[attr-defined]

    repeats = (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT))

    def inner(tree: Any, under_repeat: bool) -> str | None:
        for op, av in list(tree):
            found: str | None = None
            if op in repeats:
                many = av[1] is c.MAXREPEAT or av[1] > 1
                if under_repeat and many:
                    return "a repeat"
                found = inner(av[2], under_repeat or many)
            elif op is c.BRANCH:
                if under_repeat:
                    return "an alternation"
                found = next((f for f in (inner(b, False) for b in av[1]) if f), None)
            elif op is c.SUBPATTERN:
                found = inner(av[-1], under_repeat)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                found = inner(av[1], under_repeat)
            if found is not None:  # an atomic group (not walked) never backtracks into itself
                return found
        return None

    return inner(parser.parse(value), False)


def _bounds(value: str) -> str:
    for term in value.split(","):
        if not _VERSION_TERM.match(term.strip()):
            raise ValueError(f"version bound {term.strip()!r}: write e.g. '>=0.10' or '<0.40.1'")
    return value


@frozen(kw_only=True)
class Fingerprint(Sourced):
    id: Id
    title: Name  # one line: what failed
    engines: list[Id] | None = None  # engine ids that print it; None: any engine
    versions: Annotated[Name, Check(_bounds)] | None = (
        None  # comma-separated bounds on the engine version, e.g. '>=0.10,<0.40'
    )
    pattern: Annotated[Text, Check(_compiles)]  # Python regex searched in the log (case-sensitive, per line)
    stage: Stage
    gate: GateName | None  # the recipegen gate that predicts it; None: a flag choice, no gate
    explanation: Text
    fix: Text
    generic: bool = False  # a wrapper message that points elsewhere; more specific fingerprints rank first
