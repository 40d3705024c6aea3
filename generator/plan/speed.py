"""Speed estimate of a plan: a roofline over the catalog's bandwidth and throughput facts.

Decode is memory-bound: every step reads the weights it uses (dense weights, the experts the
batch routes to) and each request's KV cache. Each part is read where it lives — GPU memory
(HBM/GDDR), host RAM (experts the CPU computes), or copied over PCIe (`--cpu-offload-gb`) — and
the parts add up, because a layer waits for the one before it. Prefill is compute-bound: FLOPs
per token over the GPUs' dense tensor throughput, plus any weights that cross PCIe per chunk.

Engines reach a fraction of the peaks; the efficiencies below are assumptions, shown with every
estimate and checked against published measurements by scripts/calibrate.py (recipes/measurements/),
which also sets the band: the 10th–90th percentile of measured ÷ estimated over that table.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal

from ..catalog.schema import Hardware, Model
from ..frozen import frozen
from .offload import HostFacts, WeightSplit, weight_split

EFF_GPU_MEMORY = 0.7  # share of the GPU memory bandwidth decode kernels reach
EFF_HOST_MEMORY = 0.6  # share of host RAM bandwidth CPU expert kernels reach
EFF_PCIE = 0.8
EFF_COMPUTE = 0.5  # share of dense tensor throughput (prefill GEMMs; decode at large batch)
ALLREDUCE_LATENCY_S = {"nvlink": 10e-6, "pcie": 25e-6, "network": 50e-6}
NETWORK_GBS = 25.0  # between nodes when the catalog names no number: one 200 Gb/s link
DISK_GBS = 2.0  # a local NVMe SSD, sequential read
PREFILL_CHUNK = {"expert-layers": 512, "weights-gb": 2048}  # llama.cpp ubatch; vLLM/SGLang chunk
Regime = Literal["roofline", "tensor-parallel dense", "tensor-parallel MoE"]
# measured ÷ estimated, about the 10th and 90th percentile of each regime's rows in recipes/measurements
# (scripts/calibrate.py prints them; tests/plan/test_speed.py fails when the table moves outside a band)
BANDS: dict[Regime, tuple[float, float]] = {
    "roofline": (0.75, 1.3),
    # one published run (vLLM, 2×B200, batch 1) at ×0.28, up to where the single-GPU rows fell
    "tensor-parallel dense": (0.25, 1.3),
    # SGLang's DeepSeek-V3 on 8×H200 at batch 1 ran at 3–8% of the roofline: per-layer MoE kernels
    # and all-reduces at tiny batches, not memory bandwidth, set the pace there
    "tensor-parallel MoE": (0.03, 0.08),
}
# prefill, measured ÷ estimated over the 7 rows with a prompt speed (their full spread: a small sample;
# llama.cpp's quantized int8 GEMMs beat the dense BF16 figure, short MoE prompts fall short of it)
PREFILL_BAND = (0.35, 2.1)


@frozen
class Scenario:
    """Everything the roofline needs, already decided by the memory and offload planners."""

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


@frozen
class Estimate:
    decode_tps: float  # one request's tokens/s at the planned context while `concurrency` run
    aggregate_tps: float
    concurrency: int
    context: int
    prefill_tps: float | None
    load_s: float
    bound: str  # what dominates a decode step
    regime: Regime = "roofline"
    lines: tuple[str, ...] = field(default_factory=tuple)
    assumptions: tuple[str, ...] = field(default_factory=tuple)

    @property
    def band(self) -> tuple[float, float]:
        return BANDS[self.regime]

    def headline(self) -> str:
        low, high = self.band
        prefill = "unknown"
        if self.prefill_tps is not None:
            lo, hi = PREFILL_BAND
            prefill = f"{self.prefill_tps:,.0f} (likely {lo * self.prefill_tps:,.0f}–{hi * self.prefill_tps:,.0f})"
        span = f"{low * self.decode_tps:.1f}–{high * self.decode_tps:.1f}"
        if high < 0.5:
            decode = (
                f"up to {self.decode_tps:.0f} tok/s per request (the roofline: the published {self.regime} runs "
                f"reached only ×{low:g}–×{high:g} of theirs — recipes/measurements)"
            )
        else:
            measured = (
                "published runs fell"
                if self.regime == "roofline"
                else "the one published tensor-parallel dense run fell at ×0.28, single-GPU runs up to ×1.3; band"
            )
            decode = (
                f"~{self.decode_tps:.1f} tok/s per request (likely {span}: {measured} at ×{low:g}–×{high:g} of the "
                "roofline)"
            )
        return (
            f"{decode}, {self.aggregate_tps:.0f} tok/s over {self.concurrency} request(s) at {self.context:,} "
            f"tokens of context; prefill ~{prefill} tok/s; weights load in ~{self.load_s:.0f} s; "
            f"bound by {self.bound}"
        )


def regime_of(s: Scenario) -> Regime:
    if s.layer_split or s.gpus_per_node * s.nodes == 1:
        return "roofline"
    return "tensor-parallel MoE" if s.model.moe is not None else "tensor-parallel dense"


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


def _comm(s: Scenario) -> tuple[float, str]:
    """Two all-reduces of the hidden state per layer under tensor parallelism."""
    gpus = s.gpus_per_node * s.nodes
    if s.layer_split or gpus == 1:
        return 0.0, ""
    link = s.hardware.interconnect
    if s.nodes > 1:
        gbs, kind = NETWORK_GBS, "network"
    elif link.kind == "nvlink" and link.bandwidth_gbs:
        gbs, kind = link.bandwidth_gbs / 2, "nvlink"
    else:
        gbs, kind = s.hardware.host_link.gbs, "pcie"
    message = s.concurrency * s.model.hidden_size * 2
    per = ALLREDUCE_LATENCY_S[kind] + 2 * (gpus - 1) / gpus * message / (gbs * 1e9)
    t = 2 * s.model.layers * per
    return t, f"all-reduce over {kind}: 2 × {s.model.layers} layers × {per * 1e6:.0f} µs = {t * 1e3:.2f} ms"


def estimate(s: Scenario) -> Estimate:
    model, hw = s.model, s.hardware
    gpus = s.gpus_per_node * s.nodes
    batch = max(1, s.concurrency)
    split: WeightSplit | None = weight_split(model, s.size_bytes)
    lines: list[str] = []
    # --- decode: bytes per step
    if split is not None:
        share = touched(model, batch)
        gpu_expert_layers = split.moe_layers - s.cpu_expert_layers
        gpu_weights = split.resident_bytes + gpu_expert_layers * split.expert_layer_bytes * share
        host_weights = s.cpu_expert_layers * split.expert_layer_bytes * share
        lines.append(
            f"weights read per step: {split.resident_bytes / 1e9:.2f} GB dense + {share:.0%} of the routed experts "
            f"({batch} request(s), top-{model.moe.top_k if model.moe else 0}) = {gpu_weights / 1e9:.2f} GB on GPU"
            + (f", {host_weights / 1e9:.2f} GB in host RAM" if host_weights else "")
        )
    else:
        cpu_share = s.cpu_dense_layers / model.layers
        gpu_weights = s.size_bytes * (1 - cpu_share) - s.streamed_gib_per_gpu * 2**30 * gpus
        host_weights = s.size_bytes * cpu_share
        lines.append(
            f"weights read per step: {gpu_weights / 1e9:.2f} GB on GPU"
            + (f", {host_weights / 1e9:.2f} GB in host RAM ({s.cpu_dense_layers} layers)" if host_weights else "")
        )
    # per GPU: tensor parallel shards weights; a layer split runs the GPUs one after another
    parallel = 1 if s.layer_split else gpus
    kv_gpu = batch * (s.context * s.kv_per_token_gpu + s.per_request_gpu)
    kv_total = kv_gpu * (s.gpus_per_node if s.layer_split else 1)
    if s.cpu_dense_layers:  # the CPU layers keep their KV in host RAM and read it there
        kv_host = kv_total * s.cpu_dense_layers / model.layers
        kv_total -= kv_host
        host_weights += kv_host
    bw = hw.bandwidth_gbs * 1e9 * EFF_GPU_MEMORY
    t_gpu = gpu_weights / parallel / bw + kv_total / bw
    lines.append(
        f"KV read per step: {batch} × {s.context:,} tokens × {s.kv_per_token_gpu / 1024:.1f} KiB/token per GPU "
        f"= {kv_gpu / 1e9:.2f} GB per GPU"
    )
    lines.append(
        f"GPU memory: ({gpu_weights / 1e9:.2f} GB ÷ {parallel} + {kv_total / 1e9:.2f} GB) ÷ "
        f"({hw.bandwidth_gbs:g} GB/s × {EFF_GPU_MEMORY}) = {t_gpu * 1e3:.2f} ms"
    )
    active = (model.params_active_b or model.params_total_b) * 1e9
    peak, dtype = tflops(hw, s.quant)
    t_compute = 2 * active * batch / (parallel * peak * 1e12 * EFF_COMPUTE)
    parts = {"GPU memory bandwidth": max(t_gpu, t_compute)}
    if t_compute > t_gpu:
        parts = {"GPU compute": t_compute}
        lines.append(f"compute: 2 × {active / 1e9:.1f}B × {batch} ÷ {peak:g} {dtype} TFLOPS = {t_compute * 1e3:.2f} ms")
    if host_weights:
        t_host = host_weights / (s.host.bandwidth_gbs * 1e9 * EFF_HOST_MEMORY)
        parts["host RAM bandwidth"] = t_host
        lines.append(
            f"host RAM: {host_weights / 1e9:.2f} GB ÷ ({s.host.bandwidth_gbs:g} GB/s × {EFF_HOST_MEMORY}) "
            f"= {t_host * 1e3:.2f} ms"
        )
    if s.streamed_gib_per_gpu:
        streamed = s.streamed_gib_per_gpu * 2**30
        # each GPU copies its share over its own link; the node's RAM feeds all of them
        per_node = s.gpus_per_node
        link = min(hw.host_link.gbs * per_node, s.host.bandwidth_gbs) * 1e9 * EFF_PCIE
        t_pcie = streamed * per_node / link
        parts["PCIe (weights copied every step)"] = t_pcie
        lines.append(
            f"PCIe: {s.streamed_gib_per_gpu:g} GiB × {per_node} GPU(s) ÷ (min({per_node} × "
            f"{hw.host_link.describe()}, host RAM {s.host.bandwidth_gbs:g} GB/s) × {EFF_PCIE}) = {t_pcie * 1e3:.1f} ms"
        )
    t_comm, comm_line = _comm(s)
    if t_comm:
        parts["tensor-parallel all-reduce"] = t_comm
        lines.append(comm_line)
    step = sum(parts.values())
    bound = max(parts, key=lambda k: parts[k])
    lines.append(f"decode step: {step * 1e3:.2f} ms → {1 / step:.1f} tok/s per request, {batch / step:.0f} in all")
    # --- prefill
    prefill = _prefill(s, split, active, peak, dtype, parallel, lines)
    load = s.size_bytes / (DISK_GBS * 1e9)
    assumptions: tuple[str, ...] = (
        f"efficiency: {EFF_GPU_MEMORY:.0%} of GPU memory bandwidth, {EFF_HOST_MEMORY:.0%} of host RAM bandwidth, "
        f"{EFF_PCIE:.0%} of PCIe, {EFF_COMPUTE:.0%} of dense tensor throughput",
        "routed experts are picked independently per request; speculative decoding and prefix caching ignored",
        f"decode at a context filled to {s.context:,} tokens (shorter conversations decode faster)",
        f"weights load from a local NVMe SSD at ~{DISK_GBS:g} GB/s (network storage is slower)",
        f"prefill uses {hw.name}'s dense {dtype} tensor TFLOPS from vendor figures (recipes/hardware/{hw.id}.yaml "
        "marks the ones not re-checked as unverified)",
        s.host.describe(),
    )
    if s.streamed_gib_per_gpu:
        assumptions += (
            "every offloaded byte crosses PCIe each step (whole layers streamed); with vLLM's UVA zero-copy "
            "backend a MoE model reads only the experts it routes to, so it can run faster than this",
        )
    return Estimate(
        decode_tps=1 / step,
        aggregate_tps=batch / step,
        concurrency=batch,
        context=s.context,
        prefill_tps=prefill,
        load_s=load,
        bound=bound,
        regime=regime_of(s),
        lines=tuple(lines),
        assumptions=assumptions,
    )


def _prefill(
    s: Scenario, split: WeightSplit | None, active: float, peak: float, dtype: str, parallel: int, lines: list[str]
) -> float | None:
    model = s.model
    att = model.attention
    head = att.head_dim or ((att.kv_lora_rank or 0) + (att.qk_rope_head_dim or 0)) or 128
    attention = 2 * 2 * (att.layers or model.layers) * att.num_heads * head * s.context / 2
    flops = 2 * active + attention
    t = flops / (parallel * peak * 1e12 * EFF_COMPUTE)
    text = (
        f"prefill: (2 × {active / 1e9:.1f}B + attention at half the context) ÷ ({parallel} × {peak:g} {dtype} TFLOPS)"
    )
    # a batch of prompt tokens still reads the weights it touches once: short prompts are memory-bound
    chunk = min(s.context, PREFILL_CHUNK["expert-layers" if s.layer_split else "weights-gb"])
    if split is not None:
        gpu_layers = split.moe_layers - s.cpu_expert_layers
        read = split.resident_bytes + gpu_layers * split.expert_layer_bytes * touched(model, chunk)
    else:
        read = s.size_bytes - s.streamed_gib_per_gpu * 2**30 * s.gpus_per_node * s.nodes
    floor = read / parallel / (s.hardware.bandwidth_gbs * 1e9 * EFF_GPU_MEMORY) / chunk
    if floor > t:
        t = floor
        text += f", but a {chunk}-token batch reads {read / 1e9:.1f} GB of weights: memory-bound"
    if split is not None and s.cpu_expert_layers and s.cpu_prefill:
        lines.append(text + "; the CPU computes every routed expert: CPU throughput is not in the catalog")
        return None
    if s.cpu_dense_layers:
        moved = s.size_bytes * s.cpu_dense_layers / model.layers
        t += moved / (s.hardware.host_link.gbs * 1e9 * EFF_PCIE) / PREFILL_CHUNK["expert-layers"]
        text += f" + {moved / 1e9:.1f} GB of CPU layers over PCIe per {PREFILL_CHUNK['expert-layers']}-token batch"
    if split is not None and s.cpu_expert_layers:
        chunk = PREFILL_CHUNK["expert-layers"]
        moved = s.cpu_expert_layers * split.expert_layer_bytes
        t += moved / (s.hardware.host_link.gbs * 1e9 * EFF_PCIE) / chunk
        text += f" + {moved / 1e9:.1f} GB of host experts over PCIe per {chunk}-token batch"
    if s.streamed_gib_per_gpu:
        chunk = PREFILL_CHUNK["weights-gb"]
        t += s.streamed_gib_per_gpu * 2**30 / (s.hardware.host_link.gbs * 1e9 * EFF_PCIE) / chunk
        text += f" + {s.streamed_gib_per_gpu:g} GiB over PCIe per {chunk}-token chunk"
    lines.append(text + f" → {1 / t:,.0f} tok/s")
    return 1 / t
