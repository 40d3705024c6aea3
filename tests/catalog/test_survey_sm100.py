"""The sm100 slice of the field survey (issue 28): B200/GB200/B300 — the defects of official releases there, each
asked the way a user asks (explain, history, lint)."""

from __future__ import annotations

from tests.support.contract import sources
from tests.support.release_history import defect_ids, explain, flags, history_of, lint, verdicts

TRTLLM_MOE = "sglang-0.5.12-minimax-nvfp4-trtllm-moe-garbage"
MINIMAX = ("--model", "minimax-m2.7", "--engine", "sglang")
MINIMAX_B200 = ("--gpu", "b200", "--gpus", "1", *MINIMAX)
BUILD = "sglang-0.5.12"
WORKAROUND = ("--moe-runner-backend", "flashinfer_cutlass")


# --- SGLang 0.5.12: the plain flashinfer_trtllm MoE runner garbles MiniMax-M2.x NVFP4 on B200 (sglang#26324) ------


def test_an_nvfp4_minimax_plan_on_0_5_12_b200_names_the_defect_and_forces_the_cutlass_moe_runner(cli):
    doc = explain(cli, *MINIMAX_B200, "--variant", "nvfp4", "--build", "sglang-0.5.12")
    plan = doc["plans"][0]
    assert plan["variant"] == "nvfp4" and TRTLLM_MOE in defect_ids(plan)
    assert WORKAROUND in flags(plan)
    (defect,) = [d for d in plan["build_defects"] if d["id"] == TRTLLM_MOE]
    assert defect["symptom"] == "wrong-output" and not defect["blocks"]
    cited = sources(doc, defect["sources"])
    assert any(s["url"].endswith("sgl-project/sglang/issues/26324") and s["date"] for s in cited)


def test_the_defect_spares_fp8_weights_other_gpus_and_releases_no_report_names(cli):
    fp8 = explain(cli, "--gpu", "b200", "--gpus", "2", *MINIMAX, "--variant", "fp8", "--build", "sglang-0.5.12")
    fp8 = fp8["plans"][0]
    assert TRTLLM_MOE not in defect_ids(fp8) and "--moe-runner-backend" not in fp8["argv"]
    before = explain(cli, *MINIMAX_B200, "--variant", "nvfp4", "--build", "sglang-0.5.11")["plans"][0]
    assert TRTLLM_MOE not in defect_ids(before) and "--moe-runner-backend" not in before["argv"]
    pro = explain(cli, "--gpu", "rtx-pro-6000", "--gpus", "4", *MINIMAX, "--variant", "nvfp4", "--build", BUILD)
    assert pro["plans"]
    assert all(TRTLLM_MOE not in defect_ids(p) for p in pro["plans"])


def test_history_shows_the_trtllm_moe_defect_at_0_5_12_only(cli):
    builds = verdicts(history_of(cli, "sglang", "b200", "minimax-m2.7", 1, "--variant", "nvfp4"))
    assert TRTLLM_MOE in builds["sglang-0.5.12"]["defects"]
    assert TRTLLM_MOE not in builds["sglang-0.5.11"]["defects"]
    assert TRTLLM_MOE not in builds["sglang-0.5.13"]["defects"]
    assert builds["sglang-0.5.12"]["verdict"] == "runnable"  # the workaround keeps it runnable


def test_lint_flags_a_minimax_nvfp4_command_on_the_0_5_12_image_and_not_one_with_the_cutlass_runner(cli):
    base = ("--gpu", "b200", "--", "docker", "run", "lmsysorg/sglang:v0.5.12", "python3", "-m",
            "sglang.launch_server", "--model-path", "nvidia/MiniMax-M2.7-NVFP4")  # fmt: skip
    hits = [f for f in lint(cli, *base)["findings"] if f["code"] == "defect" and "flashinfer_trtllm" in f["why"]]
    assert hits and "--moe-runner-backend flashinfer_cutlass" in hits[0]["fix"]
    assert any("sgl-project/sglang/issues/26324" in s for s in hits[0]["sources"])
    clean = lint(cli, *base, *WORKAROUND)["findings"]
    assert not [f for f in clean if f["code"] == "defect" and "flashinfer_trtllm" in f["why"]]


def test_coverage_counts_the_defect_in_the_minimax_sm100_cell_and_dates_its_survey(cli):
    result = cli("coverage", "--format", "json")
    assert result.code == 0, result.err
    (cell,) = [c for c in result.json()["cells"] if (c["family"], c["gpu_class"]) == ("minimax-m2.7", "sm100")]
    assert TRTLLM_MOE in cell["defects_open"] + cell["defects_closed"]
    assert cell["surveyed"] >= "2026-12-03"  # this survey, or a later one


# --- vLLM 0.11.0: FULL CUDA graphs freeze FlashInfer where runtime picks TRT-LLM attention on B200 (vllm#27057) --

GRAPH_MISMATCH = "vllm-0.11-b200-full-cudagraph-trtllm-attention-mismatch"
QWEN3_VL = ("--model", "qwen3-vl-8b", "--variant", "bf16", "--engine", "vllm")
PIECEWISE = ("--compilation-config", '{"cudagraph_mode": "PIECEWISE"}')


def test_a_bf16_kv_plan_on_0_11_b200_names_the_graph_mismatch_and_keeps_attention_out_of_full_graphs(cli):
    doc = explain(cli, "--gpu", "b200", *QWEN3_VL, "--build", "vllm-0.11.0", "--kv-cache-dtype", "bf16")
    plan = doc["plans"][0]
    assert GRAPH_MISMATCH in defect_ids(plan) and PIECEWISE in flags(plan)
    (defect,) = [d for d in plan["build_defects"] if d["id"] == GRAPH_MISMATCH]
    assert defect["symptom"] == "wrong-output" and defect["fixed_in"] == "vllm-0.11.1"
    assert any(s["url"].endswith("vllm-project/vllm/pull/27114") for s in sources(doc, defect["sources"]))


def test_the_graph_mismatch_needs_cuda_graphs_a_16_bit_kv_cache_and_sm_10_0(cli):
    eager = explain(cli, "--gpu", "b200", *QWEN3_VL, "--build", "vllm-0.11.0", "--kv-cache-dtype", "bf16", "--eager")
    assert (
        GRAPH_MISMATCH not in defect_ids(eager["plans"][0]) and "--compilation-config" not in eager["plans"][0]["argv"]
    )
    fp8 = explain(cli, "--gpu", "b200", *QWEN3_VL, "--build", "vllm-0.11.0", "--kv-cache-dtype", "fp8")["plans"][0]
    assert GRAPH_MISMATCH not in defect_ids(fp8)
    for gpu in ("h100", "b300"):
        other = explain(cli, "--gpu", gpu, *QWEN3_VL, "--build", "vllm-0.11.0", "--kv-cache-dtype", "bf16")["plans"][0]
        assert GRAPH_MISMATCH not in defect_ids(other)


def test_left_to_choose_the_planner_keeps_the_kv_cache_off_bf16_on_0_11_b200_and_says_why(cli):
    plan = explain(cli, "--gpu", "b200", *QWEN3_VL, "--build", "vllm-0.11.0")["plans"][0]
    assert GRAPH_MISMATCH not in defect_ids(plan) and plan["settings"]["kv_cache_dtype"] != "bf16"
    assert any(GRAPH_MISMATCH in note for note in plan["notes"])


def test_history_flips_at_vllm_0_11_1_for_the_graph_mismatch(cli):
    builds = verdicts(
        history_of(cli, "vllm", "b200", "qwen3-vl-8b", 1, "--variant", "bf16", "--kv-cache-dtype", "bf16")
    )
    assert GRAPH_MISMATCH in builds["vllm-0.11.0"]["defects"]
    assert GRAPH_MISMATCH not in builds["vllm-0.11.1"]["defects"]
    assert builds["vllm-0.11.0"]["verdict"] == "runnable"  # the workaround keeps it runnable


def test_lint_flags_a_default_qwen3_vl_command_on_the_0_11_image_and_not_a_piecewise_or_eager_one(cli):
    base = ("--gpu", "b200", "--", "docker", "run", "vllm/vllm-openai:v0.11.0", "--model", "Qwen/Qwen3-VL-8B-Instruct")

    def hits(*extra):
        return [f for f in lint(cli, *base, *extra)["findings"] if f["code"] == "defect" and "TRT-LLM" in f["why"]]

    (finding,) = hits()
    assert "cudagraph_mode" in finding["fix"] and any("vllm-project/vllm/issues/27057" in s for s in finding["sources"])
    assert not hits(*PIECEWISE) and not hits("--enforce-eager")
