import contextlib

_current = None


class VllmConfig:
    def __init__(self):
        self.model_config = None


@contextlib.contextmanager
def set_current_vllm_config(config):
    global _current
    saved, _current = _current, config
    try:
        yield
    finally:
        _current = saved


def get_current_vllm_config():
    return _current
