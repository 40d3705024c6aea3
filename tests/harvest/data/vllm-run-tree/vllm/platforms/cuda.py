import os

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


if os.environ.get("STAND_IN_SELECTOR") == "0.12.0":  # no selector config: each input its own keyword, as 0.12.0
    from vllm.attention.backends.abstract import AttentionType

    class _KeywordSelector(CudaPlatformBase):
        @classmethod
        def get_valid_backends(cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink, use_sparse,
                               device_capability, attn_type):
            if attn_type != AttentionType.DECODER:
                raise ValueError(f"attn_type {attn_type!r} not supported")
            valid, invalid = [], {}
            for priority, backend in enumerate(_get_backend_priorities(use_mla, device_capability)):
                try:
                    reasons = backend.get_class().validate_configuration(
                        head_size=head_size, dtype=dtype, kv_cache_dtype=kv_cache_dtype, block_size=block_size,
                        use_mla=use_mla, has_sink=has_sink, use_sparse=use_sparse,
                        device_capability=device_capability)
                except ImportError:
                    reasons = ["ImportError"]
                if reasons:
                    invalid[backend] = reasons
                else:
                    valid.append((backend, priority))
            return valid, invalid

        @classmethod
        def get_attn_backend_cls(cls, selected_backend, head_size, dtype, kv_cache_dtype, block_size, use_mla,
                                 has_sink, use_sparse, attn_type=None):
            valid, invalid = cls.get_valid_backends(head_size, dtype, kv_cache_dtype, None, use_mla, has_sink,
                                                    use_sparse, cls.get_device_capability(),
                                                    attn_type or AttentionType.DECODER)
            if not valid:
                raise ValueError(f"No valid attention backend found for {cls.get_device_name()}. Reasons: {invalid}.")
            return min(valid, key=lambda pair: pair[1])[0].value

    CudaPlatformBase = _KeywordSelector  # type: ignore[misc]


if os.environ.get("STAND_IN_SELECTOR") == "0.10.2":  # an if/else chain returning one class path, as 0.10.2
    from vllm import envs

    _FLASH = "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend"
    _TRITON = "vllm.v1.attention.backends.triton_attn.TritonAttentionBackend"
    _CUTLASS_MLA = "vllm.v1.attention.backends.mla.cutlass_mla.CutlassMLABackend"
    _TRITON_MLA = "vllm.v1.attention.backends.triton_attn.TritonMLABackend"

    class _ChainSelector:
        get_device_capability = CudaPlatformBase.get_device_capability
        get_device_name = CudaPlatformBase.get_device_name
        num_compute_units = CudaPlatformBase.num_compute_units

        @classmethod
        def is_device_capability(cls, capability):
            return cls.get_device_capability().to_int() == capability

        @classmethod
        def check_and_update_config(cls, vllm_config):
            cache_config = vllm_config.cache_config
            if cache_config.block_size is None:
                cache_config.block_size = 16
            if vllm_config.model_config.use_mla and envs.VLLM_ATTENTION_BACKEND is None:
                if cls.is_device_capability(100):  # Blackwell: CUTLASS MLA and its block size, as 0.11.0
                    envs.VLLM_ATTENTION_BACKEND = "CUTLASS_MLA"
                    cache_config.block_size = 128

        @classmethod
        def get_attn_backend_cls(cls, selected_backend, head_size, dtype, kv_cache_dtype, block_size, use_v1,
                                 use_mla, has_sink):
            if use_mla:
                if cls.is_device_capability(100) and block_size == 128:
                    return _CUTLASS_MLA
                return _TRITON_MLA
            if head_size % 32:
                raise ValueError(f"head size {head_size} is not supported")
            fp8 = kv_cache_dtype is not None and kv_cache_dtype.startswith("fp8")
            if (has_sink or fp8) and not cls.is_device_capability(90):
                return _TRITON
            return _FLASH

    CudaPlatformBase = _ChainSelector  # type: ignore[misc]


if os.environ.get("STAND_IN_SELECTOR") == "0.6.3":  # V0 only: the platform chooses no backend, as 0.6.x
    import pynvml

    pynvml.nvmlInit()  # 0.6.3 and older ask NVML as this module loads (warn_if_different_devices)
    pynvml.nvmlShutdown()

    class _V0Platform:
        get_device_capability = CudaPlatformBase.get_device_capability
        get_device_name = CudaPlatformBase.get_device_name

        @classmethod
        def has_device_capability(cls, capability, device_id=0):
            return cls.get_device_capability(device_id).to_int() >= capability

    CudaPlatformBase = _V0Platform  # type: ignore[misc]


if os.environ.get("STAND_IN_SELECTOR") == "0.7.3":  # a chain whose V0 engine is the default, as 0.7.x
    _V0_FLASH = "vllm.attention.backends.flash_attn.FlashAttentionBackend"
    _XFORMERS = "vllm.attention.backends.xformers.XFormersBackend"

    class _V0Chain:
        get_device_capability = CudaPlatformBase.get_device_capability
        get_device_name = CudaPlatformBase.get_device_name
        num_compute_units = CudaPlatformBase.num_compute_units

        @classmethod
        def check_and_update_config(cls, vllm_config):
            if vllm_config.cache_config.block_size is None:
                vllm_config.cache_config.block_size = 16

        @classmethod
        def get_attn_backend_cls(cls, selected_backend, head_size, dtype, kv_cache_dtype, block_size, use_v1,
                                 use_mla):
            if use_v1:
                return _FLASH_V1
            if use_mla:
                return _TRITON_MLA_V0
            fp8 = kv_cache_dtype is not None and kv_cache_dtype.startswith("fp8")
            if cls.get_device_capability().to_int() < 80 or fp8 or head_size not in (64, 128, 256):
                return _XFORMERS
            return _V0_FLASH

    _FLASH_V1 = "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend"
    _TRITON_MLA_V0 = "vllm.v1.attention.backends.triton_attn.TritonMLABackend"
    CudaPlatformBase = _V0Chain  # type: ignore[misc]


class CudaPlatform(CudaPlatformBase):
    pass
