"""GPU names as people write them: nvidia-smi's strings, marketing and SKU names, any case and spacing.

A name is folded to a compact key (no vendor words, no spaces or dashes) and then loosened a step at a
time (memory type, edition words, memory size, form factor) until it meets a catalog name. A name that
meets none but is a GPU we recognise gets the `--gpu smXY --gpu-memory N` line to type instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ..errors import RecipegenError
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


def _keys(parts: list[Hardware]) -> tuple[dict[str, list[Hardware]], dict[str, list[Hardware]]]:
    """Each part's written names as compact keys: as written (and without a memory type), then without a memory
    size ("4060 ti 16gb" also answers to "4060 ti", which may then name more than one part)."""
    strict: dict[str, list[Hardware]] = {}
    sizeless: dict[str, list[Hardware]] = {}
    for h in parts:
        for written in (h.id, h.name, *h.aliases):
            tokens = [t for t in _tokens(written) if not _MEMORY_TYPE.fullmatch(t)]
            for key in {compact(written), "".join(tokens)}:
                strict.setdefault(key, []).append(h)
            sizeless.setdefault("".join(t for t in tokens if not _SIZE.fullmatch(t)), []).append(h)
    return strict, sizeless


def candidates(hardware: Iterable[Hardware], name: str) -> tuple[str, list[Hardware]]:
    """The catalog parts a name stands for, at the strictest loosening that meets any (with that key): one part,
    several (one marketing name sold with two memory sizes), or none."""
    strict, sizeless = _keys(list(hardware))
    for key in loosened(name):
        found = _unique(strict.get(key, [])) or _unique(sizeless.get(key, []))
        if found:
            return key, sorted(found, key=lambda h: (h.memory_gib, h.id))
    return "", []


def match(hardware: Iterable[Hardware], name: str, memory_gib: float | None = None) -> Hardware | None:
    """The one part a name stands for; a size in the name (or `memory_gib`, --gpu-memory) picks among parts sold
    under one name. Several parts and no size to pick by: refused with the choices, never guessed."""
    parts = list(hardware)
    key, found = candidates(parts, name)
    if not found:
        return None
    wanted = stated_memory_gib(name) or memory_gib
    if wanted is None:
        if len(found) > 1:
            raise RecipegenError(
                f"GPU {name!r} names {len(found)} catalog parts: "
                + ", ".join(f"{h.id} ({h.memory_gib:g} GiB)" for h in found),
                f"name one, e.g. --gpu {found[-1].id}, or add --gpu-memory {found[-1].memory_gib:g}",
            )
        return found[0]
    # "h100-80gb" loosens to "h100": among that family, the part with the memory the name states
    family = [h for h in parts if compact(h.id).startswith(key) or any(compact(a) == key for a in h.aliases)]
    near = [h for h in _unique(found + family) if abs(h.memory_gib - wanted) <= 0.1 * wanted]
    if near:
        first = {h.id for h in found}
        return min(near, key=lambda h: (h.id not in first, abs(h.memory_gib - wanted)))
    if len(found) > 1:
        raise RecipegenError(
            f"GPU {name!r} with {wanted:g} GiB is none of the catalog parts of that name: "
            + ", ".join(f"{h.id} ({h.memory_gib:g} GiB)" for h in found),
            f"name one, e.g. --gpu {found[-1].id}",
        )
    return found[0]


def _unique(parts: list[Hardware]) -> list[Hardware]:
    return list({h.id: h for h in parts}.values())


@functools.cache
def _known() -> list[tuple[re.Pattern[str], str, float | None]]:
    """data/gpu_hints.yaml: compute capability (and memory) of GPUs the catalog has no recipe for."""
    from .index import package_folder
    from .parse_cache import package_data

    hints = package_data(package_folder("recipegen.data") / "gpu_hints.yaml")
    return [(re.compile(g["pattern"]), str(g["cc"]), g.get("memory_gib")) for g in hints["gpus"]]


_OTHER_VENDORS = re.compile(r"^(mi\d{2,3}\w*|instinct\w*|radeon\w*|rx\d{4}\w*|gaudi\w*|arc\w*|tpu\w*|trainium\w*)$")


def unknown_gpu_hint(name: str) -> str | None:
    """The line to type for a GPU the catalog does not list, or why it cannot be planned; None if unrecognised."""
    key = loosened(name)[-1]
    if _OTHER_VENDORS.match(compact(name)) or _OTHER_VENDORS.match(key):
        return (
            f"{name!r} is not an NVIDIA GPU (AMD Instinct/Radeon, Intel Gaudi/Arc, TPU or Trainium): recipegen "
            "plans NVIDIA CUDA GPUs only"
        )
    for pattern, cc, memory in _known():
        if pattern.search(key):
            major, minor = cc.split(".")
            gib = stated_memory_gib(name) or memory
            return (
                f"it is a compute capability {cc} GPU: use --gpu sm{major}{minor} --gpu-memory {gib:g}"
                if gib
                else (f"it is a compute capability {cc} GPU: use --gpu sm{major}{minor} --gpu-memory GIB (GiB per GPU)")
            )
    return None
