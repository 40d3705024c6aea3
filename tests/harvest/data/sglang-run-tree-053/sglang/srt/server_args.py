import json
import logging
import os
import subprocess

import torch

logger = logging.getLogger(__name__)


def get_nvgpu_memory_capacity():
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except FileNotFoundError:
        raise RuntimeError("nvidia-smi not found. Ensure NVIDIA drivers are installed and accessible.")
    if result.returncode != 0:
        raise RuntimeError(f"nvidia-smi error: {result.stderr.strip()}")
    return float(result.stdout.strip())


class ServerArgs:
    def __init__(self, model_path, kv_cache_dtype="auto", attention_backend=None):
        self.model_path = model_path
        self.kv_cache_dtype = kv_cache_dtype
        self.attention_backend = attention_backend
        self.page_size = 1
        self.tp_size = 1
        self.mem_fraction_static = None
        self.__post_init__()

    def __post_init__(self):
        gpu_mem = get_nvgpu_memory_capacity()
        self.mem_fraction_static = 0.88 if gpu_mem > 60 * 1024 else 0.85
        with open(os.path.join(self.model_path, "config.json")) as handle:
            config = json.load(handle)
        major, _ = torch.cuda.get_device_capability()
        if config["architectures"][0] == "GptOssForCausalLM" and self.attention_backend is None:
            self.attention_backend = "fa3" if major == 9 else "trtllm_mha" if major == 10 else "triton"
        if self.attention_backend == "trtllm_mla" and major != 10:
            raise ValueError("TRTLLM MLA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.")

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument(
            "--attention-backend",
            type=str,
            choices=["aiter", "flashinfer", "triton", "torch_native", "fa3", "flashmla", "trtllm_mla", "trtllm_mha"],
            default=None,
        )
