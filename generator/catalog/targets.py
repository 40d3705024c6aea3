"""Targets as users write them in `matrix` and advice: `8xa100-80gb`, `2xgb10`, `h200`."""

from __future__ import annotations

import re

from ..bounds import MAX_GPUS
from ..errors import RecipegenError
from ..frozen import frozen
from .index import Catalog
from .names import resolve_gpu
from .schema import Hardware

DEFAULT_TARGETS = ("8xa100-80gb", "8xrtx-4090", "8xh200", "8xrtx-pro-6000", "2xgb10")
# the matrix's columns: one GPU each, every cell the smallest usual layout that runs (as explain without --gpus)
MATRIX_GPUS = ("a100-80gb", "rtx-4090", "h100-sxm", "h200", "rtx-pro-6000", "gb10")
_TARGET = re.compile(r"^(?:(\d+)\s*[x×]\s*)?(.+)$", re.IGNORECASE)


@frozen
class Target:
    label: str
    hardware: Hardware
    gpus_per_node: int
    nodes: int
    search: bool = False  # no count given: try the usual sizes, smallest first (gpus_per_node/nodes unused)
    fleet: bool = False  # a box of this size to fit into: its full size first, then halves (matrix --target)


def gpu_column(catalog: Catalog, gpu: str, count: int | None = None) -> Target:
    """One matrix column: a GPU, at `count` GPUs (pinned) or, with no count, at the smallest usual size that runs."""
    hardware = resolve_gpu(catalog, gpu).hardware
    if count is None:
        return Target(hardware.id, hardware, 1, 1, search=True)
    return _sized(hardware, count)


def fleet_column(catalog: Catalog, text: str) -> Target:
    """`--target 8xa100-80gb`: a box of 8 to fit the model into, its full size first, then halves."""
    target = parse_target(catalog, text)
    return Target(target.label, target.hardware, target.gpus_per_node, target.nodes, fleet=True)


def _sized(hardware: Hardware, count: int) -> Target:
    if max(hardware.gpus_per_node) == 1:  # one GPU per box (DGX Spark): a count of boxes
        return Target(f"{count}×{hardware.id}", hardware, 1, count)
    return Target(f"{count}×{hardware.id}", hardware, count, 1)


def parse_target(catalog: Catalog, text: str) -> Target:
    match = _TARGET.match(text.strip())
    if match is None:  # pragma: no cover - the pattern accepts any non-empty text
        raise RecipegenError(f"cannot read target {text!r}", "write COUNTxGPU, e.g. 8xa100-80gb or 2xgb10")
    count = int(match.group(1) or 1)
    if not 1 <= count <= MAX_GPUS:
        raise RecipegenError(
            f"target {text!r} asks for {count} GPUs", f"write COUNTxGPU with COUNT from 1 to {MAX_GPUS}, e.g. 8xh200"
        )
    return _sized(resolve_gpu(catalog, match.group(2)).hardware, count)
