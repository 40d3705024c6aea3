import enum
from typing import NamedTuple


class DeviceCapability(NamedTuple):
    major: int
    minor: int

    def to_int(self) -> int:
        return self.major * 10 + self.minor


class PlatformEnum(enum.Enum):
    CUDA = enum.auto()
    ROCM = enum.auto()


class _Backend(enum.Enum):  # the backend enum of 0.10.x-0.11.0 (0.10.x suffixes its V1 backends _VLLM_V1)
    FLASH_ATTN = enum.auto()
    FLASH_ATTN_VLLM_V1 = enum.auto()
    TRITON_ATTN_VLLM_V1 = enum.auto()
    TRITON_MLA = enum.auto()
    TRITON_MLA_VLLM_V1 = enum.auto()
    CUTLASS_MLA = enum.auto()
    FLASHMLA = enum.auto()
    XFORMERS = enum.auto()


class UnspecifiedPlatform:  # what 0.6.x resolves with no GPU: no capability, so no FlashAttention
    @classmethod
    def get_device_capability(cls, device_id=0):
        return None

    @classmethod
    def has_device_capability(cls, capability, device_id=0):
        return False
