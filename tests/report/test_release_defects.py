"""Known defects of official releases (issue threads): the plan on an affected build names the defect and carries
its workaround, and history shows the defect leave at the fixing release."""

from __future__ import annotations

from tests.support.release_history import explain, history_of, lint, verdicts


def test_qwen3_next_bf16_on_hopper_with_0_20_1_gets_the_triton_moe_workaround(cli):
    """vllm#39288: the FlashInfer CUTLASS unquantized MoE crashes Qwen3-Next BF16 in graph capture on H100. It is
    the default from 0.20.1 on; 0.19.0 picks Triton unless VLLM_USE_FLASHINFER_MOE_FP16 is set, so it is clean."""
    args = ("--gpu", "h100", "--model", "qwen3-next-80b-a3b-instruct", "--variant", "bf16")
    plan = explain(cli, *args, "--build", "vllm==0.20.1")["plans"][0]
    assert [d["id"] for d in plan["build_defects"]] == ["vllm-0.20-qwen3next-flashinfer-cutlass-moe"]
    assert ("--moe-backend", "triton") in {(f["flag"], f.get("value")) for f in plan["flags"]}
    older = explain(cli, *args, "--build", "vllm==0.19.0")["plans"][0]
    assert older["build_defects"] == []
    # the FP8 checkpoint is not the one reported
    fp8 = explain(
        cli, "--gpu", "h100", "--model", "qwen3-next-80b-a3b-instruct", "--variant", "fp8", "--build", "vllm==0.20.1"
    )["plans"][0]
    assert fp8["build_defects"] == []


def test_kimi_k25_parser_defect_leaves_at_0_20_1(cli):
    """vllm#41739: the kimi_k2 parser was broken before 0.20.0 (fixed by vllm#38579)."""
    builds = verdicts(history_of(cli, "vllm", "h200", "kimi-k2.5", 8))
    assert "vllm-0.15-kimi-k2-parser" in builds["vllm-0.19.0"]["defects"]
    assert "vllm-0.15-kimi-k2-parser" not in builds["vllm-0.20.1"]["defects"]


def test_glm5_dcp_defects_on_b200_only_in_0_28_and_0_29_and_only_with_dcp(cli):
    """vllm#54300: GLM DSA + decode context parallelism crashes on 0.28.0 and returns random tokens on 0.29.0;
    without DCP the same releases are clean."""
    builds = verdicts(history_of(cli, "vllm", "b200", "glm-5", 4, "--dcp", "4"))
    assert "vllm-0.28-glm-dsa-dcp-crash" in builds["vllm-0.28.0"]["defects"]
    assert "vllm-0.29-glm-dsa-dcp-random-tokens" in builds["vllm-0.29.0"]["defects"]
    assert not any("dcp" in d for d in builds["vllm-0.27.1"]["defects"])
    plain = verdicts(history_of(cli, "vllm", "b200", "glm-5", 4))
    assert not any("dcp" in d for b in ("vllm-0.28.0", "vllm-0.29.0") for d in plain[b]["defects"])


# --- release defects found in the 2026-12-04 survey (each a different scope of the defect schema) ---------------


def test_glm_streamed_tool_calls_with_mtp_are_a_defect_of_0_16_to_0_19_only_and_only_with_mtp(cli):
    """vllm#39253: the buffer-based GLM streaming tool parser of 0.16.0-0.19.0 mis-splits MTP's multi-token deltas."""
    glm = "vllm-0.16-glm-tool-parser-mtp-streaming"
    mtp = verdicts(history_of(cli, "vllm", "h200", "glm-4.7", 8, "--speculative", "mtp"))
    assert glm not in mtp["vllm-0.15.1"]["defects"]
    assert all(glm in mtp[b]["defects"] for b in ("vllm-0.16.0", "vllm-0.17.0", "vllm-0.18.0", "vllm-0.19.0"))
    assert glm not in mtp["vllm-0.20.1"]["defects"]
    plain = verdicts(history_of(cli, "vllm", "h200", "glm-4.7", 8))
    assert glm not in plain["vllm-0.18.0"]["defects"]


def test_llama4_scout_fp8_with_expert_parallel_is_flagged_on_0_14_not_0_15_and_diagnosed(cli, tmp_path):
    """vllm#32886: before 0.15 the Llama 4 loader indexes FP8 expert weights on the CPU under expert parallel."""
    ep = "vllm-llama4-modelopt-fp8-ep-load-index-cpu"
    command = ("vllm", "serve", "nvidia/Llama-4-Scout-17B-16E-Instruct-FP8", "--tensor-parallel-size", "2")

    def flagged(build: str, *extra: str) -> bool:
        doc = lint(cli, "--gpu", "h100", "--gpus", "2", "--build", build, "--", *command, *extra)
        return any(f["code"] == "defect" and "Llama-4-Scout FP8" in f["why"] for f in doc["findings"])

    assert flagged("vllm-0.14.0", "--enable-expert-parallel")
    assert not flagged("vllm-0.14.0")
    assert not flagged("vllm-0.15.1", "--enable-expert-parallel")
    log = tmp_path / "llama4.log"
    log.write_text("""ERROR NotImplementedError: "index_cpu" not implemented for 'Float8_e4m3fn'\n""", encoding="utf-8")
    result = cli("diagnose", str(log), "--gpu", "h100", "--model", "llama-4-scout", "--format", "json")
    assert ep in result.out


def test_deepseek_v3_over_two_nodes_on_sglang_0_5_5_is_refused_and_one_node_is_not(cli):
    """sglang#13392: DeepSeek-V3.1 at TP 16 over two H20 nodes crashes on the first request on 0.5.4/0.5.5."""
    crash = "sglang-0.5.4-deepseek-v3-multinode-first-request-crash"
    two = verdicts(history_of(cli, "sglang", "h20", "deepseek-v3.1", 8, "--nodes", "2"))
    assert crash in two["sglang-0.5.5"]["defects"] and crash in two["sglang-0.5.4.post3"]["defects"]
    assert crash not in two["sglang-0.5.3"]["defects"] and crash not in two["sglang-0.5.6.post2"]["defects"]
    one = verdicts(history_of(cli, "sglang", "h20", "deepseek-v3.1", 8))
    assert crash not in one["sglang-0.5.5"]["defects"]
    doc = explain(
        cli, "--gpu", "h20", "--gpus", "8", "--nodes", "2", "--model", "deepseek-v3.1", "--build", "sglang-0.5.5"
    )
    assert not any(p["build"] == "sglang-0.5.5" for p in doc["plans"])  # no workaround: the build is not planned
    assert any(crash in r["defects"] for r in doc["rejected"] if r["build"] == "sglang-0.5.5")


def test_nvfp4_with_an_fp8_kv_cache_on_rtx_pro_6000_gets_triton_attention_on_0_27_1(cli):
    """vllm#54225: FlashInfer attention with an FP8 KV cache and NVFP4 weights faults on SM120; Triton does not."""
    args = ("--gpu", "rtx-pro-6000", "--model", "llama-3.3-70b", "--variant", "nvfp4", "--build", "vllm-0.27.1")
    plan = explain(cli, *args, "--kv-cache-dtype", "fp8")["plans"][0]
    assert "vllm-0.27-sm120-flashinfer-nvfp4-fp8-kv-illegal-address" in [d["id"] for d in plan["build_defects"]]
    assert ("--attention-backend", "TRITON_ATTN") in {(f["flag"], f.get("value")) for f in plan["flags"]}
    bf16 = explain(cli, *args, "--kv-cache-dtype", "bfloat16")["plans"][0]
    assert not any("flashinfer-nvfp4-fp8-kv" in d["id"] for d in bf16["build_defects"])


def test_dense_models_on_0_25_to_0_28_carry_the_v2_runner_graph_memory_defect_and_run_on_the_v1_runner(cli):
    """vllm#49224: dense models default to Model Runner V2 from 0.25.0, whose CUDA-graph memory profile is 0 until
    0.29.0 (read in the wheels); MoE models stay on the V1 runner, and an eager run captures no graphs."""
    oom = "vllm-0.25-mrv2-dense-cudagraph-oom"
    dense = verdicts(history_of(cli, "vllm", "l40s", "llama-3.3-70b", 8))
    assert oom not in dense["vllm-0.24.0"]["defects"] and oom not in dense["vllm-0.29.0"]["defects"]
    assert all(oom in dense[b]["defects"] for b in ("vllm-0.25.0", "vllm-0.26.0", "vllm-0.27.1", "vllm-0.28.0"))
    eager = verdicts(history_of(cli, "vllm", "l40s", "llama-3.3-70b", 8, "--eager"))
    assert oom not in eager["vllm-0.26.0"]["defects"]
    moe = verdicts(history_of(cli, "vllm", "h100", "qwen3-30b-a3b", 1))
    assert oom not in moe["vllm-0.26.0"]["defects"]
    args = ("--gpu", "l40s", "--gpus", "8", "--model", "llama-3.3-70b", "--build", "vllm-0.26.0")
    plan = explain(cli, *args)["plans"][0]
    assert ("VLLM_USE_V2_MODEL_RUNNER", "0") in {(e["name"], e["value"]) for e in plan["env"]}
