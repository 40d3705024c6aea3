"""Memory budget: weights + KV cache + linear-attention state per GPU, solved into context × concurrency.

Pure functions over catalog facts. Conventions (each is said in the output where it matters):

* Weights are the checkpoint's on-disk size (checkpoint_size.py) spread evenly over the GPUs that shard
  them (tensor/expert parallel: all GPUs; llama.cpp layer split: the GPUs of the node).
* KV and state bytes per token and per request are the request's footprint (footprint.py).
* "Fits" is the engines' own start-up rule: the KV pool must hold one request at the full
  context; the scheduler then runs up to `concurrency` requests sharing that pool. Linear-
  attention state is reserved per running request, so it bounds concurrency directly. llama.cpp
  allocates its context statically: `ctx-size = context × parallel` must fit.
"""

from __future__ import annotations

import math
from dataclasses import field

from ..catalog.schema import Engine, Hardware, Model
from ..frozen import frozen
from .footprint import Footprint

GIB = float(2**30)
SMALL_BATCH = 4  # default scheduler cap when nothing else decides it
MIN_CONTEXT = 4096
# below a context this long every few thousand tokens count (a 32B on a 24 GB card holds 28,672, and rounding
# down to a power of two would plan 16,384): sizes step by FINE_STEP; above it, by powers of two
FINE_CONTEXT = 32768
FINE_STEP = 4096


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
    def window_per_request_bytes(self) -> float:
        """The sliding-window layers' KV of one request: at most the window's tokens, whatever the context."""
        return max(0.0, self.per_request_bytes - self.state_per_request_bytes)

    @property
    def state_gib(self) -> float:
        return self.concurrency * self.per_request_bytes / GIB

    @property
    def free_gib(self) -> float:
        return self.kv_pool_gib - self.kv_gib - self.state_gib


def round_contexts(max_context: int) -> list[int]:
    """The model's max, then power-of-two sizes below it (in 1024s) down to FINE_CONTEXT, then every
    FINE_STEP below that, largest first."""
    sizes = [max_context]
    size = 1 << (max(max_context - 1, 1)).bit_length() - 1
    while size > FINE_CONTEXT:
        if size < max_context and size % 1024 == 0:
            sizes.append(size)
        size //= 2
    size = min(FINE_CONTEXT, (max_context - 1) // FINE_STEP * FINE_STEP)
    while size >= MIN_CONTEXT:
        sizes.append(size)
        size -= FINE_STEP
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
    concurrency_by: str = "user"  # who fixed `concurrency`: "user" (--concurrency) or "recipe" (its own flag)
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


def _whose(engine: Engine, requested: float | None) -> str:
    """Which fraction this is: plans differ in it (a recipe's own value, or the one recipegen sets), so say so."""
    flag = engine.flags.memory_fraction
    if flag is None:
        return ""
    return f" ({flag} {'as the recipe or user set it' if requested is not None else 'as recipegen plans it'})"


def kv_pool_gib(hw: Hardware, engine: Engine, fraction: float | None, weights_gib: float) -> float:
    """What one GPU has left for KV cache and state beside these weights (choose_fraction's `fraction`): at most
    zero when the weights alone do not fit, whatever the cache."""
    behaviour = engine.memory
    if behaviour.fraction_scope == "instance":
        assert fraction is not None
        return hw.memory_gib * fraction - weights_gib - behaviour.runtime_reserve_gib
    if behaviour.fraction_scope == "static_pool":
        assert fraction is not None
        return hw.memory_gib * fraction - weights_gib
    return hw.memory_gib * (hw.max_memory_fraction or 1.0) - weights_gib - behaviour.runtime_reserve_gib


def plan(inputs: MemoryInputs) -> Budget:
    hw, engine, fp = inputs.hardware, inputs.engine, inputs.footprint
    behaviour = engine.memory
    fraction, notes = choose_fraction(hw, engine, inputs.fraction)
    if inputs.size_note:
        notes.append(inputs.size_note)
    weights = inputs.weights_bytes_per_gpu / GIB
    reserve = behaviour.runtime_reserve_gib
    pool = kv_pool_gib(hw, engine, fraction, weights)
    if behaviour.fraction_scope == "instance":
        assert fraction is not None
        whose = _whose(engine, inputs.fraction)
        usable = f"{hw.memory_gib:g} GiB × {fraction:g}{whose} = {hw.memory_gib * fraction:.1f} GiB"
    elif behaviour.fraction_scope == "static_pool":
        assert fraction is not None
        usable = (
            f"{hw.memory_gib:g} GiB × {fraction:g}{_whose(engine, inputs.fraction)} = "
            f"{hw.memory_gib * fraction:.1f} GiB (weights + KV pool)"
        )
        outside = hw.memory_gib * (1 - fraction)
        if outside < reserve:
            notes.append(
                f"only {outside:.1f} GiB left outside the static pool for activations (~{reserve:g} GiB needed)"
            )
    else:
        usable = f"{hw.memory_gib * (hw.max_memory_fraction or 1.0):.1f} GiB"
    if behaviour.estimate:
        notes.append(
            f"runtime reserve of {reserve:g} GiB per GPU is an estimate (activations, CUDA graphs, comm buffers)"
        )

    def budget(context: int, concurrency: int, limit: str, fits: bool, reason: str) -> Budget:
        pool_tokens = (pool * GIB - concurrency * fp.per_request) / fp.per_token if fp.per_token else math.inf
        if math.isinf(pool_tokens):  # no per-token cache (every layer windowed): requests cost per_request only
            full = int(pool * GIB // fp.per_request) if fp.per_request and pool > 0 else 0
        else:
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
        most = min(max_concurrency(context), max(SMALL_BATCH, _full(pool, fp, context)))
        return min(most, behaviour.max_sequences) if behaviour.max_sequences else most

    if inputs.context is not None and not inputs.context_is_auto:
        context = inputs.context
        if inputs.concurrency is not None:
            return decide(context, inputs.concurrency, inputs.concurrency_by, fits(context, inputs.concurrency))
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
        # with per-request state, concurrency gives way before context does (the LibertAIDAI/GLM-5.3-Flash-NVFP4 card);
        # an engine that allocates the context up front serves one request (--parallel 1): no batch to keep room for
        room_for_batch = static_alloc or not stateful or most >= SMALL_BATCH or context == contexts[-1]
        if most >= 1 and room_for_batch and fits(context, 1 if static_alloc else min(SMALL_BATCH, most)):
            by_state = stateful and most <= SMALL_BATCH and not static_alloc
            limit = "model-max" if at_max else ("state" if by_state else "kv")
            return decide(context, default_concurrency(context), limit, True)
    return decide(contexts[-1], wanted or 1, "kv", False)


def _full(pool_gib: float, fp: Footprint, context: int) -> int:
    if not fp.per_token:  # every layer windowed or recurrent: only the fixed per-request part counts
        return int(pool_gib * GIB // fp.per_request) if fp.per_request else SMALL_BATCH
    return int(pool_gib * GIB // (context * fp.per_token + fp.per_request))


def _verdict(
    ok: bool, context: int, concurrency: int, fp: Footprint, pool: float, stateful: bool, static_alloc: bool, most: int
) -> str:
    kv_one = context * fp.per_token / GIB
    state = concurrency * fp.per_request / GIB
    each = fp.state_per_request / 2**20
    if static_alloc:
        recurrent = f" (with recurrent state: {each:.2f} MiB per slot's sequence, whatever its context)" if each else ""
        text = (
            f"ctx-size {context * concurrency} ({concurrency} slot(s) × {context}) needs "
            f"{kv_one * concurrency + state:.1f} GiB of KV per GPU{recurrent}; {pool:.1f} GiB is free after weights"
        )
    else:
        window = fp.per_request - fp.state_per_request
        text = f"one {context}-token request needs {kv_one + window / GIB:.2f} GiB of KV per GPU"
        if window and fp.per_token:
            text += f" ({window / 2**20:.1f} MiB of it in the sliding-window layers, which keep only their window)"
        elif window:  # every attention layer windowed: the cache stops growing at the window, whatever the context
            text += f" (every attention layer keeps only its window: {window / 2**20:.1f} MiB, whatever the context)"
        if fp.per_request:
            text += f", {concurrency} request(s) reserve {state:.2f} GiB of per-request cache"
            if each:
                text += f" (recurrent state: {each:.2f} MiB per running sequence, whatever its context)"
        text += f"; the KV pool has {pool:.1f} GiB"
    if ok:
        return text + " — fits"
    if stateful and most >= 1:
        return text + (
            f" — too small: per-request state bounds concurrency at {most}; lower the concurrency first "
            "(state is paid per running request), then the context"
        )
    return text + " — too small: lower the context or add GPUs"
