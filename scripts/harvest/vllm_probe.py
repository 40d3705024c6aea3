"""Run inside a vLLM release's own virtual environment (stdlib + that release only): ask its CUDA attention
selector and quantization code what they accept on one simulated GPU, and print JSON.

`python vllm_probe.py --cap 90` answers for compute capability 9.0 (one fresh interpreter per capability:
some vLLM modules freeze capability-dependent constants at import time); `--methods` answers the
capability-independent quantization minimums. No GPU: where the driver library is missing a stand-in
libcuda.so.1 is compiled whose every entry point fails (the CUDA toolkit stub's contract), vLLM's
platform is forced to its CudaPlatform, and its capability queries and torch.cuda's device queries
(is_available, get_device_capability, get_device_properties …) report the simulated GPU.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import pkgutil
import sys
import types
from collections.abc import Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import vllm_chain
import vllm_v0
from simulated_gpu import (
    device_properties,
    ensure_libcuda,
    probe_arguments,
    scheme_minimums,
    simulate_nvml,
    simulate_torch_cuda,
    source_of,
)

KV = ("auto", "bfloat16", "fp8", "fp8_e4m3")
MLA_KV = (*KV, "fp8_ds_mla")
GQA_HEADS = (64, 80, 96, 128, 256, 512)
# The hf_text_config fields vLLM's MLA backends read from the model (absent: model_config None, the checks
# that read the model are skipped as vLLM skips them). head_size = kv_lora_rank + qk_rope_head_dim.
PROFILES: dict[str, dict[str, int] | None] = {
    "none": None,
    "deepseek_v3_dense": {"qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "kv_lora_rank": 512},
    "deepseek_v32_sparse": {
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "kv_lora_rank": 512,
        "index_topk": 2048,
    },
    "glm5_sparse_nope192": {
        "qk_nope_head_dim": 192,
        "qk_rope_head_dim": 64,
        "v_head_dim": 256,
        "kv_lora_rank": 512,
        "index_topk": 2048,
    },
    "nope512_sparse": {
        "qk_nope_head_dim": 256,
        "qk_rope_head_dim": 0,
        "v_head_dim": 256,
        "kv_lora_rank": 512,
        "index_topk": 2048,
    },
}
MLA_PROFILES = {
    (False, 576): ("none", "deepseek_v3_dense", "glm5_sparse_nope192"),
    (True, 576): ("none", "deepseek_v32_sparse", "glm5_sparse_nope192"),
    (False, 512): ("none", "nope512_sparse"),
    (True, 512): ("none", "nope512_sparse"),
}
# selector inputs a release may lack without changing the answer: asked without them (0.16.0: no sliding window)
SELECTOR_BLIND = ("has_sliding_window",)
# where a release keeps its GEMM kernel candidate tables (0.33.0: kernels/linear; 0.16.0: quantization/kernels)
LINEAR_MODULES = (
    "vllm.model_executor.kernels.linear",
    "vllm.model_executor.layers.quantization.kernels.scaled_mm",
    "vllm.model_executor.layers.quantization.kernels.mixed_precision",
    "vllm.model_executor.layers.quantization.kernels",  # 0.6.x: the mixed-precision list in the package itself
)
LINEAR_FAMILIES = {
    "fp8_w8a8": "_POSSIBLE_FP8_KERNELS",
    "fp8_block": "_POSSIBLE_FP8_BLOCK_KERNELS",
    "fp8_w8a16": "_POSSIBLE_WFP8A16_KERNELS",
    "int8_w8a8": "_POSSIBLE_INT8_KERNELS",
    "wna16": "_POSSIBLE_KERNELS",
    "mxfp8": "_POSSIBLE_MXFP8_KERNELS",
    "nvfp4": "_POSSIBLE_NVFP4_KERNELS",
    "mxfp4": "_POSSIBLE_MXFP4_KERNELS",
    "mxfp6": "_POSSIBLE_MXFP6_KERNELS",
}


def cases() -> list[dict[str, Any]]:
    """Every attention shape recipegen plans: GQA/MHA (plain, sinks, sliding window), dense and sparse MLA."""
    out: list[dict[str, Any]] = []
    for head in GQA_HEADS:
        for variant in ("plain", "sinks", "sliding_window"):
            for kv in KV:
                out.append({"shape": "gqa", "variant": variant, "head_size": head, "kv": kv})
    for sparse in (False, True):
        for head in (576, 512):
            for kv in MLA_KV:
                for heads in (16, 128) if sparse else (128,):
                    for profile in MLA_PROFILES[(sparse, head)]:
                        out.append(
                            {
                                "shape": "sparse_mla" if sparse else "mla",
                                "head_size": head,
                                "kv": kv,
                                "heads_per_rank": heads,
                                "profile": profile,
                            }
                        )
    return out


def simulate(capability: int) -> Any:
    """vLLM's CudaPlatform, reporting DeviceCapability(capability // 10, capability % 10) to every query (a
    (major, minor) tuple in 0.6.0 and older, which have no DeviceCapability), over a torch.cuda that reports the same
    GPU (simulate_torch_cuda)."""
    simulate_torch_cuda(capability)
    import vllm.platforms as platforms
    import vllm.platforms.interface as interface

    cuda = _cuda_module(capability)

    if isinstance(platforms.__dict__.get("current_platform"), cuda.CudaPlatform):
        return platforms.current_platform
    major, minor = capability // 10, capability % 10
    cap = (
        interface.DeviceCapability(major=major, minor=minor)
        if hasattr(interface, "DeviceCapability")
        else (major, minor)
    )
    for cls in {cuda.CudaPlatform, getattr(cuda, "CudaPlatformBase", cuda.CudaPlatform)}:
        cls.get_device_capability = classmethod(lambda _c, device_id=0: cap)  # type: ignore[method-assign]
        cls.get_device_name = classmethod(lambda _c, device_id=0: f"simulated sm_{capability}")  # type: ignore[method-assign]
    before = platforms.__dict__.get("current_platform")
    platforms.current_platform = cuda.CudaPlatform()
    if vllm_v0.is_v0(cuda.CudaPlatform):
        _rebind(before, platforms.current_platform)
    return platforms.current_platform


def _cuda_module(capability: int) -> Any:
    """vllm.platforms.cuda. 0.6.0 and older call NVML as that module loads (warn_if_different_devices), which fails
    with no driver: then pynvml answers for the simulated GPU (simulate_nvml) and the module is imported again."""
    try:
        return importlib.import_module("vllm.platforms.cuda")
    except Exception as exc:
        import pynvml

        if not isinstance(exc, pynvml.NVMLError):
            raise
        sys.modules.pop("vllm.platforms.cuda", None)
        simulate_nvml(pynvml, capability)
        return importlib.import_module("vllm.platforms.cuda")


def _rebind(before: Any, platform: Any) -> None:
    """0.6.6 and older resolve `current_platform` when `import vllm` runs (no GPU here: not CUDA) and their modules
    bind it by name: each loaded vLLM module that holds that object gets the simulated CUDA platform instead."""
    if before is None:
        return
    for name, module in list(sys.modules.items()):
        if (name == "vllm" or name.startswith("vllm.")) and getattr(module, "current_platform", None) is before:
            module.current_platform = platform


@contextlib.contextmanager
def _cuda_tensors_on_meta(platform_cls: type) -> Iterator[None]:
    """A backend module that allocates a CUDA workspace at import (CUTLASS_MLA): its tensors go to the meta
    device and the SM count is a placeholder, so the module imports and its real checks can run."""
    import torch

    names = ("empty", "zeros", "ones", "full", "tensor", "arange", "empty_strided")
    saved = {n: getattr(torch, n) for n in names}
    had_units = "num_compute_units" in platform_cls.__dict__
    units = platform_cls.__dict__.get("num_compute_units")

    def redirect(fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if "cuda" in str(kwargs.get("device", "")):
                kwargs["device"] = "meta"
            return fn(*args, **kwargs)

        return call

    platform_cls.num_compute_units = classmethod(lambda _c, device_id=0: 132)  # type: ignore[attr-defined]
    for n in names:
        setattr(torch, n, redirect(saved[n]))
    try:
        yield
    finally:
        for n, fn in saved.items():
            setattr(torch, n, fn)
        if had_units:
            platform_cls.num_compute_units = units  # type: ignore[attr-defined]
        else:
            del platform_cls.num_compute_units  # type: ignore[attr-defined]


def import_backends(cuda: Any, platform: Any, cap: Any) -> dict[str, str]:
    """Import each backend of the CUDA priority lists; one that fails with anything but the ImportError /
    OSError the selector itself reports is re-imported with its CUDA allocations on the meta device."""
    seen: list[Any] = []
    for mla in (False, True):
        for kv in ("auto", "fp8"):
            for heads in (16, 128):
                for head in (128, 512, 576):
                    for backend in _priorities(cuda, cap, mla, heads, kv, head):
                        if backend not in seen:
                            seen.append(backend)
    report: dict[str, str] = {}
    for backend in seen:
        try:
            backend.get_class()
            continue
        except (ImportError, OSError):
            continue  # the selector reports these as the backend's reason
        except Exception as exc:
            first = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        package = backend.value.rsplit(".", 1)[0]
        for name in [m for m in sys.modules if m.startswith(package)]:
            sys.modules.pop(name, None)
        try:
            with _cuda_tensors_on_meta(type(platform)):
                backend.get_class()
            report[backend.name] = f"{first} on CPU; re-imported with its CUDA allocations on the meta device"
        except Exception as exc:
            report[backend.name] = f"{first}; retry failed: {type(exc).__name__}: {exc}"
    return report


def _priorities(cuda: Any, cap: Any, mla: bool, heads: int | None, kv: str, head: int) -> list[Any]:
    wanted = inspect.signature(cuda._get_backend_priorities).parameters
    given = {
        "use_mla": mla,
        "device_capability": cap,
        "num_heads": heads,
        "kv_cache_dtype": kv,
        "use_non_causal": False,
        "head_size": head,
        "use_mm_prefix": False,
        "use_sparse": False,
    }
    return list(cuda._get_backend_priorities(**{k: v for k, v in given.items() if k in wanted}))


def _heads(function: Any, heads: int | None) -> dict[str, Any]:
    """`num_heads=` where the release's selector takes it (0.16.0's does not)."""
    return {"num_heads": heads} if "num_heads" in inspect.signature(function).parameters else {}


def _selector_config() -> Any:
    """The release's AttentionSelectorConfig (0.13.0 keeps it in vllm/attention/selector.py), or None where the
    selector has none (0.12.0, 0.11.1)."""
    for module in ("vllm.v1.attention.selector", "vllm.attention.selector"):
        with contextlib.suppress(ImportError, AttributeError):
            return importlib.import_module(module).AttentionSelectorConfig
    return None


def _decoder_attention() -> Any:
    """AttentionType.DECODER, the attn_type a decoder layer asks the 0.12.0/0.11.1 selector with."""
    for module in ("vllm.attention.backends.abstract", "vllm.attention"):
        with contextlib.suppress(ImportError, AttributeError):
            return importlib.import_module(module).AttentionType.DECODER
    raise RuntimeError("the selector takes attn_type, but the release has no AttentionType to give it")


def _model_config(profile: dict[str, int], heads: int, head: int) -> Any:
    import torch

    text_config = types.SimpleNamespace(**profile)
    # hf_config too: 0.26.0's FlashAttention sparse-MLA backend asks it for index_topk (a DeepSeek-style
    # config is its own text config)
    return types.SimpleNamespace(
        hf_config=text_config,
        hf_text_config=text_config,
        rswa_window=None,
        dtype=torch.bfloat16,
        max_model_len=131072,
        get_num_attention_heads=lambda parallel_config=None: heads,  # per TP rank
        get_num_kv_heads=lambda parallel_config=None: 1,
        get_head_size=lambda: head,
    )


def attention(capability: int) -> dict[str, Any]:
    platform = simulate(capability)
    cls = type(platform)
    if vllm_v0.is_v0(cls):  # 0.6.6 and older: vllm/attention/selector.py decides, the platform does not
        return _v0_attention(capability, cls)
    if vllm_chain.is_chain(cls):  # 0.11.0 and older: no candidate list, one class path returned
        return _chain_attention(capability, cls)
    import torch
    import vllm.platforms.cuda as cuda
    from vllm.config import VllmConfig, set_current_vllm_config  # 0.6.3 and older have no VllmConfig
    from vllm.platforms.interface import DeviceCapability

    cap = DeviceCapability(major=capability // 10, minor=capability % 10)
    import_report = import_backends(cuda, platform, cap)
    selector_config = _selector_config()
    if selector_config is not None:
        fields = set(selector_config._fields)
    else:  # 0.12.0/0.11.1: each selector input is a keyword of get_valid_backends
        fields = set(inspect.signature(cls.get_valid_backends).parameters) - {"device_capability", "attn_type"}
        decoder = _decoder_attention()
    asked_with = selector_config.__name__ if selector_config is not None else "get_valid_backends"
    configs: dict[tuple[Any, ...], Any] = {}
    rows = []
    for case in cases():
        mla = case["shape"] != "gqa"
        heads = case.get("heads_per_rank")
        profile = PROFILES[case.get("profile", "none")]
        key = (case.get("profile"), heads, case["head_size"])
        if key not in configs:
            config = VllmConfig()
            if profile is not None:
                object.__setattr__(config, "model_config", _model_config(profile, heads or 128, case["head_size"]))
            configs[key] = config
        wanted = {
            "head_size": case["head_size"],
            "dtype": torch.bfloat16,
            "kv_cache_dtype": case["kv"],
            "block_size": None,
            "use_mla": mla,
            "use_sparse": case["shape"] == "sparse_mla",
            "has_sink": case.get("variant") == "sinks",
            "has_sliding_window": case.get("variant") == "sliding_window",
        }
        row: dict[str, Any] = {"capability": capability, **case}
        missing = [k for k, v in wanted.items() if k not in fields and v]
        # 0.16.0's selector takes no sliding-window input and none of its CUDA backends checks one, so a windowed
        # layer gets the plain layer's answer: asked without it and marked, not an error
        unread = [k for k in missing if k in SELECTOR_BLIND]
        if unread:
            row["not_selector_input"] = unread
        missing = [k for k in missing if k not in SELECTOR_BLIND]
        if missing:  # an older selector has no such input: the shape is not asked of it
            row["error"] = f"{asked_with} has no {', '.join(missing)}"
            rows.append(row)
            continue
        inputs = {k: v for k, v in wanted.items() if k in fields}
        pick_args: tuple[Any, ...]  # get_attn_backend_cls(selected_backend=None, …)
        if selector_config is not None:
            selector = selector_config(**inputs)
            ask_valid = {"device_capability": cap, "attn_selector_config": selector}
            ask_valid.update(_heads(cls.get_valid_backends, heads))
            pick_args, pick_kwargs = (None, selector), _heads(cls.get_attn_backend_cls, heads)
        else:  # get_attn_backend_cls takes attn_type=None as the decoder's, get_valid_backends needs it
            ask_valid = {"device_capability": cap, "attn_type": decoder, **inputs}
            pick_args, pick_kwargs = (None,), inputs
        with set_current_vllm_config(configs[key]):
            try:
                valid, invalid = cls.get_valid_backends(**ask_valid)
                order = _priorities(cuda, cap, mla, heads, case["kv"], case["head_size"])
                row["order"] = [b.name for b in order]  # every candidate, valid or not, in priority order
                # a candidate is a _BackendCandidate (0.33.0) or a (backend, priority) tuple (0.16.0)
                pairs = [(c.backend, c.priority) if hasattr(c, "backend") else (c[0], c[1]) for c in valid]
                row["valid"] = [b.name for b, _ in sorted(pairs, key=lambda pair: pair[1])]
                # reasons per rejected backend: (priority, reasons) in 0.16.0, the reasons alone in 0.12.0 and 0.17.0+
                ranked = [
                    (b, v if isinstance(v, list) else v[1], -1 if isinstance(v, list) else v[0])
                    for b, v in invalid.items()
                ]
                row["rejected"] = {b.name: list(r) for b, r, _p in sorted(ranked, key=lambda i: i[2])}
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            try:
                cls.get_attn_backend_cls(*pick_args, **pick_kwargs)
                row["selected"] = row["valid"][0] if row.get("valid") else None
            except Exception as exc:
                row["selected"] = None
                row["selection_error"] = f"{type(exc).__name__}: {str(exc).split('. Reasons:')[0]}"[:300]
        rows.append(row)
    return {"cases": rows, "imports": import_report}


def _chain_attention(capability: int, cls: type) -> dict[str, Any]:
    """The cases of a selector that walks an if/else chain (vllm_chain.py): the backend it chose per case and block
    size; a case input the chain does not take is an error (not asked), a sliding window is asked without it."""
    import torch

    names = vllm_chain.Names(lambda: _cuda_tensors_on_meta(cls))
    fields = vllm_chain.inputs_of(cls)
    rows = []
    for case in cases():
        mla = case["shape"] != "gqa"
        wanted = {
            "head_size": case["head_size"],
            "dtype": torch.bfloat16,
            "kv_cache_dtype": case["kv"],
            "use_mla": mla,
            "use_sparse": case["shape"] == "sparse_mla",
            "has_sink": case.get("variant") == "sinks",
            "has_sliding_window": case.get("variant") == "sliding_window",
        }
        row: dict[str, Any] = {"capability": capability, **case}
        missing = [k for k, v in wanted.items() if k not in fields and v]
        unread = [k for k in missing if k in SELECTOR_BLIND]
        if unread:
            row["not_selector_input"] = unread
        missing = [k for k in missing if k not in SELECTOR_BLIND]
        if missing:
            row["error"] = f"get_attn_backend_cls has no {', '.join(missing)}"
            rows.append(row)
            continue
        # the model fields the release reads to set the block size: DSA's index_topk makes a model sparse
        hf_config = dict(PROFILES[case.get("profile", "none")] or {})
        if case["shape"] == "sparse_mla":
            hf_config.setdefault("index_topk", 2048)
        inputs = {k: v for k, v in wanted.items() if k in fields}
        rows.append({**row, **vllm_chain.answer(cls, inputs, mla, hf_config, names)})
    return {"cases": rows, **vllm_chain.table_keys(names)}


def _v0_attention(capability: int, cls: type) -> dict[str, Any]:
    """The cases of a V0 selector (vllm_v0.py): the backend get_attn_backend chose per case and block size; a case
    input it does not take is an error (not asked), a sliding window is asked without it where it takes none."""
    import torch

    fields = vllm_v0.inputs_of()
    rows = []
    for case in cases():
        wanted = {
            "head_size": case["head_size"],
            "dtype": torch.bfloat16,
            "kv_cache_dtype": case["kv"],
            "use_mla": case["shape"] != "gqa",
            "use_sparse": case["shape"] == "sparse_mla",
            "has_sink": case.get("variant") == "sinks",
            "has_sliding_window": case.get("variant") == "sliding_window",
        }
        row: dict[str, Any] = {"capability": capability, **case}
        missing = [k for k, v in wanted.items() if k not in fields and v]
        unread = [k for k in missing if k in SELECTOR_BLIND]
        if unread:
            row["not_selector_input"] = unread
        missing = [k for k in missing if k not in SELECTOR_BLIND]
        if missing:
            row["error"] = f"get_attn_backend has no {', '.join(missing)}"
            rows.append(row)
            continue
        rows.append({**row, **vllm_v0.answer(cls, {k: v for k, v in wanted.items() if k in fields})})
    return {"cases": rows, **vllm_v0.table_keys(cls)}


def _is_scaled_mm(module: Any) -> bool:
    return module.__name__.endswith(".scaled_mm") and hasattr(module, "_POSSIBLE_KERNELS")


def _holds(module: Any, family: str) -> bool:
    """0.14.0's scaled_mm names its INT8 table _POSSIBLE_KERNELS, the name of the wNa16 table elsewhere."""
    return not (family == "wna16" and module.__name__.endswith(".scaled_mm"))


def linear_kernels(capability: int) -> dict[str, Any]:
    simulate(capability)
    from vllm.platforms.interface import PlatformEnum

    modules = []
    for name in LINEAR_MODULES:
        with contextlib.suppress(ImportError):
            modules.append(importlib.import_module(name))
    out: dict[str, Any] = {}
    for family, table_name in LINEAR_FAMILIES.items():
        table = next((getattr(m, table_name) for m in modules if hasattr(m, table_name) and _holds(m, family)), None)
        if table is None and family == "int8_w8a8":  # 0.14.0: scaled_mm._POSSIBLE_KERNELS
            table = next((m._POSSIBLE_KERNELS for m in modules if _is_scaled_mm(m)), None)
        if table is None:
            continue
        verdicts: dict[str, str] = {}
        # 0.15.1's mixed-precision table is one list for every platform (its chooser walks it all, each kernel's
        # own checks refusing other platforms); newer tables are keyed by platform
        candidates = list(table) if isinstance(table, list) else list(table.get(PlatformEnum.CUDA, []))
        for kernel in candidates:
            try:
                if hasattr(kernel, "is_supported"):
                    ok, why = kernel.is_supported(capability)
                else:  # mixed-precision kernels: vLLM compares their minimum with the GPU
                    minimum = kernel.get_min_capability()
                    ok, why = capability >= minimum, f"requires capability {minimum}"
                verdicts[kernel.__name__] = "supported" if ok else f"no: {why}"
            except Exception as exc:
                verdicts[kernel.__name__] = f"error: {type(exc).__name__}: {exc}"
        out[family] = {"candidates": [k.__name__ for k in candidates], "verdicts": verdicts}
    return out


def moe_kernels(capability: int) -> dict[str, Any]:
    """Per MoE oracle module, each backend's expert kernels and whether they run on this device
    (`_supports_current_device`; the quant-scheme, routing and parallel checks need a layer)."""
    simulate(capability)
    try:
        package = importlib.import_module("vllm.model_executor.layers.fused_moe.oracle")
    except ImportError:
        return {}
    out: dict[str, Any] = {}
    for info in pkgutil.iter_modules(package.__path__):
        try:
            module = importlib.import_module(f"{package.__name__}.{info.name}")
        except Exception as exc:
            out[info.name] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            continue
        to_kernels = getattr(module, "backend_to_kernel_cls", None)
        enums = [
            v
            for v in vars(module).values()
            if inspect.isclass(v) and v.__module__ == module.__name__ and v.__name__.endswith("MoeBackend")
        ]
        if to_kernels is None or not enums:
            continue
        backends: dict[str, Any] = {}
        for backend in enums[0]:
            if backend.name in ("NONE", "XPU", "CPU", "CPU_W8A8", "HPC") or backend.name.startswith(("AITER", "ROCM")):
                continue
            try:
                kernels = to_kernels(backend)
            except Exception:
                continue
            verdicts = {}
            for kernel in kernels if isinstance(kernels, (list, tuple)) else [kernels]:  # 0.16.0: one class
                try:
                    verdicts[kernel.__name__] = bool(kernel._supports_current_device())
                except Exception as exc:
                    verdicts[kernel.__name__] = f"error: {type(exc).__name__}"
            backends[backend.name] = verdicts
        out[info.name] = backends
    return out


def methods() -> dict[str, Any]:
    """Each --quantization method's config class and minimum capability, and the per-layer schemes'."""
    import vllm
    import vllm.model_executor.layers.quantization as quant

    simulate(100)  # the minimums do not depend on the GPU, but some modules probe it at import
    site = os.path.dirname(vllm.__file__)

    deprecated = set(getattr(quant, "DEPRECATED_QUANTIZATION_METHODS", ()))
    configs = {}
    for method in quant.QUANTIZATION_METHODS:
        try:
            cls = quant.get_quantization_config(method)
            configs[method] = {
                "class": cls.__name__,
                "module": source_of(cls, site),
                "min_capability": cls.get_min_capability(),
                "deprecated": method in deprecated,
            }
        except Exception as exc:
            configs[method] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    schemes = scheme_minimums(quant, (".schemes.", "compressed_tensors.", "quark.", "inc."), site)
    out: dict[str, Any] = {"version": vllm.__version__, "methods": configs, "schemes": schemes}
    import vllm.platforms.cuda as cuda

    if vllm_v0.is_v0(cuda.CudaPlatform):  # one interpreter may answer both tables (ran.py): no CUDA init to fail
        out["selector"] = "get_attn_backend"
    return out


def main() -> None:
    args = probe_arguments()
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import warnings

    warnings.filterwarnings("ignore")
    libcuda = ensure_libcuda(args.stub_dir)
    if args.methods:
        result = methods()
    else:
        simulate(args.cap)  # before any other vLLM module runs its import-time capability probes
        # kernels and selector in separate interpreters: in 0.16.0 a kernel module's failed CUDA init leaves
        # torch unable to answer the selector later in the same process
        result = {}
        if args.part in ("all", "kernels"):
            result.update(linear_kernels=linear_kernels(args.cap), moe_kernels=moe_kernels(args.cap))
        if args.part in ("all", "attention"):
            result.update(attention(args.cap))
    if args.cap:
        result["device"] = device_properties(args.cap)
    result["libcuda"] = libcuda if libcuda in ("system", "not needed") else "stand-in"
    sys.stdout.write("\n" + json.dumps(result, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
