class GPTQConfig(QuantizationConfig):
    @classmethod
    def get_name(cls):
        return "gptq"

    @classmethod
    def get_min_capability(cls):
        return 60


class GPTQMarlinConfig(QuantizationConfig):
    @classmethod
    def get_name(cls):
        return "gptq_marlin"

    @classmethod
    def get_min_capability(cls):
        return cls.lowest()
