"""GPU names as people write them: nvidia-smi's strings, marketing and SKU names, any case and spacing.

A name is folded to a compact key (no vendor words, no spaces or dashes) and then loosened a step at a
time (memory type, edition words, memory size, form factor) until it meets a catalog name. A name that
meets none but is a GPU we recognise gets the `--gpu smXY --gpu-memory N` line to type instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .schema import Hardware

_VENDOR = {"nvidia", "geforce", "tesla", "quadro", "amd", "intel", "habana", "google"}
_MEMORY_TYPE = re.compile(r"hbm\d?e?|gddr\d[xw]?|lpddr\d?x?")
_EDITION = re.compile(r"blackwell|server|workstation|edition|maxq|max|q")
_SIZE = re.compile(r"(\d+)gi?b")
_FORM = re.compile(r"sxm\d?|pcie|nvl")


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", name.casefold()) if t and t not in _VENDOR]


def compact(name: str) -> str:
    return "".join(_tokens(name))


def stated_memory_gib(name: str) -> float | None:
    sizes = [m.group(1) for t in _tokens(name) if (m := _SIZE.fullmatch(t))]
    return float(sizes[0]) if sizes else None


def loosened(name: str) -> list[str]:
    """The compact key and the looser keys it falls back to, strictest first."""
    tokens = _tokens(name)
    steps = ["".join(tokens)]
    for pattern in (_MEMORY_TYPE, _EDITION, _SIZE, _FORM):
        tokens = [t for t in tokens if not pattern.fullmatch(t)]
        key = "".join(tokens)
        if key and key != steps[-1]:
            steps.append(key)
    return steps


def match(hardware: Iterable[Hardware], name: str) -> Hardware | None:
    parts = list(hardware)
    keys: dict[str, list[Hardware]] = {}
    for h in parts:
        for written in (h.id, h.name, *h.aliases):
            tokens = _tokens(written)
            for key in {"".join(tokens), "".join(t for t in tokens if not _MEMORY_TYPE.fullmatch(t))}:
                keys.setdefault(key, []).append(h)
    wanted = stated_memory_gib(name)
    for key in loosened(name):
        found = _unique(keys.get(key, []))
        if not found:
            continue
        if wanted is None:
            return found[0]
        # "h100-80gb" loosens to "h100": among that family, the part with the memory the name states
        family = [h for h in parts if compact(h.id).startswith(key) or any(compact(a) == key for a in h.aliases)]
        near = [h for h in _unique(found + family) if abs(h.memory_gib - wanted) <= 0.1 * wanted]
        if near:
            first = {h.id for h in found}
            return min(near, key=lambda h: (h.id not in first, abs(h.memory_gib - wanted)))
        return found[0]
    return None


def _unique(parts: list[Hardware]) -> list[Hardware]:
    return list({h.id: h for h in parts}.values())


# Compute capability and memory of GPUs people name that the catalog has no recipe for.
# Source: NVIDIA's CUDA GPU list (https://developer.nvidia.com/cuda-gpus) and the product pages.
_KNOWN: list[tuple[str, str, float | None]] = [
    (r"rtx(20\d0|titanrtx)", "7.5", None),
    (r"rtx3050", "8.6", 8),
    (r"rtx3060ti", "8.6", 8),
    (r"rtx3060", "8.6", 12),
    (r"rtx3070", "8.6", 8),
    (r"rtx3080ti", "8.6", 12),
    (r"rtx3080", "8.6", 10),
    (r"rtx3090", "8.6", 24),
    (r"rtx4060ti", "8.9", 16),
    (r"rtx4060", "8.9", 8),
    (r"rtx4070ti", "8.9", 12),
    (r"rtx4070", "8.9", 12),
    (r"rtx4080", "8.9", 16),
    (r"rtx4090", "8.9", 24),
    (r"rtx5060", "12.0", 8),
    (r"rtx5070ti", "12.0", 16),
    (r"rtx5070", "12.0", 12),
    (r"rtx5080", "12.0", 16),
    (r"rtx5090", "12.0", 32),
    (r"^a(2|10|16|30|40)$", "8.6", None),
    (r"rtxa[2-6]000", "8.6", None),
    (r"^l4$", "8.9", 24),
    (r"^l40s?$", "8.9", 48),
    (r"^l20$", "8.9", 48),
    (r"rtx[456]000ada", "8.9", None),
    (r"^v100", "7.0", None),
    (r"^t4$", "7.5", 16),
    (r"^p(4|40|100)$", "6.0", None),
    (r"^h(20|100|200|800)", "9.0", None),
    (r"^b200", "10.0", None),
    (r"^b300", "10.3", None),
    (r"jetsonorin|agxorin", "8.7", None),
    (r"^thor", "11.0", None),
]
_OTHER_VENDORS = re.compile(r"^(mi\d{2,3}\w*|instinct\w*|radeon\w*|rx\d{4}\w*|gaudi\w*|arc\w*|tpu\w*|trainium\w*)$")


def unknown_gpu_hint(name: str) -> str | None:
    """The line to type for a GPU the catalog does not list, or why it cannot be planned; None if unrecognised."""
    key = loosened(name)[-1]
    if _OTHER_VENDORS.match(compact(name)) or _OTHER_VENDORS.match(key):
        return (
            f"{name!r} is not an NVIDIA GPU (AMD Instinct/Radeon, Intel Gaudi/Arc, TPU or Trainium): recipegen "
            "plans NVIDIA CUDA GPUs only"
        )
    for pattern, cc, memory in _KNOWN:
        if re.search(pattern, key):
            major, minor = cc.split(".")
            gib = stated_memory_gib(name) or memory
            return (
                f"it is a compute capability {cc} GPU: use --gpu sm{major}{minor} --gpu-memory {gib:g}"
                if gib
                else (f"it is a compute capability {cc} GPU: use --gpu sm{major}{minor} --gpu-memory GIB (GiB per GPU)")
            )
    return None
