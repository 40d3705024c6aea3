import torch

from vllm.platforms import current_platform

# as in vLLM 0.33.0: a workspace allocated on the GPU when the module is imported
_WORKSPACE = torch.empty(128 * current_platform.num_compute_units(), device="cuda")


class CutlassMLABackend:
    @staticmethod
    def get_name():  # the name the 0.10.x chain's returned class gives itself
        return "CUTLASS_MLA"

    @classmethod
    def validate_configuration(cls, device_capability, use_mla=False, use_sparse=False, **_):
        if device_capability.major != 10:
            return ["compute capability not supported"]
        return ["sparse not supported"] if use_sparse else []
