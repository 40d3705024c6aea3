import os
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


if os.environ.get("STAND_IN_SELECTOR") in ("0.12.0", "0.10.2"):  # no config: each input a keyword (0.10.2: a chain)
    del AttentionSelectorConfig
elif os.environ.get("STAND_IN_SELECTOR") == "0.16.0":  # that release's selector: no sliding-window input

    class AttentionSelectorConfig(NamedTuple):  # type: ignore[no-redef]
        head_size: int
        dtype: object
        kv_cache_dtype: str | None
        block_size: int | None
        use_mla: bool = False
        has_sink: bool = False
        use_sparse: bool = False
