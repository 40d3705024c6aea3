class FlashAttentionBackend:  # the V0 engine's FlashAttention backend, as 0.7.x
    @staticmethod
    def get_name():
        return "FLASH_ATTN"
