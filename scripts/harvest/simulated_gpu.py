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
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import types
from typing import Any

# the packages whose extension modules may link the driver library (each probe names its engine's)
LINKING = ("vllm", "sglang", "sgl_kernel", "flashinfer", "torch", "deep_gemm", "flash_mla", "vllm_flash_attn")


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
    """The cu* entry points Triton's own launcher helper calls (`triton/backends/nvidia/driver.c`): Triton 3.3
    compiles that helper with `-lcuda` when a module defines its kernels, and Python loads it with every symbol
    bound at once, so the stand-in must define them too."""
    found: set[str] = set()
    for folder in _package_folders("triton"):
        source = os.path.join(folder, "backends", "nvidia", "driver.c")
        with contextlib.suppress(OSError), open(source, encoding="utf-8", errors="replace") as handle:
            found |= set(re.findall(r"\b(cu[A-Z][A-Za-z0-9]*)\s*\(", handle.read()))
    return found


def ensure_libcuda(folder: str) -> str:
    """'system' when a driver library loads, 'not needed' when nothing links one, else a stand-in's path."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
        return "system"
    lib = os.path.join(folder, "libcuda.so.1")
    if not os.path.exists(lib):
        symbols = _driver_symbols()
        if symbols:
            symbols |= _triton_driver_symbols()
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
    # a module defines its kernels, then links its launcher helper with `gcc -lcuda -L<folder>`, which needs the
    # unversioned name a driver install provides beside it
    linked = os.path.join(folder, "libcuda.so")
    if not os.path.lexists(linked):
        with contextlib.suppress(FileExistsError):
            os.symlink("libcuda.so.1", linked)
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


def simulate_nvml(pynvml: Any, capability: int) -> None:
    """pynvml answering for the simulated GPU (one device, its capability and name; init and shutdown do nothing):
    vLLM 0.6.0 and older query NVML as their CUDA platform module loads, which fails with no driver."""
    props = device_properties(capability)
    answers: dict[str, Any] = {
        "nvmlInit": lambda *a, **k: None,
        "nvmlShutdown": lambda *a, **k: None,
        "nvmlDeviceGetCount": lambda: 1,
        "nvmlDeviceGetHandleByIndex": lambda index: index,
        "nvmlDeviceGetCudaComputeCapability": lambda handle: (props["major"], props["minor"]),
        "nvmlDeviceGetName": lambda handle: props["name"],
    }
    for name, answer in answers.items():
        setattr(pynvml, name, answer)


# --- no nvidia-smi: a stand-in that answers the simulated GPU's figures ---------------------------------------

# `--query-gpu` fields the stand-in has a simulated figure for -> (value from device_properties, unit)
_SMI_FIELDS: dict[str, Any] = {
    "index": lambda p: (0, None),
    "count": lambda p: (1, None),
    "name": lambda p: (p["name"], None),
    "uuid": lambda p: (f"GPU-{p['uuid']}", None),
    "compute_cap": lambda p: (f"{p['major']}.{p['minor']}", None),
    "memory.total": lambda p: (p["total_memory"] >> 20, "MiB"),
    "memory.free": lambda p: (p["total_memory"] >> 20, "MiB"),  # nothing allocated: torch's mem_get_info agrees
    "memory.used": lambda p: (0, "MiB"),
}


def nvidia_smi_answer(capability: int, argv: list[str]) -> str | None:
    """What `nvidia-smi ARGV` prints on the simulated GPU (one GPU, figures from device_properties), None for a
    query it has no simulated figure for: `--list-gpus`/`-L`, or `--query-gpu=FIELD[,…] --format=csv[,noheader]
    [,nounits]` over the fields above, as the real tool prints them."""
    props = device_properties(capability)
    if argv in (["--list-gpus"], ["-L"]):
        return f"GPU 0: {props['name']} (UUID: GPU-{props['uuid']})\n"
    queries = [a.split("=", 1)[1] for a in argv if a.startswith("--query-gpu=")]
    formats = [a.split("=", 1)[1].split(",") for a in argv if a.startswith("--format=")]
    if len(argv) != 2 or len(queries) != 1 or len(formats) != 1 or formats[0][0] != "csv":
        return None
    fields, options = queries[0].split(","), set(formats[0][1:])
    if options - {"noheader", "nounits"} or any(f.strip() not in _SMI_FIELDS for f in fields):
        return None
    values = [_SMI_FIELDS[f.strip()](props) for f in fields]
    units = "nounits" not in options
    row = ", ".join(f"{v} {u}" if u and units else str(v) for v, u in values)
    header = ", ".join(
        f"{f.strip()} [{u}]" if u and units else f.strip() for f, (_, u) in zip(fields, values, strict=True)
    )
    return (row if "noheader" in options else f"{header}\n{row}") + "\n"


def nvidia_smi_main(capability: int, argv: list[str]) -> int:
    """The stand-in's answer to a command line it has no precomputed answer for: the simulated one, or a loud
    failure (a message naming the query, exit 2)."""
    answer = nvidia_smi_answer(capability, argv)
    if answer is None:
        sys.stderr.write(
            f"nvidia-smi stand-in (recipegen harvest, simulated sm_{capability}): no simulated answer for"
            f" `nvidia-smi {' '.join(argv)}`; add it to scripts/harvest/simulated_gpu.py nvidia_smi_answer\n"
        )
        return 2
    sys.stdout.write(answer)
    return 0


# the command lines the releases run, answered by the shell script itself (a Python start per call costs ~0.2-0.4 s
# on a loaded host, and SGLang 0.5.9 runs one per ServerArgs); any other goes to nvidia_smi_main
_SMI_PRECOMPUTED = (
    ["--query-gpu=memory.total", "--format=csv,noheader,nounits"],
    ["--query-gpu=compute_cap", "--format=csv,noheader"],
    ["--list-gpus"],
    ["-L"],
)


def ensure_nvidia_smi(parent: str, capability: int) -> str:
    """Writes a stand-in `nvidia-smi` for the simulated GPU into a fresh folder under `parent` (the harvester's
    temporary folder) and puts it first on PATH, so a release that sizes its defaults from nvidia-smi (SGLang 0.5.9
    and older raise "nvidia-smi not found" without one) runs its own code. Every call is logged to the folder's
    calls.log (read back by nvidia_smi_calls). Returns the folder."""
    os.makedirs(parent, exist_ok=True)
    folder = tempfile.mkdtemp(prefix=f"nvidia-smi-sm_{capability}-", dir=parent)
    here = os.path.dirname(os.path.abspath(__file__))
    fallback = (
        f"import sys; sys.path.insert(0, {here!r}); from simulated_gpu import nvidia_smi_main; "
        f"sys.exit(nvidia_smi_main({capability}, sys.argv[1:]))"
    )
    lines = [
        "#!/bin/sh",
        f"# nvidia-smi stand-in for the simulated sm_{capability}, written by scripts/harvest/simulated_gpu.py",
        f"printf '%s\\n' \"$*\" >> {shlex.quote(os.path.join(folder, 'calls.log'))}",
        'case "$*" in',
        *(
            f"  {shlex.quote(' '.join(argv))}) printf '%s' {shlex.quote(nvidia_smi_answer(capability, argv) or '')} ;;"
            for argv in _SMI_PRECOMPUTED
        ),
        f'  *) exec {shlex.quote(sys.executable)} -I -c {shlex.quote(fallback)} "$@" ;;',
        "esac",
    ]
    script = os.path.join(folder, "nvidia-smi")
    with open(script, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(script, 0o755)
    os.environ["PATH"] = folder + os.pathsep + os.environ.get("PATH", "")
    return folder


def nvidia_smi_calls(folder: str, capability: int) -> dict[str, Any] | None:
    """How the stand-in answered in this probe: each distinct command line with its answer, and those it refused
    (no simulated figure); None if the release never ran nvidia-smi."""
    log = os.path.join(folder, "calls.log")
    if not os.path.exists(log):
        return None
    answered: dict[str, str] = {}
    unanswered: list[str] = []
    with open(log) as handle:
        for line in handle:
            argv = line.split()
            answer, shown = nvidia_smi_answer(capability, argv), " ".join(["nvidia-smi", *argv])
            if answer is None:
                unanswered += [shown] if shown not in unanswered else []
            else:
                answered[shown] = answer.rstrip("\n")
    return {"answered": answered, **({"unanswered": unanswered} if unanswered else {})}


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
