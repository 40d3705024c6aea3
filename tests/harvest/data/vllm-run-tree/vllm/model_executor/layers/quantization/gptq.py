class GPTQConfig:
    @classmethod
    def get_min_capability(cls):
        return 60
