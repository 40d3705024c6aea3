"""How the runnable paths of a layout are ordered (rank_key), and why the first beats the second (why_first).

Ranking policy (first difference decides, shown to the user as "why this plan first"):
  0. no host offload > experts in host RAM (CPU computes them) > whole layers on the CPU > weights
     copied over PCIe every step; a layout search takes a layout that runs without offload first;
  1. curated before derived: verified > community > reported > derived (someone ran it);
  2. build provenance: official release > model-specific image > community image > fork;
  3. native weight kernels before a fallback, and a path with a known defect (of the checkpoint on this engine, or
     of the build on this GPU) after both. A weight-only fallback (Fallback.weight_only: Marlin W8A16/W4A16, the
     FP8 or FP4 weights dequantised inside the GEMM) counts here only on a GPU that serves many users: it reads the
     bytes a native kernel reads, so one request's memory-bound decode runs at the speed the estimate gives (place
     9 weighs it), and what it costs is the compute a batching server pays. For one user, Qwen3-32B-FP8 through
     Marlin across two RTX 3090s (~34 tok/s) is the same 8-bit class as a layer-split Q6_K (~26) and faster, and
     ranks by that; a fallback that changes the numbers (a BF16 model cast to FP16 on Turing) always counts;
  4. newer build first (facts move with releases);
  5. larger planned context, up to ROOMY_CONTEXT, by its power of two (context_tier): a 4k or 8k window cuts
     a chat or a document short whatever the speed;
  6. between two checkpoints below LOW_BITS (both lossy last resorts, both with a roomy context), more bits per
     weight first, by tenths of a bit: below 4 bits every bit costs clear quality, and more context past
     ROOMY_CONTEXT or a faster decode — even one below INTERACTIVE_TPS — is not worth it (Llama 3.3 70B on one
     24 GB card: IQ2_XS with 16k, not IQ2_XXS with 28k; on 2 × RTX 4080: IQ3_XXS at ~20 tok/s, not IQ2_XXS at ~26:
     a 2-bit mix loses far more than a 3-bit one: https://github.com/ymcui/Chinese-Mixtral/pull/8 measures, on a
     Mixtral, Q2_K at 2.96 bits per weight 0.74 perplexity above Q4_K and IQ3_XXS at 3.14 only 0.15 above it);
  6b. a path that decodes one request at INTERACTIVE_TPS or faster before one that does not: below that a user
     waits on every answer, and the faster path is worth more than more context past ROOMY_CONTEXT or the
     precision class (Llama 3.3 70B on 2 × RTX 3090: AWQ on both GPUs at ~27 tok/s with 20k, not a layer-split
     Q4_K_M at ~17 with 32k);
  7. larger planned context, up to USABLE_CONTEXT, by its power of two: past it, more context is not worth a
     slower path, and within one power of two (20k and 28k) neither is a few thousand tokens;
  8. precision class, between paths that are both fast enough: 8-bit (near-lossless, half the bytes BF16 reads
     per token), then 4-bit (faster still, lossier), then 16-bit; a Q4_K_M GGUF and an AWQ checkpoint are one
     class, Q8_0 and FP8 another. Not among offloaded or slow paths: every one of them is slow, and the fewer
     bytes each step reads the faster it is, so speed decides. On a data-center GPU (Hardware.role: HBM like an
     H100 or GDDR like an L40S or A10) asked about without --concurrency (Candidate.serves_many), a plan that
     batches concurrent requests comes first, then 8-bit, 16-bit, 4-bit: a server card usually serves many users,
     and a single-slot llama-server serves one at a time;
  9. faster estimated decode of one request at a typical context (speed.py): among paths of one class that
     fit with a usable context, the fastest is the one an experienced user picks first; on a data-center
     GPU asked about without --concurrency, the plan's total decode over its planned concurrent requests
     (Qwen3-8B on one H100 or one L40S: vLLM FP8 batching dozens of requests, not a single-slot llama-server Q6_K);
  10. a checkpoint whose size is known before one whose size is an estimate, at the same shown speed;
  11. smaller checkpoint (less to download, more headroom);
  12. ids, for a stable order.
"""

from __future__ import annotations

from typing import Literal, get_args

from ..catalog.ggml import FILE_BPW, file_type_bits
from ..catalog.schema import Deployment, Engine, Variant
from ..catalog.schema.engine import Build
from ..frozen import frozen
from .checkpoint_size import COUNTED_EXACTLY, ESTIMATED, rough_estimate
from .defects import defects
from .memory import GIB
from .types import GATES, Candidate

STATUS_ORDER = {"verified": 0, "community": 1, "reported": 2, "derived": 3}
PROVENANCE_ORDER = {"official": 0, "model-image": 1, "community": 2, "fork": 3}
# a context this long covers everyday chat, RAG and coding sessions; two paths that both plan at least this
# much are ranked by speed, not by which one squeezes in a longer window
USABLE_CONTEXT = 32768
# a context this long holds a long chat or a sizeable document; below it context outranks speed
ROOMY_CONTEXT = 16384
# tokens per second of one request's decode that a chat or a reasoning model's thinking does not keep a user
# waiting on (several times reading speed); a slower path loses to a faster one whatever its precision
INTERACTIVE_TPS = 25.0
CLASS_ORDER = {8: 0, 4: 1, 16: 2}  # precision classes (Candidate.weight_bits), the one a user reaches for first
# on a GPU that serves many users (Candidate.serves_many) memory is rarely what limits a model that fits: full
# precision before a lossier 4-bit checkpoint
SERVING_CLASS_ORDER = {8: 0, 16: 1, 4: 2}
CLASS_WHY = {
    8: "near-lossless at half the bytes of BF16",
    4: "less to read per token",
    16: "full precision",
}


def fallback_rank(via_fallback: bool, weight_only: bool, serves_many: bool) -> int:
    """1 for a fallback kernel that costs a plan what its speed estimate does not show: any fallback on a GPU that
    serves many users (a batching server pays a weight-only kernel's compute), and one that changes the numbers
    (an FP16 cast) anywhere; 0 for a native kernel, and for a weight-only one that decodes for one user."""
    return int(via_fallback and not (weight_only and not serves_many))


def offload_cost(c: Candidate) -> int:
    """0: the GPUs hold every weight; 1: experts run from host RAM on the CPU; 2: whole layers do;
    3: weights cross PCIe every step."""
    if c.offload is None:
        return 0
    return {"expert-layers": 1, "all-experts": 1, "cpu-layers": 2, "weights-gb": 3}[c.offload.mechanism]


def checkpoint_gib(c: Candidate) -> float:
    """The whole checkpoint per GPU: the weights on the GPU plus those an offload keeps in host RAM."""
    if c.budget is None:
        return float("inf")
    host = c.offload.host_weights_gib / max(c.layout.gpus_per_node, 1) if c.offload is not None else 0.0
    return c.budget.weights_gib + host


RankKey = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int, float, int, float, str, str, str]


def context_tier(context: int, cap: int = USABLE_CONTEXT) -> int:
    """The power of two a planned context reaches, up to `cap` (16,384-32,767 tokens: one tier)."""
    return min(context, cap).bit_length()


def slow(c: Candidate) -> bool:
    """A plan fully on the GPU whose estimated single-request decode is below INTERACTIVE_TPS."""
    return c.offload is None and c.speed is not None and c.speed.decode_tps < INTERACTIVE_TPS


def single_slot(c: Candidate) -> bool:
    """A plan that serves one request at a time on a GPU that usually serves many users (serves_many)."""
    return c.serves_many and c.speed is not None and c.speed.concurrency <= 1


def precision_rank(bits: int, serves_many: bool) -> int:
    return (SERVING_CLASS_ORDER if serves_many else CLASS_ORDER)[bits]


def ranked_tps(c: Candidate) -> float:
    """The speed a plan ranks by: one request's decode, or on a GPU that serves many users (serves_many) all its
    planned concurrent requests' decode together — there a batching server beats a single-slot one. Two single-slot
    plans (the single_slot place ranks them together) compare by one request's decode at a typical context: the total
    of one request is its decode with the whole planned context filled, which would rank the plan that plans the longer
    context as the slower one."""
    if c.speed is None:
        return 0.0
    tps = c.speed.aggregate_tps if c.serves_many and not single_slot(c) else c.speed.decode_tps
    # compared as shown (~37 tok/s): a difference the output cannot show is no reason to rank one plan first
    return float(round(tps)) if tps >= 10 else round(tps, 1)


def low_bits_rank(c: Candidate) -> int:
    """Tenths of a bit per weight, negated, for a checkpoint below LOW_BITS on the GPU (0 for any other plan: only
    plans of one low_bit class compare at this place)."""
    return -round(c.bpw * 10) if c.low_bit and c.offload is None and c.bpw is not None else 0


def size_estimated(c: Candidate) -> bool:
    return any(n.startswith(ESTIMATED) for n in (c.budget.notes if c.budget else ()))


# what each place of a rank_key holds, in order (why_first's labels follow it)
RANK_PLACES = (
    "offload", "low_bit", "status", "provenance", "fallback_or_defect", "unparsed", "released", "roomy_context",
    "low_bits", "slow", "usable_context", "single_slot", "precision", "speed", "size_estimated", "checkpoint_gib",
    "engine", "build", "variant",
)  # fmt: skip


def rank_key(c: Candidate) -> RankKey:
    context = c.settings.context or 0
    return (
        offload_cost(c),
        int(c.low_bit),
        STATUS_ORDER[c.status],
        PROVENANCE_ORDER[c.build.provenance],
        2 if defects(c) else fallback_rank(c.via_fallback, c.weight_only_fallback, c.serves_many),
        len(c.unparsed),
        -c.build.released.toordinal(),
        -context_tier(context, ROOMY_CONTEXT),
        low_bits_rank(c),
        int(slow(c)),
        -context_tier(context),
        int(single_slot(c)),
        precision_rank(c.weight_bits, c.serves_many) if c.offload is None and not slow(c) else 0,
        -ranked_tps(c),
        int(size_estimated(c)),
        checkpoint_gib(c),
        c.engine.id,
        c.build.id,
        c.variant.id,
    )


@frozen
class Preview:
    """What a path's layout-free gates tell before its memory is planned: a floor under its rank_key and the
    caveats it has whatever the memory plan decides. The best-first search (layout_search) reads it."""

    engine: Engine
    build: Build
    variant: Variant
    deployment: Deployment | None
    via_fallback: bool
    weight_only_fallback: bool
    serves_many: bool  # the request's (Candidate.serves_many)
    unparsed: tuple[str, ...]
    checkpoint_defects: bool  # the checkpoint's own known faults on this engine build and GPU
    low_bit: bool
    weight_bits: int
    estimated: bool  # the checkpoint's size is an estimate (every memory plan of it says so)


def rank_floor(p: Preview) -> RankKey:
    """A key no plan of this path ranks before: rank_key with what the memory plan and the speed estimate
    decide left at its best (no offload, the usable context, the fastest, the smallest).

    The precision class is the path's own: rank_key counts it only for a plan without offload that is not slow,
    and a plan with either already ranks after this floor at an earlier place (offload, slow)."""
    status = p.deployment.status if p.deployment else "derived"
    return (
        0,
        int(p.low_bit),
        STATUS_ORDER[status],
        PROVENANCE_ORDER[p.build.provenance],
        2 if p.checkpoint_defects else fallback_rank(p.via_fallback, p.weight_only_fallback, p.serves_many),
        len(p.unparsed),
        -p.build.released.toordinal(),
        -context_tier(ROOMY_CONTEXT),
        -(10**6) if p.low_bit else 0,
        0,
        -context_tier(USABLE_CONTEXT),
        0,
        precision_rank(p.weight_bits, p.serves_many),
        float("-inf"),
        0,
        float("-inf"),
        "",
        "",
        "",
    )


# a plan's caveats, most costly first: a plan with none runs on an official build, native weight kernels and
# the maker's weights (the matrix's ✓); the matrix names the first
Caveat = Literal[
    "offload",
    "fallback kernel",
    "no parser",
    "fork build",
    "community build",
    "community weights",
    "estimated size",
]
CAVEATS: tuple[Caveat, ...] = get_args(Caveat)


def _caveats(offload: bool, p: Preview | Candidate, estimated: bool) -> list[Caveat]:
    out: list[Caveat] = []
    if offload:
        out.append("offload")
    if p.via_fallback:
        out.append("fallback kernel")
    if p.unparsed:
        out.append("no parser")
    if p.build.provenance not in ("official", "model-image"):
        out.append("fork build" if p.build.provenance == "fork" else "community build")
    if p.variant.publisher == "community":
        out.append("community weights")
    if estimated:
        out.append("estimated size")
    return out


def caveats(c: Candidate) -> list[Caveat]:
    """The caveats of a plan, most costly first. A 16-bit checkpoint's size counted from its parameters is none."""
    return _caveats(c.offload is not None, c, rough_estimate(c.variant.quant, c.budget.notes if c.budget else ()))


def may_be_clean(p: Preview) -> bool:
    """Whether a plan of this path could have no caveat (offload is the memory plan's to decide)."""
    return not _caveats(False, p, p.estimated and p.variant.quant not in COUNTED_EXACTLY)


# a checkpoint of the 8-bit class stored in fewer bits than this (Q6_K, ~6.6) is named by its own bits in a reason
NARROW_8_BIT = 7.5


def _bits(c: Candidate) -> str:
    if c.weight_bits == 8 and c.bpw is not None and c.bpw < NARROW_8_BIT:
        return f"a {_quant(c)} (~{c.bpw:.1f}-bit)"
    return f"{'an' if c.weight_bits == 8 else 'a'} {c.weight_bits}-bit"


def _tps(c: Candidate) -> str:
    if c.speed is None:
        return "unknown"
    return f"~{c.speed.decode_tps:.1f}" if c.speed.decode_tps < 10 else f"~{c.speed.decode_tps:.0f}"


def _faster(first: Candidate, second: Candidate) -> str:
    if first.serves_many and not single_slot(first) and first.speed and second.speed:
        return (
            f"higher estimated total decode ({first.speed.aggregate_tps:,.0f} vs"
            f" {second.speed.aggregate_tps:,.0f} tok/s over {first.speed.concurrency} vs"
            f" {second.speed.concurrency} concurrent requests"
            + _contexts(first, second)[:-1]
            + "; a data-center card usually serves many users: --concurrency 1 ranks by one request's speed)"
        )
    return f"faster estimated decode ({_tps(first)} vs {_tps(second)} tok/s for one request" + _contexts(first, second)


def _class_why(c: Candidate) -> str:
    if c.serves_many and c.weight_bits == 16:
        return "full precision where a data-center card has the memory for it"
    if c.weight_bits == 8 and c.bpw is not None and c.bpw < NARROW_8_BIT:
        return f"near-lossless at ~{c.bpw / 16:.0%} of the bytes of BF16"
    return CLASS_WHY[c.weight_bits]


def _less_context(first: Candidate, second: Candidate) -> str:
    """What the faster plan gives up, when speed won over a larger context."""
    a, b = first.settings.context or 0, second.settings.context or 0
    return f", with {a:,} tokens of context against {b:,}" if a < b else ""


def _contexts(first: Candidate, second: Candidate) -> str:
    """The end of a speed reason: both contexts usable, or what the faster one gives up (one tier, so speed won)."""
    if min(first.settings.context or 0, second.settings.context or 0) >= USABLE_CONTEXT:
        return f", both with at least {USABLE_CONTEXT:,} tokens of context)"
    return _less_context(first, second) + ")"


def _kernel_or_defect(first: Candidate, second: Candidate) -> str:
    """Which of the two facts that share a ranking place decided: a known defect on the second path, or its
    weight format running through a fallback kernel."""
    if defects(second) and not defects(first):
        named = second.build_defects[0].id if second.build_defects else second.defects[0]
        return f"a path without a known defect before one that hits {_clip(named)}"
    fallback = second.gate("weight-format").reason.split(";")[0]
    mine = "a weight-only kernel that decodes at full speed" if first.via_fallback else "native weight kernels"
    batching = "; a weight-only kernel costs a server that batches requests compute"
    why = batching if second.weight_only_fallback else ""
    return f"{mine} before a fallback ({second.engine.name}: {_clip(fallback)}{why})"


def _bits_of(c: Candidate) -> str:
    """The checkpoint's quantization and its stored bits per parameter (the whole file over the parameter count)."""
    return f"{_quant(c)} ~{c.bpw:.1f}" if c.bpw is not None else _quant(c)


def _clip(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


OFFLOAD_LABEL = {
    0: "no host offload",
    1: "experts in host RAM",
    2: "whole layers on the CPU",
    3: "weights copied over PCIe every step",
}


def why_first_of(runnable: list[Candidate] | tuple[Candidate, ...]) -> str:
    """The first plan's reason: what the list around it tells a user that the first two alone do not (a batching
    server on a data-center card; a sub-4-bit checkpoint against offloading one of 4 bits), then why it beats the
    second."""
    first, second = runnable[0], (runnable[1] if len(runnable) > 1 else None)
    lead = _serving(first, runnable) or _low_bit_trade(first, runnable) or _no_low_bit_file(first, runnable)
    return (lead + "; then " if lead else "") + why_first(first, second)


def _serving(first: Candidate, runnable: list[Candidate] | tuple[Candidate, ...]) -> str:
    """On a data-center card, why a batching server comes before a single-slot one that the list also holds."""
    if not first.serves_many or single_slot(first) or first.speed is None:
        return ""
    if len(runnable) > 1 and single_slot(runnable[1]):
        return ""  # the reason against the second plan says it
    one = next((c for c in runnable if single_slot(c) and c.offload is None and c.speed is not None), None)
    if one is None or one.speed is None or _deciding(first, one) not in SERVING_PLACES:
        return ""  # it lost for another reason first (a curated recipe, a longer context, speed)
    return (
        f"a server that batches ({first.speed.concurrency} requests of {first.settings.context or 0:,} tokens,"
        f" ~{first.speed.aggregate_tps:,.0f} tok/s in all) before a single-slot {one.engine.name}"
        f" (~{one.speed.aggregate_tps:,.0f} tok/s at its full context): a data-center card usually serves many"
        " users (--concurrency 1 ranks for one)"
    )


# the rank_key places where a data-center card's serving decides: a batching server before a single-slot one, and
# the total decode over concurrent requests
SERVING_PLACES = (RANK_PLACES.index("single_slot"), RANK_PLACES.index("speed"))


def _deciding(a: Candidate, b: Candidate) -> int:
    """The rank_key place where two plans first differ (len of the key where they tie)."""
    ka, kb = rank_key(a), rank_key(b)
    return next((i for i, (x, y) in enumerate(zip(ka, kb, strict=True)) if x != y), len(ka))


def _quant(c: Candidate) -> str:
    read = file_type_bits(c.variant.file or c.variant.id) if c.variant.quant == "gguf" else None
    return read[0] if read else c.variant.quant.upper()


def _low_bit_trade(first: Candidate, runnable: list[Candidate] | tuple[Candidate, ...]) -> str:
    """A checkpoint below LOW_BITS fully on the GPU against the fastest plan of 4 bits or more that offloads: the
    speed each decodes at, and the quality the smaller one gives up."""
    if not first.low_bit or first.offload is not None or first.speed is None:
        return ""
    offloaded = [c for c in runnable if c.offload is not None and not c.low_bit and c.speed is not None]
    if not offloaded:
        return ""
    best = max(offloaded, key=lambda c: c.speed.decode_tps if c.speed else 0.0)
    loss = "a clear" if first.bpw is not None and first.bpw < 3 else "some"
    return (
        f"fully on the GPU ({_tps(first)} tok/s) before {_quant(best)} with {OFFLOAD_LABEL[offload_cost(best)]}"
        f" ({_tps(best)} tok/s), at {loss} quality loss: {_bits_of(first)} bits per weight against {_bits_of(best)}"
    )


# the smallest 3-bit GGUF file type an experienced user runs a dense model in before offloading whole layers of a
# 4-bit one, and the context it must leave room for to count as usable
SMALL_3_BIT = "IQ3_XXS"
SMALL_3_BIT_CONTEXT = 8192


def _no_low_bit_file(first: Candidate, runnable: list[Candidate] | tuple[Candidate, ...]) -> str:
    """A first plan that runs whole layers on the CPU where a 3-bit file of the model would fit the GPU with a usable
    context, but the catalog holds no file below LOW_BITS with a known size: says so, with the size such a file would
    have (llama-quantize's bits per weight for SMALL_3_BIT over the model's parameters), rather than offloading
    silently."""
    off, budget = first.offload, first.budget
    if off is None or off.mechanism != "cpu-layers" or budget is None or first.bpw is None:
        return ""
    if any(c.low_bit for c in runnable):
        return ""  # a file below 4 bits is in the catalog: the ranking weighed it
    bits = FILE_BPW[SMALL_3_BIT]
    gib = checkpoint_gib(first) * bits / first.bpw
    per_token = budget.per_token_bytes + (off.host_kv_bytes / budget.context if budget.context else 0.0)
    need = gib + SMALL_3_BIT_CONTEXT * per_token / GIB + budget.reserve_gib
    if need > budget.gpu_gib * (budget.fraction or 1.0):
        return ""
    return (
        f"{OFFLOAD_LABEL[offload_cost(first)]} ({_tps(first)} tok/s) only because the catalog has no file of this model"
        f" below 4 bits with a published size: an {SMALL_3_BIT} (~{bits:.2f} bits per weight, about {gib:.1f} GiB)"
        f" would run fully on this GPU with {SMALL_3_BIT_CONTEXT:,} tokens of context"
    )


def _distinct(a: float, b: float) -> str:
    """'a vs b' with as few decimals (1 to 3) as tell them apart: a size won by 30 MB does not read as a tie."""
    digits = next((d for d in (1, 2) if f"{a:.{d}f}" != f"{b:.{d}f}"), 3)
    return f"{a:.{digits}f} vs {b:.{digits}f}"


def why_first(first: Candidate, second: Candidate | None) -> str:
    if second is None:
        return "the only path that passes every gate"
    a, b = rank_key(first), rank_key(second)
    off = OFFLOAD_LABEL
    labels = [
        f"{off[offload_cost(first)]} before {off[offload_cost(second)]}",
        "a checkpoint of 4 bits per weight or more before a lossier one",
        f"a curated recipe ({first.status}) beats a {second.status} plan",
        f"{first.build.provenance} build before a {second.build.provenance} one",
        _kernel_or_defect(first, second),
        "a build that parses the model's tool calls and thinking before one that lacks those parsers",
        f"newer build ({first.build.released} vs {second.build.released})",
        f"larger planned context ({first.settings.context} vs {second.settings.context})",
        f"more bits per weight below 4 ({_bits_of(first)} vs {_bits_of(second)}: there each bit costs clear quality,"
        f" worth more than context past {ROOMY_CONTEXT:,} tokens or speed)",
        f"an interactive decode speed before a slower one ({_tps(first)} vs {_tps(second)} tok/s for one request"
        + _less_context(first, second)
        + f"; below {INTERACTIVE_TPS:.0f} tok/s speed outranks precision and context past {ROOMY_CONTEXT:,} tokens)",
        f"larger planned context ({first.settings.context} vs {second.settings.context})",
        "a server that batches concurrent requests before one that serves one at a time (a data-center card usually"
        " serves many users; --concurrency 1 asks for one)",
        f"{_bits(first)} checkpoint before {_bits(second)} one ({_class_why(first)})",
        _faster(first, second),
        "a checkpoint whose size is known before one whose size is estimated (at the same speed)",
        f"a smaller checkpoint ({_distinct(checkpoint_gib(first), checkpoint_gib(second))} GiB per GPU)",
    ]
    for index, label in enumerate(labels):
        if a[index] != b[index]:
            return f"{label} — next: {second.engine.name} {second.build.id} / {second.variant.id}"
    if first.build.id == second.build.id and first.variant.quant == second.variant.quant:
        return (
            f"equal on every criterion to {second.variant.repo}'s copy: either serves"
            f" — next: {second.build.id} / {second.variant.id}"
        )
    if first.build.id == second.build.id and first.weight_bits == second.weight_bits:
        return (
            f"equal on every criterion to {second.variant.repo} ({second.variant.quant}, also {first.weight_bits}-bit,"
            f" the same size and speed): either serves — next: {second.build.id} / {second.variant.id}"
        )
    return f"tie on every criterion; ordered by id — next: {second.build.id} / {second.variant.id}"


def closeness_key(
    c: Candidate,
) -> tuple[int, int, int, int, RankKey]:
    """How close a rejected path came to running, closest first: a build a user would reach for (official
    before a model's own image, community and fork builds), then fewer failing gates, a later first failing
    gate (memory is closer than the platform), unknown before blocked, then the plan ranking."""
    failing = c.failing()
    first = min((GATES.index(g.gate) for g in failing), default=len(GATES))
    blocked = sum(1 for g in failing if g.outcome == "fail")
    return (PROVENANCE_ORDER[c.build.provenance], len(failing), -first, blocked, rank_key(c))


def closest_rejected(
    candidates: tuple[Candidate, ...] | list[Candidate], official_only: bool = False
) -> list[Candidate]:
    """The rejected paths a user would consider, closest first. A build that cannot load the model's
    architecture, or a GGUF file offered to an engine that loads Hugging Face checkpoints (or the reverse), is
    no path at all; with `official_only` (a runnable request: its other paths are the plans) only the official
    builds' rejections count. When no build loads the model, their architecture refusals are the answer."""
    same_format = [
        c
        for c in candidates
        if not c.runnable
        and (c.engine.loads == "gguf") == (c.variant.quant == "gguf")
        and (c.build.provenance == "official" or not official_only)
    ]
    rejected = [c for c in same_format if c.gate("architecture").outcome != "fail"]
    # nothing loads the model (a --build that lacks it, a parser it lacks): why each build does not is the answer
    return sorted(rejected or ([] if official_only else same_format), key=closeness_key)
