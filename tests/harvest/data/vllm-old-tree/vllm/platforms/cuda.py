# Shaped like vLLM 0.8.x's CudaPlatform.get_attn_backend_cls (a fixture: only the branches the reader reads).
class CudaPlatform:
    @classmethod
    def get_attn_backend_cls(cls, selected_backend, head_size, dtype, kv_cache_dtype, block_size, use_v1, use_mla):
        if use_mla:
            if selected_backend == _Backend.TRITON_MLA or block_size != 64:
                return "vllm.attention.backends.triton_mla.TritonMLABackend"
            return "vllm.attention.backends.flashmla.FlashMLABackend"
        if use_v1:
            if cls.is_device_capability(100):
                try:
                    import flashinfer  # noqa: F401

                    return "vllm.v1.attention.backends.flashinfer.FlashInferBackend"
                except ImportError:
                    pass
            if cls.has_device_capability(80):
                return "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend"
        if is_hip():
            if not cls.has_device_capability(90):
                logger.info("flash_attn is not supported on NAVI GPUs.")
        target_backend = _Backend.FLASH_ATTN
        if not cls.has_device_capability(80):
            logger.info("Cannot use FlashAttention-2 backend for Volta and Turing GPUs.")
            target_backend = _Backend.XFORMERS
        if target_backend == _Backend.XFORMERS:
            return "vllm.attention.backends.xformers.XFormersBackend"
        return "vllm.attention.backends.flash_attn.FlashAttentionBackend"
