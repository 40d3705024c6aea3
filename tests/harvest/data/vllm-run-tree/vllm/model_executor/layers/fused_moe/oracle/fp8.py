from enum import Enum

from vllm.platforms import current_platform


class Fp8MoeBackend(Enum):
    NONE = "NONE"
    DEEPGEMM = "DEEPGEMM"
    MARLIN = "MARLIN"


class DeepGemmExperts:
    @staticmethod
    def _supports_current_device():
        return current_platform.get_device_capability().major in (9, 10)


class MarlinExperts:
    @staticmethod
    def _supports_current_device():
        return current_platform.get_device_capability().to_int() >= 75


def backend_to_kernel_cls(backend):
    if backend == Fp8MoeBackend.DEEPGEMM:
        return [DeepGemmExperts]
    if backend == Fp8MoeBackend.MARLIN:
        return [MarlinExperts]
    raise NotImplementedError
