"""A checkpoint's size in bytes: the catalog's, or an estimate from the parameter count where the format fixes
the bytes per parameter. The memory gate spreads it over the GPUs; the speed estimate reads it too."""

from __future__ import annotations

import re

from ..catalog.schema import Model

BYTES_PER_PARAM = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp8_block": 1.0}


# INT4 weight-only checkpoints (AWQ, GPTQ, compressed-tensors W4A16) quantize the linear layers of the
# transformer blocks in groups of 128 input channels: per weight 4 bits packed into int32, per group one
# 16-bit scale and (AWQ, GPTQ) one 4-bit zero point packed into int32; the token embedding and lm_head
# stay 16-bit. Sources: AutoAWQ's WQLinear_GEMM (w_bit=4, group_size=128, qweight/qzeros int32, scales
# fp16); RedHatAI's W4A16 cards ("Only the weights of the linear operators within transformers blocks
# are quantized", "a linear scaling per group of 128 parameters").
ESTIMATED = "checkpoint size not in the catalog: estimated"  # how every size estimate's note begins
INT4_QUANTS = frozenset({"awq", "gptq", "int4"})
INT4_GROUP = 128
INT4_BYTES_PER_WEIGHT = 0.5 + (2 + 0.5) / INT4_GROUP  # packed nibble + the group's scale and zero point


# 4-bit floats with block scales: NVFP4 keeps one FP8 (E4M3) scale per 16 weights (plus one FP32 tensor
# scale), MXFP4 one E8M0 scale per 32 (OCP Microscaling spec v1.0); embeddings, norms and routers stay 16-bit.
FP4_BYTES_PER_WEIGHT = {"nvfp4": 0.5 + 1 / 16, "mxfp4": 0.5 + 1 / 32}
FP4_NOTE = {
    "nvfp4": "4-bit, an FP8 scale per block of 16 "
    "[https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/]",
    "mxfp4": "4-bit, an E8M0 scale per block of 32 "
    "[https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf]",
}
INT4_SOURCE = "https://github.com/casper-hansen/AutoAWQ/blob/main/awq/modules/linear/gemm.py"


# A GGUF file's bits per weight by its quantization's name, over every tensor (embedding and output included):
# llama.cpp's own table for meta-llama/Llama-3.1-8B. Other models' mixes differ a little (a larger vocabulary
# shifts the share of the Q6_K output tensor), so a size from it is an estimate and says so.
GGUF_BPW_SOURCE = (
    "https://github.com/ggml-org/llama.cpp/blob/311c2c9f0ebd6e08f5b20e8827c654cebb7a41d6/tools/quantize/README.md"
)
GGUF_BPW = {
    "IQ4_XS": 4.4597,
    "IQ4_NL": 4.6818,
    "Q4_K_S": 4.6672,
    "Q4_K_M": 4.8944,
    "Q5_K_S": 5.5704,
    "Q5_K_M": 5.7036,
    "Q6_K": 6.5633,
    "Q8_0": 8.5008,
    "F16": 16.0005,
    "BF16": 16.0005,
}
_GGUF_QUANT = re.compile(
    r"(?i)(?<![A-Z0-9])(IQ4_XS|IQ4_NL|Q4_K_S|Q4_K_M|Q5_K_S|Q5_K_M|Q6_K|Q8_0|BF16|F16)(?![A-Z0-9_])"
)


def gguf_estimate(model: Model, file: str) -> tuple[float, str] | None:
    """A GGUF file's size from the parameter count and its quantization's bits per weight (named in the file
    name); None for a quant type outside llama.cpp's table (UD-/IQ1/IQ2 mixes vary too much per repo)."""
    found = _GGUF_QUANT.search(file.rsplit("/", 1)[-1])
    if found is None or "UD-" in file.upper():
        return None
    name = found.group(1).upper()
    bpw = GGUF_BPW[name]
    size = model.params_total_b * 1e9 * bpw / 8
    return size, (
        f"{ESTIMATED} as {model.params_total_b:g}B parameters × {bpw:.2f} bits ({name}, llama.cpp's bits per "
        f"weight for Llama-3.1-8B [{GGUF_BPW_SOURCE}]) = {size / 1e9:.1f} GB"
    )


def _linear_estimate(model: Model, per_weight: float, what: str) -> tuple[float, str] | None:
    """Quantized linear layers plus a 16-bit token embedding and lm_head; None where other modules may stay
    unquantized in unknown amount (vision towers, recurrent layers) or the vocabulary is not stated."""
    if model.multimodal or model.linear_attention is not None or not model.vocab_size:
        return None
    embed = model.vocab_size * model.hidden_size  # the token embedding; lm_head counted as its own copy
    total = model.params_total_b * 1e9
    linear = total - 2 * embed
    if linear <= 0:
        return None
    size = linear * per_weight + 2 * embed * 2
    return size, (
        f"{ESTIMATED} as {linear / 1e9:.1f}B linear-layer weights × {per_weight:.3f} B ({what}) + "
        f"embedding and lm_head {2 * embed / 1e9:.2f}B × 2 B (16-bit) = {size / 1e9:.1f} GB"
    )


def int4_estimate(model: Model) -> tuple[float, str] | None:
    """An INT4 weight-only checkpoint's size from the parameter count (group size 128 assumed, said)."""
    found = _linear_estimate(model, INT4_BYTES_PER_WEIGHT, "4-bit, a 16-bit scale and 4-bit zero per group of 128")
    if found is None:
        return None
    size, note = found
    return size, note + (
        f" — assumes group size {INT4_GROUP} and nothing else left unquantized (group 32 adds ~11 %) [{INT4_SOURCE}]"
    )


def checkpoint_bytes(
    model: Model, variant_size: float | None, quant: str, *, named: bool = False, file: str | None = None
) -> tuple[float, str | None] | None:
    """The variant's size, or an estimate from the parameter count and the format's bits (BF16/FP16: 2 B;
    FP8: 1 B, a lower bound since scales and unquantised layers add a few %; INT4 weight-only with its
    group size; NVFP4/MXFP4 with their block scales), each said to be an estimate with its assumption.
    `named` is kept for callers; an estimate is made whether or not the variant was named."""
    del named
    if variant_size is not None:
        return variant_size, None
    if quant == "gguf":
        return gguf_estimate(model, file) if file else None
    if quant in INT4_QUANTS:
        return int4_estimate(model)
    if quant in FP4_BYTES_PER_WEIGHT:
        return _linear_estimate(model, FP4_BYTES_PER_WEIGHT[quant], FP4_NOTE[quant])
    per_param = BYTES_PER_PARAM.get(quant)
    if per_param is None:
        return None
    size = model.params_total_b * 1e9 * per_param
    return size, (
        f"{ESTIMATED} as {model.params_total_b:g}B parameters × {per_param:g} B "
        f"= {size / 1e9:.0f} GB"
        + (" (a lower bound: FP8 scales and unquantised layers add a few %)" if per_param == 1 else "")
    )
