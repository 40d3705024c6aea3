"""Properties of the resolver over many requests: deterministic, and every plan passes its own gates."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recipegen.artifacts.contract import resolution_json
from recipegen.plan.resolve import resolve
from recipegen.plan.types import GATES, Request

MODELS = [
    "glm-5.2",
    "glm-5.3-flash",
    "deepseek-v4-flash",
    "deepseek-v3.2",
    "kimi-k2",
    "qwen3-235b-a22b",
    "qwen3-32b",
    "llama-3.1-405b",
    "gpt-oss-120b",
    "minimax-m2",
    "llama-4-scout",
]
HARDWARE = ["a100-80gb", "rtx-4090", "h200", "rtx-pro-6000", "gb10", "b200", "l40s", "t4", "h20"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    model=st.sampled_from(MODELS),
    hardware=st.sampled_from(HARDWARE),
    gpus=st.sampled_from([1, 2, 4, 8, None]),
    engine=st.sampled_from([None, "vllm", "sglang", "llama.cpp"]),
    context=st.sampled_from([None, 8192, 131072]),
)
def test_resolution_is_deterministic_and_plans_pass_their_gates(catalog, model, hardware, gpus, engine, context):
    hw = catalog.hardware[hardware]
    request = Request(model=catalog.models[model], hardware=hw, gpus_per_node=gpus, engine=engine, context=context)
    first, second = resolve(catalog, request), resolve(catalog, request)
    assert resolution_json(first) == resolution_json(second)
    for plan in first.plans:
        cand = plan.candidate
        assert [g.gate for g in cand.gates] == list(GATES)
        assert all(g.outcome == "pass" for g in cand.gates)
        if cand.budget is not None:
            assert (cand.budget.fits and cand.budget.free_gib >= 0) or cand.engine.memory.fraction_scope == "none"
        if context is not None and cand.budget is not None:
            assert cand.budget.context == context
        assert plan.argv[: len(cand.engine.command)] == tuple(cand.engine.command)
    assert [p.rank for p in first.plans] == list(range(1, len(first.plans) + 1))
    for rejection in first.rejected():
        assert rejection.outcome in ("fail", "unknown") and rejection.reason
