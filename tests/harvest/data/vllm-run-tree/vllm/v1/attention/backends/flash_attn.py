import torch

from vllm.v1.attention.backends import refuses_16_bit_kv_by_name


class FlashAttentionBackend:
    @staticmethod
    def get_name():  # the name the 0.10.x chain's returned class gives itself
        return "FLASH_ATTN_VLLM_V1"

    @classmethod
    def validate_configuration(cls, device_capability, head_size, kv_cache_dtype, has_sink=False, **_):
        reasons = []
        if device_capability.major < 8:
            reasons.append("compute capability not supported")
        if head_size % 32:
            reasons.append("head_size not supported")
        if (kv_cache_dtype.startswith("fp8") and device_capability.major != 9) or refuses_16_bit_kv_by_name(
            kv_cache_dtype
        ):
            reasons.append("kv_cache_dtype not supported")
        # as 0.16.0's FLASH_ATTN does: the sinks check asks torch itself which GPU it is on
        if has_sink and torch.cuda.get_device_properties(torch.cuda.current_device()).major < 9:
            reasons.append("sink setting not supported")
        return reasons
