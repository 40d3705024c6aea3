bfloat16 = "torch.bfloat16"


def empty(*size, device=None, **kwargs):
    if str(device).startswith("cuda"):
        raise RuntimeError("CUDA driver is a stub library")
    return ("tensor", size, device)


zeros = ones = full = tensor = arange = empty_strided = empty


class cuda:  # noqa: N801 - torch.cuda, as seen on a host without a driver
    @staticmethod
    def get_device_capability(device=None):
        raise RuntimeError("Found no NVIDIA driver on your system")
