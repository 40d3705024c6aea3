class IPEXConfig(QuantizationConfig):
    def get_name(self):
        return "ipex"

    def get_supported_act_dtypes(self):
        return [torch.bfloat16, torch.float16]

    @classmethod
    def get_min_capability(cls):
        return -1
