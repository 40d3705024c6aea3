"""vLLM: what decides a kernel verdict in a release, read from its wheel (AST and cubin headers, never run).

- `compiled_for`: the GPU architectures of the cubins in the wheel's compiled extensions (`vllm/*.so`).
- `dtypes`: the bfloat16 capability check (`_check_if_gpu_supports_dtype` / `check_if_supports_dtype`).
- `quantization`: each config class's `get_name()`, `get_min_capability()` and `get_supported_act_dtypes()`,
  for the methods the release registers (`QUANTIZATION_METHODS` / the `QuantizationMethods` literal).
- `bitsandbytes`: whether a pre-quantized bitsandbytes checkpoint needs --quantization/--load-format bitsandbytes
  (arg_utils.py) and whether the loader reads 8-bit ones (`load_in_8bit`).
- `fp8`: below which capability `Fp8LinearMethod` takes the Marlin weight-only path, and whether block-scaled
  FP8 and the FP8 MoE method turn it off (no Marlin in them).
- `attention`: the V0 selector's choice (selector.py, or platforms/cuda.py since it moved): FLASH_ATTN's
  capability check and head sizes, the XFORMERS / paged-attention fallback and its head sizes, whether
  FLASH_ATTN takes an FP8 KV cache and (0.6.3 and older: no) a sliding window, and the MLA backends (TRITON_MLA,
  FLASHMLA) with their conditions.
What the code decides in a way not readable as data lands in `unread` with the reason.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Any

from capread import (
    Check,
    checks,
    cubin_archs,
    cuda_nodes,
    function,
    guarded,
    module,
    returned_int,
    returned_list,
    strings,
)
from pyread import classes, dotted, literal, parse
from readers import argparse_options, table_keys
from tree import Tree

QUANT = "vllm/model_executor/layers/quantization/"
SELECTORS = ("vllm/platforms/cuda.py", "vllm/attention/selector.py")
DTYPE_CHECKS = (
    ("vllm/platforms/cuda.py", "check_if_supports_dtype"),
    ("vllm/worker/worker.py", "_check_if_gpu_supports_dtype"),
    ("vllm/v1/worker/gpu_worker.py", "_check_if_gpu_supports_dtype"),
)
FLASH_SAYS = re.compile(r"Flash ?Attention", re.I)
OLD_ABI = "vllm/model_executor/layers/attention.py"  # 0.3.x: one PagedAttention layer, no backends


def _at_least(found: list[Check]) -> int | None:
    values = [c.value for c in found if c.kind == "at_least"]
    return max(values) if values else None


def compiled_for(tree: Tree) -> tuple[dict[str, Any] | None, str | None]:
    paths = [p for p in tree.names("vllm/", ".so") if "/" not in p.removeprefix("vllm/") or "flash_attn" in p]
    archs: Counter[int] = Counter()
    read: list[str] = []
    cudart: set[str] = set()
    for path in paths:
        data = tree.read_bytes(path)
        if data:
            found = cubin_archs(data)
            if found:
                archs.update(found)
                read.append(path)
            cudart.update(m.decode() for m in re.findall(rb"libcudart\.so\.(\d+)", data))
    if not archs:
        return None, "no cubin found in the wheel's compiled extensions (a source tree)"
    # an architecture with a single cubin is a vendored library's stray kernel, not a target the release builds for
    out: dict[str, Any] = {
        "sm": sorted(a for a, n in archs.items() if n > 1),
        "stray": sorted(a for a, n in archs.items() if n == 1),
        "from": read,
    }
    if len(cudart) == 1:
        out["cuda_major"] = int(cudart.pop())
    return out, None


def dtypes(tree: Tree) -> tuple[dict[str, Any] | None, str | None]:
    for path, name in DTYPE_CHECKS:
        mod = module(tree, path)
        fn = function(mod, name) if mod is not None else None
        if fn is None:
            continue
        found = guarded(fn, re.compile(r"[Bb]float16"))
        need = _at_least([c for c, _ in found])
        if need is not None:
            text = strings(fn)
            suggests = "float16" if re.search(r"--dtype[= ]?(half|float16)", text) else None
            return {"bfloat16": {"min": need, "below": suggests or "error", "from": f"{path}:{name}"}}, None
    return None, "no bfloat16 capability check found (worker/platform dtype checks)"


def _methods(tree: Tree, folder: str) -> tuple[list[str] | None, str | None]:
    path = folder + "__init__.py"
    text = tree.read(path)
    if text is None:
        return None, None
    mod = parse(text, path)
    for node in ast.walk(mod):
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        if not isinstance(target, ast.Name):
            continue
        value = node.value  # type: ignore[union-attr]
        if target.id == "QUANTIZATION_METHODS" and isinstance(value, ast.List):
            names = [literal(e) for e in value.elts]
            return [n for n in names if isinstance(n, str)], path
        if target.id == "QuantizationMethods" and isinstance(value, ast.Subscript):  # Literal["awq", ...]
            elts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
            return [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)], path
    for node in ast.walk(mod):  # a dict name -> config class (vLLM 0.3–0.5), or `{**OWN, **FROM_VLLM}` (SGLang)
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == "QUANTIZATION_METHODS" and isinstance(value, ast.Dict):
            names: list[str] = []
            for key, item in zip(value.keys, value.values, strict=True):
                if key is None and isinstance(item, ast.Name):
                    names.extend(table_keys(text, path, item.id) or [])
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    names.append(key.value)
            return names, path
    return None, None


def quantization(tree: Tree, folder: str = QUANT) -> tuple[dict[str, Any] | None, str | None]:
    registered, registry = _methods(tree, folder)
    out: dict[str, Any] = {}
    for path in tree.names(folder):
        text = tree.read(path) or ""
        if "get_min_capability" not in text:
            continue
        for cls in classes(parse(text, path)).values():
            fn = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
            name_fn = fn.get("get_name")
            name = (
                next(
                    (
                        n.value.value
                        for n in ast.walk(name_fn)
                        if isinstance(n, ast.Return) and isinstance(n.value, ast.Constant)
                    ),
                    None,
                )
                if name_fn is not None
                else None
            )
            if not isinstance(name, str) or "get_min_capability" not in fn:
                continue
            entry: dict[str, Any] = {"class": cls.name, "from": path}
            need = returned_int(fn["get_min_capability"])
            if need is None:
                entry["min"] = None
                entry["unread"] = "get_min_capability() does not return one literal"
            else:
                entry["min"] = need
            acts = returned_list(fn.get("get_supported_act_dtypes"))
            if acts is not None:
                entry["act_dtypes"] = sorted(str(a).split(".")[-1] for a in acts)
            out.setdefault(name, entry)
    if not out:
        return None, "no quantization config with get_min_capability() in " + folder
    result: dict[str, Any] = {"methods": out}
    if registered is not None:
        result["registered"] = sorted(registered)
        result["registered_from"] = registry
    return result, None


def fp8(tree: Tree, folder: str = QUANT) -> tuple[dict[str, Any] | None, str | None]:
    path = folder + "fp8.py"
    mod = module(tree, path)
    if mod is None:
        return None, "no fp8.py"
    found = classes(mod)
    linear = found.get("Fp8LinearMethod")
    if linear is None:
        return None, "no Fp8LinearMethod"
    marlin_below: int | None = None
    block_off = False
    for node in ast.walk(linear):
        if isinstance(node, ast.Assign) and any((dotted(t) or "").endswith("use_marlin") for t in node.targets):
            if isinstance(node.value, ast.Constant) and node.value.value is False:
                continue
            marlin_below = marlin_below or _at_least(checks(node.value))
        if isinstance(node, ast.If) and "block_quant" in ast.unparse(node.test):
            for sub in node.body:
                if (
                    isinstance(sub, ast.Assign)
                    and any((dotted(t) or "").endswith("use_marlin") for t in sub.targets)
                    and isinstance(sub.value, ast.Constant)
                    and sub.value.value is False
                ):
                    block_off = True
    if marlin_below is None:  # 0.5.x: `capability = major * 10 + minor; self.use_marlin = capability < 89`
        for node in ast.walk(linear):
            if isinstance(node, ast.Compare) and "capability" in ast.unparse(node.left):
                marlin_below = marlin_below or _at_least(checks(node))
    native_from: int | None = None
    if marlin_below is None:  # SGLang: the FP8 GEMM's own capability test (no Marlin unless an env var asks)
        utils = module(tree, folder + "fp8_utils.py")
        native_from = _fp8_gemm_floor(function(utils, "cutlass_fp8_supported")) if utils is not None else None
    moe = found.get("Fp8MoEMethod")
    block = "weight_block_size" in ast.unparse(found["Fp8Config"]) if "Fp8Config" in found else False
    return {
        "marlin_below": marlin_below,
        "block_quant": block,
        "block_marlin": block and not block_off and marlin_below is not None,
        "moe_marlin": moe is not None and "marlin" in ast.unparse(moe).lower(),
        **({"native_from": native_from, "native_from_file": folder + "fp8_utils.py"} if native_from else {}),
        "from": path,
    }, None


def _fp8_gemm_floor(fn: ast.FunctionDef | None) -> int | None:
    """The lowest capability `cutlass_fp8_supported()` returns a non-False value for, from its `major`/`minor`
    tests (`if major >= 9: ...` / `elif major == 8 and minor == 9: ...`)."""
    if fn is None:
        return None
    found: list[int] = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.If):
            continue
        if any(
            isinstance(s, ast.Return) and isinstance(s.value, ast.Constant) and s.value.value is False
            for s in node.body
        ):
            continue
        parts = node.test.values if isinstance(node.test, ast.BoolOp) else [node.test]
        major = minor = None
        for part in parts:
            if isinstance(part, ast.Compare) and isinstance(part.left, ast.Name) and len(part.ops) == 1:
                value = part.comparators[0]
                if (
                    isinstance(value, ast.Constant)
                    and type(value.value) is int
                    and isinstance(part.ops[0], (ast.Eq, ast.GtE))
                ):
                    if part.left.id == "major":
                        major = value.value
                    elif part.left.id == "minor":
                        minor = value.value
        if major is not None:
            found.append(major * 10 + (minor or 0))
    return min(found) if found else None


def _head_sizes(tree: Tree, path: str, owner: str | None = None) -> list[int] | None:
    mod = module(tree, path)
    if mod is None:
        return None
    scope: ast.AST = mod
    if owner is not None:
        cls = classes(mod).get(owner)
        if cls is None:
            return None
        scope = cls
    for node in ast.walk(scope):
        if isinstance(node, ast.FunctionDef) and node.name == "get_supported_head_sizes":
            values = returned_list(node)
            return [int(v) for v in values if isinstance(v, int)] if values else None
    return None


def _window_turns_flash_down(tree: Tree, selectors: list[str]) -> bool:
    """Whether the V0 selector turns FLASH_ATTN down for a layer with a sliding window (0.6.3 and older:
    `elif sliding_window is not None: selected_backend = _Backend.XFORMERS`)."""
    for path in selectors:
        mod = module(tree, path)
        for node in ast.walk(mod) if mod is not None else ():
            if not isinstance(node, ast.If):
                continue
            test = node.test
            windowed = (
                isinstance(test, ast.Compare)
                and isinstance(test.left, ast.Name)
                and test.left.id == "sliding_window"
                and isinstance(test.ops[0], ast.IsNot)
            )
            body = ast.unparse(ast.Module(body=node.body, type_ignores=[]))
            if windowed and "XFORMERS" in body and "FLASH_ATTN" not in body:
                return True
    return False


def _rejects_fp8_kv(tree: Tree, path: str) -> bool | None:
    """Whether a backend module raises when the KV cache is FP8 (None: the module is not in the release)."""
    mod = module(tree, path)
    if mod is None:
        return None
    for node in ast.walk(mod):
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if ("is_quantized_kv_cache" in test or "kv_cache_dtype" in test) and any(
                isinstance(s, ast.Raise) for s in node.body
            ):
                return True
    return False


def attention(tree: Tree) -> tuple[dict[str, Any] | None, dict[str, str]]:
    unread: dict[str, str] = {}
    selectors = [p for p in SELECTORS if tree.has(p)]
    gqa: list[dict[str, Any]] = []
    if tree.has(OLD_ABI):  # 0.3.x: PagedAttention (xFormers for the prompt, paged kernels to decode)
        mod = module(tree, OLD_ABI)
        sizes = (
            literal(
                next(
                    (
                        n.value
                        for n in ast.walk(mod)
                        if isinstance(n, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "_SUPPORTED_HEAD_SIZES" for t in n.targets)
                    ),
                    ast.Constant(None),
                )
            )
            if mod
            else None
        )
        gqa.append(
            {
                "backend": "PagedAttention (xFormers prefill)",
                "min": None,
                "head_sizes": sizes if isinstance(sizes, list) else None,
                "fp8_kv": True,
                "from": [OLD_ABI],
            }
        )
        return {"gqa": gqa}, {"attention.mla": "the release has no MLA backend"}
    if not selectors:
        return None, {"attention": "no attention selector (selector.py / platforms/cuda.py)"}
    flash_min: int | None = None
    read_from: list[str] = []
    for path in selectors:
        mod = module(tree, path)
        if mod is None:
            continue
        found = [c for c, _ in guarded(mod, FLASH_SAYS) if c.kind == "at_least"]
        for node in cuda_nodes(mod):  # V1: `if cls.has_device_capability(80): return "...flash_attn...Backend"`
            if isinstance(node, ast.If) and any(
                isinstance(s, ast.Return) and "flash_attn.FlashAttentionBackend" in strings(s) for s in node.body
            ):
                found.extend(c for c in checks(node.test) if c.kind == "at_least")
        if found:
            flash_min = max(c.value for c in found) if flash_min is None else max(flash_min, *(c.value for c in found))
            read_from.append(path)
    fa_path = "vllm/attention/backends/flash_attn.py"
    fa_sizes = _head_sizes(tree, fa_path, "FlashAttentionBackend")
    if flash_min is not None and tree.has(fa_path):
        # the selector turns FLASH_ATTN down for an FP8 cache ("Cannot use FlashAttention... FP8 KV cache"),
        # in later releases unless flash_attn_supports_fp8(), which asks the installed FlashAttention at run time
        fa_fp8 = False
        selector_text = " ".join(tree.read(p) or "" for p in selectors)
        if "flash_attn_supports_fp8" in selector_text:
            unread["FLASH_ATTN fp8 KV"] = (
                "flash_attn_supports_fp8() (FA3 on Hopper) is asked at run time: FP8 KV is taken to fall back to "
                "XFORMERS"
            )
        entry: dict[str, Any] = {
            "backend": "FLASH_ATTN",
            "min": flash_min,
            "head_sizes": fa_sizes,
            "fp8_kv": fa_fp8,
            "dtypes": ["bfloat16", "float16"],
            "from": [*read_from, fa_path],
        }
        if _window_turns_flash_down(tree, selectors):  # such a layer runs XFORMERS (the runs of 0.6.3 and older)
            entry["sliding_window"] = False
        own = [p for p in tree.names("vllm/vllm_flash_attn/", ".so")]
        majors = sorted({a // 10 for p in own for a in cubin_archs(tree.read_bytes(p) or b"")})
        if majors:  # the FlashAttention kernels vLLM vendors: only the GPU families their cubins are built for
            entry["compiled_majors"] = majors
            entry["from"] = [*entry["from"], *own]
        gqa.extend([*_preferred(tree, selectors), entry])
    elif tree.has(fa_path):
        unread["FLASH_ATTN"] = "its capability check is not in a form read here"
    paged = "vllm/attention/ops/paged_attn.py"
    sizes = _head_sizes(tree, paged)
    if tree.has("vllm/attention/backends/xformers.py"):
        gqa.append(
            {
                "backend": "XFORMERS",
                "min": None,
                "head_sizes": sizes,
                "fp8_kv": True,
                "from": [*selectors, "vllm/attention/backends/xformers.py", paged],
            }
        )
    result: dict[str, Any] = {"gqa": gqa}
    mla: list[dict[str, Any]] = []
    flashmla = "vllm/attention/backends/flashmla.py"
    if tree.has(flashmla):
        ops = "vllm/attention/ops/flashmla.py"
        mod = module(tree, ops)
        fn = function(mod, "is_flashmla_supported") if mod is not None else None
        majors = [c.value for c in checks(fn) if c.kind == "major"] if fn is not None else []
        if majors:
            mla.append(
                {
                    "backend": "FLASHMLA",
                    "majors": majors[:1],
                    "fp8_kv": not _rejects_fp8_kv(tree, flashmla),
                    "from": [*selectors, ops, flashmla],
                }
            )
        else:
            unread["FLASHMLA"] = "is_flashmla_supported() has no capability check read here"
    triton_mla = "vllm/attention/backends/triton_mla.py"
    if tree.has(triton_mla):
        mla.append(
            {
                "backend": "TRITON_MLA",
                "min": None,
                "fp8_kv": not _rejects_fp8_kv(tree, triton_mla),
                "from": [*selectors, triton_mla],
            }
        )
    if mla:
        result["mla"] = mla
    else:
        unread["attention.mla"] = (
            "the release has no MLA backend (no backends/triton_mla.py): MLA models run their attention inside the "
            "model through the regular backends, which is not read here"
        )
    return result, unread


def kv_cache_dtypes(tree: Tree) -> tuple[dict[str, Any] | None, str | None]:
    """The `--kv-cache-dtype` values: the `CacheDType` Literal newer releases build the option from, else the
    option's own `choices`."""
    for path in ("vllm/config/cache.py", "vllm/config.py"):
        mod = module(tree, path)
        for node in ast.walk(mod) if mod is not None else ():
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "CacheDType" for t in node.targets)
                and isinstance(node.value, ast.Subscript)
            ):
                items = node.value.slice.elts if isinstance(node.value.slice, ast.Tuple) else [node.value.slice]
                names = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
                return {"choices": names, "from": f"{path}:CacheDType"}, None
    path = "vllm/engine/arg_utils.py"
    text = tree.read(path)
    if text is not None:
        choices = argparse_options(text, path).get("--kv-cache-dtype", {}).get("choices")
        if isinstance(choices, list):
            return {"choices": choices, "from": f"{path}:--kv-cache-dtype"}, None
    return None, "no CacheDType literal and no readable --kv-cache-dtype choices"


ARG_UTILS = "vllm/engine/arg_utils.py"
BNB_LOADERS = ("vllm/model_executor/model_loader/bitsandbytes_loader.py", "vllm/model_executor/model_loader/loader.py")


def bitsandbytes(tree: Tree) -> tuple[dict[str, Any] | None, str | None]:
    """How the release loads a pre-quantized bitsandbytes checkpoint: `load_format` `auto` where the engine arguments
    take the bitsandbytes load format from the checkpoint's own quantization (an `if` on model_config.quantization
    that sets load_format), else `flags` (--quantization bitsandbytes --load-format bitsandbytes, which
    create_load_config requires together); `prequant_8bit`: whether its bitsandbytes loader reads an 8-bit
    checkpoint's `load_in_8bit`."""
    text = tree.read(ARG_UTILS)
    if text is None or "bitsandbytes" not in text:
        return None, f"no bitsandbytes load format in {ARG_UTILS}"
    mod = parse(text, ARG_UTILS)
    auto = any(
        isinstance(node, ast.If)
        and "model_config.quantization" in ast.unparse(node.test)
        and "bitsandbytes" in ast.unparse(node.test)
        and "load_format" in ast.unparse(ast.Module(body=node.body, type_ignores=[]))
        for node in ast.walk(mod)
    )
    loader = next((p for p in BNB_LOADERS if "bitsandbytes" in (tree.read(p) or "")), None)
    out: dict[str, Any] = {"load_format": "auto" if auto else "flags", "from": [ARG_UTILS]}
    if loader is not None:
        out["prequant_8bit"] = "load_in_8bit" in (tree.read(loader) or "")
        out["from"].append(loader)
    return out, None


def _preferred(tree: Tree, selectors: list[str]) -> list[dict[str, Any]]:
    """A backend the V1 selector prefers on one GPU before FlashAttention, from a package the wheel does not ship
    (0.9.x: `if cls.is_device_capability(100)` ... `import flashinfer` → FlashInfer on Blackwell when installed)."""
    out: list[dict[str, Any]] = []
    for path in selectors:
        mod = module(tree, path)
        for node in cuda_nodes(mod) if mod is not None else ():
            if not isinstance(node, ast.If):
                continue
            exact = [c.value for c in checks(node.test) if c.kind == "exactly"]
            body = ast.Module(body=node.body, type_ignores=[])
            if exact and "flashinfer" in ast.unparse(body).lower() and any(isinstance(s, ast.Try) for s in node.body):
                out.append(
                    {
                        "backend": "FLASHINFER",
                        "exactly": exact,
                        "optional_package": "flashinfer",
                        "fp8_kv": False,
                        "from": [path],
                    }
                )
    return out


def kernels(tree: Tree) -> dict[str, Any]:
    """The `kernels` read table of a vLLM release (each part with the files it came from)."""
    table: dict[str, Any] = {}
    unread: dict[str, str] = {}
    for name, reader in (
        ("compiled_for", compiled_for),
        ("dtypes", dtypes),
        ("quantization", quantization),
        ("fp8", fp8),
        ("kv_cache_dtypes", kv_cache_dtypes),
        ("bitsandbytes", bitsandbytes),
    ):
        value, why = reader(tree)
        if value is not None:
            table[name] = value
        if why is not None:
            unread[name] = why
    value, why_attention = attention(tree)
    if value is not None:
        table["attention"] = value
    unread.update(why_attention)
    if unread:
        table["unread"] = unread
    return table
