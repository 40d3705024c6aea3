"""The weights' format from a checkpoint's own files: the quantization config (config.json's
quantization_config, ModelOpt's hf_quant_config.json), else the dtype config.json names, else the
safetensors headers' dtypes, else GGUF files. Named as the catalog's QuantMethod, or None with the reason.
"""

from __future__ import annotations

from typing import Any

from ..catalog.schema.engine import QuantMethod
from ..frozen import frozen
from .configfields import as_int, text_config, word
from .files import Checkpoint


@frozen
class WeightFormat:
    quant: QuantMethod | None
    label: str  # what the files say, in their own words
    why_none: str | None = None


def _compressed_tensors(qc: dict[str, Any]) -> WeightFormat:
    raw = qc.get("config_groups")
    groups: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kinds: set[tuple[str, int]] = set()
    block = False
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if isinstance(weights, dict):
            kinds.add((str(weights.get("type")), as_int(weights.get("num_bits")) or 0))
            block = block or weights.get("strategy") == "block" or bool(weights.get("block_structure"))
    label = f"compressed-tensors {word(qc.get('format')) or ''}".strip()
    formats = {str(g.get("format", "")) for g in groups.values() if isinstance(g, dict)} | {str(qc.get("format"))}
    if ("float", 4) in kinds and any("mxfp4" in f for f in formats):
        return WeightFormat("mxfp4", label)
    if ("float", 4) in kinds:
        return WeightFormat("nvfp4", label)
    if ("float", 8) in kinds:
        return WeightFormat("fp8_block" if block else "fp8", label)
    if ("int", 4) in kinds and ("int", 8) in kinds:
        return WeightFormat("int4_int8_mix", label)
    if kinds == {("int", 4)}:
        return WeightFormat("int4", label)
    return WeightFormat(None, label, f"{label} with weight groups {sorted(kinds)} is not a format the catalog declares")


def _modelopt(algo: str) -> WeightFormat:
    table: dict[str, QuantMethod] = {"NVFP4": "nvfp4", "FP8": "fp8", "FP8_PB_WO": "fp8_block"}
    quant = table.get(algo.upper())
    label = f"ModelOpt {word(algo) or 'unknown'}"
    return WeightFormat(quant, label, None if quant else f"{label} is not a format the catalog declares")


def weight_format(ck: Checkpoint) -> WeightFormat:
    if ck.gguf_files and not any(f.path.endswith(".safetensors") for f in ck.files):
        # .gguf files and no safetensors: the GGUF is the checkpoint, whatever a config.json beside it says
        return WeightFormat("gguf", f"GGUF ({len(ck.gguf_files)} file(s))")
    config = ck.config or {}
    qc = config.get("quantization_config") or text_config(config).get("quantization_config")
    if isinstance(ck.quant_config, dict):
        quantization = ck.quant_config.get("quantization")
        algo = quantization.get("quant_algo") if isinstance(quantization, dict) else None
        if isinstance(algo, str):
            return _modelopt(algo)
    if isinstance(qc, dict):
        method = str(qc.get("quant_method", "")).lower()
        if method == "fp8":
            block = qc.get("weight_block_size")
            label = f"fp8 {word(qc.get('fmt')) or ''}".strip()
            if str(text_config(config).get("expert_dtype", "")).lower() == "fp4":  # DeepSeek-V4: FP4 routed experts
                return WeightFormat("mixed_fp4_fp8", f"{label}, routed experts fp4 (expert_dtype)")
            return WeightFormat("fp8_block" if block else "fp8", label)
        if method in ("mxfp4", "awq", "gptq"):
            quant: QuantMethod = method  # type: ignore[assignment]
            bits = as_int(qc.get("bits"))
            return WeightFormat(quant, method + (f" {bits}-bit" if bits else ""))
        if method == "compressed-tensors":
            return _compressed_tensors(qc)
        if method == "modelopt":
            return _modelopt(str(qc.get("quant_algo", "")))
        named = word(method) or "unknown"
        return WeightFormat(None, named, f"quant_method {named!r} is not a format the catalog declares")
    dtype = word(text_config(config).get("torch_dtype") or text_config(config).get("dtype")) or ""
    if dtype == "bfloat16":
        return WeightFormat("bf16", "bfloat16 (no quantization_config)")
    if dtype == "float16":
        return WeightFormat("fp16", "float16 (no quantization_config)")
    if not dtype and ck.dtype_elements:  # config.json names no dtype: the safetensors headers do
        stored = set(ck.dtype_elements)
        if stored <= {"BF16", "F32"} and "BF16" in stored:
            return WeightFormat("bf16", "BF16 tensors (safetensors headers; config.json names no dtype)")
        if stored <= {"F16", "F32"} and "F16" in stored:
            return WeightFormat("fp16", "F16 tensors (safetensors headers; config.json names no dtype)")
    return WeightFormat(None, dtype or "unknown", f"weights in {dtype or 'an unstated dtype'}: no format to plan with")
