"""Known defects of official releases (issue threads): the plan on an affected build names the defect and carries
its workaround, and history shows the defect leave at the fixing release."""

from __future__ import annotations

from tests.support.release_history import explain, history_of, verdicts


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
