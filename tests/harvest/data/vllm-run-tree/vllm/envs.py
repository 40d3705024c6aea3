import os


def __getattr__(name):  # as vLLM's envs: read from the environment unless a module attribute was set
    if name == "VLLM_ATTENTION_BACKEND":
        return os.environ.get(name)
    if name == "VLLM_USE_V1" and os.environ.get("STAND_IN_SELECTOR") == "0.7.3":  # V0 unless asked for V1, as 0.7.x
        return bool(int(os.environ.get(name, "0")))
    raise AttributeError(name)
