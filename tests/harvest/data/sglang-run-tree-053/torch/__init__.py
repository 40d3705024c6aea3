import types

bfloat16 = "torch.bfloat16"
version = types.SimpleNamespace(cuda="13.0", hip=None)


def _no_driver(*_args, **_kwargs):
    raise RuntimeError("Found no NVIDIA driver on your system")


class cuda:  # noqa: N801 - torch.cuda, as seen on a host without a driver
    is_available = staticmethod(lambda: False)
    get_device_capability = staticmethod(_no_driver)
    get_device_properties = staticmethod(_no_driver)
    current_device = staticmethod(_no_driver)
