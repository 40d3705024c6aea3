from vllm.platforms import current_platform
from vllm.platforms.interface import PlatformEnum

# frozen at import, as some of vLLM's kernel modules do: only a fresh interpreter per GPU sees each one
_IMPORTED_ON = current_platform.get_device_capability().to_int()


class CutlassFP8ScaledMMLinearKernel:
    @classmethod
    def is_supported(cls, compute_capability=None):
        if _IMPORTED_ON < 89:
            return False, f"requires capability 89, current compute capability is {_IMPORTED_ON}"
        return True, None


class MarlinFP8ScaledMMLinearKernel:
    @classmethod
    def is_supported(cls, compute_capability=None):
        return (compute_capability >= 75, "Marlin requires capability 75")


class MarlinLinearKernel:  # a mixed-precision kernel: vLLM compares its minimum with the GPU
    @classmethod
    def get_min_capability(cls):
        return 75


_POSSIBLE_FP8_KERNELS = {PlatformEnum.CUDA: [CutlassFP8ScaledMMLinearKernel, MarlinFP8ScaledMMLinearKernel]}
_POSSIBLE_KERNELS = {PlatformEnum.CUDA: [MarlinLinearKernel]}
