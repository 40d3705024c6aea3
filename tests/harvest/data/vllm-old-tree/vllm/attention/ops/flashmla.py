def is_flashmla_supported():
    if current_platform.get_device_capability()[0] != 9:
        return False, "FlashMLA needs a Hopper GPU."
    return True, None
