"""The simulated GPU both engine probes run on (vllm_probe.py, sglang_probe.py; stdlib only until asked): a
stand-in libcuda.so.1 where no driver library loads, and torch.cuda answering for one compute capability in the
whole probe process; and the walk over per-layer quantization schemes both read alike. Nothing here allocates on
or launches anything on a GPU."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import glob
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sysconfig
import types
from typing import Any

# the packages whose extension modules may link the driver library (each probe names its engine's)
LINKING = ("vllm", "sglang", "sgl_kernel", "flashinfer", "torch", "deep_gemm", "flash_mla")


# --- no GPU: a stand-in driver library, the CUDA platform forced, the capability simulated --------------


def _package_folders(package: str) -> list[str]:
    """Where this interpreter imports `package` from: a release put before the venv on PYTHONPATH (pip --target)
    shadows the venv's copy, and its extension modules are the ones that load."""
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec(package)  # a top-level name: found, not imported
        if spec is not None and spec.submodule_search_locations:
            return list(spec.submodule_search_locations)
    return [os.path.join(sysconfig.get_paths()["purelib"], package)]


def _driver_symbols(packages: tuple[str, ...] = LINKING) -> set[str]:
    """The cu* entry points the release's extension modules import from libcuda.so.1 (none: no stand-in)."""
    found: set[str] = set()
    nm, readelf = shutil.which("nm"), shutil.which("readelf")
    for package in packages:
        for lib in (
            f
            for folder in _package_folders(package)
            for f in glob.glob(os.path.join(folder, "**", "*.so*"), recursive=True)
        ):
            if not (nm and readelf):
                return {"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuGetErrorName", "cuGetErrorString"}
            dynamic = subprocess.run([readelf, "-d", lib], capture_output=True, text=True).stdout
            if "libcuda.so.1" not in dynamic:
                continue
            listing = subprocess.run([nm, "-D", "--undefined-only", lib], capture_output=True, text=True).stdout
            for line in listing.splitlines():
                name = line.split()[-1].split("@")[0] if line.split() else ""
                if name.startswith("cu") and name[2:3].isupper():
                    found.add(name)
    return found


def _triton_driver_symbols() -> set[str]:
    """The cu* calls in the C helper Triton 3.3 (torch 2.7) compiles against libcuda.so.1 when a module defines its
    first kernel (triton/backends/nvidia/driver.c): linked to the stand-in, it loads only if they are there."""
    found: set[str] = set()
    for folder in _package_folders("triton"):
        with contextlib.suppress(OSError), open(os.path.join(folder, "backends", "nvidia", "driver.c")) as handle:
            found |= {n for n in re.findall(r"\b(cu[A-Z]\w*)\b", handle.read()) if not n.endswith("_t")}
    return found


def ensure_libcuda(folder: str) -> str:
    """'system' when a driver library loads, 'not needed' when nothing links one, else a stand-in's path."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
        return "system"
    lib = os.path.join(folder, "libcuda.so.1")
    if not os.path.exists(lib):
        symbols = _driver_symbols()
        if not symbols:
            return "not needed"
        symbols |= _triton_driver_symbols()
        os.makedirs(folder, exist_ok=True)
        body = []
        for name in sorted(symbols | {"cuGetErrorName", "cuGetErrorString", "cuDeviceGetCount"}):
            if name in ("cuGetErrorName", "cuGetErrorString"):
                body.append(f'int {name}(int e, const char **p) {{ if (p) *p = "CUDA_ERROR_STUB_LIBRARY"; return 0; }}')
            elif name == "cuDeviceGetCount":
                body.append(f"int {name}(int *c) {{ if (c) *c = 0; return 34; }}")
            else:
                body.append(f"int {name}() {{ return 34; }}")
        source = lib + ".c"
        with open(source, "w") as handle:
            handle.write("\n".join(body) + "\n")
        compiler = shutil.which("gcc") or shutil.which("cc")
        if compiler is None:
            raise SystemExit("no C compiler to build the libcuda stand-in (install gcc)")
        subprocess.run([compiler, "-shared", "-fPIC", "-o", lib, source, "-Wl,-soname,libcuda.so.1"], check=True)
    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    # Triton 3.3 (torch 2.7, vLLM 0.10.0/0.10.1) asserts a libcuda.so.1 in ldconfig's cache or this folder as soon as
    # a module defines its kernels; the stand-in is that library here
    os.environ.setdefault("TRITON_LIBCUDA_PATH", folder)
    return lib


# The GPU each capability stands for: only its size and SM count are read (workspace sizing, split heuristics);
# the name stays "simulated" so no name-keyed path of the release fires on a GPU that was not there.
DEVICES: dict[int, tuple[int, int]] = {  # capability -> (total memory GiB, SMs) of a representative GPU
    70: (32, 80),  # V100
    75: (16, 40),  # T4
    80: (80, 108),  # A100
    86: (24, 72),  # A10
    89: (48, 142),  # L40S
    90: (80, 132),  # H100
    100: (180, 148),  # B200
    103: (288, 148),  # B300
    110: (128, 20),  # Jetson Thor
    120: (96, 188),  # RTX PRO 6000 Blackwell
    121: (128, 48),  # GB10
}


def device_properties(capability: int) -> dict[str, Any]:
    """What torch.cuda.get_device_properties reports for the simulated GPU (recorded with the tables)."""
    memory, sms = DEVICES.get(capability, (80, 132))
    return {
        "name": f"NVIDIA simulated sm_{capability}",
        "major": capability // 10,
        "minor": capability % 10,
        "total_memory": memory << 30,
        "multi_processor_count": sms,
        "warp_size": 32,
        "max_threads_per_multi_processor": 2048 if capability in (80, 90, 100, 103, 110) else 1536,
        "regs_per_multiprocessor": 65536,
        "L2_cache_size": 50 << 20,
        "shared_memory_per_block_optin": 227 << 10 if capability >= 90 else 163 << 10,
        "is_integrated": int(capability in (110, 121)),
        "uuid": "00000000-0000-0000-0000-000000000000",
        "gcnArchName": "",
    }


def simulate_torch_cuda(capability: int) -> None:
    """torch.cuda answers for one simulated GPU in the whole probe process: some releases' backends (0.16.0's)
    ask torch itself while validating, which without a driver raises "Found no NVIDIA driver". Device queries
    report the GPU, device selection and synchronisation are no-ops; nothing here allocates or launches."""
    import torch

    props = types.SimpleNamespace(**device_properties(capability))
    major, minor = props.major, props.minor
    memory = props.total_memory

    def none() -> Any:
        """A no-op of its own per name: torch._dynamo's trace rules refuse one function under two torch names."""

        def call(*_args: Any, **_kwargs: Any) -> None:
            return None

        return call

    answers: dict[str, Any] = {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "get_device_capability": lambda device=None: (major, minor),
        "get_device_properties": lambda device=None: props,
        "get_device_name": lambda device=None: props.name,
        "get_arch_list": lambda: [f"sm_{c}" for c in DEVICES],
        "is_bf16_supported": lambda *a, **k: capability >= 80,
        "mem_get_info": lambda device=None: (memory, memory),
        "memory_allocated": lambda device=None: 0,
        "max_memory_allocated": lambda device=None: 0,
        "memory_reserved": lambda device=None: 0,
        "max_memory_reserved": lambda device=None: 0,
        "set_device": none(),
        "synchronize": none(),
        "init": none(),
        "empty_cache": none(),
        "reset_peak_memory_stats": none(),
        "_exchange_device": lambda device: 0,  # `with torch.cuda.device(i)`
        "_maybe_exchange_device": lambda device: 0,
    }
    for name, answer in answers.items():
        setattr(torch.cuda, name, answer)
    if hasattr(torch, "_C"):  # vLLM's stateless device count asks torch's C binding, not torch.cuda
        torch._C._cuda_getDeviceCount = lambda: 1


def source_of(obj: Any, site: str) -> str:
    """The file a class is defined in, relative to the engine's package folder."""
    return os.path.relpath(inspect.getsourcefile(obj) or "", site)


def scheme_minimums(package: Any, parts: tuple[str, ...], site: str) -> dict[str, Any]:
    """`get_min_capability()` of every class defining its own, in the modules under the quantization `package`
    whose names contain one of `parts`, keyed `file:Class`; a module that does not import is skipped."""
    schemes: dict[str, Any] = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not any(part in info.name for part in parts):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:
            continue
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == info.name and "get_min_capability" in obj.__dict__:
                with contextlib.suppress(Exception):
                    schemes[f"{source_of(obj, site)}:{name}"] = obj.get_min_capability()
    return schemes


def probe_arguments() -> argparse.Namespace:
    """The command line both probes take: one simulated capability, the quantization table or a part of the
    selector table, and where the stand-in libcuda is compiled."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cap", type=int, help="one compute capability, e.g. 90")
    parser.add_argument("--methods", action="store_true")
    parser.add_argument("--part", choices=("all", "kernels", "attention"), default="all")
    parser.add_argument("--stub-dir", default=os.environ.get("HARVEST_CUDA_STUB_DIR", "/tmp/harvest-libcuda"))
    return parser.parse_args()
