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

VLLM_MODEL_CONFIG = Source(
    url="https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py",
    note="ModelConfig.get_head_size / get_total_num_kv_heads / is_deepseek_mla: the fields vLLM reads from any "
    "config.json (head_dim else hidden_size // num_attention_heads; num_key_value_heads else the heads; "
    "kv_lora_rank + qk_rope_head_dim for MLA)",
)

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
        return "config.json has no num_attention_heads: the attention layout is not stated"
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
