# Shaped like a current release's config patch: the legacy `type` copied into `rope_type`, old names mapped.


def patch_rope_parameters_dict(rope_parameters):
    if "rope_type" not in rope_parameters and "type" in rope_parameters:
        rope_parameters["rope_type"] = rope_parameters["type"]
    if rope_parameters["rope_type"] == "su":
        rope_parameters["rope_type"] = "longrope"
    elif rope_parameters["rope_type"] == "mrope":
        rope_parameters["rope_type"] = "default"
