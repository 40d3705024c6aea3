"""This machine's NVIDIA GPUs: NVML (nvidia-ml-py) when importable, else `nvidia-smi`.

An edge module: it runs a program and reads a library, returns typed facts, and decides nothing.
`detect` maps the facts onto catalog hardware.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from typing import Any

from ..frozen import frozen

QUERY_FIELDS = ("index", "name", "compute_cap", "memory.total", "driver_version", "mig.mode.current", "pci.bus_id")
_MISSING = {"", "[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]"}


@frozen
class Gpu:
    index: int
    name: str
    compute_capability: str | None  # "8.0"; None when the driver does not say (older than R510)
    memory_mib: int | None  # None on unified-memory parts (GB10 reports [N/A])
    mig: str | None  # "Enabled" / "Disabled"; None when the GPU has no MIG
    pci_bus_id: str | None


@frozen
class Machine:
    gpus: tuple[Gpu, ...]
    driver: str | None
    cuda: str | None  # the highest CUDA version the driver supports
    link: str | None  # "nvlink", "pcie", "single GPU" or None when unknown
    source: str  # "nvml" or "nvidia-smi"


def _value(text: str) -> str | None:
    text = text.strip()
    return None if text in _MISSING else text


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None


def _run(args: list[str]) -> str | None:
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def parse_query(text: str, fields: tuple[str, ...] = QUERY_FIELDS) -> list[Gpu]:
    gpus: list[Gpu] = []
    for row in csv.reader(io.StringIO(text), skipinitialspace=True):
        if len(row) != len(fields):
            continue
        v = dict(zip(fields, (_value(x) for x in row), strict=True))
        name = v.get("name")
        if name is None:
            continue
        index = _int(v.get("index"))
        gpus.append(
            Gpu(
                index=len(gpus) if index is None else index,
                name=name,
                compute_capability=v.get("compute_cap"),
                memory_mib=_int(v.get("memory.total")),
                mig=v.get("mig.mode.current"),
                pci_bus_id=v.get("pci.bus_id"),
            )
        )
    return gpus


def link_from_topology(text: str | None, count: int) -> str | None:
    """`nvidia-smi topo -m`: NV# between two GPUs means NVLink; any other path is PCIe or the CPU."""
    if count == 1:
        return "single GPU"
    if not text:
        return None
    # tab-separated as printed, space-separated as often pasted; GPU rows only (NIC rows hold PIX too)
    cells = [c for line in text.splitlines() if re.match(r"GPU\d+\s", line) for c in line.split()[1:]]
    if any(re.fullmatch(r"NV\d+", c) for c in cells):
        return "nvlink"
    if any(c in {"SYS", "NODE", "PHB", "PXB", "PIX"} for c in cells):
        return "pcie"
    return None


def _smi() -> Machine | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    fields: tuple[str, ...] = QUERY_FIELDS
    out = _run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"])
    if out is None:  # drivers before R510 know no compute_cap field: ask without it, map by name
        fields = tuple(f for f in QUERY_FIELDS if f != "compute_cap")
        out = _run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"])
    if out is None:
        return None
    gpus = parse_query(out, fields)
    if not gpus:
        return None
    driver_out = _run([exe, "--query-gpu=driver_version", "--format=csv,noheader"]) or ""
    driver = _value(driver_out.splitlines()[0]) if driver_out.strip() else None
    banner = _run([exe]) or ""
    cuda = re.search(r"CUDA Version:\s*([0-9.]+)", banner)
    topo = _run([exe, "topo", "-m"]) if len(gpus) > 1 else None
    link = link_from_topology(topo, len(gpus))
    return Machine(tuple(gpus), driver, cuda.group(1) if cuda else None, link, "nvidia-smi")


def _nvml(pynvml: Any) -> Machine | None:
    try:
        pynvml.nvmlInit()
    except Exception:  # any NVML failure means: ask nvidia-smi instead
        return None
    try:
        count = pynvml.nvmlDeviceGetCount()
        if count == 0:
            return None
        gpus = [_nvml_gpu(pynvml, i) for i in range(count)]
        nvlink = count > 1 and any(
            _try(pynvml.nvmlDeviceGetNvLinkState, pynvml.nvmlDeviceGetHandleByIndex(i), 0) == 1 for i in range(count)
        )
        driver = _text(_try(pynvml.nvmlSystemGetDriverVersion))
        cuda_int = _try(pynvml.nvmlSystemGetCudaDriverVersion)
        cuda = f"{cuda_int // 1000}.{cuda_int % 1000 // 10}" if isinstance(cuda_int, int) else None
        link = "single GPU" if count == 1 else ("nvlink" if nvlink else "pcie")
        return Machine(tuple(gpus), driver, cuda, link, "nvml")
    finally:
        _try(pynvml.nvmlShutdown)


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _nvml_gpu(pynvml: Any, i: int) -> Gpu:
    h = pynvml.nvmlDeviceGetHandleByIndex(i)
    cc = _try(pynvml.nvmlDeviceGetCudaComputeCapability, h)
    mem = _try(pynvml.nvmlDeviceGetMemoryInfo, h)
    mig = _try(pynvml.nvmlDeviceGetMigMode, h)
    pci = _try(pynvml.nvmlDeviceGetPciInfo, h)
    return Gpu(
        index=i,
        name=str(_text(pynvml.nvmlDeviceGetName(h))),
        compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
        memory_mib=int(mem.total) // (1024 * 1024) if mem is not None else None,
        mig=None if mig is None else ("Enabled" if mig[0] else "Disabled"),
        pci_bus_id=_text(pci.busId) if pci is not None else None,
    )


def _try(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:  # NVML raises NotSupported for facts a part lacks (GB10 memory)
        return None


def probe() -> Machine | None:
    """The GPUs here, or None when there are none (or no driver to ask)."""
    try:
        import pynvml
    except ImportError:
        pynvml = None
    if pynvml is not None:
        machine = _nvml(pynvml)
        if machine is not None:
            return machine
    return _smi()
