"""The generic layout rule: for a class without its own rule in data/architectures.yaml, the layout kind
follows from the config.json fields the engines themselves read (vLLM's ModelConfig: num_attention_heads,
num_key_value_heads, head_dim or hidden_size / heads, kv_lora_rank for MLA; layer_types and the linear_* /
linear_attn_config / attn_type_list fields for hybrids). The result is a Rule marked generic, so the output
says "derived by the generic <kind> rule". A field set no kind covers (Mamba/SSM layers) is named, not guessed.
"""

from __future__ import annotations

from typing import Any

from ..catalog.schema import Source
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

# the older names transformers' attribute_map (GPT-2, GPT-J, Bloom, Falcon, MPT) and the remote-code configs
# vLLM re-declares (ChatGLM: num_layers, padded_vocab_size, ffn_hidden_size) give the same fields
ALIASES: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("n_layer", "num_layers", "n_layers"),
    "num_attention_heads": ("n_head", "n_heads"),
    "hidden_size": ("n_embd", "n_embed", "d_model"),
    "intermediate_size": ("n_inner", "ffn_dim", "ffn_hidden_size"),
    "vocab_size": ("padded_vocab_size",),
    "head_dim": ("hidden_size_per_head",),
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
    if any(g in act for g in GATED_ACTIVATIONS) or model_type.startswith(GATED_MODEL_TYPES):
        return 3
    return 2


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
    lengths = [n for k in CONTEXT_KEYS if (n := as_int(out.get(k))) is not None]
    if out.get("max_position_embeddings") is None or as_int(out["max_position_embeddings"]) is not None:
        cohere = as_int(out.get("model_max_length"))  # a value that is no count stays, for the bounds to name
        out["max_position_embeddings"] = cohere or (min(lengths) if lengths else VLLM_DEFAULT_CONTEXT)
    if out.get("multi_query") is True and not out.get("new_decoder_architecture"):
        out["num_key_value_heads"] = 1  # Falcon's multi-query attention: one KV head
    elif out.get("multi_query_attention") is False:
        out["num_key_value_heads"] = None  # ChatGLM without MQA (vllm chatglm.py): a KV head per query head
    else:
        out["num_key_value_heads"] = next((out[k] for k in KV_HEAD_KEYS if out.get(k)), None)
    if out.get("intermediate_size") is None and mlp_matrices(out) == 2 and out.get("hidden_size") is not None:
        hidden = as_int(out["hidden_size"])
        ratio = as_int(out.get("expansion_ratio")) or 4  # MPT states the width as a multiple of d_model
        if hidden is not None:
            out["intermediate_size"] = ratio * hidden  # GPT-2 / GPT-J n_inner null, Bloom, Falcon: 4 × hidden
    width = as_int(out.get("intermediate_size"))
    if str(out.get("model_type") or "") in HALF_WIDTH_MLP_MODEL_TYPES and width is not None:
        out["intermediate_size"] = width // 2
    out.setdefault("tie_word_embeddings", True)  # PretrainedConfig's default, which vLLM reads too
    return out


# config fields that announce recurrent (Mamba / SSM) layers, whose state recipegen does not model yet
SSM_FIELDS = ("mamba_d_state", "ssm_state_size", "mamba_expand", "hybrid_override_pattern", "mamba_n_heads")
SSM_TYPES = {"mamba", "mamba2", "ssm", "conv", "short_conv", "recurrent", "rwkv"}


# fields that give some layers another shape than the rest (per-layer-type heads, windows or patterns the
# generic rule does not read): such a class needs its own rule, and the field is named
UNREAD_LAYOUT_FIELDS = (
    "hybrid_layer_pattern",
    "swa_num_key_value_heads",
    "swa_head_dim",
    "swa_num_attention_heads",
    "global_attn_every_n_layers",
    "attention_layers",
    "block_configs",
    "layers_num_heads",
    "compress_ratios",
    "attention_chunk_size",
    "index_kpool",
)


def _layer_types(c: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for key in ("layer_types", "layers_block_type", "layer_type_list"):
        value = c.get(key)
        if isinstance(value, list):
            found |= {str(v).casefold() for v in value}
    return found


def recurrent_problem(c: dict[str, Any]) -> str | None:
    """Why the generic rule cannot lay out a hybrid with recurrent (Mamba/SSM/conv) layers, naming the field."""
    fields = [f for f in SSM_FIELDS if f in c]
    types = sorted(_layer_types(c) & SSM_TYPES)
    if not fields and not types:
        return None
    said = ", ".join([*fields, *(f"layer type {t!r}" for t in types)])
    return f"config.json has recurrent (Mamba/SSM) layers ({said}); recipegen does not model their state yet"


def generic_rule(arch: str, c: dict[str, Any]) -> Rule | str:
    """The generic rule for `arch` from the config's own fields, or why there is none."""
    problem = recurrent_problem(c)
    if problem is not None:
        return problem
    unread = [f for f in UNREAD_LAYOUT_FIELDS if f in c]
    if unread:
        return f"config.json has {', '.join(unread)}, a per-layer layout the generic rule does not read"
    if c.get("kv_lora_rank") is None and c.get("v_head_dim") not in (None, c.get("head_dim")):
        return "config.json gives v_head_dim apart from head_dim without MLA, a layout the generic rule does not read"
    if "num_attention_heads" not in c:
        return f"config.json has no {field_names('num_attention_heads')}: the attention layout is not stated"
    linear: str | None = None
    if "linear_num_value_heads" in c:
        linear = "gdn"
    elif isinstance(c.get("linear_attn_config"), dict):
        linear = "kda"
    elif isinstance(c.get("attn_type_list"), list):
        linear = "lightning"
    attention = "gqa"
    if c.get("kv_lora_rank") is not None:
        attention = "dsa" if c.get("index_topk") is not None else "mla"
    moe_every = next((k for k in ("decoder_sparse_step", "interleave_moe_layer_step") if k in c), None)
    return Rule(
        architecture=arch,
        attention=attention,
        linear_attention=linear,
        moe_every_field=moe_every,
        generic=True,
        sources=[VLLM_MODEL_CONFIG],
    )


def kind_label(rule: Rule) -> str:
    kind = {"gqa": "GQA/MHA/MQA", "mla": "MLA", "dsa": "DSA"}.get(rule.attention, rule.attention)
    return f"{kind} + {rule.linear_attention}" if rule.linear_attention else kind
