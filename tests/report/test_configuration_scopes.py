"""Defects scoped to a tensor-parallel size, to weights in host RAM and to the draft tokens per speculative step
(issue 28): a plan or command inside the scope names the defect (and carries its workaround), one outside it does not,
lint reads the flag from the command, history shows the defect in the releases that carry it, and the catalog refuses
a range it cannot read."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, flags, history_of, lint, verdicts

GPTOSS_TP2 = "vllm-0.14-gptoss-tp2-blackwell-gibberish"
DSA_MTP = "vllm-0.15-dsa-mtp-multi-token-indexer-crash"
MRV2_OFFLOAD = "vllm-0.25-mrv2-cpu-offload-noop"
GPTOSS_OFFLOAD = "llama.cpp-b7186-gptoss-expert-offload-long-prompt"

DSV32_H200 = ("vllm", "serve", "deepseek-ai/DeepSeek-V3.2", "--tensor-parallel-size", "8")
LLAMA70_AWQ = ("vllm", "serve", "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "--max-model-len", "4096")
GPTOSS_GGUF = ("llama-server", "-m", "/models/gpt-oss-120b-mxfp4-00001-of-00003.gguf", "-ngl", "99", "-c", "32768")


def defect_findings(doc, text):
    return [f for f in doc["findings"] if f["code"] == "defect" and text in f["why"]]


# --- tensor-parallel size: vllm#31422, gpt-oss at TP 2 on Blackwell, 0.14.0 --------------------------------------


def test_gpt_oss_at_tp_2_on_b200_with_0_14_gets_triton_attention_and_tp_1_does_not(cli):
    two = explain(cli, "--gpu", "b200", "--gpus", "2", "--model", "gpt-oss-20b", "--build", "vllm-0.14.0")["plans"][0]
    assert GPTOSS_TP2 in defect_ids(two)
    assert ("--attention-backend", "TRITON_ATTN") in flags(two)
    assert any(GPTOSS_TP2 in note and "tensor-parallel size 2" in note for note in two["notes"])
    one = explain(cli, "--gpu", "b200", "--gpus", "1", "--model", "gpt-oss-20b", "--build", "vllm-0.14.0")["plans"][0]
    assert GPTOSS_TP2 not in defect_ids(one) and ("--attention-backend", "TRITON_ATTN") not in flags(one)
    hopper = explain(cli, "--gpu", "h100", "--gpus", "2", "--model", "gpt-oss-20b", "--build", "vllm-0.14.0")
    assert GPTOSS_TP2 not in defect_ids(hopper["plans"][0])


def test_lint_points_at_the_tp_flag_and_is_quiet_once_the_command_forces_triton(cli):
    base = ("--gpu", "b200", "--build", "vllm-0.14.0", "--", "vllm", "serve", "openai/gpt-oss-20b")
    (hit,) = defect_findings(lint(cli, *base, "--tensor-parallel-size", "2"), "gibberish")
    assert hit["flag"] == "--tensor-parallel-size" and "tensor-parallel size 2" in hit["what"]
    assert "TRITON_ATTN" in hit["fix"]
    assert not defect_findings(
        lint(cli, *base, "--tensor-parallel-size", "2", "--attention-backend", "TRITON_ATTN"), "gibberish"
    )
    assert not defect_findings(lint(cli, *base, "--tensor-parallel-size", "4"), "gibberish")


def test_history_at_two_b200s_shows_the_tp_defect_on_0_13_and_0_14_only(cli):
    """vllm#31422: reported on 0.13.0 (RTX PRO 6000, gpt-oss-120b) and reproduced on v0.14.0 (B200, gpt-oss-20b)."""
    builds = verdicts(history_of(cli, "vllm", "b200", "gpt-oss-20b", 2))
    assert GPTOSS_TP2 in builds["vllm-0.14.0"]["defects"] and GPTOSS_TP2 in builds["vllm-0.13.0"]["defects"]
    assert GPTOSS_TP2 not in builds["vllm-0.12.0"]["defects"] and GPTOSS_TP2 not in builds["vllm-0.15.1"]["defects"]
    pro = verdicts(history_of(cli, "vllm", "rtx-pro-6000", "gpt-oss-120b", 2))
    assert GPTOSS_TP2 in pro["vllm-0.13.0"]["defects"] and GPTOSS_TP2 not in pro["vllm-0.11.1"]["defects"]
    assert GPTOSS_TP2 not in verdicts(history_of(cli, "vllm", "b200", "gpt-oss-20b", 1))["vllm-0.14.0"]["defects"]


# --- draft tokens per step: vllm#31845 / #34552, DSA models with MTP above one token, fixed in 0.17.0 --------------


def test_history_with_three_mtp_tokens_shows_the_dsa_defect_until_0_17_and_one_token_never(cli):
    three = verdicts(
        history_of(cli, "vllm", "h200", "deepseek-v3.2", 8, "--speculative", "mtp", "--speculative-tokens", "3")
    )
    assert all(DSA_MTP in three[b]["defects"] for b in ("vllm-0.12.0", "vllm-0.14.0", "vllm-0.15.1", "vllm-0.16.0"))
    assert DSA_MTP not in three["vllm-0.17.0"]["defects"] and DSA_MTP not in three["vllm-0.19.0"]["defects"]
    one = verdicts(
        history_of(cli, "vllm", "h200", "deepseek-v3.2", 8, "--speculative", "mtp", "--speculative-tokens", "1")
    )
    assert DSA_MTP not in one["vllm-0.16.0"]["defects"]
    plain = verdicts(history_of(cli, "vllm", "h200", "deepseek-v3.2", 8))
    assert DSA_MTP not in plain["vllm-0.16.0"]["defects"]


def test_a_plan_asked_for_three_mtp_tokens_writes_them_and_names_the_defect_with_its_workaround(cli):
    args = ("--gpu", "h200", "--gpus", "8", "--model", "glm-5", "--build", "vllm-0.16.0", "--speculative", "mtp")
    plan = explain(cli, *args, "--speculative-tokens", "3")["plans"][0]
    assert ("--speculative-config", '{"method":"mtp","num_speculative_tokens":3}') in flags(plan)
    assert DSA_MTP in defect_ids(plan)
    assert any(DSA_MTP in note and "draft tokens per step 2 or more" in note for note in plan["notes"])
    default = explain(cli, *args)["plans"][0]
    assert ("--speculative-config", '{"method":"mtp","num_speculative_tokens":1}') in flags(default)
    assert DSA_MTP not in defect_ids(default)


def test_lint_reads_the_draft_tokens_from_the_json_config_and_the_dotted_flag(cli):
    base = ("--gpu", "h200", "--gpus", "8", "--build", "vllm-0.16.0", "--", *DSV32_H200)
    (hit,) = defect_findings(
        lint(cli, *base, "--speculative-config", '{"method":"mtp","num_speculative_tokens":3}'), "DSA"
    )
    assert hit["flag"] == "--speculative-config" and "draft tokens per step 2 or more" in hit["what"]
    dotted = ("--speculative-config.method", "mtp", "--speculative-config.num_speculative_tokens", "2")
    assert defect_findings(lint(cli, *base, *dotted), "DSA")
    assert not defect_findings(
        lint(cli, *base, "--speculative-config", '{"method":"mtp","num_speculative_tokens":1}'), "DSA"
    )
    fixed = ("--gpu", "h200", "--gpus", "8", "--build", "vllm-0.17.0", "--", *DSV32_H200)
    assert not defect_findings(
        lint(cli, *fixed, "--speculative-config", '{"method":"mtp","num_speculative_tokens":3}'), "DSA"
    )


def test_qwen3_next_with_five_mtp_tokens_on_0_20_is_named_and_four_is_not(cli):
    """vllm#37035: the FlashInfer GDN kernel takes at most 4 speculative tokens (reported on 0.20.1)."""
    over = "vllm-0.20-qwen3next-mtp-over-4-tokens-illegal-address"
    args = ("vllm", "h100", "qwen3-next-80b-a3b-instruct", 4, "--speculative", "mtp")
    five = verdicts(history_of(cli, *args, "--speculative-tokens", "5"))
    assert over in five["vllm-0.20.1"]["defects"] and over in five["vllm-0.22.0"]["defects"]
    assert over not in five["vllm-0.15.1"]["defects"] and over not in five["vllm-0.23.0"]["defects"]
    four = verdicts(history_of(cli, *args, "--speculative-tokens", "4"))
    assert over not in four["vllm-0.20.1"]["defects"]


def test_speculative_tokens_without_a_method_is_a_one_line_error(cli):
    result = cli("explain", "--gpu", "h200", "--model", "deepseek-v3.2", "--speculative-tokens", "3")
    assert result.code not in (0, 70)
    assert "--speculative-tokens 3 names no speculative method" in result.err and "Traceback" not in result.err
    result = cli(
        "explain", "--gpu", "h200", "--model", "deepseek-v3.2", "--speculative", "mtp", "--speculative-tokens", "0"
    )
    assert result.code not in (0, 70) and "out of range" in result.err


# --- weights in host RAM: vLLM Model Runner V2 ignores --cpu-offload-gb (0.25.0-0.27.1); llama.cpp#17016 ----------


def test_an_offloading_dense_plan_on_0_26_runs_on_the_v1_runner_and_one_that_fits_does_not_name_it(cli):
    args = ("--gpu", "rtx-4090", "--gpus", "1", "--model", "llama-3.1-70b", "--engine", "vllm", "--eager")
    plan = explain(cli, *args, "--build", "vllm-0.26.0", "--host-memory", "128")["plans"][0]
    assert plan["offload"] is not None and MRV2_OFFLOAD in defect_ids(plan)
    assert ("VLLM_USE_V2_MODEL_RUNNER", "0") in {(e["name"], e["value"]) for e in plan["env"]}
    fits = explain(
        cli,
        "--gpu",
        "rtx-pro-6000",
        "--gpus",
        "1",
        "--model",
        "llama-3.1-8b",
        "--engine",
        "vllm",
        "--eager",
        "--build",
        "vllm-0.26.0",
    )["plans"][0]
    assert fits["offload"] is None and MRV2_OFFLOAD not in defect_ids(fits)


def test_history_of_an_offloading_dense_model_shows_the_no_op_from_0_25_until_0_28(cli):
    builds = verdicts(history_of(cli, "vllm", "rtx-4090", "llama-3.1-70b", 1, "--eager"))
    assert all(MRV2_OFFLOAD in builds[b]["defects"] for b in ("vllm-0.25.0", "vllm-0.26.0", "vllm-0.27.1"))
    assert MRV2_OFFLOAD not in builds["vllm-0.24.0"]["defects"] and MRV2_OFFLOAD not in builds["vllm-0.28.0"]["defects"]


def test_lint_flags_cpu_offload_gb_on_0_26_unless_the_command_picks_the_v1_runner(cli):
    base = ("--gpu", "rtx-4090", "--build", "vllm-0.26.0", "--")
    (hit,) = defect_findings(lint(cli, *base, *LLAMA70_AWQ, "--cpu-offload-gb", "28", "--enforce-eager"), "V2")
    assert hit["flag"] == "--cpu-offload-gb" and "weights offloaded to host RAM" in hit["what"]
    assert "VLLM_USE_V2_MODEL_RUNNER=0" in hit["fix"]
    pinned = ("docker", "run", "--gpus", "all", "-e", "VLLM_USE_V2_MODEL_RUNNER=0", "vllm/vllm-openai:v0.26.0")
    command = (*pinned, "--model", *LLAMA70_AWQ[2:], "--cpu-offload-gb", "28", "--enforce-eager")
    assert not defect_findings(lint(cli, "--gpu", "rtx-4090", "--build", "vllm-0.26.0", "--", *command), "V2")
    assert not defect_findings(lint(cli, *base, *LLAMA70_AWQ, "--enforce-eager"), "V2")


def test_lint_reads_llama_cpp_expert_offload_from_ot_n_cpu_moe_and_cpu_moe(cli):
    base = ("--gpu", "rtx-5090", "--build", "llama.cpp-b7186", "--", *GPTOSS_GGUF)
    for extra, flag in (
        (("-ot", ".ffn_(up|down)_exps.=CPU"), "--override-tensor"),
        (("--n-cpu-moe", "30"), "--n-cpu-moe"),
        (("--cpu-moe",), "--cpu-moe"),
    ):
        (hit,) = defect_findings(lint(cli, *base, *extra), "800 tokens")
        assert hit["flag"] == flag, extra
    (hit,) = defect_findings(lint(cli, *base[:-4], "-c", "32768", "-ngl", "20"), "800 tokens")  # 20 of 36 layers
    assert hit["flag"] == "--gpu-layers"
    for extra in (("-ot", "blk.1.attn=CUDA0"), ("--n-cpu-moe", "0"), ()):
        assert not defect_findings(lint(cli, *base, *extra), "800 tokens"), extra
    newer = ("--gpu", "rtx-5090", "--build", "llama.cpp-b9840", "--", *GPTOSS_GGUF, "--cpu-moe")
    assert not defect_findings(lint(cli, *newer), "800 tokens")


def test_history_of_gpt_oss_120b_names_the_offload_defect_only_where_the_plan_offloads(cli):
    small = verdicts(history_of(cli, "llama.cpp", "rtx-5090", "gpt-oss-120b", 1))
    assert (
        GPTOSS_OFFLOAD in small["llama.cpp-b7186"]["defects"] and GPTOSS_OFFLOAD in small["llama.cpp-b8036"]["defects"]
    )
    assert GPTOSS_OFFLOAD not in small["llama.cpp-b6887"]["defects"]
    big = verdicts(history_of(cli, "llama.cpp", "rtx-pro-6000", "gpt-oss-120b", 1))
    assert GPTOSS_OFFLOAD not in big["llama.cpp-b7186"]["defects"]


# --- the catalog refuses a range it cannot read ----------------------------------------------------------------

BAD_RANGE = """id: vllm-0.26.0-ranges
extends: vllm-0.26.0
version: 0.26.0
released: '2026-08-01'
provenance: community
origin: a test image
images: {x86_64: example/vllm:ranges, aarch64: null}
defects:
  add:
  - id: test-range
    title: a crash at some sizes
    symptom: crash
    gate: kernel
    SCOPE
    sources: [{url: 'https://example.com/range', date: '2026-08-02', note: a report}]
sources: [{url: 'https://example.com/image', date: '2026-08-01', note: the image}]
"""


def test_validate_refuses_an_upside_down_tp_range_and_an_empty_token_range_naming_file_and_field(cli, tmp_path):
    for scope, said in (
        ("tensor_parallel: {min: 8, max: 2}", "defects.add[0].tensor_parallel: min 8 is above max 2"),
        ("speculative_tokens: {}", "defects.add[0].speculative_tokens: a range needs min, max or both"),
        ("host_offload: sometimes", "defects.add[0].host_offload"),
    ):
        folder = tmp_path / scope[:6] / "recipes" / "engines" / "vllm"
        folder.mkdir(parents=True)
        (folder / "vllm-0.26.0-ranges.yaml").write_text(BAD_RANGE.replace("SCOPE", scope), encoding="utf-8")
        result = cli("validate", str(folder.parent.parent))
        text = result.out + result.err
        assert result.code not in (0, 70) and "Traceback" not in text, scope
        assert "vllm-0.26.0-ranges.yaml" in text and said in text, text
