import logging

import torch

from sglang.srt.configs.model_config import AttentionArch

logger = logging.getLogger(__name__)

MLA_ATTENTION_BACKENDS = ["triton", "flashinfer", "fa3", "flashmla", "trtllm_mla"]


class ModelRunner:
    def __init__(self, model_config, mem_fraction_static, gpu_id, tp_rank, tp_size, pp_rank, pp_size, nccl_port,
                 server_args, is_draft_worker=False):
        self.model_config = model_config
        self.mem_fraction_static = mem_fraction_static
        self.tp_size = tp_size
        self.server_args = server_args
        self.use_mla_backend = self.model_config.attention_arch == AttentionArch.MLA
        self.model_specific_adjustment()
        self.init_torch_distributed()

    def init_torch_distributed(self):
        raise RuntimeError("Found no NVIDIA driver on your system")

    def model_specific_adjustment(self):
        server_args = self.server_args
        major, _ = torch.cuda.get_device_capability()
        if server_args.attention_backend is None:
            if not self.use_mla_backend:
                server_args.attention_backend = "fa3" if major == 9 else "flashinfer"
            else:
                server_args.attention_backend = "fa3" if major == 9 else "flashinfer" if major == 10 else "triton"
            logger.info(f"Attention backend not set. Use {server_args.attention_backend} backend by default.")
        elif self.use_mla_backend:
            if server_args.attention_backend not in MLA_ATTENTION_BACKENDS:
                raise ValueError(f"Invalid attention backend for MLA: {server_args.attention_backend}")
        if server_args.attention_backend == "fa3" and server_args.kv_cache_dtype == "fp8_e5m2":
            logger.warning("FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.")
            server_args.attention_backend = "triton"
