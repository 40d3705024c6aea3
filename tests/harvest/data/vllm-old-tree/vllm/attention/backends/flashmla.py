class FlashMLAImpl:
    def __init__(self, kv_cache_dtype):
        if is_quantized_kv_cache(kv_cache_dtype):
            raise NotImplementedError("no FP8 KV cache in FlashMLA here")
