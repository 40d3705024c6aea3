"""Memory planner: weights + KV cache + linear-attention state per GPU, solved into context × concurrency.

Pure functions over catalog facts. Conventions (each is said in the output where it matters):

* Weights are the checkpoint's on-disk size spread evenly over the GPUs that shard them
  (tensor/expert parallel: all GPUs; llama.cpp layer split: the GPUs of the node).
* KV bytes per token follow the attention kind *as the engine stores it*: GQA keys+values per
  KV head (heads sharded by TP only as far as they go), MLA's compressed latent (replicated on
  every TP rank), DSA indexer keys (FP8 + one FP32 scale per 128 values), DeepSeek-V4's
  compressed entries, and sliding-window layers bounded by their window.
* "Fits" is the engines' own start-up rule: the KV pool must hold one request at the full
  context; the scheduler then runs up to `concurrency` requests sharing that pool. Linear-
  attention state is reserved per running request, so it bounds concurrency directly. llama.cpp
  allocates its context statically: `ctx-size = context × parallel` must fit.
"""

from __future__ import annotations

import math
from dataclasses import field

from ..catalog.schema import Engine, Hardware, Model
from ..catalog.schema.common import KvDtype
from ..frozen import frozen

GIB = float(2**30)
SMALL_BATCH = 4  # default scheduler cap when nothing else decides it
MIN_CONTEXT = 4096

KV_BYTES: dict[KvDtype, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "fp8_ds_mla": 1.0,  # per element; the packed per-token layout is handled below
    "q8_0": 34 / 32,  # ggml block: 32 int8 + one fp16 scale
    "q4_0": 18 / 32,
}
# FlashMLA's packed FP8 sparse layout: 512 FP8 latent + 4 FP32 scales + 64 BF16 RoPE = 656 B/token.
FP8_DS_MLA_BYTES = 656
INDEXER_SCALE_BYTES_PER_128 = 4


@frozen
class Footprint:
    """Per-GPU cost of one request: bytes per context token, plus bytes fixed per request."""

    per_token: float
    per_request: float  # sliding-window layers + linear-attention state
    state_per_request: float  # the part of per_request that is recurrent state
    lines: tuple[tuple[str, float], ...]  # (what, bytes per token or per request) for the budget table


@frozen
class Unplannable:
    reason: str


@frozen
class Budget:
    """The memory plan for one GPU, in GiB unless named otherwise."""

    gpu_gib: float
    fraction: float | None
    weights_gib: float
    reserve_gib: float
    kv_pool_gib: float
    per_token_bytes: float
    per_request_bytes: float
    state_per_request_bytes: float
    context: int
    concurrency: int
    full_length_requests: int
    limit: str  # what decided the numbers: "model-max", "kv", "state", "user", "static"
    fits: bool
    reason: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    lines: tuple[tuple[str, float], ...] = field(default_factory=tuple)

    @property
    def kv_gib(self) -> float:
        return self.context * self.per_token_bytes / GIB

    @property
    def state_gib(self) -> float:
        return self.concurrency * self.per_request_bytes / GIB

    @property
    def free_gib(self) -> float:
        return self.kv_pool_gib - self.kv_gib - self.state_gib


BYTES_PER_PARAM = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp8_block": 1.0}


# INT4 weight-only checkpoints (AWQ, GPTQ, compressed-tensors W4A16) quantize the linear layers of the
# transformer blocks in groups of 128 input channels: per weight 4 bits packed into int32, per group one
# 16-bit scale and (AWQ, GPTQ) one 4-bit zero point packed into int32; the token embedding and lm_head
# stay 16-bit. Sources: AutoAWQ's WQLinear_GEMM (w_bit=4, group_size=128, qweight/qzeros int32, scales
# fp16); RedHatAI's W4A16 cards ("Only the weights of the linear operators within transformers blocks
# are quantized", "a linear scaling per group of 128 parameters").
ESTIMATED = "checkpoint size not in the catalog: estimated"  # how every size estimate's note begins
INT4_QUANTS = frozenset({"awq", "gptq", "int4"})
INT4_GROUP = 128
INT4_BYTES_PER_WEIGHT = 0.5 + (2 + 0.5) / INT4_GROUP  # packed nibble + the group's scale and zero point


def int4_estimate(model: Model) -> tuple[float, str] | None:
    """An INT4 checkpoint's size from the parameter count, for a dense text-only model whose quantized
    and 16-bit parts are known from its shapes; None where other modules may stay unquantized (MoE
    routers or shared experts, vision towers) or the vocabulary is not stated."""
    if model.moe is not None or model.multimodal or model.linear_attention is not None or not model.vocab_size:
        return None
    embed = model.vocab_size * model.hidden_size  # the token embedding; lm_head counted as its own copy
    total = model.params_total_b * 1e9
    linear = total - 2 * embed
    if linear <= 0:
        return None
    size = linear * INT4_BYTES_PER_WEIGHT + 2 * embed * 2
    return size, (
        f"{ESTIMATED} as {linear / 1e9:.1f}B linear-layer weights × "
        f"{INT4_BYTES_PER_WEIGHT:.3f} B (4-bit, a 16-bit scale and 4-bit zero per group of {INT4_GROUP}) + "
        f"embedding and lm_head {2 * embed / 1e9:.2f}B × 2 B (16-bit) = {size / 1e9:.1f} GB — assumes group size "
        f"{INT4_GROUP} and nothing else left unquantized (group 32 adds ~11 %)"
    )


def checkpoint_bytes(
    model: Model, variant_size: float | None, quant: str, *, named: bool = False
) -> tuple[float, str | None] | None:
    """The variant's size, or an estimate from the parameter count where the format fixes the bytes
    per parameter (BF16/FP16: 2; FP8: 1, a lower bound since scales and unquantised layers add a few %).
    INT4 weight-only sizes rest on an assumed group size, so they are estimated only for a variant the
    user `named` (--variant, or its repo id): a guess never outranks a checkpoint whose size is known."""
    if variant_size is not None:
        return variant_size, None
    if quant in INT4_QUANTS:
        return int4_estimate(model) if named else None
    per_param = BYTES_PER_PARAM.get(quant)
    if per_param is None:
        return None
    size = model.params_total_b * 1e9 * per_param
    return size, (
        f"{ESTIMATED} as {model.params_total_b:g}B parameters × {per_param:g} B "
        f"= {size / 1e9:.0f} GB"
        + (" (a lower bound: FP8 scales and unquantised layers add a few %)" if per_param == 1 else "")
    )


def _heads_per_rank(heads: int, tp: int) -> int:
    return max(1, heads // tp) if tp <= heads else 1


def footprint(
    model: Model, kv_dtype: KvDtype, tp: int, layer_split: int, state_slots: int, mtp: bool = False
) -> Footprint | Unplannable:
    """KV bytes per token and fixed bytes per request on one GPU.

    `tp` shards heads (vLLM/SGLang); `layer_split` spreads whole layers over GPUs (llama.cpp);
    `mtp`: the plan drafts with the model's MTP layers, which keep a KV cache of their own.
    """
    att = model.attention
    elem = KV_BYTES[kv_dtype]
    kv_layers = (att.layers or model.layers) + (model.mtp_layers if mtp else 0)
    lines: list[tuple[str, float]] = []
    per_token = 0.0
    per_request = 0.0

    if att.kind == "gqa":
        assert att.num_kv_heads is not None and att.head_dim is not None
        heads = _heads_per_rank(att.num_kv_heads, tp)
        per_layer = 2 * heads * att.head_dim * elem
        window_layers = att.sliding_window_layers or 0 if att.sliding_window else 0
        full_layers = kv_layers - window_layers
        per_token += full_layers * per_layer
        lines.append(
            (f"K+V: {full_layers} layers × {heads} KV head(s) × {att.head_dim} × {elem:g} B", full_layers * per_layer)
        )
        if window_layers:
            assert att.sliding_window is not None
            window = window_layers * per_layer * att.sliding_window
            per_request += window
            lines.append(
                (f"sliding window: {window_layers} layers × {att.sliding_window} tokens (per request)", window)
            )
    elif att.kind in ("mla", "dsa", "dsa_nope"):
        assert att.kv_lora_rank is not None
        rope = att.qk_rope_head_dim or 0
        width = att.kv_lora_rank + rope
        if kv_dtype == "fp8_ds_mla" and att.kind != "dsa_nope":
            per_layer = float(FP8_DS_MLA_BYTES)
            what = f"MLA latent: {kv_layers} layers × {FP8_DS_MLA_BYTES} B packed FP8"
        else:
            per_layer = width * elem
            what = f"MLA latent: {kv_layers} layers × ({att.kv_lora_rank}+{rope}) × {elem:g} B"
        per_token += kv_layers * per_layer
        lines.append((what + " (replicated on every TP rank)", kv_layers * per_layer))
        if att.indexer is not None:
            idx = att.indexer
            idx_layers = idx.layers or kv_layers
            key = idx.head_dim + INDEXER_SCALE_BYTES_PER_128 * math.ceil(idx.head_dim / 128)
            cost = idx_layers * key / idx.kpool
            per_token += cost
            pooled = f", pooled {idx.kpool}:1" if idx.kpool > 1 else ""
            lines.append((f"DSA indexer keys: {idx_layers} layers × {key} B FP8{pooled}", cost))
    elif att.kind == "dsv4":
        assert att.head_dim is not None and att.compressed is not None and att.sliding_window is not None
        entry = 584.0 if kv_dtype in ("fp8_ds_mla", "fp8_e4m3") else att.head_dim * elem
        for group in att.compressed:
            if group.layers == 0:
                continue
            cost = group.layers * entry / group.ratio
            per_token += cost
            lines.append((f"compressed KV: {group.layers} layers × {entry:g} B / {group.ratio} tokens", cost))
        window = model.layers * att.sliding_window * entry
        per_request += window
        lines.append((f"sliding window: {model.layers} layers × {att.sliding_window} tokens (per request)", window))
        if att.indexer is not None:
            idx = att.indexer
            ratio = min(g.ratio for g in att.compressed if g.layers)
            idx_layers = idx.layers or next(g.layers for g in att.compressed if g.ratio == ratio)
            key = idx.head_dim + INDEXER_SCALE_BYTES_PER_128 * math.ceil(idx.head_dim / 128)
            cost = idx_layers * key / ratio
            per_token += cost
            lines.append((f"CSA indexer keys: {idx_layers} layers × {key} B / {ratio} tokens", cost))
    else:  # pragma: no cover - the schema's Literal makes this unreachable
        return Unplannable(f"attention kind {att.kind!r} has no KV formula")

    state = 0.0
    linear = model.linear_attention
    if linear is not None:
        heads = _heads_per_rank(linear.num_heads, tp)
        k_heads = _heads_per_rank(linear.num_k_heads, tp) if linear.num_k_heads else heads
        recurrent = linear.layers * heads * linear.head_k_dim * linear.head_v_dim * linear.state_bytes
        conv = 0.0
        if linear.conv_kernel:
            # the short convolution keeps its last kernel-1 inputs of q, k (key heads) and v (value heads), in bf16
            width = 2 * k_heads * linear.head_k_dim + heads * linear.head_v_dim
            conv = linear.layers * (linear.conv_kernel - 1) * width * 2
        state = (recurrent + conv) * state_slots
        slots = f" × {state_slots} slots" if state_slots > 1 else ""
        lines.append(
            (
                f"{linear.kind.upper()} state: {linear.layers} layers × {heads} heads × "
                f"{linear.head_k_dim}×{linear.head_v_dim} × {linear.state_bytes} B + conv{slots} (per request)",
                state,
            )
        )
        per_request += state

    if layer_split > 1:
        per_token /= layer_split
        per_request /= layer_split
        state /= layer_split
        lines = [(f"{what} ÷ {layer_split} GPUs (layer split)", value / layer_split) for what, value in lines]
    return Footprint(per_token, per_request, state, tuple(lines))


def round_contexts(max_context: int) -> list[int]:
    """The model's max, then power-of-two sizes below it (in 1024s), largest first."""
    sizes = [max_context]
    size = 1 << (max(max_context - 1, 1)).bit_length() - 1
    while size >= MIN_CONTEXT:
        if size < max_context and size % 1024 == 0:
            sizes.append(size)
        size //= 2
    return sizes


@frozen
class MemoryInputs:
    hardware: Hardware
    engine: Engine
    model: Model
    weights_bytes_per_gpu: float
    footprint: Footprint
    fraction: float | None  # None: the engine's default / a derived one
    context: int | None  # fixed by the user or a recipe
    concurrency: int | None
    context_is_auto: bool = False
    size_note: str | None = None


def choose_fraction(hardware: Hardware, engine: Engine, requested: float | None) -> tuple[float | None, list[str]]:
    notes: list[str] = []
    behaviour = engine.memory
    if behaviour.fraction_scope == "none":
        return None, notes
    fraction = requested if requested is not None else behaviour.default_fraction
    if fraction is None:
        # static pool (SGLang): leave the runtime reserve outside the pool, rounded down to 0.01
        fraction = math.floor((1 - behaviour.runtime_reserve_gib / hardware.memory_gib) * 100) / 100
        fraction = min(fraction, 0.9)
    cap = hardware.max_memory_fraction
    if cap is not None and fraction > cap and requested is None:
        notes.append(f"{hardware.name} shares its memory with the OS: fraction capped at {cap:g}")
        fraction = cap
    return fraction, notes


def plan(inputs: MemoryInputs) -> Budget:
    hw, engine, fp = inputs.hardware, inputs.engine, inputs.footprint
    behaviour = engine.memory
    fraction, notes = choose_fraction(hw, engine, inputs.fraction)
    if inputs.size_note:
        notes.append(inputs.size_note)
    weights = inputs.weights_bytes_per_gpu / GIB
    reserve = behaviour.runtime_reserve_gib
    if behaviour.fraction_scope == "instance":
        assert fraction is not None
        pool = hw.memory_gib * fraction - weights - reserve
        usable = f"{hw.memory_gib:g} GiB × {fraction:g} = {hw.memory_gib * fraction:.1f} GiB"
    elif behaviour.fraction_scope == "static_pool":
        assert fraction is not None
        pool = hw.memory_gib * fraction - weights
        usable = f"{hw.memory_gib:g} GiB × {fraction:g} = {hw.memory_gib * fraction:.1f} GiB (weights + KV pool)"
        outside = hw.memory_gib * (1 - fraction)
        if outside < reserve:
            notes.append(
                f"only {outside:.1f} GiB left outside the static pool for activations (~{reserve:g} GiB needed)"
            )
    else:
        cap = hw.max_memory_fraction or 1.0
        pool = hw.memory_gib * cap - weights - reserve
        usable = f"{hw.memory_gib * cap:.1f} GiB"
    if behaviour.estimate:
        notes.append(
            f"runtime reserve of {reserve:g} GiB per GPU is an estimate (activations, CUDA graphs, comm buffers)"
        )

    def budget(context: int, concurrency: int, limit: str, fits: bool, reason: str) -> Budget:
        pool_tokens = (pool * GIB - concurrency * fp.per_request) / fp.per_token if fp.per_token else math.inf
        full = int(pool_tokens // context) if context and pool_tokens > 0 else 0
        return Budget(
            gpu_gib=hw.memory_gib,
            fraction=fraction,
            weights_gib=weights,
            reserve_gib=reserve if behaviour.fraction_scope != "static_pool" else 0.0,
            kv_pool_gib=pool,
            per_token_bytes=fp.per_token,
            per_request_bytes=fp.per_request,
            state_per_request_bytes=fp.state_per_request,
            context=context,
            concurrency=concurrency,
            full_length_requests=min(full, 10**6),
            limit=limit,
            fits=fits,
            reason=reason,
            notes=tuple(notes),
            lines=fp.lines,
        )

    if pool <= 0:
        runtime = f" and ~{reserve:g} GiB goes to the runtime" if behaviour.fraction_scope == "instance" else ""
        return budget(
            inputs.context or MIN_CONTEXT,
            inputs.concurrency or 1,
            "weights",
            False,
            f"weights need {weights:.1f} GiB per GPU but only {usable} is usable{runtime}; short by {-pool:.1f} GiB "
            "— use more GPUs, bigger GPUs or a smaller variant",
        )

    static_alloc = behaviour.fraction_scope == "none"  # llama.cpp allocates ctx-size up front

    block = behaviour.kv_block_tokens

    def paged(context: int) -> int:
        """Tokens a request really occupies: KV is allocated in whole blocks."""
        return -(-context // block) * block

    def fits(context: int, concurrency: int) -> bool:
        context = paged(context)
        if static_alloc:
            need = context * concurrency * fp.per_token + concurrency * fp.per_request
        else:
            need = context * fp.per_token + concurrency * fp.per_request
        return need <= pool * GIB

    def max_concurrency(context: int) -> int:
        """Most requests whose fixed per-request cost fits beside one full-length request."""
        context = paged(context)
        if static_alloc:
            unit = context * fp.per_token + fp.per_request
            return int(pool * GIB // unit) if unit else 10**6
        room = pool * GIB - context * fp.per_token
        if room < 0:
            return 0
        return int(room // fp.per_request) if fp.per_request else 10**6

    contexts = round_contexts(inputs.model.max_context)
    stateful = fp.state_per_request > 0

    def decide(context: int, concurrency: int, limit: str, ok: bool) -> Budget:
        most = max_concurrency(context)
        return budget(
            context, concurrency, limit, ok, _verdict(ok, context, concurrency, fp, pool, stateful, static_alloc, most)
        )

    def default_concurrency(context: int) -> int:
        """A small batch, more when full-length requests fit, never more than the state allows."""
        if static_alloc:
            return 1
        return min(max_concurrency(context), max(SMALL_BATCH, _full(pool, fp, context)))

    if inputs.context is not None and not inputs.context_is_auto:
        context = inputs.context
        if inputs.concurrency is not None:
            return decide(context, inputs.concurrency, "user", fits(context, inputs.concurrency))
        if max_concurrency(context) < 1:
            return decide(context, 1, "kv", False)
        concurrency = default_concurrency(context)
        bound_by_state = stateful and concurrency == max_concurrency(context)
        return decide(context, concurrency, "state" if bound_by_state else "kv", True)

    wanted = inputs.concurrency
    for context in contexts:
        at_max = context == inputs.model.max_context
        if wanted is not None:
            if fits(context, wanted):
                return decide(context, wanted, "model-max" if at_max else ("state" if stateful else "kv"), True)
            continue
        most = max_concurrency(context)
        # a useful default keeps room for a small batch of requests beside one at full length;
        # with per-request state, concurrency gives way before context does (seed 003)
        room_for_batch = not stateful or most >= SMALL_BATCH or context == contexts[-1]
        if most >= 1 and room_for_batch and fits(context, 1 if static_alloc else min(SMALL_BATCH, most)):
            limit = "model-max" if at_max else ("state" if stateful and most <= SMALL_BATCH else "kv")
            return decide(context, default_concurrency(context), limit, True)
    return decide(contexts[-1], wanted or 1, "kv", False)


def _full(pool_gib: float, fp: Footprint, context: int) -> int:
    if not fp.per_token:
        return SMALL_BATCH
    return int(pool_gib * GIB // (context * fp.per_token + fp.per_request))


def _verdict(
    ok: bool, context: int, concurrency: int, fp: Footprint, pool: float, stateful: bool, static_alloc: bool, most: int
) -> str:
    kv_one = context * fp.per_token / GIB
    state = concurrency * fp.per_request / GIB
    if static_alloc:
        need = kv_one * concurrency + state
        text = (
            f"ctx-size {context * concurrency} ({concurrency} slot(s) × {context}) needs {need:.1f} GiB of KV "
            f"per GPU; {pool:.1f} GiB is free after weights"
        )
    else:
        text = f"one {context}-token request needs {kv_one:.2f} GiB of KV per GPU"
        if fp.per_request:
            text += f", {concurrency} request(s) reserve {state:.2f} GiB of per-request cache"
        text += f"; the KV pool has {pool:.1f} GiB"
    if ok:
        return text + " — fits"
    if stateful and most >= 1:
        return text + (
            f" — too small: per-request state bounds concurrency at {most}; lower the concurrency first "
            "(state is paid per running request), then the context"
        )
    return text + " — too small: lower the context or add GPUs"
