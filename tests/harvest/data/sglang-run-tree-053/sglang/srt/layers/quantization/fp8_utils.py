import torch


def can_auto_enable_marlin_fp8():
    major, minor = torch.cuda.get_device_capability()
    return 80 <= major * 10 + minor < 89
