"""Defects scoped by configuration (KV dtype, CUDA graphs, DCP, speculative method, batch, MoE): a plan or command
in the configuration names the defect and its workaround, one outside it is unaffected, lint flags the command,
history shows the defect in the releases that carry it, and diagnose says which configuration it needs."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

FLASHMLA = "vllm-0.15-flashmla-fp8-kv-cudagraph"
DSV31_H100 = ("--gpu", "h100", "--model", "deepseek-v3.1", "--gpus", "8", "--engine", "vllm")
GLM_DCP = ("vllm-0.28-glm-dsa-dcp-crash", "vllm-0.29-glm-dsa-dcp-random-tokens")
EAGLE = "sglang-0.5.12-glm5-nvfp4-eagle-b300-bmm"
GLM5_B300 = ("--gpu", "b300", "--model", "glm-5", "--gpus", "4", "--engine", "sglang", "--variant", "nvfp4")
SM120_FP8_MOE = "vllm-0.14-sm120-fp8-moe-cutlass-grouped-gemm"


def rejected_reasons(doc):
    return " ".join(doc["reasons"][r["reason_id"]]["reason"] for r in doc["rejected"])


def defect_findings(doc):
    return [f for f in doc["findings"] if f["code"] == "defect"]


# --- KV dtype and CUDA graphs ------------------------------------------------------------------------


def test_fp8_kv_defect_is_named_only_for_an_fp8_kv_cache_with_cuda_graphs(cli):
    """vllm#33638 / #35175: the FP8 FlashMLA decode path replays stale CUDA-graph metadata on 0.15.x."""
    fp8 = explain(cli, *DSV31_H100, "--build", "vllm-0.15.1", "--kv-cache-dtype", "fp8")["plans"][0]
    assert FLASHMLA in defect_ids(fp8)
    assert ("--kv-cache-dtype", "fp8_e4m3") in {(f["flag"], f.get("value")) for f in fp8["flags"]}
    # the workaround would change the KV dtype the user asked for: the plan keeps it and says so
    assert any(FLASHMLA in n and "not applied" in n for n in fp8["notes"])
    plain = explain(cli, *DSV31_H100, "--build", "vllm-0.15.1")["plans"][0]
    assert FLASHMLA not in defect_ids(plain)
    eager = explain(cli, *DSV31_H100, "--build", "vllm-0.15.1", "--kv-cache-dtype", "fp8", "--eager")["plans"][0]
    assert FLASHMLA not in defect_ids(eager)
    assert "--enforce-eager" in eager["argv"]


def test_lint_flags_an_fp8_kv_command_and_not_a_bf16_or_eager_one(cli):
    base = ("--gpu", "h100", "--build", "vllm-0.15.1", "--", "vllm", "serve", "/models/DeepSeek-V3.1-NVFP4")
    base += ("--tensor-parallel-size", "8", "--max-model-len", "32768")
    doc = lint(cli, *base, "--kv-cache-dtype", "fp8")
    (hit,) = [f for f in defect_findings(doc) if FLASHMLA in f["why"] or "FlashMLA" in f["why"]]
    assert hit["flag"] == "--kv-cache-dtype" and "KV cache fp8_e4m3" in hit["what"]
    assert "bfloat16" in hit["fix"]
    for clean in (("--kv-cache-dtype", "bfloat16"), ("--kv-cache-dtype", "fp8", "--enforce-eager")):
        assert not any("FlashMLA" in f["why"] for f in defect_findings(lint(cli, *base, *clean)))


def test_history_with_fp8_kv_shows_the_flashmla_defect_arrive_at_0_15_1_and_leave_at_0_19_0(cli):
    """vllm#35175 (persistent CUDA-graph buffers for the FP8 FlashMLA metadata) is first in the 0.19.0 wheel."""
    builds = verdicts(history_of(cli, "vllm", "h100", "deepseek-v3.1", 8, "--kv-cache-dtype", "fp8"))
    assert FLASHMLA not in builds["vllm-0.14.0"]["defects"]
    assert FLASHMLA in builds["vllm-0.15.1"]["defects"] and FLASHMLA in builds["vllm-0.18.0"]["defects"]
    assert FLASHMLA not in builds["vllm-0.19.0"]["defects"] and FLASHMLA not in builds["vllm-0.20.1"]["defects"]
    plain = verdicts(history_of(cli, "vllm", "h100", "deepseek-v3.1", 8))
    assert FLASHMLA not in plain["vllm-0.15.1"]["defects"]


# --- decode context parallel -------------------------------------------------------------------------


def test_dcp_defect_is_named_with_dcp_and_lint_flags_the_dcp_flag(cli):
    args = ("--gpu", "b200", "--model", "glm-5", "--gpus", "4", "--engine", "vllm", "--build", "vllm-0.29.0")
    with_dcp = explain(cli, *args, "--dcp", "4")["plans"][0]
    assert GLM_DCP[1] in defect_ids(with_dcp)
    assert ("--decode-context-parallel-size", "4") in {(f["flag"], f.get("value")) for f in with_dcp["flags"]}
    assert GLM_DCP[1] not in defect_ids(explain(cli, *args)["plans"][0])
    command = ("--gpu", "b200", "--build", "vllm-0.29.0", "--", "vllm", "serve", "/models/GLM-5-NVFP4")
    command += ("--tensor-parallel-size", "4", "--max-model-len", "32768", "--tool-call-parser", "glm47")
    command += ("--reasoning-parser", "glm45", "--trust-remote-code")
    hits = [f for f in defect_findings(lint(cli, *command, "--decode-context-parallel-size", "4")) if "DCP" in f["why"]]
    assert hits and hits[0]["flag"] == "--decode-context-parallel-size" and hits[0]["severity"] == "warn"
    assert not [f for f in defect_findings(lint(cli, *command)) if "DCP" in f["why"]]


# --- speculative method and batch --------------------------------------------------------------------


def test_eagle_defect_needs_eagle_and_a_batch_of_128(cli):
    """sglang#25563: the EAGLE draft's CUDA graph capture at bs=128 dies on B300 with 0.5.12."""
    hit = explain(cli, *GLM5_B300, "--build", "sglang-0.5.12", "--speculative", "eagle", "--concurrency", "128")
    (plan,) = hit["plans"][:1]
    assert EAGLE in defect_ids(plan)
    assert ("--speculative-algorithm", "EAGLE") in {(f["flag"], f.get("value")) for f in plan["flags"]}
    for other in (("--speculative", "eagle", "--concurrency", "64"), ("--concurrency", "128")):
        assert EAGLE not in defect_ids(explain(cli, *GLM5_B300, "--build", "sglang-0.5.12", *other)["plans"][0])
    builds = verdicts(
        history_of(
            cli, "sglang", "b300", "glm-5", 4, "--variant", "nvfp4", "--speculative", "eagle", "--concurrency", "128"
        )
    )
    assert EAGLE in builds["sglang-0.5.12"]["defects"] and EAGLE not in builds["sglang-0.5.11"]["defects"]


def test_diagnose_says_which_configuration_a_scoped_defect_needs(cli, tmp_path):
    log = tmp_path / "server.log"
    line = "Capture cuda graph failed: Error in function 'run' at /workspace/csrc/trtllm_batched_gemm_runner.cu:276"
    log.write_text(f"[2026-05-18 10:00:00] sglang 0.5.12 starting\n{line}: Error occurred when running GEMM!\n")
    result = cli("diagnose", str(log), "--format", "json")
    assert result.code in (0, 1), result.err
    text = result.out
    assert EAGLE in text and "only with speculative decoding with eagle" in text and "128 or more" in text


# --- MoE scope: the sm120 FP8 MoE regression of January 2026 -----------------------------------------


def test_sm120_fp8_moe_regression_blocks_0_14_0_and_leaves_at_0_15_1(cli):
    """vllm#32109 / #33285: FP8 MoE on SM120 picked the SM90/SM100-only CUTLASS grouped GEMM."""
    args = ("--gpu", "rtx-pro-6000", "--model", "glm-4.7", "--variant", "fp8", "--gpus", "4", "--engine", "vllm")
    blocked = explain(cli, *args, "--build", "vllm-0.14.0")
    assert not blocked["plans"]
    assert SM120_FP8_MOE in rejected_reasons(blocked)
    builds = verdicts(history_of(cli, "vllm", "rtx-pro-6000", "glm-4.7", 4, "--variant", "fp8"))
    assert SM120_FP8_MOE in builds["vllm-0.14.0"]["defects"]
    assert SM120_FP8_MOE not in builds["vllm-0.15.1"]["defects"]
    # a dense FP8 checkpoint on the same release and GPU is not an MoE: unaffected
    dense = explain(cli, "--gpu", "rtx-pro-6000", "--model", "qwen3-32b", "--build", "vllm-0.14.0", "--gpus", "1")
    assert all(SM120_FP8_MOE not in defect_ids(p) for p in dense["plans"])
    assert SM120_FP8_MOE not in rejected_reasons(dense)


# --- a derived plan moves off a KV dtype a defect names -------------------------------------------------


def test_a_derived_plan_keeps_its_kv_cache_out_of_a_kv_scoped_defect(cli, tmp_path):
    """A defect that hits only a BF16 KV cache on this build: the derived plan takes the next KV dtype its kernels
    accept and says why; a user who asks for BF16 gets the defect, which (no workaround) blocks the build."""
    folder = tmp_path / "recipes" / "engines" / "vllm"
    folder.mkdir(parents=True)
    (folder / "vllm-0.15.1-bf16-kv-defect.yaml").write_text(
        """id: vllm-0.15.1-bf16-kv-defect
extends: vllm-0.15.1
version: 0.15.1
released: '2026-02-14'
provenance: community
origin: a test image
images: {x86_64: example/vllm:bf16-kv-defect}
defects:
  add:
  - id: test-bf16-kv-garbage
    title: MLA decode with a BF16 KV cache returns garbage on this image
    symptom: wrong-output
    gate: kernel
    sm: ['9.0']
    ops: [attention.mla]
    kv_dtypes: [bf16]
    sources:
    - url: https://example.com/report
      date: '2026-02-14'
      note: a report
sources:
- url: https://example.com/image
  date: '2026-02-14'
  note: the image
""",
        encoding="utf-8",
    )
    recipes = str(tmp_path / "recipes")
    assert cli("validate", recipes).code == 0, cli("validate", recipes).out
    args = (*DSV31_H100, "--build", "vllm-0.15.1-bf16-kv-defect", "--recipes", recipes)
    plan = explain(cli, *args)["plans"][0]
    kv = {f["flag"]: f.get("value") for f in plan["flags"]}["--kv-cache-dtype"]
    assert kv != "bfloat16" and defect_ids(plan) == []
    assert any("test-bf16-kv-garbage" in n and "not bf16" in n for n in plan["notes"])
    asked = explain(cli, *args, "--kv-cache-dtype", "bfloat16")
    assert not asked["plans"] and "test-bf16-kv-garbage" in rejected_reasons(asked)


# --- Ampere: FP8 MoE through Triton (vllm#54219) ----------------------------------------------------------

AMPERE_FP8_MOE = "vllm-ampere-fp8-moe-triton-fp8e4nv"
QWEN_FP8_A100 = ("--gpu", "a100", "--model", "qwen3-30b-a3b", "--variant", "fp8", "--gpus", "1", "--engine", "vllm")


def test_ampere_fp8_moe_plans_carry_the_marlin_moe_backend_on_0_28_and_0_29_only(cli):
    for build in ("vllm-0.28.0", "vllm-0.29.0"):
        plan = explain(cli, *QWEN_FP8_A100, "--build", build)["plans"][0]
        assert AMPERE_FP8_MOE in defect_ids(plan)
        assert ("--moe-backend", "marlin") in {(f["flag"], f.get("value")) for f in plan["flags"]}
    before = explain(cli, *QWEN_FP8_A100, "--build", "vllm-0.27.1")["plans"][0]
    assert AMPERE_FP8_MOE not in defect_ids(before) and "--moe-backend" not in before["argv"]
    # Hopper has FP8 tensor cores: not hit
    hopper = explain(cli, "--gpu", "h100", *QWEN_FP8_A100[2:], "--build", "vllm-0.28.0")["plans"][0]
    assert AMPERE_FP8_MOE not in defect_ids(hopper)


def test_lint_flags_an_ampere_fp8_moe_command_until_it_adds_the_workaround(cli):
    command = ("--gpu", "a100", "--build", "vllm-0.28.0", "--", "vllm", "serve", "/models/Qwen3-30B-A3B-FP8")
    command += ("--max-model-len", "32768", "--tool-call-parser", "hermes", "--reasoning-parser", "qwen3")
    command += ("--enable-auto-tool-choice",)
    (hit,) = [f for f in defect_findings(lint(cli, *command)) if "fp8e4nv" in f["why"]]
    assert hit["what"] == "the engine crashes unless the command adds --moe-backend marlin"
    assert not [f for f in defect_findings(lint(cli, *command, "--moe-backend", "marlin")) if "fp8e4nv" in f["why"]]
    # another backend is not the workaround
    assert [f for f in defect_findings(lint(cli, *command, "--moe-backend", "triton")) if "fp8e4nv" in f["why"]]


# --- GB10: the SM120 CUTLASS blockwise FP8 GEMM on SM12.1 (vllm#43367) -----------------------------------

GB10_FP8_BLOCK = "vllm-0.22-gb10-fp8-block-cutlass-internal"


def test_gb10_fp8_block_plan_on_0_22_carries_the_triton_kernel_env_and_rtx_pro_6000_does_not(cli):
    args = ("--model", "qwen3-30b-a3b", "--variant", "fp8", "--gpus", "1", "--engine", "vllm", "--build", "vllm-0.22.0")
    plan = explain(cli, "--gpu", "gb10", *args)["plans"][0]
    assert GB10_FP8_BLOCK in defect_ids(plan)
    assert {"VLLM_DISABLED_KERNELS": "CutlassFp8BlockScaledMMKernel"}.items() <= {
        e["name"]: e["value"] for e in plan["env"]
    }.items()
    other = explain(cli, "--gpu", "rtx-pro-6000", *args)["plans"][0]
    assert GB10_FP8_BLOCK not in defect_ids(other) and not any(
        e["name"] == "VLLM_DISABLED_KERNELS" for e in other["env"]
    )
    builds = verdicts(history_of(cli, "vllm", "gb10", "qwen3-30b-a3b", 1, "--variant", "fp8"))
    assert GB10_FP8_BLOCK in builds["vllm-0.22.0"]["defects"]
    assert GB10_FP8_BLOCK not in builds["vllm-0.21.0"]["defects"]


def test_an_unknown_kv_cache_dtype_is_a_one_line_error(cli):
    result = cli("explain", "--gpu", "h100", "--model", "qwen3-8b", "--kv-cache-dtype", "fp9")
    assert result.code == 2 and "Traceback" not in result.err
    assert "--kv-cache-dtype fp9" in result.err and "bfloat16" in result.err
