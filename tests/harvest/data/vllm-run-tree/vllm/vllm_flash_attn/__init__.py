"""The FlashAttention package 0.6.x bundles; the V0 selector imports it before it picks FLASH_ATTN."""
