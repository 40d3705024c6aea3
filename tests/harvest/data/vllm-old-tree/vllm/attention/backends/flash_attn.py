class FlashAttentionBackend:
    @staticmethod
    def get_supported_head_sizes():
        return [64, 128, 256]
