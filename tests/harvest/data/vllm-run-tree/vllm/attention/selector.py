"""0.12.0 keeps its selector here, with no AttentionSelectorConfig."""


def get_attn_backend(*args, **kwargs):
    raise NotImplementedError
