import json
import logging
import os

import torch

from sglang.srt.utils.common import get_nvgpu_memory_capacity, get_numa_node

logger = logging.getLogger(__name__)

ATTENTION_BACKEND_CHOICES = ["triton", "nsa", "fa3", "flashinfer", "trtllm_mla", "trtllm_mha", "aiter"]


class ServerArgs:
    def __init__(self, model_path, kv_cache_dtype="auto", attention_backend=None):
        self.model_path = model_path
        self.kv_cache_dtype = kv_cache_dtype
        self.attention_backend = attention_backend
        self.page_size = 1
        self._resolved = {}
        self._run_resolution_pipeline()

    def _run_resolution_pipeline(self):
        with open(os.path.join(self.model_path, "config.json")) as handle:
            config = json.load(handle)
        major, _ = torch.cuda.get_device_capability()
        self.gpu_memory_mib = get_nvgpu_memory_capacity()  # sizes chunked prefill and CUDA graphs in the release
        self.chunked_prefill_size = 16384 if self.gpu_memory_mib >= 80 * 1024 else 8192
        self.numa_node = get_numa_node(0)
        arch = config["architectures"][0]
        mla = "kv_lora_rank" in config
        out = self._resolved
        backend = self.attention_backend
        if "index_topk" in config:
            backend = backend or "nsa"
            kv = self.kv_cache_dtype
            if kv == "auto":
                kv = "fp8_e4m3" if major >= 10 else "bfloat16"
                logger.warning(f"Setting KV cache dtype to {kv} for DeepSeek NSA on SM{major} device.")
            out["kv_cache_dtype"] = kv
            out["page_size"] = 64
            if kv == "fp8_e4m3":
                out["nsa_prefill_backend"] = out["nsa_decode_backend"] = "trtllm" if major >= 10 else "flashmla_kv"
            else:
                out["nsa_prefill_backend"] = "flashmla_sparse"
                out["nsa_decode_backend"] = "trtllm" if major >= 10 else "fa3"
        elif backend is None and mla:
            backend = "fa3" if major == 9 else "trtllm_mla" if major == 10 else "triton"
        elif backend is None:
            sinks = arch == "GptOssForCausalLM"
            backend = "fa3" if major == 9 else "trtllm_mha" if major == 10 else "triton" if sinks else "flashinfer"
        if backend == "flashinfer":  # a kernel library that does not load here (no sgl_kernel in this tree)
            from sgl_kernel import common_ops  # noqa: F401
        if backend == "trtllm_mla" and major not in (10, 11, 12):
            raise ValueError(
                "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a different backend."
            )
        out["attention_backend"] = backend
        for field, value in out.items():
            setattr(self, field, value)
