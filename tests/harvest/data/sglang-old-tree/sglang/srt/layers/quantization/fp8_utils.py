def cutlass_fp8_supported():
    if not _is_cuda:
        return False
    major, minor = get_device_capability()
    if major >= 9:
        return get_cuda_version() >= (12, 0)
    elif major == 8 and minor == 9:
        return get_cuda_version() >= (12, 4)
    return False
