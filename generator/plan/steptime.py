"""The decode step-time model: what one step reads and runs, as terms the calibration fits.

One decode step costs

    max(bytes ÷ achievable GPU bandwidth, FLOPs ÷ achievable tensor throughput)
    + a fixed per-step engine cost (scheduler, sampling, launches; more without CUDA graphs)
    + a per-layer kernel cost (norms, attention, the small GEMVs), more for MoE layers (routing and the
      grouped GEMM), for MLA layers (latent projections and the MLA decode kernel: FlashMLA, FlashInfer MLA or
      FA3 MLA; far more on the Triton MLA path, the only one before February–March 2025) and for weight-only
      formats that dequantise in the kernel (GGUF k-quants, AWQ/GPTQ/MXFP4 Marlin)
    + an all-reduce latency per tensor-parallel all-reduce (two per layer; NVLink, PCIe or the network)
    + a hop per GPU boundary of a layer split
    + host RAM reads (experts or layers the CPU computes) and PCIe copies (`--cpu-offload-gb`).

`terms` turns a scenario into these terms with unit coefficients; `speed_constants.py` holds the
coefficients scripts/calibrate.py fitted per engine over recipes/measurements/ (plan/fit.py).
"""

from __future__ import annotations

import math
from dataclasses import field

from ..catalog.schema import Hardware, Model
from ..frozen import frozen
from .offload import HostFacts, WeightSplit, weight_split

EFF_PCIE = 0.8
EFF_COMPUTE = 0.5  # share of dense tensor throughput (prefill GEMMs; decode at large batch)
NETWORK_GBS = 25.0  # between nodes when the catalog names no number: one 200 Gb/s link
EAGER_LAYER_S = 40e-6  # without CUDA graphs: a dozen kernel launches per layer at ~3–4 µs each (assumed)
# achievable read bandwidth ÷ the datasheet's, where a measurement is published; else DEFAULT_READ
DEFAULT_READ = 0.9
PART_READ: dict[str, tuple[float, str]] = {
    "rtx-3090": (
        0.912,
        "https://github.com/ashalliants/ninfer-3090/pull/50 (kernel uint4 read 854.2 of 936.2 GB/s, 2026-09-09)",
    ),
    "gb10": (0.85, "https://github.com/antirez/ds4/issues/773 (saturating read 231–234 of 273 GB/s, 2026-08-10)"),
    "h20": (
        0.465,
        "https://github.com/NVIDIA/nvbandwidth/issues/48 (H20-3e device_local_copy 1,116 GB/s: 2,232 GB/s read+write "
        "of 4,800, 2025-09-17)",
    ),
}
# dequantised inside the GEMV kernel (bitsandbytes: its gemv_4bit / int8 matmul dequantise the stored blocks)
WEIGHT_ONLY = frozenset({"gguf", "awq", "gptq", "int4", "mxfp4", "bnb4", "bnb8"})
# speculative decoding with the model's MTP head: DeepSeek-V3's report measured 85–90 % acceptance of the second
# token (1.8× tokens/s); one draft token per step assumed
MTP_ACCEPTANCE = 0.85
MTP_SOURCE = "https://arxiv.org/abs/2412.19437 (DeepSeek-V3 §5.4.3: 85–90 % acceptance, 1.8× TPS)"
ENGINE_TERMS = ("mem", "step", "layer", "moe", "mla", "dequant")
# mla_triton: an MLA layer decoded on the Triton MLA path. SGLang ran DeepSeek's MLA only through Triton until
# FlashInfer MLA (https://github.com/sgl-project/sglang/pull/3550, 2025-02-13, opt-in) and FlashMLA/FA3 MLA
# (https://github.com/sgl-project/sglang/pull/5052, 2025-04-05); vLLM's TRITON_MLA was its default until
# https://github.com/vllm-project/vllm/pull/14451 (2025-03-07) made FlashMLA the default. vLLM's Triton decode
# kernel is SGLang's ("Adapted from" SGLang's decode_attention.py: https://github.com/vllm-project/vllm/blob/
# 0f490657b61ebaa34ed228e1616f9115be2e4adf/vllm/attention/ops/triton_decode_attention.py), hence one shared term.
SHARED_TERMS = ("allreduce_nvlink", "allreduce_pcie", "allreduce_network", "hop", "host", "mla_triton")
MLA_KINDS = frozenset({"mla", "dsa", "dsa_nope"})  # DSA is MLA plus a sparse top-k indexer


@frozen
class Scenario:
    """Everything the step model needs, already decided by the memory and offload planners."""

    model: Model
    hardware: Hardware
    gpus_per_node: int
    nodes: int
    layer_split: bool  # llama.cpp: GPUs work one after another; else tensor parallel over all GPUs
    size_bytes: float  # the checkpoint
    quant: str
    kv_per_token_gpu: float  # bytes per context token on one GPU
    per_request_gpu: float  # bytes per request on one GPU read every step (windows, recurrent state)
    context: int
    concurrency: int
    host: HostFacts
    cpu_expert_layers: int = 0  # routed-expert layers computed by the CPU from host RAM
    streamed_gib_per_gpu: float = 0.0  # --cpu-offload-gb: copied over PCIe every forward pass
    cpu_prefill: bool = False  # the CPU also computes the host experts during prefill (KTransformers)
    cpu_dense_layers: int = 0  # llama.cpp --gpu-layers below the layer count: the first layers run on the CPU
    engine: str = ""  # the engine id (vllm, sglang, llama.cpp, ktransformers); "" takes vLLM's constants
    cuda_graphs: bool = True
    mtp: bool = False  # speculative decoding with the model's MTP layers
    mla_triton: bool = False  # MLA decoded on the Triton path (releases before FlashInfer MLA / FlashMLA)
    kv_pool_gpu: float = math.inf  # bytes of KV cache one GPU holds: no step reads more context than that


@frozen
class Terms:
    """One step's terms at unit coefficients (seconds, or counts for the per-event costs)."""

    x: dict[str, float]  # ENGINE_TERMS and SHARED_TERMS
    fixed_s: float  # all-reduce payloads, eager launches: no fitted coefficient
    pcie_s: float  # --cpu-offload-gb weights copied over PCIe every step
    compute_s: float  # FLOPs ÷ achievable tensor throughput
    gpu_bytes: float
    host_bytes: float
    read_share: float  # achievable ÷ datasheet bandwidth used for `mem`
    lines: tuple[str, ...] = field(default_factory=tuple)
    split: WeightSplit | None = None


def touched(model: Model, batch: int) -> float:
    """Share of a layer's routed experts a batch reads: 1 − (1 − k/E)^batch (independent routing)."""
    if model.moe is None:
        return 1.0
    share = model.moe.top_k / model.moe.experts
    return 1 - (1 - share) ** batch


def tflops(hw: Hardware, quant: str) -> tuple[float, str]:
    t = hw.tensor_tflops
    if quant in ("nvfp4", "mxfp4", "mixed_fp4_fp8") and hw.fp4_tensor_cores and t.fp4:
        return t.fp4, "FP4"
    if quant in ("fp8", "fp8_block", "mixed_fp4_fp8") and hw.fp8_tensor_cores and t.fp8:
        return t.fp8, "FP8"
    return t.bf16, "BF16"


def embedding_unread(model: Model, size: float, quant: str) -> float:
    """The input embedding table minus the one row a token reads (none when it is also the output head)."""
    if not model.vocab_size or model.tied_embeddings:
        return 0.0
    per = 2.0 if quant not in ("gguf",) else min(2.0, size / (model.params_total_b * 1e9))
    return (model.vocab_size - 1) * model.hidden_size * per


def link_of(s: Scenario) -> str:
    if s.nodes > 1:
        return "network"
    return "nvlink" if s.hardware.interconnect.kind == "nvlink" else "pcie"


def terms(s: Scenario) -> Terms:
    model, hw = s.model, s.hardware
    gpus = s.gpus_per_node * s.nodes
    batch = max(1, s.concurrency)
    split = weight_split(model, s.size_bytes)
    lines: list[str] = []
    unread = embedding_unread(model, s.size_bytes, s.quant)
    if split is not None:
        share = touched(model, batch)
        gpu_expert_layers = split.moe_layers - s.cpu_expert_layers
        gpu_weights = split.resident_bytes - unread + gpu_expert_layers * split.expert_layer_bytes * share
        host_weights = s.cpu_expert_layers * split.expert_layer_bytes * share
        lines.append(
            f"weights read per step: {(split.resident_bytes - unread) / 1e9:.2f} GB dense + {share:.0%} of the routed "
            f"experts ({batch} request(s), top-{model.moe.top_k if model.moe else 0}) = "
            f"{gpu_weights / 1e9:.2f} GB on GPU"
            + (f", {host_weights / 1e9:.2f} GB in host RAM" if host_weights else "")
        )
    else:
        cpu_share = s.cpu_dense_layers / model.layers
        gpu_weights = (s.size_bytes - unread) * (1 - cpu_share) - s.streamed_gib_per_gpu * 2**30 * gpus
        host_weights = (s.size_bytes - unread) * cpu_share
        lines.append(
            f"weights read per step: {gpu_weights / 1e9:.2f} GB on GPU"
            + (f", {host_weights / 1e9:.2f} GB in host RAM ({s.cpu_dense_layers} layers)" if host_weights else "")
        )
    if unread:
        lines.append(f"the input embedding table ({unread / 1e9:.2f} GB) is read one row per token, not whole")
    parallel = 1 if s.layer_split else gpus
    context_bytes = batch * s.context * s.kv_per_token_gpu
    # a full pool caps what is cached: requests at the planned context beyond what it holds wait, not decode
    held = min(context_bytes, max(0.0, s.kv_pool_gpu - batch * s.per_request_gpu))
    kv_gpu = held + batch * s.per_request_gpu
    kv_total = kv_gpu * (s.gpus_per_node if s.layer_split else 1)
    if s.cpu_dense_layers:  # the CPU layers keep their KV in host RAM and read it there
        # kv_per_token_gpu is already the GPU layers' share: the CPU's layers hold as much per layer again
        host_kv = batch * s.context * s.kv_per_token_gpu * (s.gpus_per_node if s.layer_split else 1)
        host_kv *= s.cpu_dense_layers / max(1, model.layers - s.cpu_dense_layers)
        host_weights += host_kv
        lines.append(f"KV of the {s.cpu_dense_layers} CPU layers, read in host RAM: {host_kv / 1e9:.2f} GB")
    read_share, _ = PART_READ.get(hw.id, (DEFAULT_READ, ""))
    bw = hw.bandwidth_gbs * 1e9 * read_share
    mem = gpu_weights / parallel / bw + kv_total / bw
    lines.append(
        f"KV read per step: {batch} × {s.context:,} tokens × {s.kv_per_token_gpu / 1024:.1f} KiB/token per GPU "
        + (
            f"= {kv_gpu / 1e9:.2f} GB per GPU"
            if held == context_bytes
            else f"capped by the KV pool: {kv_gpu / 1e9:.2f} GB per GPU"
        )
    )
    active = (model.params_active_b or model.params_total_b) * 1e9
    peak, _ = tflops(hw, s.quant)
    compute = 2 * active * batch / (parallel * peak * 1e12 * EFF_COMPUTE)
    moe_layers = (model.layers - model.moe.dense_layers) if model.moe is not None else 0
    x = dict.fromkeys(ENGINE_TERMS + SHARED_TERMS, 0.0)
    x["mem"] = mem
    x["step"] = 1.0
    x["layer"] = float(model.layers)
    x["moe"] = float(moe_layers)
    mla_layers = float(model.layers) if model.attention.kind in MLA_KINDS else 0.0
    x["mla" if not s.mla_triton else "mla_triton"] = mla_layers  # latent up-projections, the MLA decode kernel
    x["dequant"] = float(model.layers) if s.quant in WEIGHT_ONLY else 0.0
    fixed = 0.0 if s.cuda_graphs else EAGER_LAYER_S * model.layers
    if gpus > 1 and not s.layer_split:
        link = link_of(s)
        x[f"allreduce_{link}"] = 2.0 * model.layers
        gbs = NETWORK_GBS if link == "network" else (hw.interconnect.bandwidth_gbs or hw.host_link.gbs)
        if link == "nvlink" and hw.interconnect.bandwidth_gbs:
            gbs = hw.interconnect.bandwidth_gbs / 2
        message = batch * model.hidden_size * 2
        fixed += 2 * model.layers * 2 * (gpus - 1) / gpus * message / (gbs * 1e9)
    if s.layer_split and gpus > 1:
        x["hop"] = float(gpus - 1)
    if host_weights:
        x["host"] = host_weights / (s.host.bandwidth_gbs * 1e9)
    pcie = 0.0
    if s.streamed_gib_per_gpu:
        per_node = s.gpus_per_node
        link_gbs = min(hw.host_link.gbs * per_node, s.host.bandwidth_gbs) * 1e9 * EFF_PCIE
        pcie = s.streamed_gib_per_gpu * 2**30 * per_node / link_gbs
    return Terms(x, fixed, pcie, compute, gpu_weights, host_weights, read_share, tuple(lines), split)


def step_parts(t: Terms, engine: dict[str, float], shared: dict[str, float]) -> dict[str, float]:
    """Seconds per step by what spends them, for the fitted coefficients."""
    memory = engine["mem"] * t.x["mem"]
    parts = {"GPU memory bandwidth": memory} if memory >= t.compute_s else {"GPU compute": t.compute_s}
    parts["engine per-step cost"] = engine["step"]
    parts["per-layer kernels"] = (
        engine["layer"] * t.x["layer"]
        + engine["moe"] * t.x["moe"]
        + engine["mla"] * t.x["mla"]
        + engine["dequant"] * t.x["dequant"]
    )
    parts["per-layer kernels"] += shared["mla_triton"] * t.x["mla_triton"]
    comm = sum(shared[k] * t.x[k] for k in ("allreduce_nvlink", "allreduce_pcie", "allreduce_network"))
    if comm:
        parts["tensor-parallel all-reduce"] = comm
    if t.x["hop"]:
        parts["layer-split hops"] = shared["hop"] * t.x["hop"]
    if t.x["host"]:
        parts["host RAM bandwidth"] = shared["host"] * t.x["host"]
    if t.pcie_s:
        parts["PCIe (weights copied every step)"] = t.pcie_s
    if t.fixed_s:
        parts["all-reduce payloads and launches"] = t.fixed_s
    return parts
