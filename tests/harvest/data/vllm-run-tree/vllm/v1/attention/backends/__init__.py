import os


def refuses_16_bit_kv_by_name(kv_cache_dtype):
    """As every backend of vLLM 0.14.0 does: `bfloat16` is a CLI choice but no supported_kv_cache_dtypes entry."""
    return os.environ.get("STAND_IN_SELECTOR") == "0.14.0" and kv_cache_dtype == "bfloat16"
