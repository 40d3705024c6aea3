import enum
import importlib


class AttentionBackendEnum(enum.Enum):
    FLASH_ATTN = "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend"
    MISSING_ATTN = "vllm.v1.attention.backends.missing.MissingBackend"
    TRITON_ATTN = "vllm.v1.attention.backends.triton_attn.TritonAttentionBackend"
    CUTLASS_MLA = "vllm.v1.attention.backends.mla.cutlass_mla.CutlassMLABackend"
    TRITON_MLA = "vllm.v1.attention.backends.triton_attn.TritonMLABackend"

    def get_class(self):
        module, _, name = self.value.rpartition(".")
        return getattr(importlib.import_module(module), name)
