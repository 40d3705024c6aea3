"""Lint findings, and the ones that come from running recipegen's gates on a command's own choices.

When a gate fails, the finding names the flag that causes it by running the gate again without that
choice (the pinned backend, the KV dtype, the context): the flag whose removal makes it pass is the one
to fix, and the passing run says what to use instead.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Literal

from ..catalog.schema import Engine, Source, Variant
from ..catalog.schema.engine import Build, Defect
from ..catalog.vocabulary import ParsedArgs, Vocabulary
from ..frozen import frozen
from ..plan.build_gates import backend_name
from ..plan.flags import kv_choices
from ..plan.offload import OffloadPlan
from ..plan.types import Candidate, GateId, GateResult, Layout, Request, Settings

Severity = Literal["error", "silent", "warn", "info"]


@frozen
class Finding:
    severity: Severity
    code: str  # what kind of finding (unknown-flag, bad-choice, kernel, kv-dtype, tool-parser …)
    flag: str | None
    value: str | None
    what: str  # what happens
    why: str  # why (kernel, sm, source)
    fix: str | None  # the exact flag to use instead
    sources: tuple[Source, ...] = ()
    gate: GateId | None = None


def gate_findings(
    request: Request,
    engine: Engine,
    build: Build,
    variant: Variant,
    layout: Layout,
    settings: Settings,
    pinned_by: str | None,
    pinned: str | None,
    parsed: ParsedArgs,
    vocab: Vocabulary,
    env: dict[str, str] | None = None,
) -> list[Finding]:
    """`env`: the environment the command sets (docker -e, VAR=value before it), read for workarounds."""
    from ..plan.candidates import evaluate
    from ..plan.defects import defect_text

    cand = evaluate(request, engine, build, variant, layout, None, settings)
    hw = request.hardware.compute_capability
    given_env = env or {}
    out = [
        _defect_finding(engine, build, d, _scope_flag(engine, d, parsed, vocab) if d.scoped else None)
        for d in cand.build_defects
        if not worked_around(d, hw, parsed, vocab, given_env)
    ]
    by_defect = {f"known defect {defect_text(d)}" for d in cand.build_defects}
    for gate in cand.failing():
        if gate.reason in by_defect:  # the defect's own finding says it
            continue
        sources = tuple(gate.sources[:3])
        if gate.outcome == "unknown":
            out.append(
                Finding("info", gate.gate, None, None, "recipegen cannot tell", gate.reason, None, sources, gate.gate)
            )
            continue
        if gate.gate == "kernel":
            out.append(
                _kernel_finding(
                    request, engine, build, variant, layout, settings, pinned_by, pinned, cand, parsed, vocab
                )
            )
        elif gate.gate == "memory":
            out.append(_memory_finding(request, engine, build, variant, layout, settings, cand, parsed, vocab))
        elif gate.gate == "topology":
            out.append(_topology_finding(request, engine, build, variant, layout, settings, cand))
        else:
            flag = {"architecture": "image", "platform": "image", "weight-format": engine.flags.model or "MODEL"}[
                gate.gate
            ]
            what = {
                "architecture": f"{build.id} cannot load {request.model.name}",
                "platform": f"{build.id} does not run on this GPU/host",
                "weight-format": f"{variant.id} weights have no kernel here",
            }[gate.gate]
            out.append(
                Finding("error", gate.gate, flag, None, what, gate.reason, "see the plan below", sources, gate.gate)
            )
    out.extend(_required_findings(cand, request, parsed, vocab))
    return out


def worked_around(defect: Defect, cc: object, parsed: ParsedArgs, vocab: Vocabulary, env: dict[str, str]) -> bool:
    """The command already carries every flag and environment variable of the defect's workaround (for this GPU),
    with its value."""
    wanted = [a for a in defect.workaround_args if a.capability is None or cc in a.capability]
    if not wanted and not defect.workaround_env:
        return False
    if any(env.get(var.name) != var.value for var in defect.workaround_env):
        return False
    for arg in wanted:
        given = parsed.given(vocab, arg.flag) if vocab.key(arg.flag) else arg.flag in parsed.values
        value = parsed.get(vocab, arg.flag) if vocab.key(arg.flag) else parsed.values.get(arg.flag)
        if not given or (arg.value is not None and value != arg.value):
            return False
    return True


def _scope_flag(engine: Engine, defect: Defect, parsed: ParsedArgs, vocab: Vocabulary) -> str | None:
    """The command's flag that puts it in the defect's configuration (the first the defect names; of several
    spellings, the one the command gives)."""
    f = engine.flags
    offload = (f.cpu_moe_layers, f.cpu_moe, f.override_tensor, f.cpu_offload_gb, f.cpu_expert_method, f.gpu_layers)
    knobs: tuple[tuple[object, tuple[str | None, ...]], ...] = (
        (defect.kv_dtypes, (f.kv_cache_dtype,)),
        (defect.dcp, (f.decode_context_parallel,)),
        (defect.speculative, (f.speculative,)),
        (defect.cuda_graphs, (f.disable_cuda_graphs,)),
        (defect.batch, (f.max_concurrency,)),
        (defect.pipeline_parallel_min, (f.pipeline_parallel,)),
        (defect.multi_node, (f.nnodes,)),
        (defect.data_parallel, (f.data_parallel,)),
        (defect.expert_parallel, (f.expert_parallel,)),
        (defect.context_above, (f.context_length,)),
        (defect.tensor_parallel, (f.tensor_parallel,)),
        (defect.host_offload, offload),
        (defect.speculative_tokens, (f.speculative_tokens, f.speculative)),
    )
    for scope, spellings in knobs:
        named = [flag for flag in spellings if flag]
        if scope is None or not named:
            continue
        if scope is defect.kv_dtypes:
            return _kv_flag(engine, defect, parsed, vocab)
        return next((flag for flag in named if parsed.given(vocab, flag)), named[0])
    return None


def _kv_flag(engine: Engine, defect: Defect, parsed: ParsedArgs, vocab: Vocabulary) -> str | None:
    """The KV-cache flag whose dtype the defect names: K's, or V's where the engine types the V cache apart."""
    f = engine.flags
    for flag in (f.kv_cache_dtype, f.kv_cache_dtype_v if defect.kv_v_alone else None):
        value = parsed.get(vocab, flag) if flag else None
        if value is not None and set(kv_choices(engine, value)) & set(defect.kv_dtypes or ()):
            return flag
    return f.kv_cache_dtype


def _defect_finding(engine: Engine, build: Build, defect: Defect, scope_flag: str | None) -> Finding:
    """A known defect of the build that this model, checkpoint and GPU (and the command's flags) run into."""
    from ..plan.defects import scope_text

    severity: Severity = "warn"
    if defect.blocks:
        severity = "silent" if defect.symptom == "wrong-output" else "error"
    if defect.workaround:
        fix = defect.workaround
    elif defect.fixed_in:
        fix = f"an image of {defect.fixed_in} or later"
    else:
        fix = "another build: see the plan below"
    what = {
        "crash": "the engine crashes",
        "wrong-output": "it starts but answers wrong",
        "hang": "the engine hangs",
        "oom": "it runs out of memory",
        "slow": "it runs, slowly",
    }[defect.symptom]
    if defect.scoped:
        what += f" with this command's configuration ({scope_text(defect)})"
    elif defect.workaround_args and not defect.workaround_env and defect.symptom != "slow":
        adds = " ".join(f"{a.flag} {a.value}" if a.value is not None else a.flag for a in defect.workaround_args)
        what += f" unless the command adds {adds}"
    elif defect.workaround and defect.symptom != "slow":
        what += " unless the command applies the workaround (recipegen cannot read that from the flags)"
    logs = f"; the engine logs {defect.log_line!r}" if defect.log_line else ""
    why = f"known defect of {build.id}: {defect.title}{logs}"
    flag = scope_flag or "image"
    return Finding(severity, "defect", flag, None, what, why, fix, tuple(defect.sources[:2]), defect.gate)


def _required_findings(cand: Candidate, request: Request, parsed: ParsedArgs, vocab: Vocabulary) -> list[Finding]:
    """Arguments the catalog says this path needs (its kernels, weight format, the model on this engine)."""
    from ..plan.flags import required_flags

    out: list[Finding] = []
    for flag in required_flags(cand, request.model, request.hardware.compute_capability, set()):
        given = parsed.given(vocab, flag.flag) or flag.flag in parsed.values
        value = parsed.get(vocab, flag.flag) if vocab.key(flag.flag) else parsed.values.get(flag.flag)
        if given and (flag.value is None or value == flag.value):
            continue
        wanted = f"{flag.flag} {flag.value}" if flag.value is not None else flag.flag
        what = "missing" if not given else f"set to {value}"
        out.append(
            Finding(
                "warn",
                "required-arg",
                flag.flag,
                value if given else None,
                f"{what}: the catalog says this path needs {wanted}",
                flag.reason,
                wanted,
                flag.sources,
            )
        )
    return out


def _kernel_finding(
    request: Request,
    engine: Engine,
    build: Build,
    variant: Variant,
    layout: Layout,
    settings: Settings,
    pinned_by: str | None,
    pinned: str | None,
    cand: Candidate,
    parsed: ParsedArgs,
    vocab: Vocabulary,
) -> Finding:
    """Which of the command's choices leaves no kernel: the first relaxation after which the gate no longer fails."""
    from ..plan.candidates import evaluate

    gate = cand.gate("kernel")
    sm = request.hardware.compute_capability.sm
    kv_flag = engine.flags.kv_cache_dtype

    def kernel_gate(changed: Settings) -> GateResult:
        return evaluate(request, engine, build, variant, layout, None, changed).gate("kernel")

    def then(result: GateResult) -> str:
        """What the fixed command gets, said after the reason."""
        if result.outcome == "unknown":
            return f" — with the fix the kernel gate is unknown: {result.reason}"
        chosen = dict.fromkeys(backend_name(name) for op, name in result.details.kernels if op.startswith("attention"))
        return f" — with the fix {engine.name} picks {', '.join(chosen)} on {sm}" if chosen else ""

    def first_kv(base: Settings) -> tuple[str, GateResult] | None:
        for dtype, spelled in engine.kv_dtype_names.items():
            result = kernel_gate(replace(base, kv_fixed=(dtype,)))
            if result.outcome != "fail":
                return spelled, result
        return None

    def found(code: str, flag: str | None, value: str | None, what: str, fix: str, after: str = "") -> Finding:
        return Finding("error", code, flag, value, what, gate.reason + after, fix, tuple(gate.sources[:3]), "kernel")

    if pinned is not None:
        result = kernel_gate(replace(settings, attention_backend=None))
        if result.outcome != "fail":
            what = (
                f"{engine.name} refuses the pinned backend at start-up (or runs a kernel that cannot serve the layer)"
            )
            return found("attention-backend", pinned_by, pinned, what, f"remove {pinned_by}", then(result))
    if settings.kv_fixed and kv_flag:
        other = first_kv(settings)
        if other is not None:
            what = f"no attention kernel for {sm} accepts this KV cache dtype: start-up fails selecting the backend"
            fix = f"{kv_flag} {other[0]}"
            return found("kv-dtype", kv_flag, parsed.get(vocab, kv_flag), what, fix, then(other[1]))
    if pinned is not None and settings.kv_fixed and kv_flag:
        other = first_kv(replace(settings, attention_backend=None))
        if other is not None:
            what = f"the pinned backend and the KV cache dtype together leave no attention kernel for {sm}"
            fix = f"remove {pinned_by} and set {kv_flag} {other[0]}"
            return found("attention-backend", pinned_by, pinned, what, fix, then(other[1]))
    what = f"{build.id} has no kernel for what {request.model.name} needs on {sm}: no flag of this command fixes it"
    return found("kernel", "image", None, what, "another build or variant: see the plan below")


def _memory_finding(
    request: Request,
    engine: Engine,
    build: Build,
    variant: Variant,
    layout: Layout,
    settings: Settings,
    cand: Candidate,
    parsed: ParsedArgs,
    vocab: Vocabulary,
) -> Finding:
    from ..plan.candidates import evaluate

    gate = cand.gate("memory")
    flag = engine.flags.context_length
    if request.context is not None:
        free_request = replace(request, context=None)
        free = evaluate(free_request, engine, build, variant, layout, None, replace(settings, context=None))
        budget = free.gate("memory").details.budget
        if free.gate("memory").outcome == "pass" and budget is not None:
            return Finding(
                "error",
                "context",
                flag,
                str(request.context),
                "the KV pool left after the weights cannot hold one request of this context: start-up fails "
                "(vLLM: 'larger than the available KV cache memory')",
                gate.reason,
                f"{flag} {budget.context}",
                tuple(gate.sources[:2]),
                "memory",
            )
    if not request.offload:
        offloaded = evaluate(replace(request, offload=True), engine, build, variant, layout, None, settings)
        plan = offloaded.gate("memory").details.offload
        if offloaded.gate("memory").outcome == "pass" and plan is not None:
            flag = _offload_fix(engine, plan)
            return Finding(
                "error",
                "memory",
                flag.split()[0],
                None,
                "the weights do not fit on these GPUs and the command sets up no host offload: "
                "out of memory at start-up",
                gate.reason,
                f"{flag} ({plan.host_gib:.1f} GiB of {plan.host_what()} in host RAM: slow), or more GPUs or a smaller "
                "variant",
                tuple(offloaded.gate("memory").sources[:3]),
                "memory",
            )
    return Finding(
        "error",
        "memory",
        engine.flags.tensor_parallel or "--gpus",
        str(settings.tp),
        "the weights and KV cache do not fit on these GPUs: out of memory at start-up",
        gate.reason,
        "more GPUs or a smaller variant: see the plan below",
        tuple(gate.sources[:2]),
        "memory",
    )


def offload_set_up(engine: Engine, parsed: ParsedArgs, vocab: Vocabulary) -> bool:
    """Whether the command keeps weights in host RAM itself: only then may its memory check count on offload."""
    f = engine.flags
    offload_flags = (f.cpu_offload_gb, f.cpu_moe_layers, f.gpu_layers, f.cpu_expert_method)
    return engine.memory.host_offload or any(parsed.given(vocab, flag) for flag in offload_flags if flag)


def _offload_fix(engine: Engine, offload: OffloadPlan) -> str:
    """The flag (and value) that sets up the host offload the planner would use."""
    f = engine.flags
    flag, value = {
        "weights-gb": (f.cpu_offload_gb, str(offload.gb_per_gpu)),
        "expert-layers": (f.cpu_moe_layers, str(offload.cpu_layers)),
        "cpu-layers": (f.gpu_layers, str(offload.moe_layers - offload.cpu_layers)),
        "all-experts": (f.cpu_expert_method, None),
    }[offload.mechanism]
    return f"{flag} {value}" if value is not None else f"{flag}"


def _topology_finding(
    request: Request,
    engine: Engine,
    build: Build,
    variant: Variant,
    layout: Layout,
    settings: Settings,
    cand: Candidate,
) -> Finding:
    from ..plan.layout_gates import topology

    gate = cand.gate("topology")
    flag = engine.flags.tensor_parallel
    fits = [
        tp
        for tp in _divisors(layout.gpus)
        if topology(request.model, engine, Layout(tp, 1), request.hardware, tp).outcome == "pass"
    ]
    fix = f"{flag} {max(fits)}" if fits and flag else "see the plan below"
    return Finding(
        "error",
        "topology",
        flag,
        str(settings.tp),
        f"{engine.name} refuses the tensor-parallel size at start-up",
        gate.reason,
        fix,
        tuple(gate.sources[:2]),
        "topology",
    )


def _divisors(n: int) -> list[int]:
    """The divisors of n, found up to its square root: a million GPUs is a thousand steps, not a million."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})
