"""The gates that read the layout: topology (the heads split over tensor parallel, multi-node serving) and
memory (weights and KV per GPU, with host offload when the GPUs alone are too small). gates.py registers them."""

from __future__ import annotations

from ..catalog import diff_kv
from ..catalog.schema import Deployment, Engine, Hardware, Model, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build
from ..frozen import evolve
from .checkpoint_size import variant_bytes, why_not_estimated
from .footprint import Unplannable, footprint
from .memory import GIB, Budget, MemoryInputs, choose_fraction, kv_pool_gib, plan
from .offload import HOST_RESERVE_GIB, OFFLOAD_CONTEXT, SOURCES, OffloadPlan, Refusal, mechanism_of, solve
from .types import Details, GateResult, Layout, Request, Settings


def topology(model: Model, engine: Engine, layout: Layout, hw: Hardware, tp: int | None = None) -> GateResult:
    """`tp`: the tensor-parallel size the plan sets (default: every GPU of the layout)."""
    if layout.nodes > 1 and engine.multi_node == "none":
        return GateResult(
            "topology", "fail", f"{engine.name} has no multi-node serving here; {layout.nodes} nodes requested"
        )
    if engine.parallelism == "layers":
        return GateResult("topology", "pass", f"layers split over {layout.gpus_per_node} GPU(s) of one node")
    tp = layout.gpus if tp is None else tp
    heads = model.attention.num_heads
    kv_heads = model.attention.num_kv_heads
    numbers: list[tuple[str, float]] = [("tp", tp), ("heads", heads)]
    if kv_heads:
        numbers.append(("kv_heads", kv_heads))
    details = Details(numbers=tuple(numbers))
    what = "attention heads"
    if model.attention.layers == 0 and model.linear_attention is not None:  # a pure Mamba stack
        what = "SSM channels" if model.linear_attention.kind == "mamba1" else "SSM heads"
    if heads % tp:
        reason = f"{heads} {what} do not split evenly over tensor parallel {tp}"
        return GateResult("topology", "fail", reason, (), details)
    window_heads = model.attention.window_num_heads
    if window_heads and window_heads % tp:
        reason = f"the window layers' {window_heads} attention heads do not split evenly over tensor parallel {tp}"
        return GateResult("topology", "fail", reason, tuple(model.attention.sources[:1]), details)
    window_kv = model.attention.window_num_kv_heads
    for kv, which in ((kv_heads, ""), (window_kv if window_kv != kv_heads else None, "the window layers' ")):
        if model.attention.kind != "gqa" or not kv:
            continue
        ok = (kv % tp == 0) if tp <= kv else (tp % kv == 0)
        if not ok:
            return GateResult(
                "topology",
                "fail",
                f"{which}{kv} KV heads cannot be split or replicated evenly over tensor parallel {tp}",
                tuple(model.attention.sources[:1]),
                details,
            )
    reason = f"tensor parallel {tp} splits {heads} {'heads' if what == 'attention heads' else what}"
    if layout.nodes > 1:
        link = hw.interconnect.between_nodes or "the network between nodes"
        reason += f"; across {layout.nodes} nodes over {link}"
    elif tp > 1 and hw.interconnect.kind in ("pcie", "none"):
        reason += "; no NVLink: all-reduce goes over PCIe (works, slower)"
    return GateResult("topology", "pass", reason, (), details)


def memory(
    request: Request,
    engine: Engine,
    variant: Variant,
    layout: Layout,
    settings: Settings,
    kv: KvDtype,
    dep: Deployment | None,
    may_offload: bool = True,
    build: Build | None = None,
) -> GateResult:
    """Weights per GPU + KV/state for the planned context × concurrency; the budget rides in the details.

    When the GPUs alone are too small (or the engine always keeps experts in host RAM), a path that
    loads (`may_offload`) gets the engine's host-offload layout (offload.py) at the planned context."""
    model = request.model
    sized = variant_bytes(model, variant)
    size, size_note = sized if sized is not None else (None, None)
    why = why_not_estimated(model, variant.quant, variant.file)
    unsized = f"the size of {variant.repo} is not in the catalog, and no estimate from the parameter count ({why})"
    if size is None and dep is not None:
        reason = (
            f"{unsized}, so memory is not planned; the {dep.status} recipe {dep.id} reports it running on this "
            "layout with its own context settings"
        )
        return GateResult("memory", "pass", reason, tuple(dep.sources))
    if size is None:
        return GateResult("memory", "unknown", unsized, tuple(variant.sources))
    projector, projector_note = _projector(engine, variant)
    if projector_note:
        size_note = f"{size_note}; {projector_note}" if size_note else projector_note
    tensor = engine.parallelism == "tensor"
    layer_split = 1 if tensor else layout.gpus_per_node
    tp = settings.tp if tensor else 1
    cached = diff_kv.as_cached(model, engine.id, build)  # V as wide as the release caches it
    fp = footprint(cached, kv, tp, layer_split, engine.memory.state_slots_per_request, settings.mtp)
    if isinstance(fp, Unplannable):
        return GateResult("memory", "unknown", fp.reason)
    shards = layout.gpus if tensor else layout.gpus_per_node
    context = request.context if request.context is not None else settings.context
    concurrency = request.concurrency if request.concurrency is not None else settings.concurrency
    inputs = MemoryInputs(
        hardware=request.hardware,
        engine=engine,
        model=model,
        weights_bytes_per_gpu=size / shards + projector,
        footprint=fp,
        fraction=settings.fraction,
        context=context,
        concurrency=concurrency,
        context_is_auto=settings.context_auto and request.context is None,
        concurrency_by="user" if request.concurrency is not None else "recipe",
        size_note=size_note,
    )
    sources = (*variant.sources[:1], *engine.memory.sources[:1])
    where = f"{layout.nodes} node(s) × {layout.gpus_per_node} GPU(s)" if layout.nodes > 1 else f"{layout.gpus} GPU(s)"

    def details(budget: Budget | None, offloaded: OffloadPlan | None = None, host: float | None = None) -> Details:
        if budget is None:
            return Details(host_memory_gib=host)
        numbers = (
            ("context", budget.context),
            ("concurrency", budget.concurrency),
            ("weights_gib", budget.weights_gib),
        )
        return Details(numbers=numbers, budget=budget, offload=offloaded, host_memory_gib=host)

    budget = plan(inputs) if not engine.memory.host_offload else None
    if budget is not None and (
        budget.fits or dep is not None or not may_offload or mechanism_of(engine, model) is None
    ):
        reason = f"on {where}: {budget.reason}"
        return GateResult("memory", "pass" if budget.fits else "fail", reason, tuple(sources), details(budget))
    offload_context = context or min(model.max_context, OFFLOAD_CONTEXT)

    def fit(weights_per_gpu: float, kv_share: float) -> Budget:
        """The GPU budget with these weights per GPU and this share of the layers' KV cache on the GPUs."""
        on_gpu = evolve(
            fp,
            per_token=fp.per_token * kv_share,
            per_request=fp.per_request * kv_share,
            state_per_request=fp.state_per_request * kv_share,
        )
        return plan(
            evolve(
                inputs,
                weights_bytes_per_gpu=weights_per_gpu + projector,
                footprint=on_gpu,
                context=offload_context,
                context_is_auto=False,
            )
        )

    solved = solve(engine, request.hardware, model, size, shards, request.host, fit, layout.gpus_per_node)
    srcs = tuple(sources) + SOURCES.get(mechanism_of(engine, model) or "weights-gb", ())
    if isinstance(solved, Refusal):
        reason = solved.reason if budget is None else f"on {where}: {budget.reason}; host offload: {solved.reason}"
        return GateResult("memory", "fail", reason, srcs, details(budget, host=solved.host_memory_gib))
    prefix = "" if budget is None else "the GPUs alone are too small; "
    reason = f"on {where}: {prefix}fits with {solved.summary()} — {solved.budget.reason}"
    return GateResult("memory", "pass", reason, srcs, details(solved.budget, solved))


def weights_overflow(
    request: Request, engine: Engine, variant: Variant, layout: Layout, fraction: float | None
) -> bool:
    """Whether the checkpoint's weights alone leave no room on the layout's GPUs, whatever the KV cache: such a
    path fails its memory gate (or the gate cannot plan it) unless host offload is planned. `fraction`: the path's
    settings' memory fraction (a recipe's own; None: the engine's). False where the memory gate does not plan from
    the size (an engine that always offloads, a checkpoint of unknown size)."""
    sized = variant_bytes(request.model, variant)
    if sized is None or engine.memory.host_offload:
        return False
    shards = layout.gpus if engine.parallelism == "tensor" else layout.gpus_per_node
    weights = (sized[0] / shards + _projector(engine, variant)[0]) / GIB
    chosen, _ = choose_fraction(request.hardware, engine, fraction)
    return kv_pool_gib(request.hardware, engine, chosen, weights) <= 0


def host_overflow(request: Request, variant: Variant, layout: Layout) -> bool:
    """Whether the checkpoint's weights exceed all the layout's GPU memory and the host RAM an offload may use
    together: such a path fails its memory gate with host offload too, whatever the engine. Its GPUs alone cannot
    hold it, and every offload mechanism (offload.solve) keeps in one machine's RAM what they do not — whole
    layers, experts or streamed gigabytes — so the host would need more than it has. One machine only; False
    for a checkpoint of unknown size (its memory gate cannot plan it)."""
    sized = variant_bytes(request.model, variant)
    if sized is None or layout.nodes != 1:
        return False
    room = (request.host.memory_gib - HOST_RESERVE_GIB) * GIB
    # a GiB of slack: the offload splits share the bytes out in floating point
    return sized[0] - request.hardware.memory_gib * GIB * layout.gpus > room + GIB


def _projector(engine: Engine, variant: Variant) -> tuple[float, str | None]:
    """The bytes a GGUF vision model's projector adds on the GPU, and the line that says so: llama-server loads
    the --mmproj file whole onto its main GPU (the projector is not split across GPUs, and it is offloaded to the
    GPU unless --no-mmproj-offload: tools/mtmd/clip.cpp, tools/server), so it is charged to each GPU's budget."""
    if variant.mmproj is None or engine.flags.vision_projector is None:
        return 0.0, None
    flag = engine.flags.vision_projector
    if variant.mmproj_size_gb is None:
        unknown = "is not in this plan: its size is not in the catalog"
        return 0.0, f"the vision projector {variant.mmproj} ({flag}) {unknown}"
    size = variant.mmproj_size_gb * 1e9
    return size, f"plus the vision projector {variant.mmproj} ({flag}, {size / 1e9:.2f} GB), loaded whole onto the GPU"
