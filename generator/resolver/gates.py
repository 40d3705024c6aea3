"""The six gates. Each is a small predicate over catalog facts that returns a reason, never a bare bool."""

from __future__ import annotations

from dataclasses import dataclass

from ..schema import Engine, Hardware, Kernel, Model, Source, Variant
from ..schema.common import KvDtype
from ..schema.engine import Build, Defect
from ..schema.model import Need
from .types import GateResult, Layout

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
    if arch in build.architectures:
        return GateResult("architecture", "pass", f"{build.id} loads {label}", _srcs(build.sources))
    return GateResult("architecture", "fail", f"{build.id} does not load {label}", _srcs(build.sources))


@dataclass(frozen=True)
class FormatResult:
    gate: GateResult
    via_fallback: bool
    args: tuple[str, ...] = ()  # engine arguments that select the fallback


def weight_format(model: Model, variant: Variant, build: Build, hw: Hardware) -> FormatResult:
    cc = hw.compute_capability
    if variant.min_capability is not None and cc < variant.min_capability:
        reason = f"{variant.id} needs {variant.min_capability.sm}+: {variant.min_capability_reason}"
        return FormatResult(GateResult("weight-format", "fail", reason, _srcs(variant.sources)), False)
    if variant.only_builds is not None and build.id not in variant.only_builds:
        reason = f"{variant.id} loads only in {', '.join(variant.only_builds)}: {variant.only_builds_reason}"
        return FormatResult(GateResult("weight-format", "fail", reason, _srcs(variant.sources)), False)
    fmt = next((w for w in build.weight_formats if w.quant == variant.quant), None)
    if fmt is None:
        known = ", ".join(w.quant for w in build.weight_formats)
        return FormatResult(
            GateResult(
                "weight-format",
                "fail",
                f"{build.id} has no {variant.quant} loader (it loads {known})",
                _srcs(build.sources),
            ),
            False,
        )
    if fmt.native is not None and cc in fmt.native:
        return FormatResult(
            GateResult(
                "weight-format", "pass", f"{variant.quant} runs on native kernels on {cc.sm}", _srcs(fmt.sources)
            ),
            False,
        )
    for fallback in fmt.fallbacks:
        if cc in fallback.sm:
            if fallback.dense_only and model.moe is not None:
                reason = (
                    f"{variant.quant} on {cc.sm} only has the {fallback.kernel} fallback for dense layers; "
                    "the MoE experts have no kernel"
                )
                return FormatResult(
                    GateResult("weight-format", "fail", reason, _srcs(fallback.sources, fmt.sources)), False
                )
            reason = (
                f"{variant.quant} has no native kernel on {cc.sm}; runs through {fallback.kernel} ({fallback.cost})"
            )
            gate = GateResult("weight-format", "pass", reason, _srcs(fallback.sources, fmt.sources))
            return FormatResult(gate, True, tuple(fallback.args))
    native = str(fmt.native) if fmt.native else "none"
    fallbacks = "; ".join(f"{f.kernel} on {f.sm}" for f in fmt.fallbacks) or "none"
    reason = f"no {variant.quant} kernel for {cc.sm} in {build.id} (native: {native}; fallbacks: {fallbacks})"
    return FormatResult(GateResult("weight-format", "fail", reason, _srcs(fmt.sources)), False)


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


@dataclass(frozen=True)
class KernelResult:
    gate: GateResult
    kv_options: tuple[KvDtype, ...]  # accepted by every chosen attention kernel, preferred first
    chosen: tuple[tuple[str, str], ...]  # (op, kernel name)


def kernels(model: Model, build: Build, hw: Hardware, kv: tuple[KvDtype, ...]) -> KernelResult:
    """Every need must be met by some kernel of the build on this GPU (first valid in the build's order)."""
    chosen: list[tuple[str, str]] = []
    failures: list[str] = []
    sources: list[Source] = []
    kv_options: list[KvDtype] | None = None
    for need in model.needs:
        candidates = [k for k in build.kernels if k.provides == need.op]
        if not candidates:
            failures.append(f"{need.op} ({need.why}): {build.id} has no such kernel at all")
            continue
        # with a fixed KV dtype, a kernel that rejects it does not count
        fixed = kv if need.op in ATTENTION_OPS else ()
        verdicts = [(k, _kernel_misfit(k, need, model, hw, fixed)) for k in candidates]
        valid = [k for k, reasons in verdicts if not reasons]
        if valid:
            chosen.append((need.op, valid[0].name))
            sources.extend(valid[0].sources)
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
        failures.append(f"no {need.op} kernel for {hw.compute_capability.sm} ({need.why}) — {detail}")
        for k, _ in verdicts:
            sources.extend(k.sources)
    if failures:
        return KernelResult(GateResult("kernel", "fail", " | ".join(failures), _srcs(sources)), (), tuple(chosen))
    if not model.needs:
        return KernelResult(
            GateResult("kernel", "unknown", f"the catalog lists no kernel needs for {model.name}"), (), ()
        )
    names = ", ".join(f"{name} ({op})" for op, name in chosen)
    return KernelResult(
        GateResult("kernel", "pass", f"{hw.compute_capability.sm}: {names}", _srcs(sources)),
        tuple(kv_options or ()),
        tuple(chosen),
    )


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


def topology(model: Model, engine: Engine, layout: Layout, hw: Hardware) -> GateResult:
    if layout.nodes > 1 and engine.multi_node == "none":
        return GateResult(
            "topology", "fail", f"{engine.name} has no multi-node serving here; {layout.nodes} nodes requested"
        )
    if engine.parallelism == "layers":
        return GateResult("topology", "pass", f"layers split over {layout.gpus_per_node} GPU(s) of one node")
    tp = layout.gpus
    heads = model.attention.num_heads
    if heads % tp:
        return GateResult("topology", "fail", f"{heads} attention heads do not split evenly over tensor parallel {tp}")
    kv_heads = model.attention.num_kv_heads
    if model.attention.kind == "gqa" and kv_heads:
        ok = (kv_heads % tp == 0) if tp <= kv_heads else (tp % kv_heads == 0)
        if not ok:
            return GateResult(
                "topology",
                "fail",
                f"{kv_heads} KV heads cannot be split or replicated evenly over tensor parallel {tp}",
            )
    reason = f"tensor parallel {tp} splits {heads} heads"
    if layout.nodes > 1:
        link = hw.interconnect.between_nodes or "the network between nodes"
        reason += f"; across {layout.nodes} nodes over {link}"
    elif tp > 1 and hw.interconnect.kind in ("pcie", "none"):
        reason += "; no NVLink: all-reduce goes over PCIe (works, slower)"
    return GateResult("topology", "pass", reason)
