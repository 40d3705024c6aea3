class PagedAttention:
    @staticmethod
    def get_supported_head_sizes():
        return [64, 80, 128]
