"""Candidate paths: every engine × build × variant × matching recipe at a layout, each gated into a
Candidate (evaluate), and the cheap check of whether a path can run at all before its memory is planned."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Literal, get_args

from ..catalog.index import Catalog
from ..catalog.schema import Deployment, Engine, Model, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build, Defect
from ..frozen import evolve
from . import gates
from .checkpoint_size import variant_bytes
from .defects import applies, defects_hitting, in_scope, with_defects
from .estimate import speed_of
from .flags import kv_choices, settings_from_deployment, speculative_method
from .footprint import BLOCK_SCALED_8BIT_KV, KV_BYTES
from .ranking import USABLE_CONTEXT
from .types import GATES, Candidate, Layout, Loading, Request, Settings

# Gate results that do not depend on the layout, computed once per resolve() and reused across
# layouts (keys are catalog ids).
Memo = dict[tuple[object, ...], object]


def _matching_deployments(
    deployments: Iterable[Deployment], request: Request, engine: Engine, build: Build, variant: Variant, layout: Layout
) -> list[Deployment]:
    return [
        d
        for d in deployments
        if d.model == request.model.id
        and d.variant == variant.id
        and d.engine == engine.id
        and d.build == build.id
        and request.hardware.id in d.hardware
        and d.gpus_per_node == layout.gpus_per_node
        and d.nodes == layout.nodes
    ]


def base_settings(
    engine: Engine, model_has_moe: bool, layout: Layout, deployment: Deployment | None, request: Request | None = None
) -> Settings:
    """The settings a path starts from: a curated recipe's flags read back, else one TP group over every GPU;
    then the run configuration the request names (KV dtype, speculative method, DCP, eager)."""
    if deployment is not None:
        base = settings_from_deployment(engine, deployment, layout)
    else:
        ep = model_has_moe and engine.flags.expert_parallel is not None and layout.gpus > 1
        base = Settings(tp=layout.gpus if engine.parallelism == "tensor" else 1, ep=ep)
    if request is None:
        return base
    kv = base.kv_fixed
    if request.kv_cache_dtype is not None:
        named = kv_choices(engine, request.kv_cache_dtype)
        kv = named or tuple(d for d in get_args(KvDtype) if d == request.kv_cache_dtype)
    method = speculative_method(request.speculative) or base.speculative
    return evolve(
        base,
        kv_fixed=kv,
        speculative=method,
        mtp=base.mtp or method == "mtp",
        speculative_tokens=(request.speculative_tokens or base.speculative_tokens or 1) if method else None,
        dcp=request.dcp if request.dcp > 1 else base.dcp,
        cuda_graphs=base.cuda_graphs and not request.eager,
    )


def request_settings(
    engine: Engine, layout: Layout, deployment: Deployment | None, request: Request, memo: Memo | None
) -> Settings:
    """base_settings for this request, shared through the memo by every build and checkpoint of the engine."""
    if memo is None:
        return base_settings(engine, bool(request.model.moe), layout, deployment, request)
    key = (
        "settings",
        engine.id,
        layout,
        deployment.id if deployment else None,
        request.kv_cache_dtype,
        request.speculative,
        request.speculative_tokens,
        request.dcp,
        request.eager,
    )
    known = memo.get(key)
    if isinstance(known, Settings):
        return known
    memo[key] = settings = base_settings(engine, bool(request.model.moe), layout, deployment, request)
    return settings


# below this many bits per weight a checkpoint is a lossy last resort (GGUF IQ1/IQ2/Q2/Q3 mixes): it ranks after
# every checkpoint of 4 bits or more, and the layout search takes a larger usual size before one that runs only so
LOW_BITS = 4.0


_UNSIZED = (0.0, None)  # a stand-in meaning "size not worked out yet"


def stored_bits(variant: Variant, model: Model, sized: tuple[float, str | None] | None = _UNSIZED) -> float | None:
    """Bits per parameter of the checkpoint, from its size or the estimate the memory gate plans with.
    `sized`: the checkpoint_bytes answer when the caller has it."""
    if sized is _UNSIZED:
        sized = variant_bytes(model, variant)
    return sized[0] * 8 / (model.params_total_b * 1e9) if sized is not None else None


def low_bit(variant: Variant, model: Model) -> bool:
    bits = stored_bits(variant, model)
    return bits is not None and bits < LOW_BITS


# the precision class a format stores its linear weights in; a GGUF file's class follows from its bits per weight
WEIGHT_BITS = {"bf16": 16, "fp16": 16, "fp8": 8, "fp8_block": 8, "bnb8": 8}


def weight_bits(variant: Variant, model: Model, bpw: float | Literal["unknown"] | None = "unknown") -> int:
    """4, 8 or 16: how many bits a weight takes, as a class (a Q4_K_M GGUF and an AWQ checkpoint are both 4-bit;
    Q6_K, Q8_0 and a GPTQ-Int8 checkpoint are 8-bit). `bpw`: the stored_bits answer when the caller has it.

    A weight-only integer checkpoint (GPTQ, AWQ, compressed-tensors) is the class of the bits its
    quantization_config stores the bulk of its weights in: the routed experts of a MoE, else the linear layers."""
    if variant.quant != "gguf":
        groups = {g.modules: g.bits for g in variant.quant_groups}
        bulk = groups.get("routed_experts") if model.moe is not None else None
        bulk = bulk if bulk is not None else groups.get("linear")
        if bulk is not None and variant.quant not in WEIGHT_BITS:
            return 4 if bulk <= 4 else 8 if bulk <= 8 else 16
        return WEIGHT_BITS.get(variant.quant, 4)
    if bpw == "unknown":
        bpw = stored_bits(variant, model)
    if bpw is None:
        return 16
    return 4 if bpw < 6 else 8 if bpw < 10 else 16


def evaluate(
    request: Request,
    engine: Engine,
    build: Build,
    variant: Variant,
    layout: Layout,
    deployment: Deployment | None,
    settings: Settings | None = None,
    memo: Memo | None = None,
) -> Candidate:
    """Gate one path. `settings`: check these instead of the ones recipegen would choose (lint). `memo`: the path is
    gated once per memo (its request's model, GPU and run configuration; whether host offload may be planned)."""
    if settings is not None or memo is None:
        return _evaluate(request, engine, build, variant, layout, deployment, settings, memo)
    key = _path_key(request, (engine, build, variant, deployment), layout)
    known = memo.get(key)
    if isinstance(known, Candidate):
        return known
    memo[key] = cand = _evaluate(request, engine, build, variant, layout, deployment, None, memo)
    return cand


def _path_key(request: Request, path: Path, layout: Layout) -> tuple[object, ...]:
    engine, build, variant, dep = path
    return ("path", engine.id, build.id, variant.id, dep.id if dep else None, layout, request.offload)


# the gates that read no layout, in the order a Candidate holds them
_LOADING = GATES[: len(gates.LAYOUT_FREE)]


def loading(request: Request, path: Path, layout: Layout, memo: Memo) -> Candidate | Loading:
    """What find_changes reads of a path: its Candidate, or, where that cannot run and its layout-free verdicts
    are the Candidate's own, those verdicts alone (no memory plan). They are its own unless a defect of the build
    that the path's settings may run into once planned either fails a layout-free gate or names a KV dtype (the
    plan then moves its KV cache, which the kernel gate reads); and a path one of them fails is never runnable,
    so its settings are never moved to a block-scaled KV cache either."""
    engine, build, variant, dep = path
    known = memo.get(_path_key(request, path, layout))
    if isinstance(known, Candidate):
        return known
    base = request_settings(engine, layout, dep, request, memo)
    model = request.model
    found = defects_hitting(model, variant, build, request.hardware, every_config=True)
    if not any(
        ((d.blocks and d.gate in gates.LAYOUT_FREE) or d.kv_dtypes)
        and in_scope(d, base, None, layout, model.max_context, planned=False)
        for d in found
    ):
        results = gates.run(gates.Subject(request, engine, build, variant, layout, dep, base), memo, _LOADING)
        if any(g.outcome != "pass" for g in results):
            return Loading(engine, build, variant, results)
    return evaluate(request, engine, build, variant, layout, dep, memo=memo)


def _evaluate(
    request: Request,
    engine: Engine,
    build: Build,
    variant: Variant,
    layout: Layout,
    deployment: Deployment | None,
    settings: Settings | None,
    memo: Memo | None,
) -> Candidate:
    base = settings if settings is not None else request_settings(engine, layout, deployment, request, memo)
    subject = gates.Subject(request, engine, build, variant, layout, deployment, base)
    results = gates.run(subject, memo)
    by_id = {g.gate: g for g in results}
    kern, fmt, budget = by_id["kernel"], by_id["weight-format"], by_id["memory"].details.budget
    kv = gates.kv_dtype(subject, kern) if (base.kv_fixed or kern.details.kv_options) else None
    # weights in host RAM: what the command's or recipe's flags say, else the memory gate's offload plan
    offloaded = base.host_offload
    if offloaded is None:
        offloaded = by_id["memory"].details.offload is not None or engine.memory.host_offload
    decided = evolve(base, host_offload=offloaded)
    if budget is not None:
        decided = evolve(
            decided,
            kv_dtype=kv,
            context=budget.context,
            context_auto=base.context_auto and request.context is None,
            concurrency=budget.concurrency,
            fraction=budget.fraction,
        )
    found = defects_hitting(
        request.model, variant, build, request.hardware, decided, kv or engine.default_kv_dtype, layout=layout
    )
    moved = None
    if settings is None and deployment is None and not base.kv_fixed:  # not a command's or a recipe's own choice
        moved = _kv_avoiding(found, kern.details.kv_options)
    if moved is not None:
        # a derived plan keeps its KV cache in a dtype the build's defects do not name, when its kernels take one
        again = evaluate(request, engine, build, variant, layout, None, evolve(base, kv_fixed=(moved,)), memo)
        names = ", ".join(d.id for d in found if d.kv_dtypes and kv in d.kv_dtypes)
        note = f"KV cache {moved}, not {kv}: {kv} hits known defect {names} of {build.id}"
        return evolve(again, notes=(note, *again.notes))
    results = with_defects(results, found)
    bits = stored_bits(variant, request.model)
    notes: list[str] = []
    if fmt.details.via_fallback:
        notes.append(fmt.reason)
    cand = Candidate(
        engine=engine,
        build=build,
        variant=variant,
        layout=layout,
        deployment=deployment,
        gates=results,
        settings=decided,
        budget=budget,
        via_fallback=fmt.details.via_fallback,
        weight_only_fallback=fmt.details.weight_only_fallback,
        notes=tuple(notes),
        fallback_args=fmt.details.args,
        defects=tuple(d.text for d in variant.defects if applies(d, engine, build, request.hardware)),
        build_defects=found,
        offload=by_id["memory"].details.offload,
        low_bit=bits is not None and bits < LOW_BITS,
        bpw=bits,
        weight_bits=weight_bits(variant, request.model, bits),
        serves_many=serves_many(request),
    )
    if not cand.runnable:
        return cand
    cand = evolve(cand, speed=speed_of(cand, request, memo))
    if settings is None and deployment is None and not base.kv_fixed and request.context is None:
        return _with_block_scaled_kv(cand, request, kern.details.kv_options, memo) or cand
    return cand


def serves_many(request: Request) -> bool:
    """Whether a plan for this request ranks as a server of many users: a data-center GPU asked about without
    --concurrency (Candidate.serves_many)."""
    return request.hardware.role == "datacenter" and request.concurrency is None


def _with_block_scaled_kv(
    cand: Candidate, request: Request, options: tuple[KvDtype, ...], memo: Memo | None
) -> Candidate | None:
    """The same path with an 8-bit block-scaled KV cache (q8_0), where the chosen kernels take one: on the GPU, when
    the full-precision cache leaves less than a usable context and the 8-bit one gives more; with weights in host RAM,
    when the smaller cache keeps more of them on the GPU and so decodes faster at the same context (what users do
    when the KV cache is what pushes layers or experts to the CPU). It must not run into a known defect the plan
    avoided (a quantized-KV defect of the build on this GPU). None: keep the plan as it is."""
    kv, budget = cand.settings.kv_dtype, cand.budget
    if kv is None or budget is None:
        return None
    if cand.offload is None and budget.context >= min(USABLE_CONTEXT, request.model.max_context):
        return None
    smaller = next((d for d in options if d in BLOCK_SCALED_8BIT_KV and KV_BYTES[d] < KV_BYTES[kv]), None)
    if smaller is None:
        return None
    base = evolve(base_settings(cand.engine, bool(request.model.moe), cand.layout, None, request), kv_fixed=(smaller,))
    again = evaluate(request, cand.engine, cand.build, cand.variant, cand.layout, None, base, memo)
    if not again.runnable or again.budget is None or len(again.build_defects) > len(cand.build_defects):
        return None
    if cand.offload is None:
        if again.budget.context <= budget.context:
            return None
        note = (
            f"KV cache {smaller}, not {kv}: {kv} leaves {budget.context:,} tokens of context, "
            f"{smaller} (8-bit blocks, a scale each) {again.budget.context:,}"
        )
        return evolve(again, notes=(note, *again.notes))
    host, host_again = cand.offload.host_weights_gib, again.offload.host_weights_gib if again.offload else 0.0
    faster = again.speed is not None and cand.speed is not None and again.speed.decode_tps > cand.speed.decode_tps
    if again.budget.context < budget.context or host_again >= host or not faster:
        return None
    kept = "nothing stays" if again.offload is None else f"{host_again:.1f} GiB stay"
    note = (
        f"KV cache {smaller}, not {kv}: at {again.budget.context:,} tokens the {kv} cache pushes {host:.1f} GiB of "
        f"weights to host RAM, the {smaller} one (8-bit blocks, a scale each) half as much cache: {kept} in host RAM"
    )
    return evolve(again, notes=(note, *again.notes))


def _kv_avoiding(found: tuple[Defect, ...], options: tuple[KvDtype, ...]) -> KvDtype | None:
    """The first KV dtype the chosen kernels accept that no KV-scoped defect found names; None: nothing to move."""
    avoid = {dtype for d in found if d.kv_dtypes for dtype in d.kv_dtypes}
    if not avoid:
        return None
    return next((dtype for dtype in options if dtype not in avoid), None)


def builds_to_try(engine: Engine, request: Request, every_release: bool = False) -> list[Build]:
    """The build the user named; else the newest official release (by --as-of) and every side path
    (model images, community images, forks) released by then. Older releases answer --build and history."""
    if request.build is not None:
        return [b for b in engine.builds if b.id == request.build]
    dated = [b for b in engine.builds if request.as_of is None or b.released <= request.as_of]
    if every_release:
        return dated
    official = [b for b in dated if b.provenance == "official"]
    newest = max(official, key=lambda b: (b.released, b.id)) if official else None
    return [b for b in dated if b.provenance != "official" or b is newest]


Path = tuple[Engine, Build, Variant, "Deployment | None"]


def paths_for(
    catalog: Catalog,
    request: Request,
    layout: Layout,
    every_release: bool = False,
    builds: dict[str, list[Build]] | None = None,
    recipes: list[Deployment] | None = None,
) -> list[Path]:
    """Every candidate path at this layout (engine × build × variant × matching recipe), in report order.
    `builds`: each engine's builds_to_try for this request, and `recipes`: model_recipes, when the caller asks at
    several layouts."""
    out: list[Path] = []
    # the recipes of this model on this GPU and layout, read once rather than once per build and checkpoint
    mine = model_recipes(catalog, request) if recipes is None else recipes
    here = [d for d in mine if d.gpus_per_node == layout.gpus_per_node]
    if not here and builds is not None:  # no recipe: one path per engine × build × checkpoint (a layout search)
        return [(e, b, v, None) for e, b, v in _triples(catalog, request, builds)]
    for engine in catalog.engines.values():
        if request.engine is not None and engine.id != request.engine:
            continue
        tried = builds[engine.id] if builds is not None else builds_to_try(engine, request, every_release)
        for build in tried:
            for variant in request.model.variants:
                if request.variant is not None and variant.id != request.variant:
                    continue
                matches: list[Deployment | None] = list(
                    _matching_deployments(here, request, engine, build, variant, layout)
                )
                out.extend((engine, build, variant, dep) for dep in matches or [None])
    return out


def model_recipes(catalog: Catalog, request: Request) -> list[Deployment]:
    """The catalog's recipes of the request's model on its GPU, at any layout."""
    return [
        d for d in catalog.deployments.values() if d.model == request.model.id and request.hardware.id in d.hardware
    ]


def _triples(catalog: Catalog, request: Request, builds: dict[str, list[Build]]) -> list[tuple[Engine, Build, Variant]]:
    return [
        (engine, build, variant)
        for engine in catalog.engines.values()
        if request.engine is None or engine.id == request.engine
        for build in builds[engine.id]
        for variant in request.model.variants
        if request.variant is None or variant.id == request.variant
    ]


def candidates_for(
    catalog: Catalog,
    request: Request,
    layout: Layout,
    every_release: bool = False,
    memo: Memo | None = None,
    builds: dict[str, list[Build]] | None = None,
) -> list[Candidate]:
    """Every path at this layout, gated. `builds`: only these builds of each engine (default: builds_to_try's)."""
    memo = {} if memo is None else memo
    return [
        evaluate(request, engine, build, variant, layout, dep, memo=memo)
        for engine, build, variant, dep in paths_for(catalog, request, layout, every_release, builds)
    ]


def verdict_paths(
    catalog: Catalog,
    request: Request,
    layout: Layout,
    every_release: bool = False,
    memo: Memo | None = None,
    builds: dict[str, list[Build]] | None = None,
) -> list[Candidate]:
    """What a verdict per build reads (history): for a build with a runnable path, its paths that pass the
    cheap gates (every runnable one among them); for any other build, every path. In report order. `builds`:
    only these builds of each engine (default: builds_to_try's)."""
    memo = {} if memo is None else memo
    out: list[Candidate] = []
    paths = paths_for(catalog, request, layout, every_release, builds)
    for _, group in itertools.groupby(paths, key=lambda path: path[1].id):  # a build's paths are adjacent
        mine = list(group)
        planned = {
            i: evaluate(request, *p[:3], layout, p[3], memo=memo)
            for i, p in enumerate(mine)
            if may_run(request, p, layout, memo)
        }
        if any(c.runnable for c in planned.values()):
            out.extend(planned.values())
        else:
            out.extend(
                planned[i] if i in planned else evaluate(request, *p[:3], layout, p[3], memo=memo)
                for i, p in enumerate(mine)
            )
    return out


def may_run(
    request: Request,
    path: Path,
    layout: Layout,
    memo: Memo,
    shared: gates.SharedVerdicts | None = None,
    defects: bool = True,
) -> bool:
    """Whether the path passes every gate that does not read the layout (the cheap ones, memoised per path).

    A path that fails one can never be runnable, so the layout search plans memory only for the others.
    `shared`: verdicts shared with other resolves (the matrix's cells). `defects`: False to ask whether it would
    run but for the build's blocking defects (coverage counts those)."""
    engine, build, variant, dep = path
    # a recipe belongs to one layout, and without one the cheap gates read no layout-dependent setting
    key = ("may-run", engine.id, build.id, variant.id, dep.id if dep else None, defects)
    known = memo.get(key)
    if isinstance(known, bool):
        return known
    # most paths a layout search rules out, it rules out by their build's image or CUDA alone (6,696 of the
    # 10,260 paths the default matrix asks about): that verdict is the build's, so it is read before the
    # path's own subject is made
    if gates.platform_memoised(engine, build, request.hardware, memo, shared).outcome != "pass":
        memo[key] = False
        return False
    base = request_settings(engine, layout, dep, request, memo)
    subject = gates.Subject(request, engine, build, variant, layout, dep, base)
    found = defects_hitting(request.model, variant, build, request.hardware)
    cheap = gates.run(subject, memo, gates.FEWEST_FIRST, until_not_pass=True)
    verdict = all(g.outcome == "pass" for g in cheap) and not any(
        defects and d.blocks and d.gate in gates.LAYOUT_FREE for d in found
    )
    memo[key] = verdict
    return verdict
