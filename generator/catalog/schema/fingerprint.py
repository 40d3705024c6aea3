"""fingerprints/*.yaml: a known failure as an engine prints it, and what it means in recipegen's terms."""

from __future__ import annotations

import re
from typing import Annotated, Literal

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
    return value


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
