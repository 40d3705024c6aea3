"""SGLang: what decides a kernel verdict in a release, read from its wheel (AST, never run).

SGLang's wheel is pure Python (its kernels come in sgl-kernel, FlashInfer and, in older releases, vLLM), so
there is no `compiled_for`. Read here:
- `dtypes` / `min_sm`: model_runner's capability checks (bfloat16 below sm80 falls back to float16; the
  release's own floor, "SGLang only supports sm75 and above").
- `attention`: the `--attention-backend` choices, each backend's capability assert in model_runner
  (`FlashAttention v3 Backend requires SM>=90`), the Hopper condition of the default pick, the backends
  the MLA branch accepts, and the `--kv-cache-dtype` choices.
- `quantization` / `fp8`: the release's own config classes (`get_min_capability()`), when it has them;
  older releases import vLLM's, which are not in this wheel.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from capread import checks, function, guarded, module, strings
from readers import argparse_options
from tree import Tree
from vllm_kernels import fp8 as vllm_fp8
from vllm_kernels import quantization as vllm_quantization

RUNNER = "sglang/srt/model_executor/model_runner.py"
ARGS = "sglang/srt/server_args.py"
QUANT = "sglang/srt/layers/quantization/"
UTILS = "sglang/srt/utils.py"


def _options(tree: Tree) -> dict[str, dict[str, Any]]:
    text = tree.read(ARGS)
    return argparse_options(text, ARGS) if text is not None else {}


def _hopper(tree: Tree) -> int | None:
    """The major `is_hopper_with_cuda_12_3()` (the default pick's condition for fa3) checks for."""
    mod = module(tree, UTILS)
    fn = function(mod, "is_hopper_with_cuda_12_3") if mod is not None else None
    majors = [c.value for c in checks(fn) if c.kind == "major"] if fn is not None else []
    return majors[0] if majors else None


def _mla_list(runner: ast.Module) -> list[str]:
    """The backends the MLA branch accepts (`if server_args.attention_backend in ["flashinfer", "fa3", ...]`)."""
    for node in ast.walk(runner):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)):
            continue
        if "attention_backend" not in ast.unparse(node.test.left) or not isinstance(node.test.ops[0], ast.In):
            continue
        target = node.test.comparators[0]
        if isinstance(target, (ast.List, ast.Tuple)) and "MLA" in strings(ast.Module(body=node.body, type_ignores=[])):
            return [e.value for e in target.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def attention(tree: Tree, runner: ast.Module) -> tuple[dict[str, Any], dict[str, str]]:
    unread: dict[str, str] = {}
    options = _options(tree)
    choices = options.get("--attention-backend", {}).get("choices") or ["flashinfer", "triton"]
    kv = options.get("--kv-cache-dtype", {}).get("choices")
    floor = _floor(runner)
    fa3_min, fa3_majors, fa3_mla_majors = _fa3_assert(runner)
    hopper = _hopper(tree)
    base = {"from": [RUNNER, ARGS]}
    gqa: list[dict[str, Any]] = []
    text = ast.unparse(runner)
    fa3_mla: dict[str, Any] | None = None
    if "fa3" in choices:
        fa3_kv = [k for k in kv or [] if k != "fp8_e5m2"] if "fp8_e5m2" in text and "FlashAttention3" in text else kv
        if hopper is not None and "is_hopper_with_cuda_12_3" in text:
            entry = {"backend": "fa3", "majors": [hopper], "kv": fa3_kv, "from": [RUNNER, ARGS, UTILS]}
            gqa.append(entry)
            fa3_mla = entry
        elif fa3_majors:
            gqa.append({"backend": "fa3", "majors": fa3_majors, "kv": fa3_kv, **base})
            fa3_mla = {"backend": "fa3", "majors": fa3_mla_majors, "kv": fa3_kv, **base} if fa3_mla_majors else None
        elif fa3_min is not None:
            gqa.append({"backend": "fa3", "min": fa3_min, "kv": fa3_kv, **base})
            fa3_mla = gqa[-1]
        else:
            unread["fa3"] = "no capability check for fa3 read in model_runner"
    for name in ("flashinfer", "triton"):
        if name in choices:
            gqa.append({"backend": name, "min": floor, "kv": kv, **base})
    result: dict[str, Any] = {"gqa": gqa}
    if "MLA" in text:
        accepted = _mla_list(runner) or ["triton"]  # before the list, the MLA branch set triton outright
        mla: list[dict[str, Any]] = []
        for entry in gqa:
            if entry["backend"] == "fa3":
                if "fa3" in accepted and fa3_mla is not None:
                    mla.append({**fa3_mla, "backend": "fa3 (MLA)"})
            elif entry["backend"] in accepted:
                mla.append({**entry, "backend": f"{entry['backend']} (MLA)"})
        result["mla"] = mla
        if not any(e["backend"] == "triton (MLA)" for e in mla):
            unread["attention.mla"] = f"the MLA backends {accepted} are not read here"
    else:
        unread["attention.mla"] = "model_runner has no MLA branch"
    return result, unread


def _fa3_assert(runner: ast.Module) -> tuple[int | None, list[int], list[int]]:
    """fa3's capability assert in model_runner: a minimum, or the majors it allows (all, and for MLA models)."""
    for node in ast.walk(runner):
        if not (isinstance(node, ast.Assert) and node.msg is not None and "FlashAttention v3" in strings(node.msg)):
            continue
        found = checks(node.test)
        at_least = [c.value for c in found if c.kind == "at_least"]
        if at_least:
            return max(at_least), [], []
        terms = (
            node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or) else [node.test]
        )
        majors = sorted({c.value for c in found if c.kind == "major"})
        mla = sorted(
            {c.value for t in terms if "use_mla" not in ast.unparse(t) for c in checks(t) if c.kind == "major"}
        )
        return None, majors, mla
    return None, [], []


def _floor(runner: ast.Module) -> int | None:
    match = re.search(r"only supports sm(\d+) and above", strings(runner))
    return int(match.group(1)) if match else None


def kernels(tree: Tree) -> dict[str, Any]:
    """The `kernels` read table of an SGLang release."""
    table: dict[str, Any] = {}
    unread: dict[str, str] = {
        "compiled_for": "the sglang wheel is pure Python: its GPU code ships in sgl-kernel / FlashInfer / vLLM"
    }
    runner = module(tree, RUNNER)
    if runner is None:
        unread["attention"] = f"no {RUNNER}"
    else:
        bf16 = [c for c, _ in guarded(runner, re.compile(r"bfloat16"))]
        values = [c.value for c in bf16 if c.kind == "at_least"]
        if values:
            table["dtypes"] = {"bfloat16": {"min": max(values), "below": "float16-auto", "from": RUNNER}}
        else:
            unread["dtypes"] = "no bfloat16 capability check in model_runner"
        floor = _floor(runner)
        if floor is not None:
            table["min_sm"] = {"min": floor, "from": RUNNER}
        value, why = attention(tree, runner)
        table["attention"] = value
        unread.update(why)
    quant, _ = vllm_quantization(tree, QUANT)
    if quant is not None and quant["methods"]:
        table["quantization"] = quant
    else:
        unread["quantization"] = "no quantization config of its own (it imports vLLM's, not in this wheel)"
    fp8, why_fp8 = vllm_fp8(tree, QUANT)
    if fp8 is not None and "quantization" in table:
        table["fp8"] = fp8
    elif why_fp8 is not None:
        unread["fp8"] = why_fp8
    kv = _options(tree).get("--kv-cache-dtype", {}).get("choices")
    if isinstance(kv, list):
        table["kv_cache_dtypes"] = {"choices": kv, "from": f"{ARGS}:--kv-cache-dtype"}
    table["unread"] = unread
    return table
