# Shaped like an early release's get_rope: the type read from rope_scaling["type"] only.


def get_rope(head_size, rotary_dim, max_position, base, is_neox_style=True, rope_scaling=None):
    if rope_scaling is None:
        return ("plain", head_size)
    scaling_type = rope_scaling["type"]
    factor = rope_scaling["factor"]
    if scaling_type == "linear":
        return ("linear", factor)
    elif scaling_type == "dynamic":
        return ("dynamic", factor)
    elif scaling_type == "yarn":
        return ("yarn", rope_scaling["original_max_position_embeddings"])
    else:
        raise ValueError(f"Unknown RoPE scaling type {scaling_type}")
