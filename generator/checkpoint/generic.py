"""The generic layout rule: for a class without its own rule in data/architectures.yaml, the layout kind
follows from the config.json fields the engines themselves read (vLLM's ModelConfig: num_attention_heads,
num_key_value_heads, head_dim or hidden_size / heads, kv_lora_rank for MLA; layer_types and the linear_* /
linear_attn_config / attn_type_list fields for hybrids; the Mamba / short-conv fields vLLM's Mamba classes read).
The result is a Rule marked generic, so the output says "derived by the generic <kind> rule". A field set no
kind covers (RWKV-style recurrences) is named, not guessed.
"""

from __future__ import annotations

from typing import Any

from ..catalog.schema import Source
from ..catalog.schema.model import MAMBA_KINDS
from .architectures import Rule
from .configfields import as_int

VLLM_MODEL_CONFIG = Source(
    url="https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/transformers_utils/model_arch_config_convertor.py",
    note="ModelArchConfigConvertorBase: the fields vLLM reads from any config.json: get_head_size (kv_lora_rank + "
    "qk_rope_head_dim for MLA, else head_dim, else hidden_size_per_head, else hidden_size // heads); "
    "get_total_num_kv_heads (CONFIG_FIELD_ALIASES in vllm/transformers_utils/config.py: n_head_kv, num_kv_heads, "
    "num_key_value_heads, multi_query_group_num, num_attention_groups, else the heads; Falcon's multi_query "
    "without new_decoder_architecture: 1); derive_max_model_len_and_key (the smallest of max_position_embeddings, "
    "n_positions, max_seq_len, seq_length, model_max_length, max_target_positions, max_sequence_length, "
    "max_seq_length, seq_len; model_max_length wins where set; vllm/config/model.py assumes 2048 when none is)",
)

VLLM_MAMBA_STATE = Source(
    url="https://github.com/vllm-project/vllm/blob/02d710837549a368073552333f66d714477415d2/vllm/model_executor/layers/mamba/mamba_utils.py",
    note="MambaStateShapeCalculator: per layer and request, mamba1 conv (intermediate/tp)×(d_conv-1) and ssm "
    "(intermediate/tp)×d_state; mamba2 conv ((intermediate + 2·n_groups·d_state)/tp)×(d_conv-1), n_groups "
    "raised to tp where tp does not divide it, ssm (heads/tp)×head_dim×d_state; short conv (hidden/tp)×"
    "(L_cache-1); MambaStateDtypeCalculator keeps both in the model dtype (mamba_cache_dtype auto)",
)

# the older names transformers' attribute_map (GPT-2, GPT-J, Bloom, Falcon, MPT) and the remote-code configs
# vLLM re-declares (ChatGLM: num_layers, padded_vocab_size, ffn_hidden_size) give the same fields
ALIASES: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("n_layer", "num_layers", "n_layers"),
    "num_attention_heads": ("n_head", "n_heads"),
    "hidden_size": ("n_embd", "n_embed", "d_model"),
    "intermediate_size": ("n_inner", "ffn_dim", "ffn_hidden_size"),
    "vocab_size": ("padded_vocab_size",),
    "head_dim": ("hidden_size_per_head", "attention_head_dim"),  # Zamba2: attention_head_dim
    # LongCat-Flash (LongcatFlashConfig's attribute_map; vLLM's longcat_flash.py reads moe_intermediate_size)
    "moe_intermediate_size": ("expert_ffn_hidden_size",),
}
NESTED_FIELDS: dict[str, dict[str, str]] = {
    "attn_config": {"kv_n_heads": "num_key_value_heads"},
    "ffn_config": {
        "moe_num_experts": "num_local_experts",
        "moe_top_k": "num_experts_per_tok",
        "ffn_hidden_size": "moe_intermediate_size",
    },
}
# vLLM's derive_max_model_len_and_key takes the smallest of these (model_max_length wins where set)
CONTEXT_KEYS = (
    "max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
    "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
)  # fmt: skip
# a DeepSeek language config with use_mla false is served with plain multi-head attention: vLLM's
# deepseek_vl2.py and deepseek_ocr.py then load DeepseekForCausalLM, which reads none of these
MLA_FIELDS = ("kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
KV_HEAD_KEYS = ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", "num_attention_groups")
VLLM_DEFAULT_CONTEXT = 2048
# MLPs with a gate (SwiGLU / GeGLU: gate, up and down matrices): silu activations, Gemma's GeGLU
# (GemmaMLP) and ChatGLM's SwiGLU (GLMMLP: dense_h_to_4h is 2 × ffn_hidden_size); gelu / relu MLPs
# (GPT-2, GPT-J, OPT, Bloom, Falcon, GPT-NeoX, StarCoder2, Phi) have up and down only, 4 × hidden wide
# unless the config says otherwise
GATED_ACTIVATIONS = ("silu", "swish", "swiglu", "geglu")
GATED_MODEL_TYPES = ("gemma", "chatglm", "qwen", "dbrx")
# Qwen (v1, QWenLMHeadModel) states intermediate_size as w1 and w2 together: each is half of it wide
# (vLLM's and SGLang's qwen.py build QWenMLP(hidden_size, config.intermediate_size // 2))
HALF_WIDTH_MLP_MODEL_TYPES = ("qwen",)


def field_names(key: str) -> str:
    """A field and the older names that stand for it, for a message that says which one is missing."""
    names = ALIASES.get(key, ())
    return f"{key} (nor {' / '.join(names)})" if names else key


def mlp_matrices(c: dict[str, Any]) -> int:
    """3 for a gated MLP, 2 for a plain up/down one (from the activation the config names)."""
    act = str(c.get("hidden_act") or c.get("hidden_activation") or c.get("activation_function") or "").casefold()
    model_type = str(c.get("model_type") or "").casefold()
    gated = c.get("block_use_swiglu") is True  # LFM2 names no activation; its blocks are SwiGLU
    if gated or any(g in act for g in GATED_ACTIVATIONS) or model_type.startswith(GATED_MODEL_TYPES):
        return 3
    return 2


def lfm2_ff_dim(c: dict[str, Any], ff: int) -> int:
    """LFM2's MLP width as vLLM's Lfm2MLP sizes it from block_ff_dim: with block_auto_adjust_ff_dim, 2/3 of it,
    times block_ffn_dim_multiplier, rounded up to block_multiple_of."""
    if not c.get("block_auto_adjust_ff_dim"):
        return ff
    ff = int(2 * ff / 3)
    multiplier = c.get("block_ffn_dim_multiplier")
    if isinstance(multiplier, int | float) and not isinstance(multiplier, bool) and 0 < multiplier <= 64:
        ff = int(multiplier * ff)
    step = as_int(c.get("block_multiple_of")) or 1
    return step * ((ff + step - 1) // step)


def written_by_transformers5(c: dict[str, Any]) -> dict[str, Any]:
    """The config with the fields the rules read, where transformers 5 writes them another way: a hybrid's layer
    count only as the length of its per-layer list (NemotronHConfig keeps layers_block_type and drops
    num_hidden_layers), and KDA's heads and width as flat linear_* fields (KimiLinearConfig, Glm5NextTextConfig:
    linear_num_heads, linear_head_dim, linear_conv_kernel_dim) where the remote-code configs vLLM's
    kimi_linear.py reads nest them in linear_attn_config."""
    out = dict(c)
    listed = next((out[k] for k in ("layers_block_type", "layer_types") if isinstance(out.get(k), list)), None)
    if as_int(out.get("num_hidden_layers")) is None and listed:
        out["num_hidden_layers"] = len(listed)
    flat = {"num_heads": out.get("linear_num_heads"), "head_dim": out.get("linear_head_dim")}
    # gated DeltaNet states key and value heads apart (linear_num_value_heads): not these
    kda = all(as_int(v) for v in flat.values()) and "linear_num_value_heads" not in out
    if kda and not isinstance(out.get("linear_attn_config"), dict):
        kernel = {"short_conv_kernel_size": out["linear_conv_kernel_dim"]} if "linear_conv_kernel_dim" in out else {}
        out["linear_attn_config"] = flat | kernel
    return out


def served_context(c: dict[str, Any]) -> int:
    """The context length vLLM derives from a config of any class: model_max_length where set, else the smallest
    length field it knows (CONTEXT_KEYS), else its 2048."""
    lengths = [n for k in CONTEXT_KEYS if (n := as_int(c.get(k))) is not None]
    return as_int(c.get("model_max_length")) or (min(lengths) if lengths else VLLM_DEFAULT_CONTEXT)


def generic_fields(c: dict[str, Any]) -> dict[str, Any]:
    """The config with the fields the generic rule reads under their usual names, filled from the names
    older classes use (as transformers' attribute_map and vLLM map them); the context length and the KV heads
    are the ones vLLM derives (the smallest stated length; the first KV-head field it knows)."""
    out = dict(c)
    # DBRX nests its attention and expert fields (DbrxConfig's attn_config / ffn_config; vLLM's
    # DbrxModelArchConfigConvertor reads attn_config.kv_n_heads, dbrx.py the ffn_config expert fields)
    for nested, fields in NESTED_FIELDS.items():
        inner = out.get(nested)
        if isinstance(inner, dict):
            for name, key in fields.items():
                if out.get(key) is None and inner.get(name) is not None:
                    out[key] = inner[name]
    for key, names in ALIASES.items():
        if out.get(key) is None:
            found = next((out[n] for n in names if out.get(n) is not None), None)
            if found is not None:
                out[key] = found
    if out.get("max_position_embeddings") is None or as_int(out["max_position_embeddings"]) is not None:
        out["max_position_embeddings"] = served_context(out)  # a value that is no count stays, for the bounds
    if out.get("multi_query") is True and not out.get("new_decoder_architecture"):
        out["num_key_value_heads"] = 1  # Falcon's multi-query attention: one KV head
    elif out.get("multi_query_attention") is False:
        out["num_key_value_heads"] = None  # ChatGLM without MQA (vllm chatglm.py): a KV head per query head
    else:
        out["num_key_value_heads"] = next((out[k] for k in KV_HEAD_KEYS if out.get(k)), None)
    ff = as_int(out.get("block_ff_dim"))
    if out.get("intermediate_size") is None and ff is not None:
        out["intermediate_size"] = lfm2_ff_dim(out, ff)
    if out.get("intermediate_size") is None and mlp_matrices(out) == 2 and out.get("hidden_size") is not None:
        hidden = as_int(out["hidden_size"])
        ratio = as_int(out.get("expansion_ratio")) or 4  # MPT states the width as a multiple of d_model
        if hidden is not None:
            out["intermediate_size"] = ratio * hidden  # GPT-2 / GPT-J n_inner null, Bloom, Falcon: 4 × hidden
    width = as_int(out.get("intermediate_size"))
    if str(out.get("model_type") or "") in HALF_WIDTH_MLP_MODEL_TYPES and width is not None:
        out["intermediate_size"] = width // 2
    if out.get("use_mla") is False:
        for key in MLA_FIELDS:  # DeepSeek-VL2 / OCR language configs state them, zero or null, beside use_mla false
            out.pop(key, None)
    out.setdefault("tie_word_embeddings", True)  # PretrainedConfig's default, which vLLM reads too
    return out


# config fields that announce state-space (Mamba) layers, and layer types no kind covers (RWKV-style
# recurrences), which are named, not guessed
SSM_FIELDS = ("mamba_d_state", "ssm_state_size", "mamba_expand", "hybrid_override_pattern", "mamba_n_heads")
UNMODELLED_TYPES = {"recurrent", "rwkv"}


# fields that give some layers another shape than the rest (per-layer-type heads, windows or patterns the
# generic rule does not read): such a class needs its own rule, and the field is named. The window layers'
# own shape (swa_* beside hybrid_layer_pattern or layer_types) is read: unread_fields below.
UNREAD_LAYOUT_FIELDS = (
    "global_attn_every_n_layers",
    "attention_layers",
    "layers_num_heads",
    "compress_ratios",
    "attention_chunk_size",
    "index_kpool",
)


VLLM_MIMO_V2 = Source(
    url="https://github.com/vllm-project/vllm/blob/01ed47b4166b26251895a9c298352fcdb2385149/vllm/model_executor/models/mimo_v2_flash.py",
    note="MiMoV2FlashDecoderLayer: a layer whose hybrid_layer_pattern entry is 1 attends within "
    "sliding_window_size with swa_num_attention_heads, swa_num_key_value_heads, swa_head_dim and swa_v_head_dim "
    "(default swa_head_dim), the others with num_attention_heads, num_key_value_heads, head_dim and v_head_dim "
    "(default head_dim); MiMoV2Attention caches K of head_dim and V of v_head_dim per KV head (QKVParallelLinear "
    "with v_head_size, o_proj heads × v_head_dim wide) and, where V is narrower than K, passes "
    "FlashAttentionDiffKVBackend itself; moe_layer_freq lists per layer whether it routes to experts",
)
# the window layers' own shape: (the Attention field, the config fields that state it, first found wins)
WINDOW_SHAPE_FIELDS = (
    ("window_num_heads", ("swa_num_attention_heads",)),
    ("window_num_kv_heads", ("swa_num_key_value_heads",)),
    ("window_head_dim", ("swa_head_dim",)),
    ("window_v_head_dim", ("swa_v_head_dim",)),
)
# the full-attention layers' own shape where the window layers keep the base fields (Gemma 4: its
# Gemma4TextConfig gives a full_attention layer global_head_dim and num_global_key_value_heads, which vLLM's
# gemma4.py reads per layer through per_layer_config): (the full layers' Attention field, the config fields)
FULL_SHAPE_FIELDS = (
    ("num_kv_heads", ("num_global_key_value_heads",)),
    ("head_dim", ("global_head_dim",)),
)


def window_pattern(c: dict[str, Any]) -> list[int] | None:
    """hybrid_layer_pattern as MiMo-V2-Flash writes it (one 0 or 1 a layer; 1: a sliding-window layer), else
    None: another spelling is named as unread rather than guessed."""
    pattern = c.get("hybrid_layer_pattern")
    if isinstance(pattern, list) and pattern and all(v in (0, 1) and not isinstance(v, bool) for v in pattern):
        return [int(v) for v in pattern]
    return None


# layer_types entries that say a layer's attention in full (transformers 5 names chunked layers too): with
# them the fields that would say the same as a rule (every n-th layer global, a chunk size) are read through
# the list, not apart from it
STATED_TYPES = {"full_attention", "sliding_attention", "chunked_attention"}
STATED_BY_TYPES = {"global_attn_every_n_layers", "attention_chunk_size"}


def unread_fields(c: dict[str, Any]) -> list[str]:
    """The per-layer layout fields of a config that the generic rule cannot read."""
    unread = [f for f in UNREAD_LAYOUT_FIELDS if f in c]
    types = c.get("layer_types")
    if isinstance(types, list) and types and {str(t) for t in types} <= STATED_TYPES:
        unread = [f for f in unread if f not in STATED_BY_TYPES]
    windowed = window_pattern(c) is not None or "sliding_attention" in _layer_types(c)
    if "hybrid_layer_pattern" in c and window_pattern(c) is None:
        unread.insert(0, "hybrid_layer_pattern")
    if not windowed:  # a window shape with no layers named as window layers is not read
        unread[:0] = [f for _, names in WINDOW_SHAPE_FIELDS for f in names if f in c]
    window = c.get("sliding_window_size", c.get("sliding_window"))
    if window_pattern(c) is not None and c.get("attention_chunk_size") == window and "attention_chunk_size" in unread:
        unread.remove("attention_chunk_size")  # MiMo-V2-Flash repeats its window there; mimo_v2_flash.py reads none
    return unread


def _layer_types(c: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for key in ("layer_types", "layers_block_type", "layer_type_list"):
        value = c.get(key)
        if isinstance(value, list):
            found |= {str(v).casefold() for v in value}
    return found


def recurrent_problem(c: dict[str, Any]) -> str | None:
    """Why the generic rule cannot lay out a hybrid with recurrent layers no kind covers, naming the field."""
    types = sorted(_layer_types(c) & UNMODELLED_TYPES)
    if not types:
        return None
    said = ", ".join(f"layer type {t!r}" for t in types)
    return f"config.json has recurrent layers ({said}); recipegen does not model their state yet"


def state_space_kind(c: dict[str, Any]) -> str | None:
    """The Mamba / short-conv kind a config's own fields announce: LFM2's conv_L_cache (short_conv); Mamba-2
    heads or groups (n_groups, mamba_n_heads, mamba_num_heads, n_mamba_heads, num_heads beside a state size);
    else a state size alone (Mamba-1: state_size, mamba_d_state)."""
    if "conv_L_cache" in c or {"conv", "short_conv"} & _layer_types(c):
        return "short_conv"
    state = any(k in c for k in ("state_size", "mamba_d_state", "ssm_state_size"))
    if not state and not any(f in c for f in SSM_FIELDS):
        return None
    mamba2 = ("mamba_n_groups", "n_groups", "mamba_ngroups", "mamba_n_heads", "mamba_num_heads", "n_mamba_heads")
    if any(k in c for k in mamba2) or (state and "num_heads" in c and "num_attention_heads" not in c):
        return "mamba2"
    return "mamba1"


def generic_rule(arch: str, c: dict[str, Any]) -> Rule | str:
    """The generic rule for `arch` from the config's own fields, or why there is none."""
    problem = recurrent_problem(c)
    if problem is not None:
        return problem
    if c.get("is_encoder_decoder") is True and "num_attention_heads" not in c:
        # Whisper, BART / mBART (encoder_layers, decoder_layers, d_model): vLLM serves them as encoder-decoder
        # models whose decoder also caches the encoder's keys (cross-attention); recipegen sizes decoder-only stacks
        stated = ", ".join(f"{k} {c[k]}" for k in ("encoder_layers", "decoder_layers") if k in c)
        return f"config.json describes an encoder-decoder model ({stated or 'is_encoder_decoder'}): recipegen " + (
            "lays out decoder-only language models"
        )
    unread = unread_fields(c)
    if unread:
        return f"config.json has {', '.join(unread)}, a per-layer layout the generic rule does not read"
    linear: str | None = state_space_kind(c)
    if "num_attention_heads" not in c and linear not in ("mamba1", "mamba2"):
        return f"config.json has no {field_names('num_attention_heads')}: the attention layout is not stated"
    if linear is None and "linear_num_value_heads" in c:
        linear = "gdn"
    elif linear is None and isinstance(c.get("linear_attn_config"), dict):
        linear = "kda"
    elif linear is None and isinstance(c.get("attn_type_list"), list):
        linear = "lightning"
    attention = "gqa"
    if c.get("kv_lora_rank") is not None:
        attention = "dsa" if c.get("index_topk") is not None else "mla"
    moe_every = next(
        (k for k in ("decoder_sparse_step", "interleave_moe_layer_step", "expert_layer_period") if k in c), None
    )
    return Rule(
        architecture=arch,
        attention=attention,
        linear_attention=linear,
        moe_every_field=moe_every,
        attention_free=linear in ("mamba1", "mamba2") and "num_attention_heads" not in c,
        generic=True,
        sources=[
            VLLM_MODEL_CONFIG,
            *([VLLM_MAMBA_STATE] if linear in MAMBA_KINDS else []),
            *([VLLM_MIMO_V2] if window_pattern(c) is not None or ("v_head_dim" in c and attention == "gqa") else []),
        ],
    )


def kind_label(rule: Rule) -> str:
    kind = {"gqa": "GQA/MHA/MQA", "mla": "MLA", "dsa": "DSA"}.get(rule.attention, rule.attention)
    if rule.attention_free:
        return f"{rule.linear_attention} (no attention)"
    return f"{kind} + {rule.linear_attention}" if rule.linear_attention else kind
