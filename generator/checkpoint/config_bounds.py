"""config.json's numbers bounded where they enter, and a derived model held to the catalog's own schema.

A checkpoint's config.json is untrusted input: a layer count of 10^15 must not reach a per-layer loop, a
width of 10^300 must not reach float arithmetic, a NaN or a negative head count must not reach a plan. Each
dimension field a rule reads is checked against the bounds in bounds.py first (`config_problem`); the model
derived from the files is then validated by the same schema as a catalog model (`schema_problem`), so one
that `recipegen validate` would refuse is refused here too, with the field named.
"""

from __future__ import annotations

import math
from typing import Any

from ..bounds import MAX_CONTEXT, MAX_HEADS, MAX_LAYERS, MAX_VOCAB, MAX_WIDTH, range_error
from ..catalog.schema import Model

_LAYERS = (
    "first_k_dense_replace", "full_attention_interval", "no_rope_layer_interval", "max_window_layers",
    "num_nextn_predict_layers", "num_mtp_modules", "sliding_window_pattern", "_sliding_window_pattern",
    "interleave_moe_layer_step", "decoder_sparse_step", "attn_layer_period", "attn_layer_offset",
    "expert_layer_period",
)  # fmt: skip
_WIDTHS = (
    "intermediate_size", "moe_intermediate_size", "head_dim", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "index_head_dim", "routed_expert_hidden_size", "moe_latent_size", "o_lora_rank",
    "shared_expert_intermediate_size", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
    "index_kpool", "short_conv_kernel_size", "state_size", "mamba_d_state", "ssm_state_size", "conv_kernel",
    "mamba_d_conv", "conv_L_cache", "mamba_d_head", "mamba_head_dim", "mamba_headdim", "mamba_d_ssm",
    "block_ff_dim", "block_multiple_of", "attention_head_dim", "swa_head_dim", "swa_v_head_dim",
)  # fmt: skip
_HEADS = (
    "num_key_value_heads", "index_n_heads", "n_routed_experts", "num_experts", "num_local_experts",
    "num_experts_per_tok", "experts_per_token", "num_experts_per_token", "top_k_experts", "n_shared_experts",
    "num_shared_experts",
    "linear_num_value_heads", "linear_num_key_heads", "num_heads", "mamba_n_heads", "mamba_num_heads",
    "n_mamba_heads", "mamba_n_groups", "n_groups", "mamba_ngroups", "swa_num_attention_heads",
    "swa_num_key_value_heads", "o_groups",
)  # fmt: skip
_TOKENS = ("sliding_window", "sliding_window_size", "attention_chunk_size", "index_topk")

# field: (lowest, highest); the fields a model cannot do without start at 1, the others may be 0 ("none")
BOUNDS: dict[str, tuple[int, int]] = {
    "num_hidden_layers": (1, MAX_LAYERS),
    "hidden_size": (1, MAX_WIDTH),
    "num_attention_heads": (1, MAX_HEADS),
    "vocab_size": (1, MAX_VOCAB),
    "max_position_embeddings": (1, MAX_CONTEXT),
    **{k: (0, MAX_LAYERS) for k in _LAYERS},
    **{k: (0, MAX_WIDTH) for k in _WIDTHS},
    **{k: (0, MAX_HEADS) for k in _HEADS},
    **{k: (0, MAX_CONTEXT) for k in _TOKENS},
}

# where a derived model's fields come from in config.json, for the message that refuses one
CONFIG_KEY = {
    "layers": "num_hidden_layers",
    "hidden_size": "hidden_size",
    "vocab_size": "vocab_size",
    "max_context": "max_position_embeddings",
    "attention.num_heads": "num_attention_heads",
    "attention.num_kv_heads": "num_key_value_heads",
    "attention.head_dim": "head_dim (or hidden_size / num_attention_heads)",
    "attention.v_head_dim": "v_head_dim",
    "attention.window_num_heads": "swa_num_attention_heads",
    "attention.window_num_kv_heads": "swa_num_key_value_heads",
    "attention.window_head_dim": "swa_head_dim",
    "attention.window_v_head_dim": "swa_v_head_dim",
    "moe.experts": "n_routed_experts / num_experts",
    "moe.top_k": "num_experts_per_tok",
}


def _bad(value: Any, low: int, high: int) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False  # not a number: the rule reads it as missing
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        return True
    return not low <= value <= high


def config_problem(c: dict[str, Any]) -> str | None:
    """The first dimension field of config.json (text_config merged) outside its bounds, said as the CLI says
    an out-of-range count; None when every one is in range."""
    nested = c.get("linear_attn_config")
    for where, fields in (("", c), ("linear_attn_config.", nested if isinstance(nested, dict) else {})):
        for key, (low, high) in BOUNDS.items():
            value = fields.get(key)
            if value is not None and _bad(value, low, high):
                return range_error(f"config.json: {where}{key}", value, low, high)
    return None


def schema_problem(model: Model) -> str | None:
    """Why the derived model fails the catalog's schema (field and message, as `validate` words them), or None."""
    from pydantic import ValidationError

    from ..catalog.parse import format_loc, problem_message
    from ..catalog.schema.records import to_data, validate

    try:
        validate(Model, to_data(model))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = format_loc(tuple(error["loc"]))
        key = CONFIG_KEY.get(field)
        origin = f" (config.json {key})" if key else ""
        return f"{field}{origin}: {problem_message(error)}"
    return None
