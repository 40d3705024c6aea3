"""The six gates, one registry: each is a small predicate over catalog facts that returns a reason
(and structured details), never a bare bool. Looked up by id, run in the triage order of GATES."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from ..catalog.schema import Deployment, Engine, Hardware, Kernel, Model, Source, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build, Defect
from ..catalog.schema.model import Need
from ..frozen import evolve, frozen
from .flags import parser_gaps
from .memory import Budget, MemoryInputs, Unplannable, checkpoint_bytes, footprint, plan
from .offload import OFFLOAD_CONTEXT, SOURCES, OffloadPlan, Refusal, mechanism_of, solve
from .types import GATES, Details, GateId, GateResult, KernelMiss, Layout, Request, Settings

ATTENTION_OPS = (
    "attention.gqa",
    "attention.mla",
    "attention.sparse_mla",
    "attention.sparse_mla_nope",
    "attention.dsv4",
)


def _srcs(*groups: list[Source] | tuple[Source, ...]) -> tuple[Source, ...]:
    # catalog objects are shared and immutable, so identity is enough to drop repeats (and cheap)
    seen: dict[int, Source] = {}
    for group in groups:
        for source in group:
            seen.setdefault(id(source), source)
    return tuple(seen.values())


def defects_hitting(model: Model, variant: Variant, build: Build, hw: Hardware) -> tuple[Defect, ...]:
    """The build's known defects that this model, checkpoint and GPU run into."""
    if not build.defects:  # most builds (37 of 46) list none, and this runs for every path
        return ()
    needs = {n.op for n in model.needs}
    return tuple(
        d
        for d in build.defects
        if (d.sm is None or hw.compute_capability in d.sm)
        and (d.models is None or model.id in d.models)
        and (d.architectures is None or model.architecture in d.architectures)
        and (d.ops is None or bool(needs.intersection(d.ops)))
        and (d.quants is None or variant.quant in d.quants)
    )


def defect_text(defect: Defect) -> str:
    parts = [f"{defect.id} ({defect.symptom}): {defect.title}"]
    if defect.log_line:
        parts.append(f"the engine logs {defect.log_line!r}")
    parts.append(f"fixed in {defect.fixed_in}" if defect.fixed_in else "no build known to fix it")
    if defect.workaround:
        parts.append(f"workaround: {defect.workaround}")
    return "; ".join(parts)


def with_defects(gates: tuple[GateResult, ...], found: tuple[Defect, ...]) -> tuple[GateResult, ...]:
    """A crash or wrong output with no workaround fails the gate where it shows."""
    out = list(gates)
    for defect in found:
        if not defect.blocks:
            continue
        index = next(i for i, g in enumerate(out) if g.gate == defect.gate)
        if out[index].outcome != "fail":
            out[index] = GateResult(defect.gate, "fail", f"known defect {defect_text(defect)}", tuple(defect.sources))
    return tuple(out)


def architecture(model: Model, variant: Variant, engine: Engine, build: Build) -> GateResult:
    if engine.loads == "gguf":
        if variant.quant != "gguf":
            return GateResult(
                "architecture",
                "fail",
                f"{engine.name} loads GGUF files; variant {variant.id} is {variant.quant} safetensors",
            )
        arch = model.gguf_arch
        if arch is None:
            return GateResult(
                "architecture", "unknown", f"the catalog does not know {model.name}'s GGUF architecture name"
            )
        label = f"GGUF architecture {arch!r}"
    else:
        if variant.quant == "gguf":
            return GateResult(
                "architecture",
                "fail",
                f"{engine.name} serves Hugging Face checkpoints here; {variant.id} is a GGUF file",
            )
        arch = model.architecture
        label = arch
    details = Details(operation=arch)
    if arch in build.architectures:
        return GateResult("architecture", "pass", f"{build.id} loads {label}", _srcs(build.sources), details)
    return GateResult("architecture", "fail", f"{build.id} does not load {label}", _srcs(build.sources), details)


def weight_format(model: Model, variant: Variant, build: Build, hw: Hardware) -> GateResult:
    cc = hw.compute_capability
    base = Details(capability=cc.sm, operation=variant.quant)

    def result(outcome: Literal["pass", "fail"], reason: str, sources: tuple[Source, ...]) -> GateResult:
        return GateResult("weight-format", outcome, reason, sources, base)

    if variant.min_capability is not None and cc < variant.min_capability:
        reason = f"{variant.id} needs {variant.min_capability.sm}+: {variant.min_capability_reason}"
        return result("fail", reason, _srcs(variant.sources))
    if variant.only_builds is not None and build.id not in variant.only_builds:
        reason = f"{variant.id} loads only in {', '.join(variant.only_builds)}: {variant.only_builds_reason}"
        return result("fail", reason, _srcs(variant.sources))
    fmt = next((w for w in build.weight_formats if w.quant == variant.quant), None)
    if fmt is None:
        known = ", ".join(w.quant for w in build.weight_formats)
        return result("fail", f"{build.id} has no {variant.quant} loader (it loads {known})", _srcs(build.sources))
    if fmt.unverified:
        reason = (
            f"{build.id}'s {variant.quant} loader is an unverified fact "
            f"({'; '.join(s.note or s.url for s in fmt.sources)})"
        )
        return GateResult("weight-format", "unknown", reason, _srcs(fmt.sources), base)
    if fmt.native is not None and cc in fmt.native:
        return result("pass", f"{variant.quant} runs on native kernels on {cc.sm}", _srcs(fmt.sources))
    for fallback in fmt.fallbacks:
        if cc in fallback.sm:
            if fallback.dense_only and model.moe is not None:
                reason = (
                    f"{variant.quant} on {cc.sm} only has the {fallback.kernel} fallback for dense layers; "
                    "the MoE experts have no kernel"
                )
                return result("fail", reason, _srcs(fallback.sources, fmt.sources))
            reason = (
                f"{variant.quant} has no native kernel on {cc.sm}; runs through {fallback.kernel} ({fallback.cost})"
            )
            chosen = (("weights." + variant.quant, fallback.kernel),)
            details = evolve(base, kernels=chosen, via_fallback=True, args=tuple(fallback.args))
            if fallback.unverified:
                reason += f", an unverified fact ({'; '.join(s.note or s.url for s in fallback.sources)})"
                return GateResult("weight-format", "unknown", reason, _srcs(fallback.sources, fmt.sources), details)
            return GateResult("weight-format", "pass", reason, _srcs(fallback.sources, fmt.sources), details)
    native = str(fmt.native) if fmt.native else "none"
    fallbacks = "; ".join(f"{f.kernel} on {f.sm}" for f in fmt.fallbacks) or "none"
    reason = f"no {variant.quant} kernel for {cc.sm} in {build.id} (native: {native}; fallbacks: {fallbacks})"
    return result("fail", reason, _srcs(fmt.sources))


def _kernel_misfit(kernel: Kernel, need: Need, model: Model, hw: Hardware, kv: tuple[KvDtype, ...]) -> list[str]:
    """Why this kernel cannot serve the need on this GPU (empty: it can)."""
    reasons: list[str] = []
    cc = hw.compute_capability
    if cc not in kernel.sm:
        reasons.append(f"needs {kernel.sm}")
    if kernel.head_sizes is not None and need.head_size is not None and need.head_size not in kernel.head_sizes:
        reasons.append(f"head size {need.head_size} not in {kernel.head_sizes}")
    if (
        kernel.qk_nope_head_dims is not None
        and need.qk_nope_head_dim is not None
        and need.qk_nope_head_dim not in kernel.qk_nope_head_dims
    ):
        reasons.append(f"qk_nope_head_dim {need.qk_nope_head_dim} not in {kernel.qk_nope_head_dims}")
    if kernel.index_topks is not None and need.index_topk is not None and need.index_topk not in kernel.index_topks:
        reasons.append(f"index_topk {need.index_topk} not in {kernel.index_topks}")
    if kernel.architectures is not None and model.architecture not in kernel.architectures:
        reasons.append(f"limited to {', '.join(kernel.architectures)}")
    if kernel.smem_bytes is not None and kernel.smem_bytes > hw.smem_per_block_optin:
        reasons.append(
            f"needs {kernel.smem_bytes:,} B shared memory per block, {hw.name} has {hw.smem_per_block_optin:,} B"
        )
    if kv and kernel.kv_dtypes is not None and not set(kv) & set(kernel.kv_dtypes):
        reasons.append(f"KV cache {'/'.join(kv)} not accepted ({', '.join(kernel.kv_dtypes)})")
    return reasons


def backend_name(kernel_name: str) -> str:
    """The engine's own name for a kernel (what --attention-backend takes): the catalog name's first word."""
    return kernel_name.split(" ", 1)[0]


def kernels(
    model: Model,
    build: Build,
    hw: Hardware,
    kv: tuple[KvDtype, ...],
    forced: str | None = None,
    recipe: Deployment | None = None,
) -> GateResult:
    """Every need must be met by some kernel of the build on this GPU (first valid in the build's order).

    `forced`: an attention backend the user pinned (by the engine's name); only it may serve attention.
    `recipe`: a curated recipe of this very path; its own sources are the run report that vouches for
    kernel facts the catalog could not verify (elsewhere such a kernel leaves the gate unknown)."""
    cc = hw.compute_capability
    chosen: list[tuple[str, str]] = []
    failures: list[str] = []
    open_needs: list[str] = []
    vouches: list[str] = []
    misses: list[KernelMiss] = []
    sources: list[Source] = []
    kv_options: list[KvDtype] | None = None
    for need in model.needs:
        candidates = [k for k in build.kernels if k.provides == need.op]
        if forced is not None and need.op in ATTENTION_OPS:
            pinned = [k for k in candidates if backend_name(k.name).lower() == forced.lower()]
            if not pinned:
                offers = sorted({k.provides for k in build.kernels if backend_name(k.name).lower() == forced.lower()})
                what = f"provides {', '.join(offers)}" if offers else f"is not an attention backend of {build.id}"
                have = ", ".join(dict.fromkeys(backend_name(k.name) for k in candidates)) or "none"
                failures.append(f"{forced} {what}; {model.name} needs {need.op} ({need.why}); {build.id} has: {have}")
                misses.append(KernelMiss(need.op, need.why, ((forced, (what,)),)))
                continue
            candidates = pinned
        if not candidates:
            failures.append(f"{need.op} ({need.why}): {build.id} has no such kernel at all")
            misses.append(KernelMiss(need.op, need.why, ()))
            continue
        # with a fixed KV dtype, a kernel that rejects it does not count
        fixed = kv if need.op in ATTENTION_OPS else ()
        verdicts = [(k, _kernel_misfit(k, need, model, hw, fixed)) for k in candidates]
        fits = [k for k, reasons in verdicts if not reasons]
        # a kernel known only from unverified sources cannot carry a verdict: it leaves the need open
        vouched = recipe is not None and bool(recipe.sources) and not all(x.unverified for x in recipe.sources)
        valid = [k for k in fits if vouched or not k.unverified]
        if fits and not valid:
            open_needs.append(
                f"{need.op} ({need.why}): only {', '.join(k.name for k in fits)} of {build.id} would serve it on "
                f"{cc.sm}, and that kernel fact is unverified "
                f"({'; '.join(s.note or s.url for k in fits for s in k.sources)})"
            )
            for k in fits:
                sources.extend(k.sources)
            continue
        if valid:
            chosen.append((need.op, valid[0].name))
            sources.extend(valid[0].sources)
            if valid[0].unverified and recipe is not None:
                vouches.append(
                    f"{valid[0].name} is unverified in the catalog; the {recipe.status} recipe {recipe.id} runs it"
                )
                sources.extend(recipe.sources)
            if need.op in ATTENTION_OPS:
                accepted: list[KvDtype] = []
                for k in valid:
                    for dtype in k.kv_dtypes or []:
                        if dtype not in accepted:
                            accepted.append(dtype)
                if kv:
                    accepted = [d for d in accepted if d in kv]
                kv_options = accepted if kv_options is None else [d for d in kv_options if d in accepted]
            continue
        detail = "; ".join(f"{k.name}: {', '.join(reasons)}" for k, reasons in verdicts)
        failures.append(f"no {need.op} kernel for {cc.sm} ({need.why}) — {detail}")
        misses.append(KernelMiss(need.op, need.why, tuple((k.name, tuple(r)) for k, r in verdicts)))
        for k, _ in verdicts:
            sources.extend(k.sources)
    details = Details(capability=cc.sm, kernels=tuple(chosen), misses=tuple(misses), kv_options=tuple(kv_options or ()))
    if failures:
        return GateResult("kernel", "fail", " | ".join(failures), _srcs(sources), evolve(details, kv_options=()))
    if open_needs:
        reason = " | ".join(open_needs)
        return GateResult("kernel", "unknown", reason, _srcs(sources), evolve(details, kv_options=()))
    if not model.needs:
        return GateResult("kernel", "unknown", f"the catalog lists no kernel needs for {model.name}", (), details)
    names = ", ".join(f"{name} ({op})" for op, name in chosen)
    vouched_for = f" ({'; '.join(vouches)})" if vouches else ""
    return GateResult("kernel", "pass", f"{cc.sm}: {names}{vouched_for}", _srcs(sources), details)


def platform(build: Build, hw: Hardware) -> GateResult:
    cc = hw.compute_capability
    arch = hw.host_arch[0]
    if build.source_build is None and arch not in build.images:
        have = ", ".join(build.images) or "none"
        return GateResult(
            "platform", "fail", f"{build.id} has no {arch} image (images for: {have})", _srcs(build.sources)
        )
    if cc not in build.cuda_archs:
        return GateResult(
            "platform",
            "fail",
            f"{build.id} (CUDA {build.cuda}) is not compiled for {cc.sm} (targets: {build.cuda_archs})",
            _srcs(build.sources),
        )
    if build.unverified:
        return GateResult(
            "platform",
            "unknown",
            f"{build.id} is known only from unverified sources ({'; '.join(s.note or s.url for s in build.sources)})",
            _srcs(build.sources),
        )
    if build.verified_sm is not None and cc not in build.verified_sm:
        return GateResult(
            "platform",
            "unknown",
            f"{build.id} is only reported working on {build.verified_sm}; {cc.sm} is untested",
            _srcs(build.sources),
        )
    where = "built from source" if build.source_build is not None else f"{arch} image"
    driver = f", driver ≥ {build.driver_min}" if build.driver_min else ""
    return GateResult("platform", "pass", f"{where}, CUDA {build.cuda} covers {cc.sm}{driver}", _srcs(build.sources))


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
    if heads % tp:
        reason = f"{heads} attention heads do not split evenly over tensor parallel {tp}"
        return GateResult("topology", "fail", reason, (), details)
    if model.attention.kind == "gqa" and kv_heads:
        ok = (kv_heads % tp == 0) if tp <= kv_heads else (tp % kv_heads == 0)
        if not ok:
            return GateResult(
                "topology",
                "fail",
                f"{kv_heads} KV heads cannot be split or replicated evenly over tensor parallel {tp}",
                tuple(model.attention.sources[:1]),
                details,
            )
    reason = f"tensor parallel {tp} splits {heads} heads"
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
) -> GateResult:
    """Weights per GPU + KV/state for the planned context × concurrency; the budget rides in the details.

    When the GPUs alone are too small (or the engine always keeps experts in host RAM), a path that
    loads (`may_offload`) gets the engine's host-offload layout (offload.py) at the planned context."""
    model = request.model
    sized = checkpoint_bytes(model, variant.size_bytes, variant.quant, named=request.variant == variant.id)
    size, size_note = sized if sized is not None else (None, None)
    if size is None and dep is not None:
        reason = (
            f"the size of {variant.repo} is not in the catalog, so memory is not planned; the {dep.status} recipe "
            f"{dep.id} reports it running on this layout with its own context settings"
        )
        return GateResult("memory", "pass", reason, tuple(dep.sources))
    if size is None:
        return GateResult(
            "memory", "unknown", f"the size of {variant.repo} is not in the catalog", tuple(variant.sources)
        )
    tensor = engine.parallelism == "tensor"
    layer_split = 1 if tensor else layout.gpus_per_node
    tp = settings.tp if tensor else 1
    fp = footprint(model, kv, tp, layer_split, engine.memory.state_slots_per_request, settings.mtp)
    if isinstance(fp, Unplannable):
        return GateResult("memory", "unknown", fp.reason)
    shards = layout.gpus if tensor else layout.gpus_per_node
    context = request.context if request.context is not None else settings.context
    concurrency = request.concurrency if request.concurrency is not None else settings.concurrency
    inputs = MemoryInputs(
        hardware=request.hardware,
        engine=engine,
        model=model,
        weights_bytes_per_gpu=size / shards,
        footprint=fp,
        fraction=settings.fraction,
        context=context,
        concurrency=concurrency,
        context_is_auto=settings.context_auto and request.context is None,
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
                weights_bytes_per_gpu=weights_per_gpu,
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


@frozen
class Subject:
    """One candidate path with the settings to check: what every gate's check reads."""

    request: Request
    engine: Engine
    build: Build
    variant: Variant
    layout: Layout
    deployment: Deployment | None
    settings: Settings


Check = Callable[[Subject, Mapping[GateId, GateResult]], GateResult]


@frozen
class Gate:
    id: GateId
    short: str
    check: Check  # sees the results of the gates before it (memory plans with the KV dtype the kernel gate chose)


def kv_dtype(subject: Subject, kernel: GateResult) -> KvDtype:
    """The KV dtype the plan runs with: the chosen kernels' first, else the fixed spelling's, else the engine's."""
    if kernel.details.kv_options:
        return kernel.details.kv_options[0]
    fixed = subject.settings.kv_fixed
    return fixed[0] if fixed else subject.engine.default_kv_dtype


def _topology(s: Subject, done: Mapping[GateId, GateResult]) -> GateResult:
    tensor = s.engine.parallelism == "tensor"
    result = topology(s.request.model, s.engine, s.layout, s.request.hardware, s.settings.tp if tensor else None)
    if s.layout.nodes > 1 and s.deployment is None and s.engine.multi_node != "none" and not s.engine.flags.nnodes:
        return GateResult(
            "topology", "fail", f"{s.engine.name}'s flag vocabulary has no multi-node flags in the catalog"
        )
    return result


def _architecture(s: Subject) -> GateResult:
    """The build loads the architecture, and a derived plan's parsers exist in it (else the server dies at start)."""
    result = architecture(s.request.model, s.variant, s.engine, s.build)
    if result.outcome != "pass" or s.deployment is not None:
        return result
    missing, _ = parser_gaps(s.request.model, s.engine, s.build, s.request.hardware.compute_capability)
    if not missing:
        return result
    return GateResult("architecture", "fail", "; ".join(missing), _srcs(s.build.sources), result.details)


REGISTRY: dict[GateId, Gate] = {
    gate.id: gate
    for gate in (
        Gate("architecture", "arch", lambda s, _: _architecture(s)),
        Gate(
            "weight-format",
            "format",
            lambda s, _: weight_format(s.request.model, s.variant, s.build, s.request.hardware),
        ),
        Gate(
            "kernel",
            "kernel",
            lambda s, _: kernels(
                s.request.model,
                s.build,
                s.request.hardware,
                s.settings.kv_fixed,
                s.settings.attention_backend,
                s.deployment,
            ),
        ),
        Gate("platform", "platform", lambda s, _: platform(s.build, s.request.hardware)),
        Gate(
            "memory",
            "memory",
            lambda s, done: memory(
                s.request,
                s.engine,
                s.variant,
                s.layout,
                s.settings,
                kv_dtype(s, done["kernel"]),
                s.deployment,
                may_offload=_loads(done),
            ),
        ),
        Gate("topology", "topology", _topology),
    )
}
assert tuple(REGISTRY) == GATES


# Gates whose result reads only the build, the checkpoint, the GPU and the fixed settings — never the
# layout — so one resolve() computes them once per path and reuses them for every layout it tries. They
# come first in GATES: the layout search runs only these on a path before planning its memory.
LAYOUT_FREE: frozenset[GateId] = frozenset({"architecture", "weight-format", "kernel", "platform"})
assert all(g in LAYOUT_FREE for g in GATES[: len(LAYOUT_FREE)])


def _loads(done: Mapping[GateId, GateResult]) -> bool:
    """The build loads the checkpoint at all: host offload is planned only for such paths."""
    return all(done[g].outcome == "pass" for g in ("architecture", "weight-format"))


def _memo_key(gate_id: GateId, s: Subject, done: Mapping[GateId, GateResult]) -> tuple[object, ...] | None:
    """What the gate's result reads besides the request (the model and the GPU are fixed within a resolve)."""
    dep = s.deployment.id if s.deployment else None
    if gate_id == "architecture":
        # a derived plan's parsers are checked too; a curated recipe vouches for its own
        return (gate_id, s.engine.id, s.build.id, s.variant.id, s.deployment is None)
    if gate_id == "weight-format":
        return (gate_id, s.engine.id, s.build.id, s.variant.id)
    if gate_id == "kernel":
        # not the checkpoint: the needs are the model's; a recipe of the path may vouch for kernel facts
        return (gate_id, s.engine.id, s.build.id, dep, s.settings.kv_fixed, s.settings.attention_backend)
    if gate_id == "platform":
        return _platform_key(s.engine, s.build)
    if gate_id == "memory":
        # the budget reads the engine's memory behaviour, the checkpoint, the layout and the KV dtype — not the
        # build — so builds of one engine share it (a footprint per checkpoint × layout, not per build)
        # … and whether the build loads the checkpoint at all (only then is host offload planned)
        return (
            gate_id,
            s.engine.id,
            s.variant.id,
            s.layout,
            dep,
            s.settings,
            kv_dtype(s, done["kernel"]),
            _loads(done),
        )
    if gate_id == "topology":  # the model and the GPU are the request's; only a recipe-less path needs multi-node flags
        return (gate_id, s.engine.id, s.layout, s.settings.tp, s.deployment is None)
    return None


def _platform_key(engine: Engine, build: Build) -> tuple[object, ...]:
    return ("platform", engine.id, build.id)


class PlatformVerdicts:
    """Platform verdicts shared by the resolves of one matrix: the gate reads only the build and the GPU.

    Keyed by the objects' identity, not their ids: a `--gpu-memory` copy of a GPU is another object under the
    same id. Each entry holds its build and GPU, so their ids cannot be reused while it lives."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], tuple[Build, Hardware, GateResult]] = {}

    def of(self, build: Build, hw: Hardware) -> GateResult:
        key = (id(build), id(hw))
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = (build, hw, platform(build, hw))
        return known[2]


def platform_memoised(
    engine: Engine,
    build: Build,
    hw: Hardware,
    memo: dict[tuple[object, ...], object],
    shared: PlatformVerdicts | None = None,
) -> GateResult:
    """The platform gate of a build on this GPU, shared with `run` through the memo (it reads nothing else)."""
    key = _platform_key(engine, build)
    known = memo.get(key)
    if isinstance(known, GateResult):
        return known
    memo[key] = result = shared.of(build, hw) if shared is not None else platform(build, hw)
    return result


# The layout-free gates by how many paths one result settles: a platform or kernel verdict holds for every
# checkpoint of a build, an architecture verdict for one checkpoint format, a weight-format one for one
# checkpoint. A layout search that only asks whether a path can run at all checks them in this order.
FEWEST_FIRST: tuple[GateId, ...] = ("platform", "kernel", "architecture", "weight-format")
assert frozenset(FEWEST_FIRST) == LAYOUT_FREE


def run(
    subject: Subject,
    memo: dict[tuple[object, ...], object] | None = None,
    only: tuple[GateId, ...] | None = None,
    until_not_pass: bool = False,
) -> tuple[GateResult, ...]:
    """Every gate on one path, in triage order (GATES). `memo`: results shared across the paths of one resolve.
    `only`: just these gates, in this order (none may read a gate left out: memory reads kernel, architecture
    and weight-format); `until_not_pass`: stop after the first gate that does not pass."""
    done: dict[GateId, GateResult] = {}
    for gate_id in GATES if only is None else only:
        key = _memo_key(gate_id, subject, done) if memo is not None else None
        if memo is not None and key is not None and key in memo:
            cached = memo[key]
            assert isinstance(cached, GateResult)
            done[gate_id] = cached
        else:
            done[gate_id] = REGISTRY[gate_id].check(subject, done)
            if memo is not None and key is not None:
                memo[key] = done[gate_id]
        if until_not_pass and done[gate_id].outcome != "pass":
            break
    return tuple(done.values())
