"""A checkpoint's size in bytes: the catalog's, or an estimate from the parameter count where the format fixes
the bytes per parameter. The memory gate spreads it over the GPUs; the speed estimate reads it too."""

from __future__ import annotations

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


def int4_estimate(model: Model) -> tuple[float, str] | None:
    """An INT4 checkpoint's size from the parameter count, for a dense text-only model whose quantized
    and 16-bit parts are known from its shapes; None where other modules may stay unquantized (MoE
    routers or shared experts, vision towers) or the vocabulary is not stated."""
    if model.moe is not None or model.multimodal or model.linear_attention is not None or not model.vocab_size:
        return None
    embed = model.vocab_size * model.hidden_size  # the token embedding; lm_head counted as its own copy
    total = model.params_total_b * 1e9
    linear = total - 2 * embed
    if linear <= 0:
        return None
    size = linear * INT4_BYTES_PER_WEIGHT + 2 * embed * 2
    return size, (
        f"{ESTIMATED} as {linear / 1e9:.1f}B linear-layer weights × "
        f"{INT4_BYTES_PER_WEIGHT:.3f} B (4-bit, a 16-bit scale and 4-bit zero per group of {INT4_GROUP}) + "
        f"embedding and lm_head {2 * embed / 1e9:.2f}B × 2 B (16-bit) = {size / 1e9:.1f} GB — assumes group size "
        f"{INT4_GROUP} and nothing else left unquantized (group 32 adds ~11 %)"
    )


def checkpoint_bytes(
    model: Model, variant_size: float | None, quant: str, *, named: bool = False
) -> tuple[float, str | None] | None:
    """The variant's size, or an estimate from the parameter count where the format fixes the bytes
    per parameter (BF16/FP16: 2; FP8: 1, a lower bound since scales and unquantised layers add a few %).
    INT4 weight-only sizes rest on an assumed group size, so they are estimated only for a variant the
    user `named` (--variant, or its repo id): a guess never outranks a checkpoint whose size is known."""
    if variant_size is not None:
        return variant_size, None
    if quant in INT4_QUANTS:
        return int4_estimate(model) if named else None
    per_param = BYTES_PER_PARAM.get(quant)
    if per_param is None:
        return None
    size = model.params_total_b * 1e9 * per_param
    return size, (
        f"{ESTIMATED} as {model.params_total_b:g}B parameters × {per_param:g} B "
        f"= {size / 1e9:.0f} GB"
        + (" (a lower bound: FP8 scales and unquantised layers add a few %)" if per_param == 1 else "")
    )
