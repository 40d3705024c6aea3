# Shaped like a current release's get_rope: the type read with a default, the config patched beforehand.


def get_rope(head_size, max_position, is_neox_style=True, rope_parameters=None):
    rope_parameters = rope_parameters or {}
    scaling_type = rope_parameters.get("rope_type", "default")
    if scaling_type == "default":
        return ("plain", head_size)
    elif scaling_type == "llama3":
        return ("llama3", rope_parameters["factor"])
    elif scaling_type in ["yarn", "deepseek_yarn"]:
        return ("yarn", rope_parameters["factor"])
    elif scaling_type == "longrope":
        return ("longrope", rope_parameters["short_factor"])
    raise ValueError(f"Unknown RoPE scaling type {scaling_type}")
