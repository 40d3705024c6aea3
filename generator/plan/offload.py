"""Host-memory offload: which weights leave the GPU, how much host RAM they take, and the engine flags.

Pure functions over catalog facts and the request's host facts. Each engine offloads its own way
(declared in its flag vocabulary, engines/*.yaml):

* `cpu_moe_layers` (llama.cpp `--n-cpu-moe N`): the routed experts of the first N layers stay in
  host RAM and the CPU computes them; attention, shared experts, dense layers and the KV cache
  stay on the GPUs. Decode reads those experts at host-memory speed.
* `cpu_expert_method` (KTransformers `--kt-method`): every routed expert lives in host RAM and runs
  on CPU kernels; the GPU keeps the rest.
* `gpu_layers` for a dense model (llama.cpp `--gpu-layers N`): the last N layers run on the GPUs,
  the first ones (weights and their KV cache) in host RAM on the CPU — every token reads them there.
  llama.cpp allocates each layer's K and V on that layer's device unless `--no-kv-offload` (which the
  plans never write), so the CPU layers' share of `ctx-size` × KV bytes is host RAM too (KV_SOURCE).
* `cpu_offload_gb` (vLLM/SGLang `--cpu-offload-gb X`): X GiB of each GPU's weights stay in host
  RAM and are copied over PCIe in every forward pass — PCIe-bound, whatever the model.

The solver tries the fewest units (expert layers, layers or GiB) that make the GPU budget fit at the
planned context, then checks the host RAM.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from ..catalog.schema import Engine, Hardware, Model, Source
from ..frozen import frozen
from .checkpoint_size import routed_expert_params
from .memory import GIB, Budget

HOST_MEMORY_DEFAULT_GIB = 64.0
HOST_BANDWIDTH_DEFAULT_GBS = 51.2
HOST_RESERVE_GIB = 8.0  # the OS, the engine process, pinned staging buffers
OFFLOAD_CONTEXT = 32768  # planned context of an offload plan unless --context says otherwise
NON_EXPERT_MIN_BYTES = 1.0  # quantised MoE checkpoints keep attention/embeddings at 8 bits or more
NON_EXPERT_MAX_BYTES = 2.0

Mechanism = Literal["expert-layers", "all-experts", "cpu-layers", "weights-gb"]


def _source(url: str, note: str) -> Source:
    # built without validation: validating at import would load pydantic, a third of a start-up
    # (tests/plan/test_offload.py validates these)
    return Source(url=url, note=note)


KV_SOURCE = _source(
    url="https://github.com/ggml-org/llama.cpp/blob/3514e9f6e795d3b3cd88d6614f6c07e7ce6f916f/src/llama-kv-cache.cpp",
    note="llama_kv_cache: each layer's K/V tensors go to the CPU buffer type, or with offload (the default; "
    "--no-kv-offload turns it off) to that layer's device, model.dev_layer(il): a CPU layer's KV stays in host RAM",
)

SOURCES: dict[Mechanism, tuple[Source, ...]] = {
    "expert-layers": (
        _source(
            url="https://github.com/ggml-org/llama.cpp/pull/15077",
            note="--n-cpu-moe N keeps the MoE weights of the first N layers in the CPU (tensor overrides for "
            "blk.0 … blk.N-1 expert tensors); --cpu-moe keeps all of them",
        ),
        _source(
            url="generator/data/engine-cli/llama-server-0c1e570.json", note="--n-cpu-moe, --tensor-split, --gpu-layers"
        ),
    ),
    "all-experts": (
        _source(
            url="https://github.com/kvcache-ai/ktransformers/blob/v0.7.0/doc/en/DeepSeek-V4-Flash.md",
            note="experts split between CPU (--kt-cpuinfer) and GPU (--kt-num-gpu-experts); --kt-method picks the "
            "CPU kernel",
        ),
        _source(
            url="generator/data/engine-cli/sglang-0.5.23.json",
            note="--kt-method, --kt-weight-path, --kt-num-gpu-experts",
        ),
    ),
    "cpu-layers": (
        _source(
            url="generator/data/engine-cli/llama-server-0c1e570.json",
            note="--gpu-layers N: max. number of layers to store in VRAM; the others stay in host RAM on the CPU",
        ),
        KV_SOURCE,
        _source(
            url="https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference/blob/00dd2bdeb2404263f22bd6c1cd46ce397e341db5/README.md",
            note="'-ngl 0 to only use the CPU for inference, -ngl 10000 to make sure all layers are offloaded to GPU'",
        ),
    ),
    "weights-gb": (
        _source(
            url="https://docs.vllm.ai/en/stable/api/vllm/config/offload/",
            note="OffloadConfig: with cpu_offload_gb > 0 the 'auto' backend picks UVA (Unified Virtual Addressing) "
            "zero-copy offloading: the GPU reads the offloaded weights from pinned host memory over PCIe when it "
            "uses them",
        ),
        _source(
            url="https://github.com/vllm-project/vllm/issues/3563",
            note="cpu-offload design: the weights are pinned on the CPU and streamed into the GPU layer by layer "
            "during every forward pass",
        ),
        _source(url="generator/data/engine-cli/vllm-0.33.0.json", note="--cpu-offload-gb (float); SGLang 0.5.23: int"),
    ),
}

# KTransformers' --kt-method per checkpoint format (its supported-models-and-precision page)
KT_METHODS = {
    "bf16": "BF16",
    "fp8": "FP8",
    "fp8_block": "FP8",
    "int4": "RAWINT4",
    "gptq": "GPTQ_INT4",
    "gguf": "LLAMAFILE",
    "mixed_fp4_fp8": "MXFP4",
}


@frozen
class HostFacts:
    """The machine's RAM and its bandwidth: inputs of the request, with defaults said out loud."""

    memory_gib: float = HOST_MEMORY_DEFAULT_GIB
    bandwidth_gbs: float = HOST_BANDWIDTH_DEFAULT_GBS
    memory_default: bool = True
    bandwidth_default: bool = True

    def describe(self) -> str:
        mem = f"{self.memory_gib:g} GiB RAM" + (" (default; set --host-memory)" if self.memory_default else "")
        bw = f"{self.bandwidth_gbs:g} GB/s" + (
            " (default: dual-channel DDR4-3200; set --host-bandwidth)" if self.bandwidth_default else ""
        )
        return f"host: {mem}, {bw}"


@frozen
class WeightSplit:
    """The checkpoint split into routed experts (per MoE layer) and everything else, in bytes."""

    expert_layer_bytes: float
    moe_layers: int
    dense_layers: int
    resident_bytes: float
    note: str
    expert_params: float = 0.0  # routed-expert parameters, from the shapes
    total_params: float = 0.0  # the total those shapes sit in


def weight_split(model: Model, size: float) -> WeightSplit | None:
    """Routed-expert bytes per MoE layer. None for a dense model.

    The result's `total_params` is the catalog's total, or the total from the shapes where the expert
    shapes alone exceed it (a rounded headline such as Kimi K2's "1T").

    Expert parameters come from the shapes (routed_expert_params: experts × projections × width × moe_intermediate),
    or from total − active when the catalog has no expert width. Non-expert weights are taken at
    the checkpoint's average bytes per parameter, clamped to 1–2 B (quantised MoE checkpoints keep
    attention and embeddings at 8 bits or more); the experts hold the rest of the file.
    """
    moe = model.moe
    if moe is None:
        return None
    moe_layers = model.layers - moe.dense_layers
    total = model.params_total_b * 1e9
    found = routed_expert_params(model)
    if found is None:
        return None
    expert_params, how = found
    if expert_params >= total:
        # the catalog's total is a rounded headline (Kimi K2: "1T"); the shapes say more: the experts plus what a
        # token reads besides its top-k of them (active − top-k share of the experts), or 2 % if unknown
        besides = expert_params * 0.02
        if model.params_active_b is not None and model.params_active_b * 1e9 > expert_params * moe.top_k / moe.experts:
            besides = model.params_active_b * 1e9 - expert_params * moe.top_k / moe.experts
        total = expert_params + besides
        how += f"; the catalog's {model.params_total_b:g}B total is below that, so the total is taken from the shapes"
    per_param = size / total
    rest = (total - expert_params) * min(max(per_param, NON_EXPERT_MIN_BYTES), NON_EXPERT_MAX_BYTES)
    experts = size - rest
    if experts <= 0:
        return None
    note = (
        f"routed experts ≈ {expert_params / 1e9:.1f}B parameters ({how}) = {experts / 1e9:.1f} GB of the "
        f"{size / 1e9:.1f} GB checkpoint; the other {rest / 1e9:.1f} GB (attention, shared experts, dense layers, "
        "embeddings) stay on the GPUs"
    )
    return WeightSplit(experts / moe_layers, moe_layers, moe.dense_layers, rest, note, expert_params, total)


@frozen
class OffloadPlan:
    mechanism: Mechanism
    host_bytes: float  # weights kept in one machine's host RAM
    cpu_layers: int  # layers (or their routed experts) in host RAM
    moe_layers: int  # the layers that could go: MoE layers, or every layer of a dense model (cpu-layers)
    gb_per_gpu: int  # weights-gb: GiB per GPU
    host: HostFacts
    budget: Budget  # the GPU budget with the offloaded weights gone
    tensor_split: tuple[int, ...] = ()  # llama.cpp: layers per GPU, balancing the experts left on the GPUs
    split: WeightSplit | None = None
    host_kv_bytes: float = 0.0  # cpu-layers: the KV cache of the layers on the CPU, in the same host RAM

    @property
    def host_gib(self) -> float:
        """All the host RAM the plan takes: weights, and the KV cache of layers the CPU runs."""
        return (self.host_bytes + self.host_kv_bytes) / GIB

    @property
    def host_weights_gib(self) -> float:
        return self.host_bytes / GIB

    @property
    def host_kv_gib(self) -> float:
        return self.host_kv_bytes / GIB

    def host_what(self) -> str:
        """What the host RAM holds: 'weights', or 'weights and KV cache' with both figures."""
        if not self.host_kv_bytes:
            return "weights"
        return f"weights and KV cache ({self.host_weights_gib:.1f} + {self.host_kv_gib:.1f} GiB)"

    def summary(self) -> str:
        room = self.host.memory_gib - HOST_RESERVE_GIB
        if self.mechanism == "weights-gb":
            what = f"{self.gb_per_gpu} GiB of weights per GPU in host RAM, copied over PCIe every forward pass"
        elif self.mechanism == "all-experts":
            what = f"all {self.moe_layers} layers' routed experts in host RAM, computed by the CPU"
        elif self.mechanism == "cpu-layers":
            what = f"{self.cpu_layers} of {self.moe_layers} layers (weights and KV) in host RAM, computed by the CPU"
        else:
            what = (
                f"the routed experts of {self.cpu_layers} of {self.moe_layers} MoE layers in host RAM, "
                "computed by the CPU"
            )
        held = f" ({self.host_weights_gib:.1f} weights + {self.host_kv_gib:.1f} KV cache)" if self.host_kv_bytes else ""
        return f"{what}: {self.host_gib:.1f} GiB{held} of the {room:g} GiB usable ({self.host.describe()})"


def mechanism_of(engine: Engine, model: Model | None = None) -> Mechanism | None:
    flags = engine.flags
    if flags.cpu_expert_method:
        return "all-experts"
    if flags.cpu_moe_layers and (model is None or model.moe is not None):
        return "expert-layers"
    if flags.gpu_layers and model is not None and model.moe is None:
        return "cpu-layers"
    if flags.cpu_offload_gb:
        return "weights-gb"
    return None


# (weights bytes per GPU, share of the KV cache on the GPUs) -> the GPU budget at the planned context
Fit = Callable[[float, float], Budget]


@frozen
class Refusal:
    reason: str
    host_memory_gib: float | None = None  # the --host-memory that would make it fit, when RAM is all that is short


def solve(
    engine: Engine,
    hardware: Hardware,
    model: Model,
    size: float,
    shards: int,
    host: HostFacts,
    fit: Fit,
    per_node: int | None = None,
) -> OffloadPlan | Refusal:
    """The least offload that fits the GPUs, within one machine's host RAM; or why none does.

    `shards`: GPUs the weights are spread over; `per_node`: those of them in one machine (host RAM
    is per machine). Host bytes in the plan are per machine."""
    mechanism = mechanism_of(engine, model)
    if mechanism is None:
        return Refusal(f"{engine.name} has no host-offload mechanism in the catalog")
    if hardware.memory_kind == "unified":
        return Refusal(f"{hardware.name} shares one memory between CPU and GPU: offloading to host RAM frees nothing")
    room = (host.memory_gib - HOST_RESERVE_GIB) * GIB
    split = weight_split(model, size) if mechanism in ("expert-layers", "all-experts") else None
    if mechanism in ("expert-layers", "all-experts") and split is None:
        return Refusal(f"{model.name} has no routed experts to keep in host RAM ({engine.name} offloads experts only)")

    def host_check(plan: OffloadPlan) -> OffloadPlan | Refusal:
        if plan.host_gib * GIB > room:
            return Refusal(
                f"offload needs {plan.host_gib:.1f} GiB of host RAM for {plan.host_what()} but {host.memory_gib:g} GiB "
                f"less ~{HOST_RESERVE_GIB:g} GiB for the OS leaves {room / GIB:.1f} GiB"
                + (" (the default; pass --host-memory if the machine has more)" if host.memory_default else ""),
                math.ceil(plan.host_gib + HOST_RESERVE_GIB),
            )
        return plan

    if mechanism == "weights-gb":
        per_gpu = size / shards
        most = math.ceil(per_gpu / GIB)
        if most < 1:
            return Refusal("even with every weight in host RAM the GPUs do not fit: no weights to offload")
        found = least(1, most, lambda gb: fit(max(per_gpu - gb * GIB, 0.0), 1.0))
        if isinstance(found, Budget):
            return Refusal(f"even with every weight in host RAM the GPUs do not fit: {found.reason}")
        gb, budget = found
        return host_check(OffloadPlan(mechanism, gb * GIB * (per_node or shards), 0, 0, gb, host, budget))

    if mechanism == "cpu-layers":
        layers = model.layers

        def on_gpus(cpu_layers: int) -> Budget:
            gpu_layers = layers - cpu_layers
            return fit(size * gpu_layers / layers / shards, gpu_layers / layers)

        # at least one layer stays on the GPUs; the refusal quotes the budget with none left there
        found = least(1, layers - 1, on_gpus) if layers > 1 else on_gpus(layers)
        if isinstance(found, Budget):
            last = found if layers <= 1 else on_gpus(layers)
            return Refusal(f"even with {layers - 1} of {layers} layers in host RAM the GPUs do not fit: {last.reason}")
        cpu_layers, budget = found
        kv = host_kv_bytes(budget, shards, cpu_layers, layers)
        plan = OffloadPlan(mechanism, size * cpu_layers / layers, cpu_layers, layers, 0, host, budget, host_kv_bytes=kv)
        return host_check(plan)

    assert split is not None
    if mechanism == "all-experts":
        budget = fit(split.resident_bytes / shards, 1.0)
        if not budget.fits:
            return Refusal(f"even with every routed expert in host RAM: {budget.reason}")
        host_bytes = split.expert_layer_bytes * split.moe_layers
        return host_check(OffloadPlan(mechanism, host_bytes, split.moe_layers, split.moe_layers, 0, host, budget))

    def experts_on_host(cpu_layers: int) -> Budget:
        on_gpu = split.resident_bytes + (split.moe_layers - cpu_layers) * split.expert_layer_bytes
        return fit(on_gpu / shards, 1.0)

    found = least(1, split.moe_layers, experts_on_host)
    if isinstance(found, Budget):
        return Refusal(f"even with all {split.moe_layers} expert layers in host RAM: {found.reason}")
    cpu_layers, budget = found
    plan = OffloadPlan(
        mechanism,
        cpu_layers * split.expert_layer_bytes,
        cpu_layers,
        split.moe_layers,
        0,
        host,
        budget,
        tensor_split=balanced_split(split, model.layers, cpu_layers, shards, budget),
        split=split,
    )
    return host_check(plan)


def host_kv_bytes(budget: Budget, shards: int, cpu_layers: int, layers: int) -> float:
    """The KV cache (and per-sequence state) of the layers llama.cpp runs on the CPU, in bytes of host RAM.

    The budget holds the GPUs' share, `(layers - cpu_layers) / layers` of it spread over `shards` GPUs; llama.cpp
    allocates the whole ctx-size (context × slots) up front for every layer, so the CPU layers take the same per
    layer on the host side."""
    on_gpus = layers - cpu_layers
    if on_gpus <= 0:
        return 0.0
    per_gpu = (
        budget.context * budget.concurrency * budget.per_token_bytes + budget.concurrency * budget.per_request_bytes
    )
    return per_gpu * shards * cpu_layers / on_gpus


def least(low: int, high: int, budget_with: Callable[[int], Budget]) -> tuple[int, Budget] | Budget:
    """The fewest units in low..high (low <= high) whose budget fits, with that budget; else the budget at `high`.

    Offloading one more unit never takes memory from the GPUs (weights and KV only shrink, and float
    rounding keeps that order), so "fits" is monotone in the units and a bisection finds the same
    answer as trying them one by one, in a logarithmic number of memory plans.
    """
    top = budget_with(high)
    if not top.fits:
        return top
    best = (high, top)
    while low < high:
        middle = (low + high) // 2
        budget = budget_with(middle)
        if budget.fits:
            best, high = (middle, budget), middle
        else:
            low = middle + 1
    return best


def balanced_split(split: WeightSplit, layers: int, cpu_layers: int, gpus: int, budget: Budget) -> tuple[int, ...]:
    """Layers per GPU so each GPU holds about the same bytes.

    llama.cpp hands layers out in order (`--tensor-split` is a proportion of layers) and
    `--n-cpu-moe N` empties the experts of the *first* N layers, so an even split would leave the
    first GPU half full; weight each layer by what it keeps on the GPU.
    """
    if gpus <= 1:
        return ()
    resident_per_layer = split.resident_bytes / layers
    kv_per_layer = budget.context * budget.concurrency * budget.per_token_bytes * gpus / layers
    first_moe = split.dense_layers
    cost = [
        resident_per_layer
        + kv_per_layer
        + (split.expert_layer_bytes if i >= first_moe and i - first_moe >= cpu_layers else 0.0)
        for i in range(layers)
    ]
    target = sum(cost) / gpus
    counts: list[int] = []
    acc, count = 0.0, 0
    for c in cost:
        if acc + c / 2 > target * (len(counts) + 1) and len(counts) < gpus - 1 and count:
            counts.append(count)
            count = 0
        acc += c
        count += 1
    counts.append(count)
    counts += [0] * (gpus - len(counts))
    return tuple(counts)


def kt_method(quant: str) -> str | None:
    return KT_METHODS.get(quant)
