from sglang.srt.layers.quantization.fp8 import Fp8Config


class AWQMarlinConfig:
    @classmethod
    def get_min_capability(cls):
        return 75


QUANTIZATION_METHODS = {"fp8": Fp8Config, "awq_marlin": AWQMarlinConfig}


def get_quantization_config(quantization):
    return QUANTIZATION_METHODS[quantization]
