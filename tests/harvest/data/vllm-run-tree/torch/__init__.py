bfloat16 = "torch.bfloat16"


def empty(*size, device=None, **kwargs):
    if str(device).startswith("cuda"):
        raise RuntimeError("CUDA driver is a stub library")
    return ("tensor", size, device)


zeros = ones = full = tensor = arange = empty_strided = empty


def _no_driver(*_args, **_kwargs):
    raise RuntimeError("Found no NVIDIA driver on your system")


class cuda:  # noqa: N801 - torch.cuda, as seen on a host without a driver
    is_available = staticmethod(lambda: False)
    get_device_capability = staticmethod(_no_driver)
    get_device_properties = staticmethod(_no_driver)
    current_device = staticmethod(_no_driver)
