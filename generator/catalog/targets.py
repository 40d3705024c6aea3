"""Targets as users write them in `matrix` and advice: `8xa100-80gb`, `2xgb10`, `h200`."""

from __future__ import annotations

import re

from ..errors import RecipegenError
from ..frozen import frozen
from .index import Catalog
from .names import resolve_gpu
from .schema import Hardware

DEFAULT_TARGETS = ("8xa100-80gb", "8xrtx-4090", "8xh200", "8xrtx-pro-6000", "2xgb10")
_TARGET = re.compile(r"^(?:(\d+)\s*[x×]\s*)?(.+)$", re.IGNORECASE)


@frozen
class Target:
    label: str
    hardware: Hardware
    gpus_per_node: int
    nodes: int


def parse_target(catalog: Catalog, text: str) -> Target:
    match = _TARGET.match(text.strip())
    if match is None:  # pragma: no cover - the pattern accepts any non-empty text
        raise RecipegenError(f"cannot read target {text!r}", "write COUNTxGPU, e.g. 8xa100-80gb or 2xgb10")
    count = int(match.group(1) or 1)
    if count < 1:
        raise RecipegenError(f"target {text!r} has no GPUs", "write COUNTxGPU with COUNT ≥ 1, e.g. 8xh200")
    hardware = resolve_gpu(catalog, match.group(2)).hardware
    if max(hardware.gpus_per_node) == 1:
        return Target(f"{count}×{hardware.id}", hardware, 1, count)
    return Target(f"{count}×{hardware.id}", hardware, count, 1)
