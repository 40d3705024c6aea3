"""Map this machine's GPUs (from `localgpu`) onto catalog hardware, for `detect` and `--gpu auto`."""

from __future__ import annotations

from typing import Any

from ..catalog import gpu_names
from ..catalog.capability import Capability
from ..catalog.index import Catalog
from ..catalog.schema import Hardware
from ..errors import ExitCode, RecipegenError
from ..frozen import frozen
from .localgpu import Gpu, Machine

MIB_PER_GIB = 1024
MEMORY_TOLERANCE_GIB = 1.5  # nvidia-smi's total differs from the datasheet by what the driver reserves


class NoGpuError(RecipegenError):
    exit_code = ExitCode.USAGE


@frozen
class Match:
    gpu: Gpu
    hardware: Hardware | None
    how: str


def _fold(text: str) -> str:
    text = text.strip().casefold()
    return text[len("nvidia ") :] if text.startswith("nvidia ") else text


def match(catalog: Catalog, gpu: Gpu) -> Match:
    key = _fold(gpu.name)
    for hw in catalog.hardware.values():
        if key in {_fold(hw.name), _fold(hw.id), *(_fold(a) for a in hw.aliases)} and _holds(hw, gpu):
            return Match(gpu, hw, "by name" if _fold(hw.name) == key else f"by name, as {hw.name}")
    named = _by_marketing_name(catalog, gpu)
    if named is not None:
        return named
    cc = Capability.parse(gpu.compute_capability) if gpu.compute_capability else None
    if cc is None:
        return Match(gpu, None, "the driver does not report a compute capability and the name is not in the catalog")
    parts = [h for h in catalog.hardware.values() if h.compute_capability == cc]
    if gpu.memory_mib is None:
        unified = [h for h in parts if h.memory_kind == "unified"]
        if len(unified) == 1:
            how = f"{cc.sm} with unified memory (no memory figure reported) is {unified[0].name}"
            return Match(gpu, unified[0], how)
        return Match(gpu, None, f"{cc.sm} without a memory figure matches no single catalog part")
    gib = gpu.memory_mib / MIB_PER_GIB
    close = sorted(
        (h for h in parts if abs(h.memory_gib - gib) <= MEMORY_TOLERANCE_GIB),
        key=lambda h: (round(abs(h.memory_gib - gib), 1), not h.default_for_capability, h.id),
    )
    if close:
        best = close[0]
        tied = [h.id for h in close[1:] if round(abs(h.memory_gib - gib), 1) == round(abs(best.memory_gib - gib), 1)]
        how = f"{cc.sm} with {gib:.1f} GiB is {best.name}"
        if tied:  # the same tie-break as --gpu sm90: the part the capability stands for
            how += f" (also {', '.join(tied)}: pass --gpu to pick)"
        return Match(gpu, best, how)
    return Match(gpu, None, f"no catalog GPU is {cc.sm} with {gib:.1f} GiB")


def _holds(hw: Hardware, gpu: Gpu) -> bool:
    """Whether the memory the driver reports is the part's: one name can be sold with less (an 8 GB RTX 3060)."""
    return gpu.memory_mib is None or abs(hw.memory_gib - gpu.memory_mib / MIB_PER_GIB) <= MEMORY_TOLERANCE_GIB


def _by_marketing_name(catalog: Catalog, gpu: Gpu) -> Match | None:
    """The part nvidia-smi's marketing name stands for ("NVIDIA GeForce RTX 4070 SUPER"); where one name is sold with
    two memory sizes ("NVIDIA GeForce RTX 4060 Ti", 8 or 16 GB), the one whose memory the driver reports."""
    _, named = gpu_names.candidates(catalog.hardware.values(), gpu.name)
    if gpu.memory_mib is None:
        return Match(gpu, named[0], f"by name, as {named[0].name}") if len(named) == 1 else None
    gib = gpu.memory_mib / MIB_PER_GIB
    near = [h for h in named if abs(h.memory_gib - gib) <= MEMORY_TOLERANCE_GIB]
    if not near:
        return None
    best = min(near, key=lambda h: (abs(h.memory_gib - gib), h.id))
    return Match(gpu, best, f"by name and its {gib:.1f} GiB, as {best.name}")


def require_gpus(machine: Machine | None) -> Machine:
    if machine is None:
        raise NoGpuError(
            "no NVIDIA GPU found on this machine (neither NVML nor nvidia-smi answered)",
            "install the NVIDIA driver, or name the target with --gpu (e.g. --gpu a100)",
        )
    return machine


def auto_target(catalog: Catalog, machine: Machine) -> tuple[Hardware, str]:
    """The catalog part for `--gpu auto`, with one line saying how it was found."""
    matches = [match(catalog, g) for g in machine.gpus]
    first = matches[0]
    if first.hardware is None:
        raise RecipegenError(
            f"--gpu auto: this machine's {first.gpu.name} is not in the catalog ({first.how})",
            "add a hardware/ recipe for it (recipes/README.md), or pass --gpu with a known part",
        )
    same = sum(1 for m in matches if m.hardware is not None and m.hardware.id == first.hardware.id)
    how = f"detected {same}x {first.gpu.name} here via {machine.source} → {first.hardware.name} ({first.how})"
    if same != len(matches):
        how += f"; {len(matches) - same} other GPU(s) here are not counted"
    if first.gpu.mig == "Enabled":
        how += "; MIG is enabled: containers see MIG slices, not whole GPUs"
    return first.hardware, how


def detect_json(catalog: Catalog, machine: Machine) -> dict[str, Any]:
    return {
        "source": machine.source,
        "driver": machine.driver,
        "cuda": machine.cuda,
        "link": machine.link,
        "count": len(machine.gpus),
        "gpus": [
            {
                "index": m.gpu.index,
                "name": m.gpu.name,
                "compute_capability": m.gpu.compute_capability,
                "memory_mib": m.gpu.memory_mib,
                "mig": m.gpu.mig,
                "pci_bus_id": m.gpu.pci_bus_id,
                "hardware": m.hardware.id if m.hardware else None,
                "how": m.how,
            }
            for m in (match(catalog, g) for g in machine.gpus)
        ],
    }


def detect_text(catalog: Catalog, machine: Machine) -> str:
    unknown = "unknown"
    lines = [
        f"{len(machine.gpus)} NVIDIA GPU(s) via {machine.source}: driver {machine.driver or unknown}, "
        f"CUDA {machine.cuda or unknown}, link {machine.link or unknown}"
    ]
    for m in (match(catalog, g) for g in machine.gpus):
        g = m.gpu
        mem = f"{g.memory_mib} MiB" if g.memory_mib is not None else "memory not reported"
        facts = f"sm {g.compute_capability or unknown}, {mem}, MIG {g.mig or 'n/a'}, bus {g.pci_bus_id or unknown}"
        if m.hardware is not None:
            lines.append(f"  GPU {g.index}: {g.name} → {m.hardware.id} ({m.how}); {facts}")
        else:
            lines.append(f"  GPU {g.index}: {g.name} → not in the catalog ({m.how}); {facts}")
            lines.append("    add it as a hardware/ recipe (recipes/README.md) to plan for it")
    return "\n".join(lines)


def auto_gpu(catalog: Catalog, required: bool) -> tuple[Hardware, str] | None:
    """`--gpu auto` (or no --gpu): the detected part, None when nothing is here and it was not asked for."""
    from .localgpu import probe

    machine = probe()
    if machine is None and not required:
        return None
    return auto_target(catalog, require_gpus(machine))
