from vllm.platforms.interface import DeviceCapability
from vllm.v1.attention.backends.registry import AttentionBackendEnum


def _get_backend_priorities(use_mla, device_capability, num_heads=None, kv_cache_dtype=None,
                            use_non_causal=False, head_size=None, use_mm_prefix=False):
    if device_capability.major == 6:  # a GPU the release has no attention path for: the probe fails there
        raise NotImplementedError("no CUDA attention backends below 7.0")
    if use_mla:
        if device_capability.major == 10:
            return [AttentionBackendEnum.CUTLASS_MLA, AttentionBackendEnum.TRITON_MLA]
        return [AttentionBackendEnum.TRITON_MLA]
    return [AttentionBackendEnum.FLASH_ATTN, AttentionBackendEnum.MISSING_ATTN, AttentionBackendEnum.TRITON_ATTN]


class _Candidate:
    def __init__(self, backend, priority):
        self.backend, self.priority = backend, priority


class CudaPlatformBase:
    @classmethod
    def get_device_capability(cls, device_id=0):
        raise RuntimeError("no GPU")

    @classmethod
    def get_device_name(cls, device_id=0):
        raise RuntimeError("no GPU")

    @classmethod
    def num_compute_units(cls, device_id=0):
        raise RuntimeError("no GPU")

    @classmethod
    def get_valid_backends(cls, device_capability, attn_selector_config, num_heads=None):
        valid, invalid = [], {}
        order = _get_backend_priorities(attn_selector_config.use_mla, device_capability, num_heads,
                                        attn_selector_config.kv_cache_dtype, head_size=attn_selector_config.head_size)
        for priority, backend in enumerate(order):
            try:
                reasons = backend.get_class().validate_configuration(
                    device_capability=device_capability, **attn_selector_config._asdict())
            except (ImportError, OSError) as e:
                reasons = [f"{type(e).__name__}: {e}"]
            if reasons:
                invalid[backend] = (priority, reasons)
            else:
                valid.append(_Candidate(backend, priority))
        return valid, invalid

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None):
        valid, invalid = cls.get_valid_backends(cls.get_device_capability(), attn_selector_config, num_heads)
        if not valid:
            raise ValueError(f"No valid attention backend found for {cls.get_device_name()}. Reasons: {invalid}.")
        return min(valid, key=lambda c: c.priority).backend.value


class CudaPlatform(CudaPlatformBase):
    pass
