class AWQConfig(QuantizationConfig):
    def get_name(self):
        return "awq"

    def get_supported_act_dtypes(self):
        return [torch.half]

    @classmethod
    def get_min_capability(cls):
        return 75
