"""Known faults on a path: which of a build's defects this model, checkpoint and GPU run into, how a
blocking one fails the gate where it shows, and which scoped notes and defects concern a path."""

from __future__ import annotations

from ..catalog.schema import Engine, Hardware, Model, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build, Defect
from ..catalog.schema.model import Pitfall
from .flags import speculative_method
from .types import Candidate, Flag, GateResult, Layout, Settings


def defects_hitting(
    model: Model,
    variant: Variant,
    build: Build,
    hw: Hardware,
    settings: Settings | None = None,
    kv: KvDtype | None = None,
    every_config: bool = False,
    layout: Layout | None = None,
) -> tuple[Defect, ...]:
    """The build's known defects that this model, checkpoint and GPU (and its host CPU) run into.

    A defect scoped by configuration (KV dtype, DCP, speculative method and draft tokens, CUDA graphs, batch,
    parallel layout and tensor-parallel size, context, host offload) hits only the `settings` (KV dtype `kv`,
    `layout`) it names; with no settings (a path not planned yet) it is left for the plan to decide.
    `every_config`: every defect of the model and GPU, whatever configuration it needs (coverage)."""
    if not build.defects:  # most builds (37 of 46) list none, and this runs for every path
        return ()
    needs = {n.op for n in model.needs}
    return tuple(
        d
        for d in build.defects
        if (d.sm is None or hw.compute_capability in d.sm)
        and (d.models is None or model.id in d.models)
        # an HF architecture, or the GGUF one that llama.cpp builds name theirs by
        and (d.architectures is None or model.architecture in d.architectures or model.gguf_arch in d.architectures)
        and (d.ops is None or bool(needs.intersection(d.ops)))
        and (d.quants is None or variant.quant in d.quants)
        and (d.moe is None or (model.moe is not None) == d.moe)
        and (d.host_arch is None or hw.host_arch[0] in d.host_arch)  # the host a plan builds its images for
        and (every_config or in_scope(d, settings, kv, layout, model.max_context))
    )


def in_scope(
    defect: Defect,
    settings: Settings | None,
    kv: KvDtype | None,
    layout: Layout | None = None,
    max_context: int | None = None,
    planned: bool = True,
) -> bool:
    """Whether a configuration is one the defect hits (a defect with no configuration scope hits every one);
    a knob the configuration does not state (KV dtype, concurrency) does not match, except the context: an
    engine left to choose serves the model's whole `max_context`. `planned`: False for a path's settings before
    its memory is planned, whose KV dtype, context, concurrency and host offload the plan decides: the defect
    may hit unless a knob the plan keeps rules it out."""
    if not defect.scoped:
        return True
    if settings is None:
        return False
    if defect.pipeline_parallel_min is not None and settings.pp < defect.pipeline_parallel_min:
        return False
    nodes = layout.nodes if layout is not None else 1
    if defect.multi_node is not None and (nodes > 1) != defect.multi_node:
        return False
    if defect.data_parallel is not None and (settings.dp > 1) != defect.data_parallel:
        return False
    if defect.expert_parallel is not None and settings.ep != defect.expert_parallel:
        return False
    if defect.tensor_parallel is not None and settings.tp not in defect.tensor_parallel:
        return False
    if defect.speculative_tokens is not None and (
        settings.speculative is None or settings.speculative_tokens not in defect.speculative_tokens
    ):
        return False
    if defect.dcp is not None and (settings.dcp > 1) != defect.dcp:
        return False
    if defect.speculative is not None and settings.speculative not in scope_methods(defect):
        return False
    if defect.cuda_graphs is not None and settings.cuda_graphs != defect.cuda_graphs:
        return False
    if not planned:
        return True
    if defect.context_above is not None and (settings.context or max_context or 0) <= defect.context_above:
        return False
    if defect.host_offload is not None and settings.host_offload != defect.host_offload:
        return False
    if defect.kv_dtypes is not None and kv not in defect.kv_dtypes and not v_cache_hits(defect, settings):
        return False
    return defect.batch is None or settings.concurrency in defect.batch


def v_cache_hits(defect: Defect, settings: Settings) -> bool:
    """A command's V cache, typed apart from K, is in a dtype the defect names (a quantized V alone is enough for
    some defects)."""
    return defect.kv_v_alone and any(v in (defect.kv_dtypes or ()) for v in settings.kv_fixed_v)


def scope_methods(defect: Defect) -> set[str | None]:
    return {speculative_method(m) for m in defect.speculative or ()}


def scope_text(defect: Defect) -> str:
    """The configuration a defect hits, in words ("" when it hits every one)."""
    parts: list[str] = []
    if defect.kv_dtypes:
        parts.append(f"KV cache {'/'.join(defect.kv_dtypes)}")
    if defect.dcp is not None:
        parts.append("decode context parallel" if defect.dcp else "no decode context parallel")
    if defect.speculative:
        parts.append(f"speculative decoding with {'/'.join(defect.speculative)}")
    if defect.cuda_graphs is not None:
        parts.append("CUDA graphs on" if defect.cuda_graphs else "eager mode (no CUDA graphs)")
    if defect.batch is not None:
        parts.append(defect.batch.describe())
    if defect.pipeline_parallel_min is not None:
        parts.append(f"pipeline parallel size {defect.pipeline_parallel_min} or more")
    if defect.multi_node is not None:
        parts.append("more than one node" if defect.multi_node else "one node")
    if defect.data_parallel is not None:
        parts.append("data parallel" if defect.data_parallel else "no data parallel")
    if defect.expert_parallel is not None:
        parts.append("expert parallel" if defect.expert_parallel else "no expert parallel")
    if defect.context_above is not None:
        parts.append(f"a max context above {defect.context_above:,} tokens")
    if defect.tensor_parallel is not None:
        parts.append(defect.tensor_parallel.describe("tensor-parallel size"))
    if defect.host_offload is not None:
        parts.append("weights offloaded to host RAM" if defect.host_offload else "every weight on the GPUs")
    if defect.speculative_tokens is not None:
        parts.append(defect.speculative_tokens.describe("draft tokens per step"))
    return ", ".join(parts)


def defect_text(defect: Defect) -> str:
    parts = [f"{defect.id} ({defect.symptom}): {defect.title}"]
    if defect.scoped:
        parts.append(f"hits {scope_text(defect)}")
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


def defects(c: Candidate) -> list[str]:
    """Known faults on this path: the checkpoint's (per engine) and the build's (per GPU, model, feature)."""
    return [*c.defects, *(f"{c.build.id}: {defect_text(d)}" for d in c.build_defects)]


def applies(p: Pitfall, engine: Engine, build: Build, hw: Hardware) -> bool:
    """A note or defect scoped to engines, builds and GPUs: does it concern this path?"""
    return (
        (p.engines is None or engine.id in p.engines)
        and (p.builds is None or build.id in p.builds)
        and (p.capability is None or hw.compute_capability in p.capability)
    )


def with_workarounds(
    cand: Candidate, flags: list[Flag], env: list[tuple[str, str, str]], hw: Hardware
) -> tuple[list[Flag], list[tuple[str, str, str]], list[str]]:
    """The plan's flags and environment with the workarounds of the build's defects it runs into; a workaround
    flag the plan already sets to another value is not applied, and said so."""
    flags, env, notes = list(flags), list(env), []
    for defect in cand.build_defects:
        for arg in defect.workaround_args:
            if arg.capability is not None and hw.compute_capability not in arg.capability:
                continue
            present = next((f for f in flags if f.flag == arg.flag), None)
            if present is None:
                reason = f"works around known defect {defect.id}: {arg.reason}"
                flags.append(Flag(arg.flag, arg.value, reason, tuple(arg.sources or defect.sources[:1])))
            elif present.value != arg.value:
                notes.append(
                    f"the workaround of known defect {defect.id} ({arg.flag} {arg.value or ''}) conflicts with the "
                    f"planned {present.flag} {present.value or ''}; not applied"
                )
        for var in defect.workaround_env:
            if all(name != var.name for name, _, _ in env):
                env.append((var.name, var.value, f"works around known defect {defect.id}: {var.reason}"))
    return flags, env, notes
