"""How big a checkpoint is: its bytes (index total_size, safetensors headers, file sizes, GGUF files)
and its parameters (computed from config.json's shapes; counted in the safetensors headers when every
stored dtype is a float).
"""

from __future__ import annotations

import re
from typing import Any

from ..catalog.schema.engine import QuantMethod
from ..catalog.schema.model import MAMBA_KINDS, Attention, LinearAttention, Moe
from ..frozen import frozen
from .architectures import vision_defaults
from .configfields import as_int, word
from .files import Checkpoint
from .layouts import nas_blocks

FLOAT_DTYPES = {"BF16", "F16", "F32", "F64"}


@frozen
class Size:
    bytes: float | None
    how: str


SPLIT_GGUF = re.compile(r"-\d{5}-of-\d{5}\.gguf$")


def checkpoint_size(ck: Checkpoint, quant: QuantMethod | None) -> Size:
    if quant == "gguf":
        ggufs = ck.gguf_files
        stems = {SPLIT_GGUF.sub("", f.path) for f in ggufs}
        if len(stems) == 1 and all(f.size for f in ggufs):
            return Size(float(sum(f.size or 0 for f in ggufs)), f"the GGUF file size ({len(ggufs)} part(s))")
        return Size(None, f"{len(stems)} GGUF quantizations in the repo: name one (recipegen does not pick)")
    if ck.index_total_size:
        return Size(float(ck.index_total_size), "model.safetensors.index.json metadata.total_size")
    if ck.header_bytes:
        return Size(float(ck.header_bytes), "the safetensors headers (sum of tensor bytes)")
    files = ck.file_size(".safetensors")
    if files:
        return Size(float(files), "the sizes of the *.safetensors files")
    return Size(None, "no index, header or file size available")


# a vision MLP with a gate (gate, up and down) where its activation is silu: Pixtral, Qwen2.5-VL; gelu / quick_gelu
# towers (SigLIP, Qwen2-VL, Qwen3-VL, CLIP) have fc1 and fc2 only
VISION_GATED = ("silu", "swish", "swiglu")


def vision_params(config: dict[str, Any], text_hidden: int) -> tuple[float, str | None]:
    """The vision tower's parameters from config.json's vision_config (vLLM's module shapes, biases and norms
    left out): per block q, k, v and o (4 × width²) and the MLP; the patch embedding; the projector into the
    language model — Qwen-VL's patch merger (spatial_merge_size² × width squared, then to the text width; one
    more per deepstack layer: vllm/model_executor/models/qwen2_vl.py, qwen3_vl.py), else a merge of
    spatial_merge_size² patches to one (Mistral3PatchMerger) and the two-layer projector to the text width
    (LlavaMultiModalProjector, Mistral3MultiModalProjector), or Idefics3's pixel shuffle of scale_factor² patches
    and its one linear to the text width (vllm/model_executor/models/idefics3.py). (0, None) without a
    vision_config; (0, why) for one
    that states no depth or width."""
    vision = config.get("vision_config")
    if not isinstance(vision, dict):
        return 0.0, None
    towers = named_towers(vision, config.get("projector_config"))
    if towers:
        return towers, None
    kind = word(vision.get("model_type")) or ""
    v: dict[str, Any] = {**vision_defaults().get(kind, {}), **vision}
    # MoonViT (Kimi-VL / Kimi K2.5) names its tower's shape vt_*: vt_num_hidden_layers, vt_hidden_size, ...
    depth = as_int(v.get("depth")) or as_int(v.get("num_hidden_layers")) or as_int(v.get("vt_num_hidden_layers"))
    width = as_int(v.get("embed_dim")) or as_int(v.get("hidden_size")) or as_int(v.get("vt_hidden_size"))
    if not depth or not width:
        return 0.0, "vision_config states no depth or width: the vision tower is not counted"
    ratio = v.get("mlp_ratio")
    inner = (
        as_int(v.get("intermediate_size"))
        or as_int(v.get("vt_intermediate_size"))
        or int(float(ratio if isinstance(ratio, int | float) else 4) * width)
    )
    act = str(v.get("hidden_act") or v.get("hidden_activation") or "").casefold()
    matrices = 3 if any(g in act for g in VISION_GATED) else 2
    blocks = depth * (4 * width * width + matrices * width * inner)
    patch = as_int(v.get("patch_size")) or as_int(v.get("spatial_patch_size")) or 14
    channels = as_int(v.get("in_channels")) or as_int(v.get("num_channels")) or as_int(v.get("in_chans")) or 3
    embed = channels * patch * patch * (as_int(v.get("temporal_patch_size")) or 1) * width
    merge = as_int(v.get("spatial_merge_size")) or as_int(config.get("spatial_merge_size")) or 1
    merged = merge * merge * width
    kernel = v.get("merge_kernel_size")  # MoonViT: the patches merged into one token, height × width
    if isinstance(kernel, list) and len(kernel) == 2 and all(as_int(k) for k in kernel):
        merge = (as_int(kernel[0]) or 1) * (as_int(kernel[1]) or 1)
        merged = merge * width
    if kind.startswith("qwen") or v.get("mm_projector_type") == "patchmerger":
        # Kimi-VL's projector (kimi_vl.py KimiVLMultiModalProjector) is the same two linears: merged → merged → text
        out = as_int(v.get("out_hidden_size")) or text_hidden
        deepstack = v.get("deepstack_visual_indexes")
        mergers = 1 + (len(deepstack) if isinstance(deepstack, list) else 0)
        projector = mergers * (merged * merged + merged * out)
    elif (shuffle := as_int(config.get("scale_factor"))) is not None and shuffle > 1:
        # Idefics3 / SmolVLM: a pixel shuffle concatenates scale_factor² patches (no weights), then one linear to
        # the text width (idefics3.py Idefics3SimpleMLP: vision width × scale_factor² → text width, no bias)
        projector = shuffle * shuffle * width * text_hidden
    else:
        projector = (merged * width if merge > 1 else 0) + width * text_hidden + text_hidden * text_hidden
    return float(blocks + embed + projector), None


def named_towers(vision: dict[str, Any], projector: Any) -> float:
    """DeepSeek-OCR's vision_config names each encoder under `width` (sam_vit_b, clip-l-14-224, OCR 2's
    qwen2-0-5b), which vLLM's deepseek_ocr.py / deepseek_ocr2.py build side by side (deepencoder.py,
    deepencoder2.py), and a linear projector_config (input_dim to n_embed). A tower's layers and width come from
    the file, else from its defaults in data/architectures.yaml (vision_defaults, by the tower's name); each block
    is attention (4 × width², or q and o plus grouped k and v where the tower states kv_heads) and an MLP (gate,
    up and down of intermediate_size where stated, else up and down of 4 × width). 0 for any other
    vision_config."""
    named = vision.get("width")
    if not isinstance(named, dict):
        return 0.0
    total = 0
    for name, stated in named.items():
        if not isinstance(stated, dict):
            return 0.0
        tower: dict[str, Any] = {**vision_defaults().get(str(name), {}), **stated}
        depth = as_int(tower.get("layers"))
        width = as_int(tower.get("width")) or as_int(tower.get("dim"))
        if not depth or not width:
            return 0.0
        heads, kv = as_int(tower.get("heads")), as_int(tower.get("kv_heads"))
        attention = 2 * width * width + 2 * width * (kv * (width // heads) if heads and kv else width)
        inner = as_int(tower.get("intermediate_size"))
        mlp = 3 * width * inner if inner else 2 * width * 4 * width
        total += depth * (attention + mlp)
    if isinstance(projector, dict) and word(projector.get("projector_type")) == "linear":
        total += (as_int(projector.get("input_dim")) or 0) * (as_int(projector.get("n_embed")) or 0)
    return float(total)


def mamba_mixer_params(linear: LinearAttention, hidden: int) -> float:
    """Parameters of one Mamba / short-conv mixer (transformers' and vLLM's module shapes): Mamba-1 in_proj
    (x and z), conv, x_proj (dt rank hidden/16 and B, C), dt_proj, A and D, out_proj; Mamba-2 in_proj (z, x, B,
    C per group, dt per head), conv over x, B and C, out_proj; LFM2 in_proj (B, C, x), conv, out_proj."""
    inner = linear.inner or 0
    k = linear.conv_kernel or 0
    if linear.kind == "short_conv":
        return 4 * hidden * inner + inner * k
    d_state = linear.head_k_dim
    if linear.kind == "mamba1":
        rank = -(-hidden // 16)
        return 3 * hidden * inner + inner * (rank + 2 * d_state) + rank * inner + inner * (d_state + k + 3)
    conv = inner + 2 * (linear.groups or 1) * d_state
    return hidden * (inner + conv + linear.num_heads) + conv * k + inner * hidden + inner + 3 * linear.num_heads


def estimate_params(
    c: dict[str, Any],
    att: Attention,
    moe: Moe | None,
    layers: int,
    dense_mlp_field: str | None = None,
    linear: LinearAttention | None = None,
    mlp_matrices: int = 3,
    mlp_layers: int | None = None,
) -> tuple[float, float]:
    """Total and active parameters from config.json's shapes (embeddings, attention or recurrent-state
    mixer per layer, MLP/experts; an MLP has gate, up and down matrices, or up and down only)."""
    hidden = as_int(c.get("hidden_size")) or 0
    vocab = as_int(c.get("vocab_size")) or 0
    embed = vocab * hidden * (1 if c.get("tie_word_embeddings") else 2)
    heads = att.num_heads
    q_lora = as_int(c.get("q_lora_rank"))
    attn: float
    if att.kind == "gqa":
        # q and k of head_dim, v and o of the V width (mimo_v2_flash.py: QKVParallelLinear with v_head_size,
        # o_proj heads × v_head_dim wide); window layers of their own shape counted at that shape
        attn = _gqa_params(hidden, heads, *att.kv_shape())
        window_layers = att.sliding_window_layers or 0
        if att.window_head_dim is not None and window_layers and layers:
            window = _gqa_params(hidden, att.window_num_heads or heads, *att.kv_shape(window=True))
            kv_layers = att.layers if att.layers is not None else layers
            attn = ((kv_layers - window_layers) * attn + window_layers * window) / kv_layers if kv_layers else 0
    elif att.kind == "dsv4":
        hd = att.head_dim or 0
        q = hidden * q_lora + q_lora * heads * hd if q_lora else hidden * heads * hd
        # a grouped low-rank output (DeepSeek-V4's wo_a: heads × head_dim → o_groups × o_lora_rank, then wo_b
        # back to hidden) where the config names one, else one dense projection
        o_lora, o_groups = as_int(c.get("o_lora_rank")), as_int(c.get("o_groups"))
        out = heads * hd * o_lora + o_groups * o_lora * hidden if o_lora and o_groups else heads * hd * hidden
        attn = q + hidden * (att.num_kv_heads or 1) * hd + out
    else:
        nope, rope = att.qk_nope_head_dim or 0, att.qk_rope_head_dim or 0
        v, lora = att.v_head_dim or 0, att.kv_lora_rank or 0
        q = hidden * q_lora + q_lora * heads * (nope + rope) if q_lora else hidden * heads * (nope + rope)
        attn = q + hidden * (lora + rope) + lora * heads * (nope + v) + heads * v * hidden
    if linear is not None:  # mixer per layer: the attention layers' projections, or q/k/v, gate and output
        if linear.kind in MAMBA_KINDS:
            state = mamba_mixer_params(linear, hidden)
        else:
            kh = linear.num_k_heads or linear.num_heads
            state = hidden * (2 * kh * linear.head_k_dim + 3 * linear.num_heads * linear.head_v_dim)
        attn = ((att.layers or 0) * attn + linear.layers * state) / layers if layers else 0
    dense_width = as_int(c.get(dense_mlp_field)) if dense_mlp_field else None
    one_mlp: float = mlp_matrices * hidden * (dense_width or as_int(c.get("intermediate_size")) or 0)
    nas = nas_blocks(c)
    if nas is not None and moe is None and linear is None:
        # Nemotron-NAS: attention only where block_configs keeps it, each layer's MLP at its own width
        blocks = att.layers if att.layers is not None else layers
        total = embed + blocks * attn + sum(mlp_matrices * hidden * w for w in nas[1][:layers])
        return total, total
    reused = shared_blocks(c)
    if reused is not None and linear is not None and moe is None:
        return _zamba2_params(c, att, linear, hidden, embed, reused)
    if moe is None:
        # layers without an MLP (pure Mamba, Nemotron-H's mixer layers) carry none
        mlps = layers if mlp_layers is None else mlp_layers
        total = embed + layers * attn + mlps * one_mlp
        return total, total
    # latent MoE (Kimi-K3, Nemotron-3): the routed experts work at a narrower width than hidden_size
    expert = mlp_matrices * (moe.expert_hidden or hidden) * (moe.moe_intermediate or 0)
    # Nemotron-3's latent MoE projects into that width and back once per MoE layer, for every token
    # (vLLM nemotron_h.py: fc1_latent_proj hidden → moe_latent_size, fc2_latent_proj back)
    latent = as_int(c.get("moe_latent_size"))
    latent_proj = 2 * hidden * latent if latent else 0
    # the shared expert's own width where the class states one (Qwen2-MoE shared_expert_intermediate_size,
    # Nemotron-H moe_shared_expert_intermediate_size), else an expert's
    shared_width = (
        as_int(c.get("shared_expert_intermediate_size"))
        or as_int(c.get("moe_shared_expert_intermediate_size"))
        or moe.moe_intermediate
        or 0
    )
    moe_layers = layers - moe.dense_layers
    # the dense MLPs: one per layer that does not route, or, where some layers have no MLP at all, the MLP
    # layers left once the routed ones are counted (Nemotron-H: - layers beside its E layers)
    dense_mlps = moe.dense_layers if mlp_layers is None else max(0, mlp_layers - moe_layers)
    shared_part = moe_layers * moe.shared_experts * mlp_matrices * hidden * shared_width
    dense_part = layers * attn + dense_mlps * one_mlp + shared_part + moe_layers * latent_proj
    total = embed + dense_part + moe_layers * moe.experts * expert
    active = embed + dense_part + moe_layers * moe.top_k * expert
    return total, active


def _gqa_params(hidden: int, heads: int, kv: int, k_dim: int, v_dim: int) -> int:
    """One attention layer's q, k, v and o projections (V and the output of v_dim wide)."""
    return hidden * (heads * k_dim + kv * k_dim + kv * v_dim + heads * v_dim)


def shared_blocks(c: dict[str, Any]) -> tuple[int, int] | None:
    """(shared transformer blocks, hybrid layers) of a Zamba2-style stack: num_mem_blocks blocks whose weights
    every "hybrid" layer of layers_block_type reuses in turn; None for a stack without them."""
    blocks = as_int(c.get("num_mem_blocks"))
    listed = c.get("layers_block_type")
    if not blocks or not isinstance(listed, list):
        return None
    hybrid = sum(1 for t in listed if str(t).casefold() == "hybrid")
    return (min(blocks, hybrid), hybrid) if hybrid else None


def _zamba2_params(
    c: dict[str, Any], att: Attention, linear: LinearAttention, hidden: int, embed: float, shared: tuple[int, int]
) -> tuple[float, float]:
    """vLLM's zamba2.py: every layer has a Mamba-2 mixer; the attention and gated MLP exist once per shared
    block (q/k/v read the attention_hidden_size-wide concatenation of the input and the embeddings); each
    hybrid layer adds its own hidden×hidden linear and, where the config turns them on, low-rank adapters."""
    blocks, hybrid = shared
    width = as_int(c.get("attention_hidden_size")) or 2 * hidden
    heads, kv, hd = att.num_heads, att.num_kv_heads or att.num_heads, att.head_dim or 0
    inter = as_int(c.get("intermediate_size")) or 4 * hidden
    rank = as_int(c.get("adapter_rank")) or 0
    block = width * (heads + 2 * kv) * hd + heads * hd * hidden + 3 * hidden * inter  # gate_up + down
    per_hybrid: float = hidden * hidden
    if c.get("use_shared_mlp_adapter"):
        per_hybrid += hidden * rank + rank * 2 * inter
    if c.get("use_shared_attention_adapter"):
        per_hybrid += 3 * (width * rank + rank * width)
    total = embed + linear.layers * mamba_mixer_params(linear, hidden) + blocks * block + hybrid * per_hybrid
    return total, total
