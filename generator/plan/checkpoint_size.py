"""A checkpoint's size in bytes: the catalog's, or an estimate from the parameter count × the format's bits
per weight. The memory gate spreads it over the GPUs; the speed estimate reads it too.

An estimate splits the parameters into routed experts, the other linear layers and the 16-bit token
embedding and lm_head, and stores each part as the variant's quantization_config says (its `quant_groups`)
or, where none is recorded, as the format usually is — and says which, with the group size assumed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..catalog.ggml import QUANTIZE_SOURCE, file_type_bits
from ..catalog.schema import Model, QuantGroup, Variant
from ..catalog.schema.model import MAMBA_KINDS

BYTES_PER_PARAM = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp8_block": 1.0}
ESTIMATED = "checkpoint size not in the catalog: estimated"  # how every size estimate's note begins

# A 16-bit checkpoint stores every parameter in 2 bytes and nothing else of weight, so parameters × 2 B is its size
# up to the rounding of the published parameter count: within 2 % of each published BF16 size in the catalog
# (tests/plan/test_checkpoint_size.py holds the catalog to it). Such a count is no caveat; an estimate of any other
# format assumes group sizes, scales or which layers stay unquantized, and is (FP8 ~1-5 % low, GGUF up to ~28 %).
COUNTED_EXACTLY = frozenset({"bf16", "fp16"})
COUNTED_TOLERANCE = 0.02

# INT4 weight-only checkpoints (AWQ, GPTQ, compressed-tensors W4A16) quantize the linear layers of the
# transformer blocks in groups of 128 input channels: per weight 4 bits packed into int32, per group one
# 16-bit scale and (AWQ, GPTQ) one 4-bit zero point packed into int32; the token embedding and lm_head
# stay 16-bit. Sources: AutoAWQ's WQLinear_GEMM (w_bit=4, group_size=128, qweight/qzeros int32, scales
# fp16); RedHatAI's W4A16 cards ("Only the weights of the linear operators within transformers blocks
# are quantized", "a linear scaling per group of 128 parameters").
INT4_QUANTS = frozenset({"awq", "gptq", "int4"})
INT4_GROUP = 128
INT4_SOURCE = "https://github.com/casper-hansen/AutoAWQ/blob/main/awq/modules/linear/gemm.py"
INT4 = QuantGroup(modules="linear", type="int", bits=4, group_size=INT4_GROUP, zero_point=True)

# 4-bit floats with block scales: NVFP4 keeps one FP8 (E4M3) scale per 16 weights (plus one FP32 tensor
# scale), MXFP4 one E8M0 scale per 32 (OCP Microscaling spec v1.0); embeddings, norms and routers stay 16-bit.
NVFP4_SOURCE = "https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/"
MXFP4_SOURCE = "https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf"
# FP8 block-scaled (DeepSeek-V3's weight_block_size [128, 128]): one FP32 scale per 128 × 128 block.
FP8_BLOCK_SOURCE = "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json"
# compressed-tensors Int4-Int8 mixes (QuantTrio's *-Int4-Int8Mix): the routed experts INT4, every other
# linear layer INT8, both symmetric with a 16-bit scale per group of 128 (the GLM-5.2 variant records it).
MIX_SOURCE = "https://huggingface.co/QuantTrio/GLM-5.2-Int4-Int8Mix/blob/main/config.json"

# DeepSeek-V4's native mix: routed experts MXFP4 (an E8M0 scale per 32), the other linear layers FP8 with
# ue8m0 scales per 128 × 128 block (the catalog's deepseek-v4-flash variants; llama.cpp keeps the same tensors
# as MXFP4 + F8_E4M3_B128).
FP4_FP8_SOURCE = "https://github.com/ai-dynamo/aiconfigurator/tree/main/aic-core/src/aiconfigurator_core/model_configs"

# bitsandbytes: NF4 in blocks of 64 with a double-quantized 8-bit absmax each (Unsloth's *-bnb-4bit uploads set
# bnb_4bit_use_double_quant), LLM.int8 rows with one FP32 scale per row; embeddings and lm_head 16-bit
BNB_SOURCE = "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/nn/modules.py"

# the storage a format usually has, assumed where the variant records no quantization_config
USUAL: dict[str, tuple[tuple[QuantGroup, ...], str]] = {
    **{quant: ((INT4,), INT4_SOURCE) for quant in INT4_QUANTS},
    "nvfp4": ((QuantGroup(modules="linear", type="float", bits=4, group_size=16, scale_bits=8),), NVFP4_SOURCE),
    "mxfp4": ((QuantGroup(modules="linear", type="float", bits=4, group_size=32, scale_bits=8),), MXFP4_SOURCE),
    "fp8_block": (
        (QuantGroup(modules="linear", type="float", bits=8, group_size=128 * 128, scale_bits=32),),
        FP8_BLOCK_SOURCE,
    ),
    "int4_int8_mix": (
        (
            QuantGroup(modules="routed_experts", type="int", bits=4, group_size=128),
            QuantGroup(modules="linear", type="int", bits=8, group_size=128),
        ),
        MIX_SOURCE,
    ),
    "bnb4": ((QuantGroup(modules="linear", type="float", bits=4, group_size=64, scale_bits=8),), BNB_SOURCE),
    "bnb8": ((QuantGroup(modules="linear", type="int", bits=8, group_size=None, scale_bits=32),), BNB_SOURCE),
    "mixed_fp4_fp8": (
        (
            QuantGroup(modules="routed_experts", type="float", bits=4, group_size=32, scale_bits=8),
            QuantGroup(modules="linear", type="float", bits=8, group_size=128 * 128, scale_bits=8),
        ),
        FP4_FP8_SOURCE,
    ),
}


def bits_per_weight(group: QuantGroup) -> float:
    """Stored bits per weight: the weight's own bits plus its group's scale (and zero point) spread over the
    group; a scale per output row adds under 0.01 bit on rows of a thousand weights or more, so it is left out."""
    if group.group_size is None:
        return float(group.bits)
    return group.bits + (group.scale_bits + (group.bits if group.zero_point else 0)) / group.group_size


INT4_BYTES_PER_WEIGHT = bits_per_weight(INT4) / 8  # packed nibble + the group's scale and zero point


def describe(group: QuantGroup) -> str:
    """int4 g128 (+ a 16-bit scale per 128) — the group size said, since the estimate rests on it."""
    kind = f"{'fp' if group.type == 'float' else 'int'}{group.bits}"
    if group.group_size is None:
        return f"{kind}, a scale per row"
    unit = "block" if group.type == "float" else "group"
    block = "128×128 block" if group.group_size == 128 * 128 else f"{unit} of {group.group_size}"
    zero = f" and a {group.bits}-bit zero point" if group.zero_point else ""
    article = "an" if str(group.scale_bits).startswith("8") else "a"
    return f"{kind}, {article} {group.scale_bits}-bit scale{zero} per {block}"


def routed_expert_params(model: Model) -> tuple[float, str] | None:
    """The routed experts' parameters: from the shapes (experts × projections × the width they work at ×
    moe_intermediate × MoE layers), or from total − active when the catalog gives no expert width; None for a
    dense model."""
    moe = model.moe
    if moe is None:
        return None
    moe_layers = model.layers - moe.dense_layers
    if moe.moe_intermediate is not None:
        width = moe.expert_hidden or model.hidden_size
        params = float(moe.experts * moe.expert_matrices * width * moe.moe_intermediate * moe_layers)
        how = f"{moe.experts} experts × {moe.expert_matrices} × {width} × {moe.moe_intermediate} × {moe_layers} layers"
        return params, how
    if model.params_active_b is not None and moe.experts > moe.top_k:
        total = model.params_total_b * 1e9
        params = (total - model.params_active_b * 1e9) * moe.experts / (moe.experts - moe.top_k)
        return params, f"(total − active) × {moe.experts}/{moe.experts - moe.top_k}"
    return None


def recurrent_params(model: Model) -> float:
    """The projections of the linear-attention (recurrent) layers, from their shapes: gated DeltaNet and its
    kin project the hidden state to queries and keys (key heads × key dim each), values and the output gate
    (value heads × value dim each) and two per-head gates, and back out; a Mamba layer projects to its inner
    channels twice, the B and C groups and the heads, and back out. 0 for a model without such layers."""
    linear = model.linear_attention
    if linear is None:
        return 0.0
    hidden = model.hidden_size
    if linear.kind in MAMBA_KINDS or linear.kind == "short_conv":
        inner = linear.inner or hidden
        width = 3 * inner + 2 * (linear.groups or 0) * linear.head_k_dim + (linear.num_heads if linear.groups else 0)
    else:
        keys = linear.num_k_heads or linear.num_heads
        width = 2 * keys * linear.head_k_dim + 3 * linear.num_heads * linear.head_v_dim + 2 * linear.num_heads
    return float(linear.layers * hidden * width)


def parts_estimate(
    model: Model, groups: Sequence[QuantGroup], assumption: str, recorded: bool = False
) -> tuple[float, str] | None:
    """Routed experts and the other linear layers at their groups' bits, the token embedding and lm_head at 16
    bits; a vision tower whose size config.json states (params_vision_b) at 16 bits, as quantizers leave it; None
    where a tower stays unquantized in unknown amount or the vocabulary is not stated. A recurrent layer's state
    is per request, not a weight; its projections are weights, which a quantizer may leave 16-bit: without a
    `recorded` quantization_config they are counted at 16 bits (the larger size, said with what it would be were
    they quantized)."""
    vision = (model.params_vision_b or 0.0) * 1e9
    if (model.multimodal and not vision) or not model.vocab_size:
        return None
    linear_group = next((g for g in groups if g.modules == "linear"), None)
    expert_group = next((g for g in groups if g.modules == "routed_experts"), linear_group)
    if linear_group is None or expert_group is None:
        return None
    embed = model.vocab_size * model.hidden_size * (1 if model.tied_embeddings else 2)
    linear = model.params_total_b * 1e9 - embed - vision
    if linear <= 0:
        return None
    found = routed_expert_params(model) if expert_group is not linear_group else None
    experts = min(found[0], linear) if found else 0.0
    recurrent = 0.0 if recorded else min(recurrent_params(model), linear - experts)
    other = linear - experts - recurrent
    e_bits, l_bits = bits_per_weight(expert_group), bits_per_weight(linear_group)
    size = experts * e_bits / 8 + other * l_bits / 8 + recurrent * 2 + embed * 2 + vision * 2
    terms = []
    if experts:
        terms.append(f"{experts / 1e9:.1f}B routed-expert weights × {e_bits:.3f} bits ({describe(expert_group)})")
    what = "other linear-layer" if experts else "linear-layer"
    terms.append(f"{other / 1e9:.1f}B {what} weights × {l_bits:.3f} bits ({describe(linear_group)})")
    if recurrent:
        terms.append(f"{recurrent / 1e9:.2f}B recurrent-layer projections × 16 bits")
    terms.append(f"embedding and lm_head {embed / 1e9:.2f}B × 16 bits")
    if vision:
        terms.append(f"vision tower {vision / 1e9:.2f}B × 16 bits")
    short = " + ".join(_short(g) for g in ((expert_group,) if experts else ()) + (linear_group,))
    spared = recurrent * (2 - l_bits / 8)
    return size, (
        f"{ESTIMATED} as {size / 1e9:.1f} GB ({short}): {' + '.join(terms)} — assumes {assumption}"
        + (f"; routed experts ≈ {found[1]}" if found and experts else "")
        + (
            f"; the recurrent layers' projections counted 16-bit, as quantizers often leave them "
            f"({spared / 1e9:.1f} GB less if they are quantized too)"
            if recurrent
            else ""
        )
    )


def why_not_estimated(model: Model, quant: str, file: str | None = None) -> str:
    """Why no estimate from the parameter count is possible for this checkpoint (said with the unknown size)."""
    if quant == "gguf":
        if not file:
            return "no GGUF file named: the repo holds several quantizations"
        return f"{file.rsplit('/', 1)[-1]} names no quantization llama-quantize lists"
    if quant not in USUAL and quant not in BYTES_PER_PARAM:
        return f"recipegen knows no bits per weight for {quant}"
    if model.multimodal and not model.params_vision_b:
        return "its vision tower stays 16-bit in an amount the catalog does not give"
    if not model.vocab_size:
        return "the catalog gives no vocabulary size for the 16-bit embedding"
    return "the parameter count does not cover the layers"


def _short(group: QuantGroup) -> str:
    g = "" if group.group_size is None else f" g{group.group_size}" if group.group_size < 1024 else " 128×128"
    return f"{'fp' if group.type == 'float' else 'int'}{group.bits}{g}" + (" +zero" if group.zero_point else "")


def rough_estimate(quant: str, notes: Sequence[str]) -> bool:
    """Whether a plan's size is an estimate that rests on an assumption (a caveat), not a 16-bit checkpoint's size
    counted from its parameters (COUNTED_EXACTLY)."""
    return quant not in COUNTED_EXACTLY and any(n.startswith(ESTIMATED) for n in notes)


def estimated_label(notes: Sequence[str]) -> str | None:
    """'395.0 GB (int4 g128 + int8 g128)' from a plan's notes, where its size is an estimate."""
    for note in notes:
        if note.startswith(ESTIMATED + " as "):
            return note[len(ESTIMATED + " as ") :].split(":", 1)[0]
    return None


def int4_estimate(model: Model) -> tuple[float, str] | None:
    """An INT4 weight-only checkpoint's size from the parameter count (group size 128 assumed, said)."""
    return parts_estimate(
        model,
        (INT4,),
        f"group size {INT4_GROUP} and nothing else left unquantized (group 32 adds ~11 %) [{INT4_SOURCE}]",
    )


def gguf_estimate(model: Model, file: str | None) -> tuple[float, str] | None:
    """A GGUF file's size from the parameter count × the whole-file bits per weight of its quantization."""
    found = file_type_bits(file) if file else None
    if found is None:
        return None
    name, bits, how = found
    size = model.params_total_b * 1e9 * bits / 8
    return size, (
        f"{ESTIMATED} as {size / 1e9:.1f} GB ({name}): {model.params_total_b:g}B parameters × {bits:.2f} bits ({how}, "
        f"its file size for Llama-3-8B as bits per weight) — assumes the same mix of tensor types as there "
        f"[{QUANTIZE_SOURCE}]"
    )


def checkpoint_bytes(
    model: Model,
    variant_size: float | None,
    quant: str,
    groups: Sequence[QuantGroup] = (),
    file: str | None = None,
) -> tuple[float, str | None] | None:
    """The variant's size, or an estimate from the parameter count and the format's bits per weight: the
    variant's recorded quantization_config (`groups`) where there is one, else the format's usual storage
    (INT4 weight-only with group-128 scales and zeros; Int4-Int8 mixes; FP8 block-scaled; NVFP4/MXFP4 with
    their block scales; a GGUF `file`'s quantization as llama-quantize sizes it), else BF16/FP16 at 2 B and FP8
    at 1 B a parameter — each said to be an estimate, with
    its assumption. An estimate is ranked like a known size: by what runs best."""
    if variant_size is not None:
        return variant_size, None
    if quant == "gguf":
        return gguf_estimate(model, file)
    if groups:
        found = parts_estimate(
            model,
            groups,
            "the storage the variant's quantization_config records (its sources say where)",
            recorded=True,
        )
        if found is not None:
            return found
    if quant in USUAL:
        usual, source = USUAL[quant]
        layout = "; ".join(describe(g) for g in usual)
        found = parts_estimate(
            model,
            usual,
            f"the format's usual storage ({layout}), no quantization_config recorded [{source}]"
            if quant not in INT4_QUANTS
            else f"group size {INT4_GROUP} and nothing else left unquantized (group 32 adds ~11 %) [{source}]",
        )
        if found is not None or quant not in BYTES_PER_PARAM:
            return found
    per_param = BYTES_PER_PARAM.get(quant)
    if per_param is None:
        return None
    size = model.params_total_b * 1e9 * per_param
    shown = f"{size / 1e9:.{0 if size >= 100e9 else 1}f}"
    return size, (
        f"{ESTIMATED} as {shown} GB ({model.params_total_b:g}B parameters × {per_param:g} B)"
        + (": a lower bound, FP8 scales and unquantised layers add a few %" if per_param == 1 else "")
    )


# checkpoint_bytes of a catalog variant, by the identity of the model and the variant: the gates, the rank floors and
# the speed estimate ask it ~45 times per matrix cell, and an estimate walks the model's layers and words its note.
# Each entry holds its model and variant, so their ids cannot be reused while it lives.
_SIZED: dict[tuple[int, int], tuple[Model, Variant, tuple[float, str | None] | None]] = {}
_SIZED_MAX = 4096  # models made per request (a checkpoint folder) would otherwise accumulate in a long process


def variant_bytes(model: Model, variant: Variant) -> tuple[float, str | None] | None:
    """checkpoint_bytes of one of the model's variants (its size, format, recorded groups and file)."""
    key = (id(model), id(variant))
    known = _SIZED.get(key)
    if known is not None:
        return known[2]
    if len(_SIZED) >= _SIZED_MAX:
        _SIZED.clear()
    sized = checkpoint_bytes(model, variant.size_bytes, variant.quant, variant.quant_groups, variant.file)
    _SIZED[key] = (model, variant, sized)
    return sized
