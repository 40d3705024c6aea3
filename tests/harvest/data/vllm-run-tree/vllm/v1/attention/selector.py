from typing import NamedTuple


class AttentionSelectorConfig(NamedTuple):
    head_size: int
    dtype: object
    kv_cache_dtype: str | None
    block_size: int | None
    use_mla: bool = False
    has_sink: bool = False
    use_sparse: bool = False
    has_sliding_window: bool = False
