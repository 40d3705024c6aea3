class Fp8Config(QuantizationConfig):
    @classmethod
    def get_name(cls):
        return "fp8"

    @classmethod
    def get_min_capability(cls):
        return 80


class Fp8LinearMethod(LinearMethodBase):
    def __init__(self, quant_config):
        self.use_marlin = get_bool_env_var("SGLANG_FORCE_FP8_MARLIN")
