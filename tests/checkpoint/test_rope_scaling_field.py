"""config.json's RoPE scaling as a checkpoint states it: its type and the key(s) it is spelled under."""

from __future__ import annotations

from recipegen.checkpoint.configfields import rope_scaling


def test_the_rope_type_is_read_from_either_config_format_and_either_key():
    assert rope_scaling({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}) == ("llama3", ["rope_type"])
    assert rope_scaling({"rope_scaling": {"type": "yarn", "factor": 4.0}}) == ("yarn", ["type"])
    assert rope_scaling({"rope_scaling": {"type": "su", "rope_type": "longrope"}}) == (
        "longrope",
        ["type", "rope_type"],
    )
    # transformers 5 writes rope_parameters; "default" is no scaling, and free text is no type
    assert rope_scaling({"rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5}}) == ("llama3", ["rope_type"])
    assert rope_scaling({"rope_parameters": {"rope_type": "default", "rope_theta": 1e6}}) is None
    assert rope_scaling({"rope_scaling": {"rope_type": "$(reboot)"}}) is None
    assert rope_scaling({"rope_scaling": None}) is None
