import os

from vllm.platforms.interface import PlatformEnum

if os.environ.get("STAND_IN_SELECTOR") != "0.14.0":
    raise ImportError("this stand-in module exists only in the 0.14.0 layout")


class CutlassScaledMMLinearKernel:  # INT8 W8A8
    @classmethod
    def is_supported(cls, compute_capability=None):
        return (compute_capability >= 75, "requires capability 75")


# as in 0.14.0: its INT8 table carries the name the wNa16 table has in kernels/linear and mixed_precision
_POSSIBLE_KERNELS = {PlatformEnum.CUDA: [CutlassScaledMMLinearKernel]}
