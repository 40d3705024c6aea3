"""0.12.0 keeps its selector here, with no AttentionSelectorConfig; 0.6.x its whole V0 selector (STAND_IN_SELECTOR)."""

import enum
import functools
import os

from vllm.platforms import current_platform


def get_attn_backend(*args, **kwargs):
    raise NotImplementedError


if os.environ.get("STAND_IN_SELECTOR") == "0.6.3":

    class _Backend(enum.Enum):
        FLASH_ATTN = enum.auto()
        XFORMERS = enum.auto()
        FLASHINFER = enum.auto()

    class FlashAttentionBackend:
        @staticmethod
        def get_name():
            return "flash-attn"  # a display name, as 0.6.x's backends give

    class XFormersBackend:
        @staticmethod
        def get_name():
            return "xformers"

    @functools.lru_cache(maxsize=None)
    def get_attn_backend(head_size, sliding_window, dtype, kv_cache_dtype, block_size, is_attention_free,
                         is_blocksparse=False):
        backend = which_attn_to_use(head_size, sliding_window, dtype, kv_cache_dtype, block_size, is_attention_free)
        if backend == _Backend.FLASH_ATTN:
            return FlashAttentionBackend
        if backend == _Backend.XFORMERS:
            if head_size == 512:  # the class fails to load for a size it lacks
                raise ImportError("xformers has no head size 512")
            return XFormersBackend
        raise ValueError("Invalid attention backend.")

    def which_attn_to_use(head_size, sliding_window, dtype, kv_cache_dtype, block_size, is_attention_free):
        selected = _Backend.FLASH_ATTN
        if not current_platform.has_device_capability(80):
            selected = _Backend.XFORMERS
        elif kv_cache_dtype is not None and kv_cache_dtype.startswith("fp8"):
            selected = _Backend.XFORMERS
        elif block_size % 16 != 0:
            selected = _Backend.XFORMERS
        elif sliding_window is not None:
            selected = _Backend.XFORMERS
        if selected == _Backend.FLASH_ATTN:
            try:
                import vllm.vllm_flash_attn  # noqa: F401

                if head_size not in (64, 128, 256):
                    selected = _Backend.XFORMERS
            except ImportError:
                selected = _Backend.XFORMERS
        return selected
