"""The field survey of the families added last (field-new, 2026-12-07; issue 28): Qwen3.5 / 3.6, Gemma 4, MiMo-V2-Flash,
Nemotron 3, DeepSeek-V4-Pro, Kimi-K3. Each defect it added through the CLI: the plan on the affected build names it and
its workaround, history shows it on the builds that carry it and not on the fixing one, lint flags the configuration and
diagnose maps the engine's log line; the Qwen3.6 GGUFs llama.cpp b9333 was reported serving, and the survey record."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

GEMMA_HF = "vllm-0.27-gemma4-transformers-per-layer-head-dim"
MTP_RACE = "vllm-qwen35-mtp-draft-race-illegal-address"
OFFLOAD = "vllm-qwen3next-cpu-offload-input-batch-assert"
PP4 = "vllm-0.18-qwen35-pipeline-parallel-4"
SM120_NVFP4 = "vllm-0.27-sm120-flashinfer-nvfp4-fp8-kv-illegal-address"
SM120_KV = "llama.cpp-b9333-sm120-quantized-kv-fa-garbled"
SURVEY = Path(__file__).resolve().parents[2] / "recipes" / "surveys" / "field-new.yaml"
# lint names a defect by its title: the words each one's title carries
TITLE = {
    GEMMA_HF: "AmbiguousGlobalPerLayerAttributeError",
    MTP_RACE: "draft loop overwrites",
    OFFLOAD: "Cannot re-initialize the input batch",
    PP4: "pipeline-parallel size of 4 or more",
}


def defect_findings(doc, flag=None):
    return [f for f in doc["findings"] if f["code"] == "defect" and (flag is None or f["flag"] == flag)]


def diagnosed(cli, tmp_path, text, *extra):
    log = tmp_path / "engine.log"
    log.write_text(text)
    result = cli("diagnose", str(log), *extra)
    assert result.code in (0, 1), result.err
    return result.out


# --- Gemma 4 on the 0.27.1 image: transformers 5.15's per-layer head_dim (vllm#52768, #51744) -------------------

GEMMA = ("--gpu", "h100", "--model", "gemma-4-31b", "--gpus", "1", "--engine", "vllm")


def test_gemma4_on_0_27_1_names_the_transformers_defect_and_its_pin(cli):
    plan = explain(cli, *GEMMA, "--build", "vllm-0.27.1")["plans"][0]
    assert GEMMA_HF in defect_ids(plan)
    (note,) = [n for n in plan["notes"] if GEMMA_HF in n]
    assert "transformers==5.14.1" in note and "vllm-0.28.0" in note
    assert GEMMA_HF not in defect_ids(explain(cli, *GEMMA, "--build", "vllm-0.28.0")["plans"][0])


def test_history_shows_the_gemma4_defect_on_0_27_1_only(cli):
    builds = verdicts(history_of(cli, "vllm", "h100", "gemma-4-26b-a4b", 1))
    assert GEMMA_HF in builds["vllm-0.27.1"]["defects"]
    assert GEMMA_HF not in builds["vllm-0.26.0"]["defects"] and GEMMA_HF not in builds["vllm-0.28.0"]["defects"]
    # a model of another architecture on the same release is not concerned
    qwen = verdicts(history_of(cli, "vllm", "h100", "qwen3-8b", 1))
    assert GEMMA_HF not in qwen["vllm-0.27.1"]["defects"]


def test_lint_flags_a_gemma4_command_on_0_27_1_and_diagnose_maps_the_exception(cli, tmp_path):
    serve = ("--", "vllm", "serve", "google/gemma-4-31B-it", "--max-model-len", "32768")
    hits = [
        f
        for f in defect_findings(lint(cli, "--gpu", "h100", "--build", "vllm-0.27.1", *serve))
        if TITLE[GEMMA_HF] in f["why"]
    ]
    assert hits and "vllm-project/vllm/issues/52768" in " ".join(hits[0]["sources"])
    later = lint(cli, "--gpu", "h100", "--build", "vllm-0.28.0", *serve)
    assert not [f for f in defect_findings(later) if TITLE[GEMMA_HF] in f["why"]]
    text = diagnosed(
        cli,
        tmp_path,
        "(APIServer pid=7) INFO 08-18 12:46:45 [api_utils.py:345]   version 0.27.1\n"
        "transformers.integrations.heterogeneity.configuration_utils.AmbiguousGlobalPerLayerAttributeError: "
        "'head_dim' is a per-layer attribute and may vary across layers.\n",
    )
    assert GEMMA_HF in text and "vllm-0.27.1" in text and "5.14.1" in text


def test_a_gemma4_question_dated_before_0_28_answers_with_the_defect_and_one_after_without(cli):
    during = explain(cli, *GEMMA, "--as-of", "2026-08-15")["plans"][0]
    assert during["build"] == "vllm-0.27.1" and GEMMA_HF in defect_ids(during)
    after = explain(cli, *GEMMA, "--as-of", "2026-08-27")["plans"][0]
    assert after["build"] == "vllm-0.28.0" and GEMMA_HF not in defect_ids(after)


# --- Qwen3.5 / 3.6 with MTP under concurrent load: the draft-buffer race (vllm#40756) ------------------------------

QWEN_MTP = ("--gpu", "h100", "--model", "qwen3.6-27b", "--gpus", "2", "--engine", "vllm", "--speculative", "mtp")


def test_an_mtp_plan_for_qwen3_6_at_8_requests_names_the_race_and_a_single_user_plan_does_not(cli):
    busy = explain(cli, *QWEN_MTP, "--concurrency", "8", "--build", "vllm-0.24.0")["plans"][0]
    assert MTP_RACE in defect_ids(busy)
    assert any(MTP_RACE in n and "without MTP" in n for n in busy["notes"])
    alone = explain(cli, *QWEN_MTP, "--concurrency", "1", "--build", "vllm-0.24.0")["plans"][0]
    assert MTP_RACE not in defect_ids(alone)


def test_history_carries_the_mtp_race_from_0_19_to_0_27_1(cli):
    builds = verdicts(
        history_of(cli, "vllm", "h100", "qwen3.5-35b-a3b", 1, "--speculative", "mtp", "--concurrency", "8")
    )
    carrying = {b for b, v in builds.items() if MTP_RACE in v["defects"]}
    assert {"vllm-0.19.0", "vllm-0.20.1", "vllm-0.24.0", "vllm-0.26.0", "vllm-0.27.1"} <= carrying
    assert not carrying & {"vllm-0.17.0", "vllm-0.18.0", "vllm-0.28.0", "vllm-0.33.0"}
    plain = verdicts(history_of(cli, "vllm", "h100", "qwen3.5-35b-a3b", 1, "--concurrency", "8"))
    assert MTP_RACE not in plain["vllm-0.24.0"]["defects"]


def test_lint_warns_of_the_mtp_race_only_for_an_mtp_command_with_concurrent_requests(cli):
    base = ("--gpu", "h100", "--build", "vllm-0.24.0", "--", "vllm", "serve", "Qwen/Qwen3.6-27B-FP8")
    base += ("--tensor-parallel-size", "2")
    mtp = ("--speculative-config", '{"method":"mtp","num_speculative_tokens":3}')
    (hit,) = [f for f in defect_findings(lint(cli, *base, "--max-num-seqs", "8", *mtp)) if TITLE[MTP_RACE] in f["why"]]
    assert hit["flag"] == "--speculative-config" and hit["severity"] == "warn"
    assert not [f for f in defect_findings(lint(cli, *base, "--max-num-seqs", "8")) if TITLE[MTP_RACE] in f["why"]]
    assert not [
        f for f in defect_findings(lint(cli, *base, "--max-num-seqs", "2", *mtp)) if TITLE[MTP_RACE] in f["why"]
    ]


def test_diagnose_maps_the_all_minus_one_draft_dump_to_the_race(cli, tmp_path):
    text = diagnosed(
        cli,
        tmp_path,
        "(EngineCore pid=196) ERROR 05-13 10:46:44 [dump_input.py:72] Dumping input data for V1 LLM engine (v0.20.2) "
        "with config: model='/model/Qwen3.6-27B', speculative_config=SpeculativeConfig(method='mtp', "
        "model='/model/Qwen3.6-27B', num_spec_tokens=5), tensor_parallel_size=4\n"
        "(EngineCore pid=196) ERROR 05-13 10:46:44 [dump_input.py:79] Dumping scheduler output for model execution: "
        "SchedulerOutput(scheduled_spec_decode_tokens={chatcmpl-a1: [-1, -1, -1, -1, -1]})\n"
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n",
    )
    assert MTP_RACE in text and "vllm-0.27.1" in text and "without MTP" in text


# --- Qwen3.5 with --cpu-offload-gb: the input-batch assertion (vllm#26206 comments) -------------------------------


def test_an_offloading_qwen3_5_plan_is_blocked_until_0_20_1_removes_the_assertion(cli):
    builds = verdicts(history_of(cli, "vllm", "l40s", "qwen3.5-35b-a3b", 1, "--variant", "bf16"))
    assert builds["vllm-0.19.0"]["verdict"] == "blocked" and OFFLOAD in builds["vllm-0.19.0"]["defects"]
    assert builds["vllm-0.20.1"]["verdict"] == "runnable" and OFFLOAD not in builds["vllm-0.20.1"]["defects"]
    # on a GPU the weights fit, nothing is offloaded and nothing is hit
    roomy = verdicts(history_of(cli, "vllm", "h200", "qwen3.5-35b-a3b", 1, "--variant", "bf16"))
    assert OFFLOAD not in roomy["vllm-0.19.0"]["defects"]


def test_lint_and_diagnose_read_the_offload_assertion_for_qwen3_5(cli, tmp_path):
    serve = ("--", "vllm", "serve", "Qwen/Qwen3.5-35B-A3B", "--cpu-offload-gb", "30")
    (hit,) = defect_findings(lint(cli, "--gpu", "a100-80gb", "--build", "vllm-0.19.0", *serve), "--cpu-offload-gb")
    assert hit["severity"] == "error" and TITLE[OFFLOAD] in hit["why"]
    assert not defect_findings(lint(cli, "--gpu", "a100-80gb", "--build", "vllm-0.20.1", *serve), "--cpu-offload-gb")
    text = diagnosed(
        cli,
        tmp_path,
        "INFO 03-31 10:00:00 [utils.py:297]   version 0.19.0\n"
        "RuntimeError: Worker failed with error 'Cannot re-initialize the input batch when CPU weight offloading is "
        "enabled. See https://github.com/vllm-project/vllm/pull/18298 for more details.'\n",
    )
    assert OFFLOAD in text and "vllm-0.20.1" in text


# --- Qwen3.5 with pipeline parallelism of 4 or more on 0.18.0 (vllm#37972) ----------------------------------------


def test_lint_refuses_qwen3_5_at_pp_4_on_0_18_0_and_not_at_pp_2_or_on_0_19_0(cli):
    serve = ("--", "vllm", "serve", "Qwen/Qwen3.5-122B-A10B-FP8", "--tensor-parallel-size", "2")
    (hit,) = defect_findings(
        lint(cli, "--gpu", "h200", "--build", "vllm-0.18.0", *serve, "--pipeline-parallel-size", "4"),
        "--pipeline-parallel-size",
    )
    assert hit["severity"] == "error" and TITLE[PP4] in hit["why"]
    assert not [
        f
        for f in defect_findings(
            lint(cli, "--gpu", "h200", "--build", "vllm-0.18.0", *serve, "--pipeline-parallel-size", "2")
        )
        if TITLE[PP4] in f["why"]
    ]
    assert not [
        f
        for f in defect_findings(
            lint(cli, "--gpu", "h200", "--build", "vllm-0.19.0", *serve, "--pipeline-parallel-size", "4")
        )
        if TITLE[PP4] in f["why"]
    ]


# --- NVIDIA's NVFP4 Qwen3.6-35B-A3B on an RTX PRO 6000 with an FP8 KV cache (vllm#54225, the recipe's variant) ------


def test_the_nvfp4_qwen3_6_plan_on_0_27_1_takes_triton_attention_for_its_fp8_kv_cache(cli):
    args = ("--gpu", "rtx-pro-6000", "--model", "qwen3.6-35b-a3b", "--gpus", "1", "--engine", "vllm")
    args += ("--variant", "nvfp4", "--kv-cache-dtype", "fp8")
    plan = explain(cli, *args, "--build", "vllm-0.27.1")["plans"][0]
    assert plan["variant"] == "nvfp4" and SM120_NVFP4 in defect_ids(plan)
    assert ("--attention-backend", "TRITON_ATTN") in {(f["flag"], f.get("value")) for f in plan["flags"]}
    # the same release on Hopper is not concerned
    hopper = explain(cli, *("--gpu", "h100", *args[2:]), "--build", "vllm-0.27.1")["plans"]
    assert all(SM120_NVFP4 not in defect_ids(p) for p in hopper)


# --- llama.cpp b9333 serves Qwen3.6 GGUFs (llama.cpp#23693, #23717) ---------------------------------------------


def test_llama_cpp_b9333_loads_qwen3_6_and_warns_of_its_sm120_quantized_kv_defect(cli):
    engine = history_of(cli, "llama.cpp", "rtx-3090", "qwen3.6-27b", 1)
    builds = verdicts(engine)
    # qwen35 arrived with #19468 in b7990 (field7), so b7418 is the last build that does not load it
    assert builds["llama.cpp-b7418"]["verdict"] == "blocked" and builds["llama.cpp-b9333"]["verdict"] == "runnable"
    args = ("--gpu", "rtx-5090", "--model", "qwen3.6-27b", "--gpus", "1", "--engine", "llama.cpp")
    plan = explain(cli, *args, "--build", "llama.cpp-b9333", "--kv-cache-dtype", "q8_0")["plans"][0]
    assert SM120_KV in defect_ids(plan)


# --- MiMo-V2-Flash on SGLang: decided per GPU class from the release's own backends ------------------------------


def test_sglang_now_answers_for_mimo_v2_flash_where_it_was_unknown(cli):
    builds = verdicts(history_of(cli, "sglang", "rtx-pro-6000", "mimo-v2-flash", 8))
    assert builds["sglang-0.5.8"]["verdict"] == "runnable" and builds["sglang-0.5.23"]["verdict"] == "runnable"
    cells = cli("coverage", "--format", "json").json()["cells"]
    (cell,) = [c for c in cells if c["family"] == "mimo-v2-flash" and c["gpu_class"] == "sm120"]
    # the cell's first official path is the earliest of any engine: llama.cpp's mimo2 tag (b7538, 2025-12-25, field8)
    # came a month before sglang 0.5.8 (2026-01-30)
    assert cell["official_since"] == {"build": "llama.cpp-b7538", "released": "2025-12-25"}


# --- the survey record ----------------------------------------------------------------------------------------


def test_the_survey_lists_its_catalog_ids_and_public_sources_and_the_cells_read_surveyed(cli):
    doc = yaml.safe_load(SURVEY.read_text())
    added = {i for e in doc["entries"] for i in e["catalog"]}
    assert {GEMMA_HF, MTP_RACE, OFFLOAD, PP4, "llama.cpp-b9333"} <= added
    urls = [u for e in doc["entries"] for u in e["sources"]]
    assert urls and all(u.startswith("https://") for u in urls)
    assert all(e["not_added"] or e["catalog"] for e in doc["entries"])
    families = {f for e in doc["entries"] for f in e["families"]}
    assert {"qwen3.5-27b", "gemma-4-31b", "mimo-v2-flash", "nemotron-3-super-120b-a12b", "deepseek-v4-pro"} <= families
    assert "kimi-k3" in families
    assert "field-new" in cli("list", "surveys").out
