"""`recipegen matrix` against seed 001 §6.2 (A100 and RTX 4090 columns).

The seed rates official/mainstream paths: ✅ runs, ⚠️ runs with compromises, ❌ does not. A cell
agrees when runnable-ness matches, or — for the ❌ rows whose own note names a community route
(GLM-5.2 NVFP4 image, DeepSeek-V4 llama.cpp fork) — when that route is what runs. Where the
matrix differs (say, a fork that appeared after the seed), the cell's reasons must cite the source
that says why.
"""

from __future__ import annotations

import pytest

from recipegen.frozen import evolve

SEED_TABLE = {  # model: (A100, RTX 4090) as seed 001 §6.2 writes them
    "deepseek-v3": ("⚠️", "❌"),
    "deepseek-v3.1": ("⚠️", "❌"),
    "deepseek-r1": ("⚠️", "❌"),
    "deepseek-v3.2": ("❌", "❌"),
    "deepseek-v4-flash": ("❌ llama.cpp fork runs", "❌"),
    "glm-5": ("❌", "❌"),
    "glm-5.1": ("❌", "❌"),
    "glm-5.2": ("❌ NVFP4 image runs", "❌"),
    "glm-4.5": ("⚠️", "❌"),
    "glm-4.6": ("⚠️", "❌"),
    "kimi-k2": ("❌", "❌"),
    "qwen3-235b-a22b": ("✅", "❌"),
    "qwen3-32b": ("✅", "✅"),
    "qwen3-14b": ("✅", "✅"),
    "llama-3.1-405b": ("✅", "❌"),
    "llama-4-scout": ("✅", "❌"),
    "llama-4-maverick": ("✅", "❌"),
    "mistral-large-2": ("✅", None),  # the seed rates only the 24B on the 4090
    "mistral-small-24b": ("✅", "✅"),
    "minimax-m1": ("⚠️", "❌"),
    "minimax-m2": ("⚠️", "❌"),
    "qwen2.5-7b": ("✅", "✅"),
}


@pytest.fixture(scope="module")
def cells():
    from tests.support.cli import run_cli

    args = ["matrix", "--format", "json", "--target", "8xa100-80gb", "--target", "8xrtx-4090"]
    for model in SEED_TABLE:
        args += ["--model", model]
    result = run_cli(*args)
    assert result.code == 0, result.err
    return {(c["model"], c["target"]): c for c in result.json()["cells"]}


def agrees(seed: str, cell: dict) -> bool:
    runnable = cell["symbol"] in ("✓", "◐")
    if seed.startswith("❌") and " runs" in seed:
        return cell["symbol"] == "◐"
    return runnable == (seed[0] in "✅⚠")


@pytest.mark.parametrize("model", list(SEED_TABLE))
def test_matrix_agrees_with_seed_table_or_cites_why(cells, model):
    for seed, target in zip(SEED_TABLE[model], ("8×a100-80gb", "8×rtx-4090"), strict=True):
        if seed is None:
            continue
        cell = cells[(model, target)]
        if not agrees(seed, cell):
            cited = [r for r in cell["reasons"] if any(f"[{kind}" in r for kind in ("http", "generator/"))]
            assert cited, f"{model} on {target}: seed says {seed}, matrix says {cell['symbol']} without citing why"


def test_community_routes_are_half_marks(cells):
    assert "llama.cpp-nisparks-dsv4" in cells[("deepseek-v4-flash", "8×a100-80gb")]["summary"]
    assert "vllm-glm52-sm80-pr38476" in cells[("glm-5.2", "8×a100-80gb")]["summary"]
    assert cells[("deepseek-v3.2", "8×rtx-4090")]["gate"] == "kernel"


def test_matrix_formats(cli):
    md = cli("matrix", "--model", "glm-5.2", "--target", "2xgb10").out
    assert md.startswith("| model | 2×gb10 |") and "- ✓ runs" in md
    html = cli("matrix", "--model", "glm-5.2", "--format", "html").out
    assert html.startswith("<!doctype html>") and '<th scope="col" data-gpu="a100-80gb">a100-80gb</th>' in html


def test_shared_platform_verdicts_change_no_cell(catalog):
    """The matrix shares platform verdicts across its cells; each cell must read as if resolved alone —
    also for a GPU copied under the same id with other facts (a `--gpu-memory` part, say)."""
    from dataclasses import replace

    from recipegen.catalog.targets import fleet_column, gpu_column, parse_target
    from recipegen.plan.build_gates import platform
    from recipegen.plan.gates import SharedVerdicts
    from recipegen.plan.layout_search import rank
    from recipegen.report.matrix import build_matrix, classify, request_of

    a100 = fleet_column(catalog, "8xa100-80gb")
    spark = parse_target(catalog, "2xgb10")
    # the A100's id with the GB10's compute capability and host: a platform keyed by id alone would answer
    # with the A100's verdicts
    disguised = replace(
        a100,
        label="8xdisguised",
        hardware=evolve(
            a100.hardware, compute_capability=spark.hardware.compute_capability, host_arch=spark.hardware.host_arch
        ),
    )
    targets = [a100, disguised, parse_target(catalog, "4xa100-80gb"), gpu_column(catalog, "h200")]
    models = [catalog.models[m] for m in ("glm-5.2", "qwen3-32b", "deepseek-v3")]
    alone = [
        classify(rank(catalog, request_of(m, t), "closest-when-blocked"), t.label) for m in models for t in targets
    ]
    assert build_matrix(catalog, models, targets) == alone
    assert alone[0] != alone[1]  # the disguised GPU does answer differently

    shared = SharedVerdicts()
    builds = [b for e in catalog.engines.values() for b in e.builds]
    for hw in (a100.hardware, disguised.hardware):
        assert [shared.of(b, hw) for b in builds] == [platform(b, hw) for b in builds]


def test_cells_resolved_in_worker_processes_equal_the_ones_resolved_here(catalog):
    """The matrix forks workers that each take every n-th cell: the grid must come back whole and in order."""
    from recipegen.catalog.targets import gpu_column, parse_target
    from recipegen.report.matrix import build_matrix

    models = sorted(catalog.models.values(), key=lambda m: m.id)[:12]
    targets = [parse_target(catalog, t) for t in ("8xa100-80gb", "2xgb10", "1xrtx-4090")] + [
        gpu_column(catalog, "h200")
    ]
    here = build_matrix(catalog, models, targets, jobs=1)
    assert [(c.model, c.target) for c in here] == [(m.id, t.label) for m in models for t in targets]
    for jobs in (2, 5):
        assert build_matrix(catalog, models, targets, jobs=jobs) == here


def test_best_first_cells_equal_the_ones_from_every_plan(catalog):
    """A matrix cell plans only the paths that decide it (best first by each path's rank floor, host offload
    only once no size runs from GPU memory); it must read as the cell made from every plan of its layout —
    for each kind of answer: ✓, each caveat, offload, blocked and unknown."""
    from recipegen.catalog.targets import MATRIX_GPUS, gpu_column, parse_target
    from recipegen.plan.layout_search import rank
    from recipegen.report.matrix import classify, request_of

    models = [
        catalog.models[m]
        for m in ("deepseek-r1", "deepseek-v4-flash", "gemma-3-12b", "glm-5", "glm-5.2", "kimi-k3", "qwen3-32b")
    ]
    targets = [gpu_column(catalog, g) for g in MATRIX_GPUS] + [parse_target(catalog, "2xgb10")]
    kinds = set()
    for model in models:
        for target in targets:
            request = request_of(model, target)
            best_first = classify(rank(catalog, request, "closest-when-blocked", deciding=True), target.label)
            every = classify(rank(catalog, request, "closest-when-blocked"), target.label)
            assert best_first == every, (model.id, target.label)
            kinds.add((every.symbol, (every.caveat or "").split(" +")[0]))
    assert {("✓", ""), ("✗", ""), ("?", ""), ("◐", "offload"), ("◐", "estimated size")} <= kinds
    assert {("◐", "fallback kernel"), ("◐", "community weights"), ("◐", "fork build")} <= kinds


def test_shared_kernel_verdicts_hold_for_every_model_of_a_shape(catalog):
    """The matrix shares a kernel verdict that passes between the models and GPUs whose kernel facts are equal
    (build_gates.kernel_facts); a verdict that does not pass names the model's needs, so each cell makes its own.
    Equal facts must give equal outcomes, and equal passing verdicts to the letter."""
    from recipegen.plan.build_gates import kernel_facts, kernels
    from recipegen.plan.types import GateResult

    gpus = [catalog.hardware[g] for g in ("h100-sxm", "h200", "rtx-4090", "a100-80gb")]
    builds = [(e.id, b) for e in catalog.engines.values() for b in e.builds if e.id in ("vllm", "sglang")]
    seen: dict[tuple[object, ...], GateResult] = {}
    shared = 0
    for model in catalog.models.values():
        for heads in {model.attention.num_heads, model.attention.num_heads // 8}:
            for engine, build in builds[::3]:
                for hw in gpus:
                    result = kernels(model, build, hw, (), None, None, engine, heads)
                    key = (engine, build.id, kernel_facts(model, build, hw, heads))
                    known = seen.setdefault(key, result)
                    assert known.outcome == result.outcome, (model.id, build.id, hw.id)
                    if result.outcome == "pass" and known is not result:
                        shared += 1
                        assert known == result, (model.id, build.id, hw.id)
    assert shared > 1000


def test_a_16_bit_size_counted_from_the_parameters_is_no_caveat_but_an_assumed_storage_is(cli):
    """Qwen3-0.6B's BF16 checkpoint has no published size: parameters × 2 bytes is its size (within the catalog's
    tolerance, see tests/plan/test_checkpoint_size.py), so its cell is ✓ and the count shows only under --verbose and
    in the json's notes. GLM-4.5's FP8 size is a lower bound that assumes no 16-bit layers: still ◐ estimated size."""
    args = ("matrix", "--model", "qwen3-0.6b", "--model", "glm-4.5", "--gpu", "h100-sxm")
    plain = cli(*args).out
    rows = {line.split(" | ")[0].strip("| "): line for line in plain.splitlines() if line.startswith("| ")}
    assert "| ✓ 1× |" in rows["qwen3-0.6b"], rows["qwen3-0.6b"]
    assert "◐ 8× estimated size" in rows["glm-4.5"], rows["glm-4.5"]
    assert "parameters × 2 B" not in plain and "Sizes counted" not in plain
    legend = " ".join(plain.split())  # the legend wraps at 160 columns
    assert "a BF16/FP16 size counted as parameters × 2 bytes is no caveat, within 2% of every published" in legend
    verbose = cli(*args, "--verbose").out
    counted = verbose.split("Sizes counted, not published (no caveat):\n", 1)[1]
    assert counted.startswith(
        "- ✓ 1× · qwen3-0.6b on h100-sxm: checkpoint size not in the catalog: estimated as 1.2 GB"
        " (0.6B parameters × 2 B)"
    )
    assert "glm-4.5" not in counted
    cells = {c["model"]: c for c in cli(*args, "--format", "json").json()["cells"]}
    assert cells["qwen3-0.6b"]["symbol"] == "✓" and "0.6B parameters × 2 B" in cells["qwen3-0.6b"]["notes"][0]
    assert cells["glm-4.5"]["notes"] == [] and cells["glm-4.5"]["caveat"] == "estimated size"


def test_the_page_opens_a_counted_16_bit_cell_to_its_count(cli):
    """In the html matrix a ✓ opens to its plan; where that plan's BF16 size is counted from the parameters, the
    count is there too (the page has no --verbose)."""
    page = cli("matrix", "--model", "qwen3-0.6b", "--gpu", "h100-sxm", "--format", "html").out
    cell = page.split('data-gpu="h100-sxm">', 1)[1].split("</td>", 1)[0]
    assert "✓ 1×" in cell and "estimated as 1.2 GB (0.6B parameters × 2 B)" in cell, cell
