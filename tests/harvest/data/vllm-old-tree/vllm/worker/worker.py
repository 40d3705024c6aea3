def _check_if_gpu_supports_dtype(torch_dtype):
    if torch_dtype == torch.bfloat16:
        if not current_platform.has_device_capability(80):
            raise ValueError("Bfloat16 needs compute capability 8.0 or higher; pass --dtype=half instead.")
