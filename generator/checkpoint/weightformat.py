"""The weights' format from a checkpoint's own files: the quantization config (config.json's
quantization_config, ModelOpt's hf_quant_config.json), else the dtype config.json names, else the
safetensors headers' dtypes, else GGUF files. Named as the catalog's QuantMethod, or None with the reason.
"""

from __future__ import annotations

from typing import Any

from ..catalog.schema import QuantGroup
from ..catalog.schema.engine import QuantMethod
from ..frozen import frozen
from .configfields import as_int, text_config, word
from .files import Checkpoint


@frozen
class WeightFormat:
    quant: QuantMethod | None
    label: str  # what the files say, in their own words
    why_none: str | None = None
    groups: tuple[QuantGroup, ...] = ()  # the storage per part, where the quantization_config says it
    # float32 weights the engine casts to 16 bits on load: the GPU holds half the bytes the files hold
    downcast_from_fp32: bool = False
    dtype_absent: bool = False  # config.json names no dtype at all (not one it names unreadably)


# vLLM's dtype "auto" (_resolve_auto_dtype, vllm/config/model.py) serves a float32 checkpoint in the platform's
# first supported dtype (bfloat16 from compute capability 8.0, else float16)
FP32_SERVED = "served as bfloat16: vLLM's dtype auto casts float32 weights to 16 bits on load"


def _group(targets: object, weights: dict[str, Any]) -> QuantGroup | None:
    """One config_groups entry as the storage of its modules: routed experts where its targets name the
    experts (not the shared ones), else the linear layers; None where the entry is not one the estimate reads."""
    kind, bits = str(weights.get("type")), as_int(weights.get("num_bits"))
    if kind not in ("int", "float") or bits is None or not 1 <= bits <= 16:
        return None
    names = [str(t) for t in targets] if isinstance(targets, list) else [str(targets)]
    experts = any("expert" in n and "shared" not in n for n in names)
    block = weights.get("block_structure")
    size: int | None = as_int(weights.get("group_size"))
    if weights.get("strategy") == "block" and isinstance(block, list) and len(block) == 2:
        size = (as_int(block[0]) or 1) * (as_int(block[1]) or 1)
    elif weights.get("strategy") in ("channel", "tensor") or (size is not None and size < 1):
        size = None
    scale = 8 if kind == "float" and bits == 4 else 16
    try:
        return QuantGroup(
            modules="routed_experts" if experts else "linear",
            type="int" if kind == "int" else "float",
            bits=bits,
            group_size=size,
            scale_bits=scale,
            zero_point=kind == "int" and weights.get("symmetric") is False,
        )
    except ValueError:
        return None


def _compressed_tensors(qc: dict[str, Any]) -> WeightFormat:
    raw = qc.get("config_groups")
    groups: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kinds: set[tuple[str, int]] = set()
    block = False
    parts: list[QuantGroup] = []
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if isinstance(weights, dict):
            kinds.add((str(weights.get("type")), as_int(weights.get("num_bits")) or 0))
            block = block or weights.get("strategy") == "block" or bool(weights.get("block_structure"))
            part = _group(group.get("targets"), weights)
            if part is not None:
                parts.append(part)
    # one storage per part (the first group naming it); experts alone leave the other layers to the format
    found = tuple({p.modules: p for p in reversed(parts)}.values())
    found = found if any(p.modules == "linear" for p in found) else ()
    fmt = _ct_format(qc, kinds, block)
    return WeightFormat(fmt.quant, fmt.label, fmt.why_none, found if fmt.quant else ())


def _ct_format(qc: dict[str, Any], kinds: set[tuple[str, int]], block: bool) -> WeightFormat:
    raw = qc.get("config_groups")
    groups: dict[str, Any] = raw if isinstance(raw, dict) else {}
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


# bitsandbytes stores a Linear4bit weight in blocks of 64 (Params4bit's blocksize) with one absmax per block: FP32,
# or with bnb_4bit_use_double_quant an 8-bit code (plus one FP32 per 256 absmax, under 0.01 bit a weight); an
# Int8Params weight (LLM.int8) as int8 rows with one FP32 scale (SCB) per row. Only nn.Linear layers are replaced:
# the token embedding and, in transformers' quantizer, the lm_head stay 16-bit.
# https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/nn/modules.py
BNB_BLOCK = 64


def _flag(qc: dict[str, Any], name: str) -> bool:
    """transformers writes both load_in_4bit and its private _load_in_4bit; either set to true counts."""
    return qc.get(name) is True or qc.get(f"_{name}") is True


def _bitsandbytes(qc: dict[str, Any]) -> WeightFormat:
    if _flag(qc, "load_in_4bit"):
        kind = word(qc.get("bnb_4bit_quant_type")) or "fp4"  # transformers' BitsAndBytesConfig default
        double = qc.get("bnb_4bit_use_double_quant") is True
        group = QuantGroup(modules="linear", type="float", bits=4, group_size=BNB_BLOCK, scale_bits=8 if double else 32)
        label = f"bitsandbytes 4-bit {kind}" + (", double-quantized scales" if double else "")
        return WeightFormat("bnb4", label, groups=(group,))
    if _flag(qc, "load_in_8bit"):
        group = QuantGroup(modules="linear", type="int", bits=8, group_size=None, scale_bits=32)
        return WeightFormat("bnb8", "bitsandbytes 8-bit (LLM.int8)", groups=(group,))
    return WeightFormat(
        None, "bitsandbytes", "quantization_config names bitsandbytes but sets neither load_in_4bit nor load_in_8bit"
    )


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
            size = as_int(qc.get("group_size"))
            parts: tuple[QuantGroup, ...] = ()
            if method != "mxfp4" and bits is not None and 1 <= bits <= 16:  # AWQ and GPTQ store a zero per group
                parts = (
                    QuantGroup(
                        modules="linear",
                        type="int",
                        bits=bits,
                        group_size=size if size and size > 0 else None,
                        zero_point=True,
                    ),
                )
            return WeightFormat(quant, method + (f" {bits}-bit" if bits else ""), groups=parts)
        if method == "compressed-tensors":
            return _compressed_tensors(qc)
        if method == "modelopt":
            return _modelopt(str(qc.get("quant_algo", "")))
        if method == "bitsandbytes":
            return _bitsandbytes(qc)
        named = word(method) or "unknown"
        return WeightFormat(None, named, f"quant_method {named!r} is not a format the catalog declares")
    dtype = word(text_config(config).get("torch_dtype") or text_config(config).get("dtype")) or ""
    if dtype == "bfloat16":
        return WeightFormat("bf16", "bfloat16 (no quantization_config)")
    if dtype == "float16":
        return WeightFormat("fp16", "float16 (no quantization_config)")
    if dtype == "float32":
        return WeightFormat("bf16", f"float32 (no quantization_config), {FP32_SERVED}", downcast_from_fp32=True)
    if not dtype and ck.dtype_elements:  # config.json names no dtype: the safetensors headers do
        stored = set(ck.dtype_elements)
        if stored <= {"BF16", "F32"} and "BF16" in stored:
            return WeightFormat("bf16", "BF16 tensors (safetensors headers; config.json names no dtype)")
        if stored <= {"F16", "F32"} and "F16" in stored:
            return WeightFormat("fp16", "F16 tensors (safetensors headers; config.json names no dtype)")
        if stored == {"F32"}:
            return WeightFormat("bf16", f"F32 tensors (safetensors headers), {FP32_SERVED}", downcast_from_fp32=True)
    absent = text_config(config).get("torch_dtype") is None and text_config(config).get("dtype") is None
    why = f"weights in {dtype or ('an unstated dtype' if absent else 'an unreadable dtype')}: no format to plan with"
    return WeightFormat(None, dtype or "unknown", why, dtype_absent=absent and not dtype)


def by_bytes_per_param(fmt: WeightFormat, size_bytes: float | None, params: float) -> WeightFormat:
    """The dtype of a checkpoint whose config.json names none and whose headers were not read, from its bytes
    per parameter (the index's total_size over the parameters config.json's shapes give): about 4 is float32,
    about 2 a 16-bit float; vLLM reads the same from the safetensors headers (get_torch_dtype)."""
    if fmt.quant is not None or fmt.label != "unknown" or not size_bytes or params <= 0:
        return fmt
    ratio = size_bytes / params
    if 3.6 <= ratio <= 4.4:
        label = f"float32 by size ({ratio:.2f} bytes per parameter; config.json names no dtype), {FP32_SERVED}"
        return WeightFormat("bf16", label, downcast_from_fp32=True)
    if 1.8 <= ratio <= 2.2:
        return WeightFormat("bf16", f"16-bit by size ({ratio:.2f} bytes per parameter; config.json names no dtype)")
    return fmt


def unstated_as_served(fmt: WeightFormat, size_bytes: float | None) -> WeightFormat:
    """A config.json that names no dtype, with no weight file read (no headers, no index): vLLM takes the missing
    dtype for float32 (_get_and_verify_dtype, vllm/config/model.py) and its dtype auto casts that to 16 bits on
    load, so the GPU holds 2 bytes a parameter whatever the files store; only their download size stays unknown."""
    if fmt.quant is not None or not fmt.dtype_absent or size_bytes:
        return fmt
    label = "no dtype stated (config.json names none, no weight file read): held in 16 bits on the GPU, " + FP32_SERVED
    return WeightFormat("bf16", label)


def stored_as_float32(fmt: WeightFormat, size_bytes: float | None, params: float) -> WeightFormat:
    """A config.json that names a 16-bit dtype over files of about 4 bytes per parameter (the index's total_size
    over the parameters config.json's shapes give) holds float32 tensors; vLLM's dtype auto serves the config's
    dtype, casting on load, so the GPU holds half the files' bytes."""
    if fmt.quant not in ("bf16", "fp16") or fmt.downcast_from_fp32 or not size_bytes or params <= 0:
        return fmt
    ratio = size_bytes / params
    if not 3.6 <= ratio <= 4.4:
        return fmt
    label = (
        f"{fmt.label}, but the files hold {ratio:.2f} bytes per parameter: float32 tensors, served in the "
        "config's 16-bit dtype (vLLM's dtype auto casts them on load)"
    )
    return WeightFormat(fmt.quant, label, downcast_from_fp32=True)
