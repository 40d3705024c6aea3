class TritonMLAImpl:
    def __init__(self, kv_cache_dtype):
        pass
