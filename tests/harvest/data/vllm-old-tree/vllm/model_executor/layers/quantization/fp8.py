class Fp8Config(QuantizationConfig):
    def __init__(self, weight_block_size=None):
        self.weight_block_size = weight_block_size

    @classmethod
    def get_name(cls):
        return "fp8"

    @classmethod
    def get_supported_act_dtypes(cls):
        return [torch.bfloat16, torch.half]

    @classmethod
    def get_min_capability(cls):
        return 80


class Fp8LinearMethod(LinearMethodBase):
    def __init__(self, quant_config):
        self.use_marlin = not current_platform.has_device_capability(89)
        self.block_quant = quant_config.weight_block_size is not None
        if self.block_quant:
            self.use_marlin = False


class Fp8MoEMethod(FusedMoEMethodBase):
    def apply(self, layer, x):
        return fused_experts(x, layer.w13_weight, layer.w2_weight)
