"""The layout search's shortcuts for matrix cells (plan/layout_search.py): each may only skip work, never change
an answer, so each is checked against the full gating of the same paths."""

from __future__ import annotations

import pytest

MODELS = ("deepseek-r1", "gemma-3-12b", "glm-5.2", "gpt-oss-120b", "llama-3.1-70b", "qwen3-32b")


def _cells(catalog):  # type: ignore[no-untyped-def]
    from recipegen.catalog.targets import MATRIX_GPUS, gpu_column
    from recipegen.report.matrix import request_of

    for model in MODELS:
        for gpu in MATRIX_GPUS:
            yield request_of(catalog.models[model], gpu_column(catalog, gpu))


@pytest.mark.parametrize("offload", [False, True])
def test_rank_floor_is_never_after_a_plan_of_its_path(catalog, offload):  # type: ignore[no-untyped-def]
    """The best-first cells stop once no path's floor can rank before the best plan: a floor that ranked after a
    plan of its path (the precision class, the checkpoint's caveats) would drop that plan from the cell; and a
    path is gated only once its floor before the gates comes up, so that one must bound the gated floor."""
    from recipegen.frozen import evolve
    from recipegen.plan.candidates import evaluate, may_run
    from recipegen.plan.layout_search import _Layouts, layouts_to_try
    from recipegen.plan.ranking import may_be_clean, rank_floor, rank_key

    planned = 0
    for request in _cells(catalog):
        request = evolve(request, offload=offload)
        layouts = _Layouts(catalog, request)
        for layout in layouts_to_try(request):
            for path in layouts._paths(layout):
                if not may_run(request, path, layout, layouts.memo):
                    continue
                c = evaluate(request, *path[:3], layout, path[3], memo=layouts.memo)
                gated = layouts._preview(path, layout)
                ungated = layouts._preview(path, layout, gated=False)
                # a path's cheap gates run once its floor before them comes up: it must not rank after the gated one
                assert rank_floor(ungated) <= rank_floor(gated)
                assert may_be_clean(ungated) or not may_be_clean(gated)
                if c.runnable:
                    planned += 1
                    assert rank_floor(gated) <= rank_key(c), (
                        request.model.id,
                        request.hardware.id,
                        layout,
                        c.variant.id,
                    )
    assert planned > 300


def test_a_path_whose_weights_overflow_never_runs_from_gpu_memory(catalog):  # type: ignore[no-untyped-def]
    """A matrix cell's GPU-only pass never gates nor floors a path whose weights alone leave no room on the GPUs
    (`_fitting` leaves it out): every such path must fail its memory gate (or the gate cannot plan it), with any KV
    cache the plan could move to; and the screen must rule out most of the paths that fail on memory, or it buys
    nothing."""
    from recipegen.frozen import evolve
    from recipegen.plan.candidates import evaluate, may_run
    from recipegen.plan.layout_search import _Layouts, layouts_to_try

    screened = memory_failures = 0
    for request in _cells(catalog):
        request = evolve(request, offload=False)
        layouts = _Layouts(catalog, request)
        for layout in layouts_to_try(request):
            paths = list(enumerate(layouts._paths(layout)))
            fitting = {index for index, _ in layouts._fitting(paths, layout)}
            for index, path in paths:
                if not may_run(request, path, layout, layouts.memo):
                    continue
                c = evaluate(request, *path[:3], layout, path[3], memo=layouts.memo)
                if index not in fitting:
                    screened += 1
                    assert not c.runnable and c.gate("memory").outcome != "pass", (request.model.id, layout, path)
                if c.gate("memory").outcome == "fail":
                    memory_failures += 1
    assert screened > 100 and screened * 2 > memory_failures, (screened, memory_failures)


@pytest.mark.parametrize("host_gib", [None, 32.0])
def test_a_path_whose_weights_overflow_gpus_and_host_never_runs(catalog, host_gib):  # type: ignore[no-untyped-def]
    """A matrix cell's offload pass, and the search for a path no gate rules out, skip a path whose weights exceed
    its GPUs and the host RAM together (`layout_gates.host_overflow`): every such path must fail its memory gate
    with host offload planned, on every offload mechanism (llama.cpp's layers and experts, vLLM's streamed
    gigabytes, SGLang's experts) with the default host RAM and a small one; and the screen must rule many out."""
    from recipegen.catalog.targets import MATRIX_GPUS, gpu_column
    from recipegen.frozen import evolve
    from recipegen.plan.candidates import evaluate, may_run
    from recipegen.plan.layout_gates import host_overflow
    from recipegen.plan.layout_search import _Layouts, layouts_to_try
    from recipegen.plan.offload import HostFacts
    from recipegen.report.matrix import request_of

    host = HostFacts() if host_gib is None else HostFacts(memory_gib=host_gib, memory_default=False)
    screened = 0
    mechanisms = set()
    for model in ("kimi-k2", "qwen3-coder-480b-a35b", "llama-3.1-405b"):
        for gpu in MATRIX_GPUS:
            request = request_of(catalog.models[model], gpu_column(catalog, gpu), host)
            layouts = _Layouts(catalog, request)
            for layout in layouts_to_try(request):
                for path in layouts._paths(layout):
                    if not host_overflow(request, path[2], layout):
                        continue
                    screened += 1
                    c = evaluate(request, *path[:3], layout, path[3], memo=layouts.memo)
                    assert c.gate("memory").outcome == "fail", (model, gpu, layout, path[0].id, path[2].id)
                    if may_run(request, path, layout, layouts.memo):
                        mechanisms.add(path[0].id)
                    # the same with a GPU-only plan
                    alone = evolve(request, offload=False)
                    assert evaluate(alone, *path[:3], layout, path[3]).gate("memory").outcome == "fail"
    assert screened > 100 and {"llama.cpp", "vllm", "sglang"} <= mechanisms, (screened, mechanisms)
