class Fp8Config:
    @classmethod
    def get_min_capability(cls):
        return 80
