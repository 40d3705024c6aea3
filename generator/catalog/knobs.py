"""What a recipe's value for one of the engine's semantic knobs must be, and what it means.

A curated deployment spells its flags as its source gives them; the planner reads the knobs it
understands (tensor parallel size, context, concurrency, memory fraction) back through the
engine's vocabulary (engines/*.yaml `flags`). The rules are engine-neutral data: one per knob,
used by the catalog cross-check (validate refuses a bad value) and by the planner (which then
never meets one).
"""

from __future__ import annotations

import math
from typing import Literal

from ..frozen import frozen

Kind = Literal["count", "fraction", "context", "port", "switch"]


@frozen
class Rule:
    kind: Kind
    high: int = 1 << 31  # counts: the largest accepted value

    def describe(self) -> str:
        return {
            "count": f"a whole number from 1 to {self.high:,}",
            "fraction": "a fraction of GPU memory in (0, 1], e.g. 0.9",
            "context": f"a whole number of tokens from 1 to {self.high:,}, or auto",
            "port": "a port number from 1 to 65535",
            "switch": "no value (it is a switch)",
        }[self.kind]


# Flags field name (schema/engine.py Flags) -> what its value must be.
RULES: dict[str, Rule] = {
    "tensor_parallel": Rule("count", 4096),
    "max_concurrency": Rule("count", 1 << 20),
    "context_length": Rule("context", 1 << 31),
    "memory_fraction": Rule("fraction"),
    "port": Rule("port"),
    "expert_parallel": Rule("switch"),
    "trust_remote_code": Rule("switch"),
    "enable_auto_tool_choice": Rule("switch"),
    "headless_worker": Rule("switch"),
    "decode_context_parallel": Rule("count", 4096),
    "pipeline_parallel": Rule("count", 4096),
    "data_parallel": Rule("count", 4096),
    "disable_cuda_graphs": Rule("switch"),
    "speculative_tokens": Rule("count", 1024),
    "cpu_moe": Rule("switch"),
}

AUTO = "auto"


def parse(knob: str, value: str | None) -> int | float | str | None:
    """The meaning of `value` for `knob`: an int, a float, AUTO, or None for a switch.

    Raises ValueError naming what the knob takes when the value does not fit its rule.
    """
    rule = RULES.get(knob)
    if rule is None:
        return value
    if rule.kind == "switch":
        if value is not None:
            raise ValueError(rule.describe())
        return None
    text = (value or "").strip()
    if rule.kind == "context" and text in (AUTO, "-1"):
        return AUTO
    if rule.kind == "fraction":
        try:
            number = float(text)
        except ValueError:
            raise ValueError(rule.describe()) from None
        if not (math.isfinite(number) and 0 < number <= 1):
            raise ValueError(rule.describe())
        return number
    if not text.isascii() or not text.isdigit():
        raise ValueError(rule.describe())
    count = int(text)
    high = 65535 if rule.kind == "port" else rule.high
    if not 1 <= count <= high:
        raise ValueError(rule.describe())
    return count


def problem(knob: str, flag: str, value: str | None) -> str | None:
    """One line saying what is wrong with `flag value` for `knob`, or None."""
    try:
        parse(knob, value)
    except ValueError as exc:
        return f"{flag} takes {exc}, not {value!r}"
    return None
