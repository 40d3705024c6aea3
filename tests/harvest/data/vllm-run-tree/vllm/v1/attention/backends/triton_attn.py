from vllm.config import get_current_vllm_config
from vllm.v1.attention.backends import refuses_16_bit_kv_by_name


class TritonAttentionBackend:
    @staticmethod
    def get_name():
        return "TRITON_ATTN_VLLM_V1"

    @classmethod
    def validate_configuration(cls, device_capability, kv_cache_dtype, use_mla=False, **_):
        if use_mla:
            return ["MLA not supported"]
        if refuses_16_bit_kv_by_name(kv_cache_dtype):
            return ["kv_cache_dtype not supported"]
        if kv_cache_dtype.startswith("fp8") and device_capability.to_int() < 89:
            return ["kv_cache_dtype not supported"]
        return []


class TritonMLABackend:
    @staticmethod
    def get_name():
        return "TRITON_MLA_VLLM_V1"

    @classmethod
    def validate_configuration(cls, device_capability, use_mla=False, use_sparse=False, kv_cache_dtype="auto", **_):
        if not use_mla:
            return ["non-MLA not supported"]
        if refuses_16_bit_kv_by_name(kv_cache_dtype):
            return ["kv_cache_dtype not supported"]
        if use_sparse:
            return ["sparse not supported"]
        model = get_current_vllm_config().model_config
        if model is not None and model.hf_text_config.qk_nope_head_dim != 128:
            return [f"qk_nope_head_dim {model.hf_text_config.qk_nope_head_dim} not supported"]
        return []
