"""A stand-in pynvml on a host without the NVIDIA driver: every query fails as the real one does there."""


class NVMLError(Exception):
    pass


def nvmlInit():
    raise NVMLError("NVML Shared Library Not Found")


def nvmlShutdown():
    raise NVMLError("NVML Shared Library Not Found")
