"""A candidate's speed estimate: the step model of speed.py fed with what the planners decided."""

from __future__ import annotations

from dataclasses import fields

from ..frozen import evolve
from .checkpoint_size import variant_bytes
from .memory import GIB
from .speed import Estimate, Scenario, estimate
from .types import Candidate, Request

# builds of one engine share their memory plan, so their scenarios repeat (475 distinct of the default matrix's
# 1,459): every fact but the model and the GPU, which key by identity
_FACTS = tuple(f.name for f in fields(Scenario) if f.name not in ("model", "hardware"))


def scenario_of(cand: Candidate, request: Request) -> Scenario | None:
    budget = cand.budget
    variant = cand.variant
    sized = variant_bytes(request.model, variant)
    if budget is None or sized is None:
        return None
    off = cand.offload
    return Scenario(
        model=request.model,
        hardware=request.hardware,
        gpus_per_node=cand.layout.gpus_per_node,
        nodes=cand.layout.nodes,
        layer_split=cand.engine.parallelism == "layers",
        size_bytes=sized[0],
        quant=cand.variant.quant,
        kv_per_token_gpu=budget.per_token_bytes,
        per_request_gpu=budget.per_request_bytes,
        context=budget.context,
        concurrency=budget.concurrency,
        kv_pool_gpu=max(0.0, budget.kv_pool_gib) * GIB,
        host=request.host,
        cpu_expert_layers=off.cpu_layers if off is not None and off.mechanism != "cpu-layers" else 0,
        cpu_dense_layers=off.cpu_layers if off is not None and off.mechanism == "cpu-layers" else 0,
        streamed_gib_per_gpu=float(off.gb_per_gpu) if off is not None else 0.0,
        cpu_prefill=off is not None and off.mechanism == "all-experts",
        engine=cand.engine.id,
        cuda_graphs=not any(a.strip() in ("--enforce-eager", "--disable-cuda-graph") for a in cand.fallback_args),
        mtp=cand.settings.mtp,
    )


def speed_of(
    cand: Candidate, request: Request, memo: dict[tuple[object, ...], object] | None = None
) -> Estimate | None:
    """`memo`: estimates shared by the paths of one resolve (its model and GPU outlive it)."""
    scenario = scenario_of(cand, request)
    if scenario is None:
        return None
    key = ("speed", id(scenario.model), id(scenario.hardware), *(getattr(scenario, f) for f in _FACTS))
    known = memo.get(key) if memo is not None else None
    result = known if isinstance(known, Estimate) else estimate(scenario)
    if memo is not None:
        memo[key] = result
    reported = cand.deployment.load_minutes if cand.deployment is not None else None
    return evolve(result, load_reported=reported) if reported else result
