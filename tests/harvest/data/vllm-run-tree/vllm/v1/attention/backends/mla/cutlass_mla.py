import torch

from vllm.platforms import current_platform
from vllm.v1.attention.backends import refuses_16_bit_kv_by_name

# as in vLLM 0.33.0: a workspace allocated on the GPU when the module is imported
_WORKSPACE = torch.empty(128 * current_platform.num_compute_units(), device="cuda")


class CutlassMLABackend:
    @staticmethod
    def get_name():  # the name the 0.10.x chain's returned class gives itself
        return "CUTLASS_MLA"

    @classmethod
    def validate_configuration(cls, device_capability, use_mla=False, use_sparse=False, kv_cache_dtype="auto", **_):
        if device_capability.major != 10:
            return ["compute capability not supported"]
        if refuses_16_bit_kv_by_name(kv_cache_dtype):
            return ["kv_cache_dtype not supported"]
        return ["sparse not supported"] if use_sparse else []
