def is_hopper_with_cuda_12_3():
    is_hopper = torch.cuda.get_device_capability()[0] == 9
    return is_hopper and torch.version.cuda >= "12.3"
