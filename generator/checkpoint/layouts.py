"""A model's layout per architecture family, read from config.json by its rule (data/architectures.yaml):
the attention layout (gqa, mla, dsa, dsa_nope, dsv4), the recurrent-state layers of a hybrid class
(lightning, gated DeltaNet, KDA), the experts, and the kernel ops they need. Also the layout facts any
config.json states (observed), shown for classes without a rule and never planned with.
"""

from __future__ import annotations

from typing import Any

from ..catalog.schema import Source
from ..catalog.schema.common import KernelOp
from ..catalog.schema.model import MAMBA_KINDS, Attention, CompressedLayers, Indexer, LinearAttention, Moe, Need
from .architectures import LinearKind, Rule
from .configfields import as_int, text_config
from .generic import FULL_SHAPE_FIELDS, WINDOW_SHAPE_FIELDS, window_pattern

LINEAR_OPS: dict[LinearKind, KernelOp] = {
    "kda": "linear_attention.kda",
    "gdn": "linear_attention.gdn",
    "lightning": "attention.lightning",
    "mamba1": "linear_attention.mamba",
    "mamba2": "linear_attention.mamba",
    "short_conv": "linear_attention.short_conv",
}
LINEAR_NAMES: dict[LinearKind, str] = {
    "kda": "KDA (Kimi delta attention)",
    "gdn": "gated DeltaNet",
    "lightning": "lightning (linear) attention",
    "mamba1": "Mamba-1 (selective state-space)",
    "mamba2": "Mamba-2 (state-space duality)",
    "short_conv": "gated short-convolution",
}
# the spellings of one Mamba fact across the classes vLLM loads (mamba.py, mamba2.py, jamba.py, falcon_h1.py,
# nemotron_h.py, zamba2.py, lfm2.py read these names in get_mamba_state_shape_from_config), first found wins
MAMBA_FIELDS: dict[str, tuple[str, ...]] = {
    "d_state": ("state_size", "mamba_d_state", "ssm_state_size"),
    "d_conv": ("conv_kernel", "mamba_d_conv", "conv_L_cache"),
    "heads": ("mamba_n_heads", "mamba_num_heads", "n_mamba_heads", "num_heads"),
    "head_dim": ("mamba_d_head", "mamba_head_dim", "mamba_headdim", "head_dim"),
    "groups": ("mamba_n_groups", "n_groups", "mamba_ngroups"),
    "expand": ("mamba_expand", "expand"),
}
# layer-type names that mark a layer's mixer (layer_types, layers_block_type); Zamba2's "hybrid" layers run
# a shared attention block beside their Mamba mixer
# a running Mamba / conv layer; transformers 5 renames mamba to linear_attention and attention to full_attention
# (configuration_utils.py _LEGACY_LAYER_TYPE_REMAP) in the configs it writes
STATE_TYPES = {"mamba", "mamba2", "hybrid", "conv", "short_conv", "linear_attention"}
ATTENTION_TYPES = {"attention", "full_attention", "hybrid"}


def layer_split(kind: LinearKind, c: dict[str, Any], layers: int) -> tuple[int, int]:
    """(recurrent-state layers, attention layers) of a hybrid class, from the fields its kind uses:
    lightning: attn_type_list (0 linear, 1 softmax); gdn: layer_types, else every full_attention_interval-th
    layer is full attention; kda: layer_types, else linear_attn_config.kda_layers / full_attn_layers."""
    types = c.get("layer_types")
    if kind in MAMBA_KINDS:
        return _mamba_split(c, layers)
    if kind == "lightning":
        listed = c.get("attn_type_list")
        if not isinstance(listed, list) or not listed:
            raise ValueError("attn_type_list missing (which layers are lightning attention)")
        main = listed[:layers]
        return sum(1 for t in main if t == 0), sum(1 for t in main if t == 1)
    if isinstance(types, list) and types:
        main = [str(t) for t in types[:layers]]
        linear = sum(1 for t in main if t == "linear_attention")
        if linear:
            return linear, len(main) - linear
    if kind == "gdn":
        every = as_int(c.get("full_attention_interval"))
        if not every:
            raise ValueError("neither layer_types nor full_attention_interval says which layers are gated DeltaNet")
        full = layers // every  # every every-th layer (closed form: the count comes from an untrusted file)
        return layers - full, full
    la = c.get("linear_attn_config")
    kda = la.get("kda_layers") if isinstance(la, dict) else None
    listed = la.get("full_attn_layers") if isinstance(la, dict) else None
    if not isinstance(kda, list) or not kda:
        raise ValueError("neither layer_types nor linear_attn_config.kda_layers says which layers are KDA")
    return len(kda), len(listed) if isinstance(listed, list) else layers - len(kda)


def _mamba_split(c: dict[str, Any], layers: int) -> tuple[int, int]:
    """(state layers, attention layers) of a Mamba / short-conv class, from the field its class writes:
    hybrid_override_pattern (Nemotron-H: M mamba, * attention, - MLP, E MoE, one character a layer),
    layers_block_type / layer_types (Zamba2, Granite-4, LFM2), full_attn_idxs (LFM2), attn_layer_period /
    attn_layer_offset (Jamba); else a class with attention heads runs both in every layer (Falcon-H1) and
    one without is all state layers (Mamba, Mamba-2). Counts in closed form: the layer count is untrusted."""
    pattern = c.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        main = pattern[:layers]
        return main.count("M"), main.count("*")
    for key in ("layers_block_type", "layer_types"):
        listed = c.get(key)
        if isinstance(listed, list) and listed:
            names = [str(t).casefold() for t in listed[:layers]]
            return sum(1 for t in names if t in STATE_TYPES), sum(1 for t in names if t in ATTENTION_TYPES)
    full = c.get("full_attn_idxs")
    if isinstance(full, list):
        attention = sum(1 for i in full if isinstance(i, int) and 0 <= i < layers)
        return layers - attention, attention
    period = as_int(c.get("attn_layer_period"))
    if period:
        offset = as_int(c.get("attn_layer_offset")) or 0
        attention = (layers - offset + period - 1) // period if offset < layers else 0
        return layers - attention, attention
    if as_int(c.get("num_attention_heads")):
        return layers, layers
    return layers, 0


def nas_blocks(c: dict[str, Any]) -> tuple[list[int], list[int]] | None:
    """DeciLM / Nemotron-NAS (vLLM's nemotron_nas.py): per layer in block_configs, the KV heads of its attention
    (num_attention_heads // attention.n_heads_in_group; 0 where attention.no_op) and its MLP width
    (_ffn_mult_to_intermediate_size: 2 × ffn_mult × hidden / 3, up to a multiple of 256; 0 where ffn.no_op).
    None for a config without block_configs; a layer replaced by a linear is named, not guessed."""
    blocks = c.get("block_configs")
    if blocks is None:
        return None
    heads, hidden = as_int(c.get("num_attention_heads")), as_int(c.get("hidden_size"))
    if not isinstance(blocks, list) or not heads or not hidden:
        raise ValueError("block_configs is not a list of per-layer blocks (or heads / hidden_size missing)")
    kv: list[int] = []
    widths: list[int] = []
    for i, block in enumerate(blocks):
        attn = block.get("attention") if isinstance(block, dict) else None
        ffn = block.get("ffn") if isinstance(block, dict) else None
        if not isinstance(attn, dict) or not isinstance(ffn, dict):
            raise ValueError(f"block_configs[{i}] has no attention / ffn block")
        if attn.get("replace_with_linear") or ffn.get("replace_with_linear"):
            raise ValueError(f"block_configs[{i}] replaces a block with a linear layer, which recipegen does not size")
        group = as_int(attn.get("n_heads_in_group"))
        if not attn.get("no_op") and (not group or group > heads or heads % group):
            raise ValueError(f"block_configs[{i}].attention.n_heads_in_group does not divide the {heads} heads")
        kv.append(0 if attn.get("no_op") else heads // (group or 1))
        mult = ffn.get("ffn_mult")
        if not ffn.get("no_op") and (not isinstance(mult, int | float) or isinstance(mult, bool) or not 0 < mult <= 64):
            raise ValueError(f"block_configs[{i}].ffn has no ffn_mult")
        width = 0 if ffn.get("no_op") else int(2 * float(mult or 0) * hidden / 3)
        widths.append(-(-width // 256) * 256)
    return kv, widths


def mlp_layers(c: dict[str, Any], att: Attention) -> int | None:
    """Layers with an MLP where not every layer has one: Nemotron-H's - (MLP) and E (MoE) characters (or its
    layers_block_type mlp / moe entries), none in a
    pure Mamba stack (attention-free, its blocks are mixers only); None: every layer."""
    pattern = c.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return pattern.count("-") + pattern.count("E")
    listed = c.get("layers_block_type")  # Nemotron-3: mamba / attention / mlp / moe, one entry a layer
    if isinstance(listed, list) and {"mlp", "moe"} & {str(t).casefold() for t in listed}:
        return sum(1 for t in listed if str(t).casefold() in ("mlp", "moe"))
    return 0 if att.layers == 0 and as_int(c.get("num_attention_heads")) is None else None


def mamba_field(c: dict[str, Any], fact: str) -> int | None:
    return next((v for k in MAMBA_FIELDS[fact] if (v := as_int(c.get(k))) is not None), None)


def _mamba_need(c: dict[str, Any], fact: str) -> int:
    value = mamba_field(c, fact)
    if value is None:
        raise ValueError(f"{' / '.join(MAMBA_FIELDS[fact])} missing (the Mamba layers' {fact})")
    return value


def state_bytes_of(c: dict[str, Any]) -> int:
    """vLLM keeps Mamba and conv state in the model dtype (MambaStateDtypeCalculator, mamba_cache_dtype
    auto); a float32 checkpoint runs in bfloat16 under dtype auto, so 2 bytes unless the config pins fp32."""
    pinned = str(c.get("mamba_ssm_cache_dtype") or "").lower()
    return 4 if pinned in ("float32", "fp32") else 2


def _mamba_of(kind: LinearKind, c: dict[str, Any], layers: int, source: Source) -> LinearAttention:
    hidden = _need_int(c, "hidden_size")
    d_conv = _mamba_need(c, "d_conv")
    if kind == "short_conv":  # lfm2.py: the conv spans hidden_size channels, conv_L_cache wide
        return LinearAttention(
            kind=kind, layers=layers, num_heads=1, head_k_dim=1, head_v_dim=1, conv_kernel=d_conv,
            inner=hidden, state_bytes=state_bytes_of(c), sources=[source],
        )  # fmt: skip
    d_state = _mamba_need(c, "d_state")
    expand = mamba_field(c, "expand")
    if kind == "mamba1":  # mamba.py: intermediate_size; jamba.py: mamba_expand × hidden_size
        inner = as_int(c.get("mamba_d_inner")) or (
            expand * hidden if expand and "mamba_expand" in c else _need_int(c, "intermediate_size")
        )
        return LinearAttention(
            kind=kind, layers=layers, num_heads=inner, head_k_dim=d_state, head_v_dim=1, conv_kernel=d_conv,
            inner=inner, state_bytes=state_bytes_of(c), sources=[source],
        )  # fmt: skip
    heads = _mamba_need(c, "heads")
    head_dim = _mamba_need(c, "head_dim")
    # falcon_h1.py: mamba_d_ssm, else mamba_expand × hidden; nemotron_h.py: heads × head_dim; mamba2.py and
    # zamba2.py: expand × hidden
    d_ssm = as_int(c.get("mamba_d_ssm"))
    if d_ssm is not None:
        inner = d_ssm
    elif "hybrid_override_pattern" in c or "mamba_num_heads" in c or not expand:
        inner = heads * head_dim
    else:
        inner = expand * hidden
    return LinearAttention(
        kind=kind, layers=layers, num_heads=heads, head_k_dim=d_state, head_v_dim=head_dim, conv_kernel=d_conv,
        inner=inner, groups=mamba_field(c, "groups") or 1, state_bytes=state_bytes_of(c), sources=[source],
    )  # fmt: skip


def attention_free(linear: LinearAttention, source: Source) -> Attention:
    """The attention of a pure Mamba stack: no layer keeps K and V; its SSM heads are what a split shares out."""
    return Attention(
        kind="gqa", num_heads=linear.num_heads, num_kv_heads=linear.num_heads, head_dim=linear.head_v_dim,
        layers=0, sources=[source],
    )  # fmt: skip


def _need_int(c: dict[str, Any], key: str, where: str = "") -> int:
    value = as_int(c.get(key))
    if value is None:
        raise ValueError(f"{where}{key} missing")
    return value


def linear_of(kind: LinearKind, c: dict[str, Any], layers: int, source: Source) -> LinearAttention:
    """The recurrent-state layers' shape, from the fields the kind uses (fixed per kind)."""
    if kind in MAMBA_KINDS:
        return _mamba_of(kind, c, layers, source)
    if kind == "lightning":  # MiniMax: every head keeps a head_dim x head_dim fp32 state
        heads = _need_int(c, "num_attention_heads")
        dim = as_int(c.get("head_dim")) or _need_int(c, "hidden_size") // heads
        return LinearAttention(
            kind=kind, layers=layers, num_heads=heads, head_k_dim=dim, head_v_dim=dim, sources=[source]
        )
    if kind == "gdn":  # a state per value head; the short convolution spans q, k (key heads) and v
        dtype = str(c.get("mamba_ssm_dtype", "float32")).lower()
        return LinearAttention(
            kind=kind,
            layers=layers,
            num_heads=_need_int(c, "linear_num_value_heads"),
            num_k_heads=_need_int(c, "linear_num_key_heads"),
            head_k_dim=_need_int(c, "linear_key_head_dim"),
            head_v_dim=_need_int(c, "linear_value_head_dim"),
            conv_kernel=as_int(c.get("linear_conv_kernel_dim")),
            state_bytes=2 if dtype in ("bfloat16", "float16") else 4,
            sources=[source],
        )
    la = c.get("linear_attn_config")
    if not isinstance(la, dict):
        raise ValueError("linear_attn_config missing (the KDA layers' heads and width)")
    dim = _need_int(la, "head_dim", "linear_attn_config.")
    return LinearAttention(
        kind=kind,
        layers=layers,
        num_heads=_need_int(la, "num_heads", "linear_attn_config."),
        head_k_dim=dim,
        head_v_dim=dim,
        conv_kernel=as_int(la.get("short_conv_kernel_size")),
        sources=[source],
    )


def _dsv4(c: dict[str, Any], heads: int, layers: int, source: Source) -> Attention:
    """DeepSeek-V4: per layer a compress ratio (0: only the sliding window; the smallest ratio, CSA, also
    carries the lightning indexer), one KV head of head_dim, a sliding window on every layer."""
    ratios = c.get("compress_ratios")
    if not isinstance(ratios, list) or len(ratios) < layers:
        raise ValueError("compress_ratios missing or shorter than num_hidden_layers")
    main = [as_int(r) or 0 for r in ratios[:layers]]  # later entries belong to the MTP layers
    groups: dict[int, int] = {}
    for r in main:
        if r > 0:
            groups[r] = groups.get(r, 0) + 1
    if not groups:
        raise ValueError("compress_ratios names no compressed layer")
    plain = sum(1 for r in main if r == 0)
    return Attention(
        kind="dsv4",
        num_heads=heads,
        num_kv_heads=_need_int(c, "num_key_value_heads"),
        head_dim=_need_int(c, "head_dim"),
        qk_rope_head_dim=as_int(c.get("qk_rope_head_dim")),
        sliding_window=_need_int(c, "sliding_window"),
        sliding_window_layers=plain or None,
        compressed=[CompressedLayers(ratio=r, layers=n) for r, n in sorted(groups.items())],
        indexer=Indexer(
            heads=_need_int(c, "index_n_heads"),
            head_dim=_need_int(c, "index_head_dim"),
            topk=_need_int(c, "index_topk"),
            layers=groups[min(groups)],
        ),
        sources=[source],
    )


def attention_of(
    rule: Rule, c: dict[str, Any], layers: int, source: Source, attention_layers: int | None = None
) -> Attention:
    heads = as_int(c.get("num_attention_heads"))
    if heads is None:
        raise ValueError("num_attention_heads missing")
    if rule.attention == "dsv4":
        return _dsv4(c, heads, layers, source)
    if rule.attention == "gqa":
        kv = as_int(c.get("num_key_value_heads")) or heads
        hidden = as_int(c.get("hidden_size")) or 0
        head_dim = as_int(c.get("head_dim")) or hidden // heads
        window = as_int(c.get("sliding_window"))
        layer_types = c.get("layer_types")
        window_layers: int | None = None
        flags = window_pattern(c) if rule.generic else None
        if rule.nope_interval_default is not None:
            window = as_int(c.get("attention_chunk_size"))
            window_layers = layers - nope_count(c, layers, rule.nope_interval_default)
        elif flags is not None:  # MiMo-V2-Flash: 1 marks a window layer; mimo_v2_flash.py's window field
            window = as_int(c.get("sliding_window_size")) or window
            window_layers = sum(flags[:layers]) or None
        elif isinstance(layer_types, list) and "chunked_attention" in layer_types:
            # chunked local attention (Llama 4's RoPE layers, llama4.py ChunkedLocalAttention): a layer keeps
            # at most attention_chunk_size tokens, as a window layer does
            window = as_int(c.get("attention_chunk_size"))
            window_layers = sum(1 for t in layer_types[:layers] if t == "chunked_attention") or None
        elif isinstance(layer_types, list) and layer_types:
            window_layers = sum(1 for t in layer_types if t == "sliding_attention") or None
        elif window and (pattern := as_int(c.get("sliding_window_pattern") or c.get("_sliding_window_pattern"))):
            # Gemma-style: every pattern-th layer attends globally, the others within the window
            window_layers = layers - layers // pattern
        elif window and c.get("use_sliding_window", True):
            # Qwen2-style configs window only the layers from max_window_layers on
            first = as_int(c.get("max_window_layers")) if c.get("use_sliding_window") else None
            window_layers = layers - first if first is not None and first < layers else layers
        v_dim = as_int(c.get("v_head_dim")) if rule.generic else None
        shape = _window_shape(c, heads, kv, head_dim, v_dim or head_dim) if window_layers and rule.generic else {}
        own = _full_shape(c, kv, head_dim) if rule.generic and not shape else {}
        if own:  # the full layers state a shape of their own; the base fields are then the window layers'
            if window_layers:
                base = {"window_num_heads": heads, "window_num_kv_heads": kv, "window_head_dim": head_dim}
                shape = {**base, "window_v_head_dim": v_dim or head_dim}
            kv, head_dim = own.get("num_kv_heads", kv), own.get("head_dim", head_dim)
            v_dim = None
        context = as_int(c.get("max_position_embeddings"))
        if window_layers is None or window is None or (context is not None and window >= context):
            window, window_layers = None, None  # a window as long as the context bounds nothing
            if shape and context is not None:  # the window layers keep their own shape, at most a context long
                window, window_layers = context, sum(flags[:layers]) if flags else _window_count(c, layers)
        return Attention(
            kind="gqa",
            num_heads=heads,
            num_kv_heads=kv,
            head_dim=head_dim,
            v_head_dim=v_dim if v_dim != head_dim else None,
            layers=attention_layers,
            sliding_window=window,
            sliding_window_layers=window_layers,
            sources=[source],
            window_num_heads=shape.get("window_num_heads"),
            window_num_kv_heads=shape.get("window_num_kv_heads"),
            window_head_dim=shape.get("window_head_dim"),
            window_v_head_dim=shape.get("window_v_head_dim"),
        )
    indexer = None
    if rule.attention in ("dsa", "dsa_nope"):
        types = c.get("indexer_types")
        full = sum(1 for t in types if t == "full") if isinstance(types, list) and types else None
        indexer = Indexer(
            heads=as_int(c.get("index_n_heads")) or 0,
            head_dim=as_int(c.get("index_head_dim")) or 0,
            topk=as_int(c.get("index_topk")) or 0,
            layers=full,
            kpool=as_int(c.get("index_kpool")) or 1,  # keys pooled n:1 before they are cached (GLM-5.3-Flash)
        )
    return Attention(
        kind=rule.attention,
        num_heads=heads,
        kv_lora_rank=as_int(c.get("kv_lora_rank")),
        qk_rope_head_dim=as_int(c.get("qk_rope_head_dim")),
        qk_nope_head_dim=as_int(c.get("qk_nope_head_dim")),
        v_head_dim=as_int(c.get("v_head_dim")),
        layers=attention_layers,
        indexer=indexer,
        sources=[source],
    )


def _window_count(c: dict[str, Any], layers: int) -> int | None:
    listed = c.get("layer_types")
    count = sum(1 for t in listed[:layers] if t == "sliding_attention") if isinstance(listed, list) else 0
    return count or None


def _full_shape(c: dict[str, Any], kv: int, head_dim: int) -> dict[str, int]:
    """The full-attention layers' KV heads and width where the config states them apart from the base fields,
    which then are the window layers' (FULL_SHAPE_FIELDS), else none."""
    base = {"num_kv_heads": kv, "head_dim": head_dim}
    stated = {
        name: next((v for k in keys if (v := as_int(c.get(k))) is not None), None) for name, keys in FULL_SHAPE_FIELDS
    }
    return {name: v for name, v in stated.items() if v is not None and v != base[name]}


def _window_shape(c: dict[str, Any], heads: int, kv: int, k_dim: int, v_dim: int) -> dict[str, int]:
    """The window layers' heads and widths where the config states a shape apart from the full layers' (swa_*
    fields, as vLLM's mimo_v2_flash.py reads them; swa_v_head_dim defaults to swa_head_dim), else none."""
    stated = {
        name: next((v for k in keys if (v := as_int(c.get(k))) is not None), None) for name, keys in WINDOW_SHAPE_FIELDS
    }
    k_window = stated["window_head_dim"] or k_dim
    v_window = stated["window_v_head_dim"] or (k_window if stated["window_head_dim"] else v_dim)
    full = {"window_num_heads": heads, "window_num_kv_heads": kv, "window_head_dim": k_dim, "window_v_head_dim": v_dim}
    shape = {
        "window_num_heads": stated["window_num_heads"] or heads,
        "window_num_kv_heads": stated["window_num_kv_heads"] or kv,
        "window_head_dim": k_window,
        "window_v_head_dim": v_window,
    }
    return {} if shape == full else shape


def nope_count(c: dict[str, Any], layers: int, interval: int) -> int:
    """How many layers go without RoPE: the 0s of no_rope_layers, else every interval-th layer (a closed
    form, never a loop over the layer count)."""
    listed = c.get("no_rope_layers")
    if isinstance(listed, list) and listed:
        return sum(1 for v in listed[:layers] if v == 0)
    every = as_int(c.get("no_rope_layer_interval")) or interval
    return layers // every if every > 0 else 0


def per_layer(value: Any) -> int | None:
    """A count, or a per-layer list of one count (Hunyuan's moe_topk, num_shared_expert and
    moe_intermediate_size list one value per layer; its modeling code reads entry layer_id): that count."""
    if isinstance(value, list) and value:
        counts = {as_int(v) for v in value}
        return counts.pop() if len(counts) == 1 else None
    return as_int(value)


def moe_of(rule: Rule, c: dict[str, Any], layers: int) -> Moe | None:
    experts = as_int(c.get("n_routed_experts")) or as_int(c.get("num_experts")) or as_int(c.get("num_local_experts"))
    if not experts:
        return None
    shared = as_int(c.get("n_shared_experts"))
    if shared is None:
        shared = per_layer(c.get("num_shared_experts", c.get("num_shared_expert")))
    if shared is None:
        shared = 1 if (as_int(c.get("shared_expert_intermediate_size")) or 0) > 0 else 0
    if rule.shared_experts is not None:
        shared = rule.shared_experts
    only = c.get("mlp_only_layers")
    dense = as_int(c.get("first_k_dense_replace")) or (len(only) if isinstance(only, list) else 0)
    step = as_int(c.get(rule.moe_every_field)) if rule.moe_every_field else None
    if step:
        dense = layers - layers // step
    freq = c.get("moe_layer_freq")
    if isinstance(freq, list) and freq:  # one flag a layer (mimo_v2_flash.py is_moe_layer): 0 keeps a dense MLP
        dense = sum(1 for v in freq[:layers] if not v) + max(0, layers - len(freq))
    pattern = c.get("hybrid_override_pattern")
    if isinstance(pattern, str) and "E" in pattern:  # Nemotron-H: only the E layers route to experts
        dense = layers - pattern[:layers].count("E")
    return Moe(
        experts=experts,
        top_k=as_int(c.get("num_experts_per_tok"))
        or as_int(c.get("experts_per_token"))
        or as_int(c.get("num_experts_per_token"))
        or as_int(c.get("top_k_experts"))  # Gemma 4 (vLLM gemma4.py: config.top_k_experts)
        or per_layer(c.get("moe_topk"))
        or 1,
        shared_experts=shared,
        moe_intermediate=per_layer(c.get("moe_intermediate_size")) or as_int(c.get("intermediate_size")),
        dense_layers=dense,
        expert_hidden=as_int(c.get("routed_expert_hidden_size")) or as_int(c.get("moe_latent_size")),
    )


def _state_shape(linear: LinearAttention) -> str:
    if linear.kind == "short_conv":
        return f"the last {(linear.conv_kernel or 1) - 1} inputs of {linear.inner} channels"
    if linear.kind == "mamba1":
        return f"{linear.inner} channels × d_state {linear.head_k_dim}, conv {linear.conv_kernel}"
    if linear.kind == "mamba2":
        return (
            f"{linear.num_heads} heads of {linear.head_v_dim}×{linear.head_k_dim}, {linear.groups} group(s), "
            f"conv {linear.conv_kernel}"
        )
    return f"{linear.num_heads} heads of {linear.head_k_dim}×{linear.head_v_dim}"


def needs_of(rule: Rule | None, att: Attention, linear: LinearAttention | None = None) -> list[Need]:
    needs = _attention_needs(att) if att.layers != 0 else []  # a pure Mamba stack has no attention layer
    if linear is not None:
        origin = "" if linear.kind in MAMBA_KINDS else ", config.json"  # Mamba kinds come from GGUF headers too
        needs.append(
            Need(
                op=LINEAR_OPS[linear.kind],
                why=f"{linear.layers} {LINEAR_NAMES[linear.kind]} layers keep a recurrent state per request "
                f"({_state_shape(linear)}{origin}) instead of a KV cache",
            )
        )
    return needs + [Need(op=e.op, why=e.why) for e in (rule.extra_needs if rule else [])]


def _gqa_need(att: Attention, heads: int, kv: int, k_dim: int, v_dim: int, which: str) -> Need:
    width = f"width {k_dim}" if k_dim == v_dim else f"K width {k_dim} and V width {v_dim}"
    return Need(
        op="attention.gqa",
        head_size=k_dim,
        head_size_v=v_dim if v_dim != k_dim else None,
        why=f"{which}grouped-query attention: {heads} query heads over {kv} KV heads of {width} (config.json)",
    )


def _attention_needs(att: Attention) -> list[Need]:
    if att.kind == "dsv4":
        assert att.indexer is not None and att.compressed is not None
        ratios = "/".join(str(g.ratio) for g in att.compressed)
        return [
            Need(
                op="attention.dsv4",
                head_size=att.head_dim,
                why=f"DeepSeek-V4 compressed attention (ratios {ratios} plus a {att.sliding_window}-token window) "
                f"on {att.num_kv_heads} KV head(s) of width {att.head_dim} (config.json)",
            ),
            Need(
                op="indexer.dsa",
                index_topk=att.indexer.topk,
                why=f"the lightning indexer picks the top {att.indexer.topk} compressed entries",
            ),
        ]
    if att.kind == "gqa":
        needs = [_gqa_need(att, att.num_heads, *att.kv_shape(), "")]
        if att.window_head_dim is not None and att.kv_shape(window=True)[1:] != att.kv_shape()[1:]:
            shape = att.kv_shape(window=True)
            needs.append(_gqa_need(att, att.window_num_heads or att.num_heads, *shape, "window layers: "))
    else:
        width = (att.kv_lora_rank or 0) + (att.qk_rope_head_dim or 0)
        ops: dict[str, KernelOp] = {"mla": "attention.mla", "dsa": "attention.sparse_mla"}
        op = ops.get(att.kind, "attention.sparse_mla_nope")
        topk = att.indexer.topk if att.indexer else None
        needs = [
            Need(
                op=op,
                head_size=width,
                qk_nope_head_dim=att.qk_nope_head_dim,
                index_topk=topk,
                why=f"{'DSA sparse ' if topk else ''}multi-head latent attention over a {width}-wide latent cache "
                f"(kv_lora_rank {att.kv_lora_rank} + qk_rope_head_dim {att.qk_rope_head_dim}, config.json)"
                + (", without RoPE" if att.kind == "dsa_nope" else ""),
            )
        ]
        if topk:
            pooled = f" of the {att.indexer.kpool}:1-pooled keys" if att.indexer and att.indexer.kpool > 1 else ""
            needs.append(
                Need(
                    op="indexer.dsa",
                    index_topk=topk,
                    why=f"the DSA lightning indexer picks the top {topk}{pooled} tokens",
                )
            )
    return needs


def observed(config: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Layout facts config.json states, for any class (also ones without a rule): shown, not planned with."""
    if config is None:
        return []
    c = text_config(config)
    out: list[tuple[str, str]] = []
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim"):
        if as_int(c.get(key)) is not None:
            out.append((key, str(c[key])))
    mla = as_int(c.get("kv_lora_rank")) is not None
    for key in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "q_lora_rank"):
        if as_int(c.get(key)) is not None:
            out.append((f"MLA {key}" if mla else key, str(c[key])))
    for key in ("index_n_heads", "index_head_dim", "index_topk"):
        if as_int(c.get(key)) is not None:
            out.append((f"DSA indexer {key}", str(c[key])))
    types = c.get("layer_types") or c.get("layers_block_type")
    if isinstance(types, list) and types:
        counts: dict[str, int] = {}
        for t in types:
            name = t[:40] if isinstance(t, str) else type(t).__name__
            counts[name] = counts.get(name, 0) + 1
        shown = list(counts.items())[:8]
        more = f", … {len(counts) - 8} more" if len(counts) > 8 else ""
        out.append(("layer types", ", ".join(f"{n}× {t}" for t, n in shown) + more))
        linear = sum(n for t, n in counts.items() if "linear" in t or t in ("mamba", "kda", "gdn"))
        if linear:
            out.append(("linear-attention layers", f"{linear} of {len(types)}"))
    if as_int(c.get("sliding_window")) and c.get("use_sliding_window", True) is not False:
        out.append(("sliding window", f"{c['sliding_window']} tokens"))
    pattern = as_int(c.get("sliding_window_pattern") or c.get("_sliding_window_pattern"))
    if pattern and not types:
        out.append(("sliding_window_pattern", f"{pattern} (every {pattern}th layer attends globally)"))
    if as_int(c.get("attention_chunk_size")):
        out.append(("chunked attention", f"{c['attention_chunk_size']} tokens"))
    nope = c.get("no_rope_layers")
    if isinstance(nope, list) and nope:
        out.append(("NoPE layers", f"{sum(1 for v in nope if v == 0)} of {len(nope)} (no_rope_layers)"))
    listed = c.get("attn_type_list")
    if isinstance(listed, list) and listed:
        out.append(("attn_type_list", f"{listed.count(0)}× linear (0), {listed.count(1)}× softmax (1)"))
    ratios = c.get("compress_ratios")
    if isinstance(ratios, list) and ratios:
        counts = {}
        for r in ratios:  # one pass: a list of a million distinct entries stays linear
            name = str(r)[:20] if isinstance(r, int | float | str) else type(r).__name__
            counts[name] = counts.get(name, 0) + 1
        out.append(("compress_ratios", ", ".join(f"{n}× {r}" for r, n in counts.items())))
    if as_int(c.get("index_kpool")):
        out.append(("DSA indexer index_kpool", str(c["index_kpool"])))
    for key in ("linear_attn_config", "linear_conv_kernel_dim", "linear_num_value_heads", "full_attention_interval"):
        if key in c:
            out.append((key, str(c[key])[:120]))
    return out
