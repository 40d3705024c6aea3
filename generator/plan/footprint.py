"""Per-GPU bytes of one request: KV cache per context token, and what is fixed per request (sliding-window
layers, linear-attention state). What the memory budget (memory.py) spends its pool on.

KV bytes per token follow the attention kind *as the engine stores it*: GQA keys+values per KV head (heads
sharded by TP only as far as they go), MLA's compressed latent (replicated on every TP rank), DSA indexer keys
(FP8 + one FP32 scale per 128 values), DeepSeek-V4's compressed entries, and sliding-window layers bounded by
their window.
"""

from __future__ import annotations

import math

from ..catalog.schema import Model
from ..catalog.schema.common import KvDtype
from ..catalog.schema.model import MAMBA_KINDS, LinearAttention
from ..frozen import frozen

KV_BYTES: dict[KvDtype, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "fp8_ds_mla": 1.0,  # per element; the packed per-token layout is handled below
    "q8_0": 34 / 32,  # ggml block: 32 int8 + one fp16 scale
    "q4_0": 18 / 32,
}
# a KV cache stored in 8-bit blocks that carry their own scale: near-lossless against fp16, so the first thing a
# user quantizes to buy context when a full-precision cache leaves too little (llama.cpp's -ctk/-ctv q8_0)
BLOCK_SCALED_8BIT_KV: tuple[KvDtype, ...] = ("q8_0",)
# FlashMLA's packed FP8 sparse layout: 512 FP8 latent + 4 FP32 scales + 64 BF16 RoPE = 656 B/token.
FP8_DS_MLA_BYTES = 656
INDEXER_SCALE_BYTES_PER_128 = 4


@frozen
class Footprint:
    """Per-GPU cost of one request: bytes per context token, plus bytes fixed per request."""

    per_token: float
    per_request: float  # sliding-window layers + linear-attention state
    state_per_request: float  # the part of per_request that is recurrent state
    lines: tuple[tuple[str, float], ...]  # (what, bytes per token or per request) for the budget table


@frozen
class Unplannable:
    reason: str


def _heads_per_rank(heads: int, tp: int) -> int:
    return max(1, heads // tp) if tp <= heads else 1


def _mamba_state(linear: LinearAttention, tp: int) -> tuple[float, str]:
    """Bytes of one request's Mamba / short-conv state on one GPU, as vLLM's MambaStateShapeCalculator
    shapes it: channels and heads split by TP; Mamba-2's B/C groups replicated up to TP where TP does not
    divide them (extra_groups_for_head_shards)."""
    assert linear.inner is not None and linear.conv_kernel is not None
    window = linear.conv_kernel - 1
    elem = linear.state_bytes
    if linear.kind == "short_conv":
        channels = max(1, linear.inner // tp)
        conv = linear.layers * channels * window * elem
        return conv, f"conv state: {linear.layers} layers × {channels} channels × {window} × {elem} B"
    if linear.kind == "mamba1":
        channels = max(1, linear.inner // tp)
        per_layer = channels * (window + linear.head_k_dim) * elem
        what = (
            f"Mamba state: {linear.layers} layers × {channels} channels × (conv {window} + d_state "
            f"{linear.head_k_dim}) × {elem} B"
        )
        return linear.layers * per_layer, what
    groups = linear.groups or 1
    groups = groups if groups % tp == 0 else tp
    conv_channels = max(1, (linear.inner + 2 * groups * linear.head_k_dim) // tp)
    heads = max(1, linear.num_heads // tp)
    per_layer = (conv_channels * window + heads * linear.head_v_dim * linear.head_k_dim) * elem
    what = (
        f"Mamba-2 state: {linear.layers} layers × (conv {conv_channels}×{window} + {heads} heads × "
        f"{linear.head_v_dim}×{linear.head_k_dim}) × {elem} B"
    )
    return linear.layers * per_layer, what


def footprint(
    model: Model, kv_dtype: KvDtype, tp: int, layer_split: int, state_slots: int, mtp: bool = False
) -> Footprint | Unplannable:
    """KV bytes per token and fixed bytes per request on one GPU.

    `tp` shards heads (vLLM/SGLang); `layer_split` spreads whole layers over GPUs (llama.cpp);
    `mtp`: the plan drafts with the model's MTP layers, which keep a KV cache of their own.
    """
    att = model.attention
    elem = KV_BYTES[kv_dtype]
    kv_layers = (model.layers if att.layers is None else att.layers) + (model.mtp_layers if mtp else 0)
    lines: list[tuple[str, float]] = []
    per_token = 0.0
    per_request = 0.0

    if att.kind == "gqa":
        assert att.num_kv_heads is not None and att.head_dim is not None
        # K and V per KV head, each its own width where V is narrower (v_head_dim); window layers may have a
        # shape of their own (kv_shape)
        kv_heads, k_dim, v_dim = att.kv_shape()
        heads = _heads_per_rank(kv_heads, tp)
        per_layer = heads * (k_dim + v_dim) * elem
        window_layers = att.sliding_window_layers or 0 if att.sliding_window else 0
        full_layers = kv_layers - window_layers
        per_token += full_layers * per_layer
        kv_width = f"{k_dim}" if k_dim == v_dim else f"(K {k_dim} + V {v_dim} wide)"
        if kv_layers:  # a pure Mamba stack keeps no K and V at all
            lines.append(
                (f"K+V: {full_layers} layers × {heads} KV head(s) × {kv_width} × {elem:g} B", full_layers * per_layer)
            )
        if window_layers:
            assert att.sliding_window is not None
            w_heads, w_k, w_v = att.kv_shape(window=True)
            w_per_layer = _heads_per_rank(w_heads, tp) * (w_k + w_v) * elem
            window = window_layers * w_per_layer * att.sliding_window
            per_request += window
            shaped = (
                f", {_heads_per_rank(w_heads, tp)} KV head(s) × (K {w_k} + V {w_v} wide)"
                if att.window_head_dim is not None
                else ""
            )
            lines.append(
                (f"sliding window: {window_layers} layers × {att.sliding_window} tokens{shaped} (per request)", window)
            )
    elif att.kind in ("mla", "dsa", "dsa_nope"):
        assert att.kv_lora_rank is not None
        rope = att.qk_rope_head_dim or 0
        width = att.kv_lora_rank + rope
        if kv_dtype == "fp8_ds_mla" and att.kind != "dsa_nope":
            per_layer = float(FP8_DS_MLA_BYTES)
            what = f"MLA latent: {kv_layers} layers × {FP8_DS_MLA_BYTES} B packed FP8"
        else:
            per_layer = width * elem
            what = f"MLA latent: {kv_layers} layers × ({att.kv_lora_rank}+{rope}) × {elem:g} B"
        per_token += kv_layers * per_layer
        lines.append((what + " (replicated on every TP rank)", kv_layers * per_layer))
        if att.indexer is not None:
            idx = att.indexer
            idx_layers = idx.layers or kv_layers
            key = idx.head_dim + INDEXER_SCALE_BYTES_PER_128 * math.ceil(idx.head_dim / 128)
            cost = idx_layers * key / idx.kpool
            per_token += cost
            pooled = f", pooled {idx.kpool}:1" if idx.kpool > 1 else ""
            lines.append((f"DSA indexer keys: {idx_layers} layers × {key} B FP8{pooled}", cost))
    elif att.kind == "dsv4":
        assert att.head_dim is not None and att.compressed is not None and att.sliding_window is not None
        entry = 584.0 if kv_dtype in ("fp8_ds_mla", "fp8_e4m3") else att.head_dim * elem
        for group in att.compressed:
            if group.layers == 0:
                continue
            cost = group.layers * entry / group.ratio
            per_token += cost
            lines.append((f"compressed KV: {group.layers} layers × {entry:g} B / {group.ratio} tokens", cost))
        window = model.layers * att.sliding_window * entry
        per_request += window
        lines.append((f"sliding window: {model.layers} layers × {att.sliding_window} tokens (per request)", window))
        if att.indexer is not None:
            idx = att.indexer
            ratio = min(g.ratio for g in att.compressed if g.layers)
            idx_layers = idx.layers or next(g.layers for g in att.compressed if g.ratio == ratio)
            key = idx.head_dim + INDEXER_SCALE_BYTES_PER_128 * math.ceil(idx.head_dim / 128)
            cost = idx_layers * key / ratio
            per_token += cost
            lines.append((f"CSA indexer keys: {idx_layers} layers × {key} B / {ratio} tokens", cost))
    else:  # pragma: no cover - the schema's Literal makes this unreachable
        return Unplannable(f"attention kind {att.kind!r} has no KV formula")

    state = 0.0
    linear = model.linear_attention
    if linear is not None and linear.kind in MAMBA_KINDS:
        state, what = _mamba_state(linear, tp)
        state *= state_slots
        slots = f" × {state_slots} slots" if state_slots > 1 else ""
        lines.append((f"{what}{slots} (per request, whatever its context)", state))
        per_request += state
    elif linear is not None:
        heads = _heads_per_rank(linear.num_heads, tp)
        k_heads = _heads_per_rank(linear.num_k_heads, tp) if linear.num_k_heads else heads
        recurrent = linear.layers * heads * linear.head_k_dim * linear.head_v_dim * linear.state_bytes
        conv = 0.0
        if linear.conv_kernel:
            # the short convolution keeps its last kernel-1 inputs of q, k (key heads) and v (value heads), in bf16
            width = 2 * k_heads * linear.head_k_dim + heads * linear.head_v_dim
            conv = linear.layers * (linear.conv_kernel - 1) * width * 2
        state = (recurrent + conv) * state_slots
        slots = f" × {state_slots} slots" if state_slots > 1 else ""
        lines.append(
            (
                f"{linear.kind.upper()} state: {linear.layers} layers × {heads} heads × "
                f"{linear.head_k_dim}×{linear.head_v_dim} × {linear.state_bytes} B + conv{slots} (per request)",
                state,
            )
        )
        per_request += state

    if layer_split > 1:
        per_token /= layer_split
        per_request /= layer_split
        state /= layer_split
        lines = [(f"{what} ÷ {layer_split} GPUs (layer split)", value / layer_split) for what, value in lines]
    return Footprint(per_token, per_request, state, tuple(lines))
