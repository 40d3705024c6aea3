class CompressedTensorsW8A8Fp8:
    @classmethod
    def get_min_capability(cls):
        return 89
