"""Speed estimate of a plan: the step-time model of steptime.py with the constants fitted per engine.

Decode: one step's time is the step model (memory or compute roofline + engine, kernel, all-reduce, hop,
host and PCIe terms) with the coefficients scripts/calibrate.py fitted over recipes/measurements/
(speed_constants.py). The band is the cross-validated residual band of the plan's class: measured ÷
estimated of each published row predicted by a fit that never saw its source, 10th–90th percentile.
Prefill is compute-bound: FLOPs per token over the GPUs' dense tensor throughput, plus any weights that
cross PCIe per chunk.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..frozen import frozen
from . import speed_constants as fitted
from .offload import WeightSplit
from .steptime import (
    EFF_COMPUTE,
    EFF_PCIE,
    MTP_ACCEPTANCE,
    PART_READ,
    Scenario,
    step_parts,
    terms,
    tflops,
    touched,
)

__all__ = ["Estimate", "Scenario", "class_of", "estimate", "regime_of", "tflops", "touched"]

DISK_GBS = 2.0  # a local NVMe SSD, sequential read
PREFILL_CHUNK = {"expert-layers": 512, "weights-gb": 2048}  # llama.cpp ubatch; vLLM/SGLang chunk
SLOW_TPS = 5.0  # below this a plan is called slow first
# the context of the figure quoted first: one request alone in a chat a few turns long, what a user sees typing
TYPICAL_CONTEXT = 4096
OFFLOAD_BOUND = ("host RAM bandwidth", "PCIe (weights copied every step)")
# prefill, measured ÷ estimated over the rows with a prompt speed (their full spread: a small sample;
# llama.cpp's quantized int8 GEMMs beat the dense BF16 figure, short MoE prompts fall short of it)
PREFILL_BAND = (0.35, 2.1)
PREFILL_READ = 0.7  # share of GPU memory bandwidth a prefill chunk reads weights at
Regime = str  # a calibration class: "single-GPU dense · vllm", "tensor-parallel MoE", "CPU offload", …


def class_of(s: Scenario) -> str:
    """The calibration class of a plan: the README reports each class's cross-validated error."""
    gpus = s.gpus_per_node * s.nodes
    if s.cpu_expert_layers or s.cpu_dense_layers or s.streamed_gib_per_gpu:
        return "CPU offload"
    if s.nodes > 1:
        return "multi-node"
    if s.hardware.host_link.kind == "unified":
        return "unified memory"
    kind = "MoE" if s.model.moe is not None else "dense"
    if gpus == 1:
        return f"single-GPU {kind} · {s.engine or fitted.DEFAULT_ENGINE}"
    if s.layer_split:
        return "layer split"
    return f"tensor-parallel {kind}"


regime_of = class_of  # the name before the classes replaced the three regimes


def band_of(regime: str) -> tuple[float, float]:
    return fitted.BANDS.get(regime, fitted.POOLED_BAND)


@frozen
class Estimate:
    decode_tps: float  # one request alone at `single_context` tokens: what a user chatting sees
    aggregate_tps: float  # all `concurrency` requests together at the planned `context`
    concurrency: int
    context: int
    load_s: float
    bound: str  # what dominates a decode step
    # what the derivation, the assumptions and the prefill figure are worked out from when first read (a matrix
    # cell ranks by the decode figures above and reads none of them)
    scenario: Scenario
    regime: Regime = "single-GPU dense · vllm"
    load_reported: tuple[float, float] | None = None  # minutes to ready, as a curated recipe's source measured them
    single_context: int = TYPICAL_CONTEXT
    loaded_tps: float = 0.0  # each request's rate while `concurrency` run at the planned context
    # tokens of context each of the `concurrency` requests holds when the KV pool cannot hold them all at the planned
    # context (a paging engine admits them beside one full-length request, and they share the pool); 0: they fit
    pool_share: int = 0

    def load_text(self) -> str:
        """The one load-time figure every output prints: the recipe's measurement when it has one."""
        if self.load_reported is not None:
            low, high = self.load_reported
            return f"loading takes {low:g}–{high:g} min (as the recipe's source measured)"
        return f"weights load in ~{self.load_s:.0f} s (estimate)"

    @property
    def lines(self) -> tuple[str, ...]:
        """How the decode and prefill figures were derived, one step a line."""
        return self._detail()[0]

    @property
    def assumptions(self) -> tuple[str, ...]:
        return self._detail()[1]

    @property
    def prefill_tps(self) -> float | None:
        """Prompt tokens per second at the planned context (None: the CPU computes the routed experts)."""
        return self._detail()[2]

    def _detail(self) -> tuple[tuple[str, ...], tuple[str, ...], float | None]:
        known = self.__dict__.get("_worked_out")
        if known is None:  # kept beside the fields: equality and evolve read the fields alone
            known = self.__dict__["_worked_out"] = _detail(self.scenario)
        return known

    @property
    def band(self) -> tuple[float, float]:
        return band_of(self.regime)

    @property
    def slow(self) -> bool:
        """Under 5 tok/s for one request, or paced by host RAM or PCIe: say so before the number."""
        return self.decode_tps < SLOW_TPS or self.bound in OFFLOAD_BOUND

    def per_request(self) -> str:
        """ "~N tok/s for one request (likely A–B)": the expected single-stream figure and its class's band."""
        low, high = self.band
        return (
            f"~{rate(self.decode_tps)} tok/s for one request (likely {rate(low * self.decode_tps)}–"
            f"{rate(high * self.decode_tps)})"
        )

    def short(self) -> str:
        """The single-stream figure alone, "slow" or "offload-bound" first when it is: a runner-up's one line."""
        line = f"~{rate(self.decode_tps)} tok/s for one request"
        if self.bound in OFFLOAD_BOUND:
            return f"offload-bound: {line}"
        return f"slow: {line}" if self.slow else line

    def loaded(self) -> str:
        """What the planned load does to it: the total at the planned concurrency, or one request's rate with
        its context filled; "" when the plan is one request of a typical context."""
        if self.concurrency > 1 and self.pool_share:
            return (
                f"~{rate(self.aggregate_tps)} tok/s total at {self.concurrency} requests sharing the KV pool "
                f"(~{self.pool_share:,} tokens each; ~{rate(self.loaded_tps)} tok/s each)"
            )
        if self.concurrency > 1:
            return (
                f"~{rate(self.aggregate_tps)} tok/s total at {self.concurrency} requests of {self.context:,} tokens "
                f"(~{rate(self.loaded_tps)} each)"
            )
        if self.context > self.single_context:
            return f"~{rate(self.loaded_tps)} tok/s with its context filled to {self.context:,} tokens"
        return ""

    def speed_line(self) -> str:
        """The figure a user reads first (one request of a typical chat), then the planned load's; "slow" first
        when it is."""
        low, high = self.band
        line = (
            f"~{rate(self.decode_tps)} tok/s for one request at {self.single_context:,} tokens of context "
            f"(likely {rate(low * self.decode_tps)}–{rate(high * self.decode_tps)})"
        )
        if loaded := self.loaded():
            line += f"; {loaded}"
        if self.bound in OFFLOAD_BOUND:
            line = f"offload-bound (paced by {self.bound}): {line}"
        elif self.slow:
            line = f"slow (under {SLOW_TPS:g} tok/s for one request): {line}"
        return line

    def headline(self) -> str:
        prefill = "unknown"
        if self.prefill_tps is not None:
            lo, hi = PREFILL_BAND
            prefill = f"~{self.prefill_tps:,.0f} (likely {lo * self.prefill_tps:,.0f}–{hi * self.prefill_tps:,.0f})"
        bound = "" if self.slow and self.bound in OFFLOAD_BOUND else f"; bound by {self.bound}"
        return f"{self.speed_line()}; prefill {prefill} tok/s; {self.load_text()}{bound}"


def rate(v: float) -> str:
    return f"{v:.1f}" if v < 10 else f"{v:,.0f}"


def _decode(s: Scenario) -> tuple[float, dict[str, float], float]:
    """Seconds per generated token of one request, the step's parts, and the step itself."""
    engine, shared = fitted.constants(s.engine)
    parts = step_parts(terms(s), engine, shared)
    step = sum(parts.values())
    per_token = step
    if s.mtp and s.model.mtp_layers:
        per_token = step * (1 + s.model.mtp_layers / s.model.layers) / (1 + MTP_ACCEPTANCE)
    return per_token, parts, step


def estimate(s: Scenario) -> Estimate:
    batch = max(1, s.concurrency)
    per_token, parts, step = _decode(s)
    # the figure quoted first: the same plan serving one request of a typical chat
    single_context = min(s.context, TYPICAL_CONTEXT)
    same = (batch, s.context) == (1, single_context)
    single, single_parts, _ = (per_token, parts, step) if same else _decode(_alone(s, single_context))
    held = s.kv_pool_gpu / s.kv_per_token_gpu if s.kv_per_token_gpu and math.isfinite(s.kv_pool_gpu) else math.inf
    pool_share = int(held // batch) if batch > 1 and batch * s.context > held else 0
    return Estimate(
        pool_share=min(pool_share, s.context),
        decode_tps=1 / single,
        aggregate_tps=batch / per_token,
        concurrency=batch,
        context=s.context,
        single_context=single_context,
        loaded_tps=1 / per_token,
        load_s=s.size_bytes / (DISK_GBS * 1e9),
        bound=max(single_parts, key=lambda k: single_parts[k]),
        regime=class_of(s),
        scenario=s,
    )


def _alone(s: Scenario, single_context: int) -> Scenario:
    return replace(s, concurrency=1, context=single_context)


def _detail(s: Scenario) -> tuple[tuple[str, ...], tuple[str, ...], float | None]:
    """An estimate's derivation lines, its assumptions and its prefill figure (Estimate reads them on demand)."""
    model, hw = s.model, s.hardware
    gpus = s.gpus_per_node * s.nodes
    batch = max(1, s.concurrency)
    t = terms(s)
    engine, _ = fitted.constants(s.engine)
    per_token, parts, step = _decode(s)
    lines = list(t.lines)
    read = PART_READ.get(hw.id)
    lines.append(
        f"GPU memory: {t.x['mem'] * 1e3:.2f} ms at {t.read_share:.0%} of {hw.bandwidth_gbs:g} GB/s"
        + (f" (published read figure: {read[1]})" if read else " (assumed achievable share)")
        + f" × {engine['mem']:.2f} ({s.engine or fitted.DEFAULT_ENGINE}'s fitted factor) = "
        f"{engine['mem'] * t.x['mem'] * 1e3:.2f} ms"
    )
    if "GPU compute" in parts:
        lines.append(f"compute: {t.compute_s * 1e3:.2f} ms exceeds the memory time at {batch} request(s)")
    for what, seconds in parts.items():
        if what not in ("GPU memory bandwidth", "GPU compute"):
            lines.append(f"{what}: {seconds * 1e3:.2f} ms")
    if s.mtp and model.mtp_layers:
        lines.append(
            f"MTP speculative decoding: {1 + MTP_ACCEPTANCE:.2f} tokens per step at {MTP_ACCEPTANCE:.0%} acceptance, "
            f"the draft layer adds {model.mtp_layers / model.layers:.1%}"
        )
    lines.append(
        f"decode step: {step * 1e3:.2f} ms → {1 / per_token:.1f} tok/s per request, {batch / per_token:.0f} in all "
        f"({batch} request(s) at {s.context:,} tokens)"
    )
    single_context = min(s.context, TYPICAL_CONTEXT)
    same = (batch, s.context) == (1, single_context)
    single, _, single_step = (per_token, parts, step) if same else _decode(_alone(s, single_context))
    lines.append(f"one request at {single_context:,} tokens: step {single_step * 1e3:.2f} ms → {1 / single:.1f} tok/s")
    active = (model.params_active_b or model.params_total_b) * 1e9
    peak, dtype = tflops(hw, s.quant)
    parallel = 1 if s.layer_split else gpus
    prefill = _prefill(s, t.split, active, peak, dtype, parallel, lines)
    regime = class_of(s)
    low, high = band_of(regime)
    assumptions: tuple[str, ...] = (
        f"step constants fitted per engine on {fitted.ROWS} published runs (recipes/measurements); the band "
        f"×{low:g}–×{high:g} is the cross-validated spread of the '{regime}' class"
        + ("" if regime in fitted.BANDS else " (too few rows of its own: the spread of all rows)"),
        "routed experts are picked independently per request; prefix caching ignored"
        + ("" if s.mtp else "; no speculative decoding"),
        f"one request decodes at {single_context:,} tokens of context; the planned load at {s.context:,} tokens "
        "each (longer conversations decode slower)",
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
    return tuple(lines), assumptions, prefill


def _prefill(
    s: Scenario, split: WeightSplit | None, active: float, peak: float, dtype: str, parallel: int, lines: list[str]
) -> float | None:
    model = s.model
    att = model.attention
    head = att.head_dim or ((att.kv_lora_rank or 0) + (att.qk_rope_head_dim or 0)) or 128
    attention = 2 * 2 * (model.layers if att.layers is None else att.layers) * att.num_heads * head * s.context / 2
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
    floor = read / parallel / (s.hardware.bandwidth_gbs * 1e9 * PREFILL_READ) / chunk
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
