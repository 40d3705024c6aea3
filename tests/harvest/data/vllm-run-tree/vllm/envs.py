import os


def __getattr__(name):  # as vLLM's envs: read from the environment unless a module attribute was set
    if name == "VLLM_ATTENTION_BACKEND":
        return os.environ.get(name)
    raise AttributeError(name)
