"""The fourth field pass (field8, 2026-12-07/08; issue 28): MiMo-V2-Flash on llama.cpp from the tag after PR #18328
(b7538) with bartowski's GGUF sized from its bits per weight; the two faults of that path until CUDA flash attention for
K 192 / V 128 arrived in b9085 (PR #22812) — a quantized V cache stops the server, a long context runs out of memory —
and ik_llama.cpp's flash-attention path; Gemma 4 on Ampere with an FP8 KV cache, which vLLM's forced Triton attention
cannot compile. Each through the CLI (plan, history, lint, diagnose, --as-of), and the survey record."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.release_history import defect_ids, explain, flags, history_of, lint, verdicts

MIMO_TAG = "llama.cpp-b7538"
FA_TAG = "llama.cpp-b9085"
NO_FA = "llama.cpp-mimo2-cuda-no-flash-attention"
LONG_OOM = "llama.cpp-mimo2-no-flash-attention-long-context-oom"
IK = "ik_llama.cpp-8337e4c"
GEMMA_FP8 = "vllm-gemma4-ampere-forced-triton-fp8-kv"
SURVEY = Path(__file__).resolve().parents[2] / "recipes" / "surveys" / "field8.yaml"
MIMO = ("--gpu", "rtx-pro-6000", "--gpus", "4", "--model", "mimo-v2-flash", "--engine", "llama.cpp")
MIMO_GGUF = "/models/XiaomiMiMo_MiMo-V2-Flash-Q5_K_M-00001-of-00006.gguf"


def diagnosed(cli, tmp_path, text, *extra):
    log = tmp_path / "engine.log"
    log.write_text(text)
    result = cli("diagnose", str(log), *extra)
    assert result.code in (0, 1), result.err
    return result.out


# --- MiMo-V2-Flash GGUFs (mimo2): from b7538, sized from the quant's bits ------------------------------------------


def test_mimo_ggufs_load_from_b7538_and_a_question_dated_before_it_has_no_llama_cpp_path(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-pro-6000", "mimo-v2-flash", 4))
    assert builds["llama.cpp-b7418"]["verdict"] == "blocked" and builds["llama.cpp-b7418"]["gate"] == "architecture"
    for later in (MIMO_TAG, "llama.cpp-b7990", "llama.cpp-b8295", FA_TAG, "llama.cpp-b9840", "llama.cpp-0c1e570"):
        assert builds[later]["verdict"] == "runnable", later
    assert explain(cli, *MIMO, "--as-of", "2025-12-24")["plans"] == []
    (plan, *_) = explain(cli, *MIMO, "--as-of", "2025-12-26")["plans"]
    assert plan["build"] == MIMO_TAG and plan["variant"] == "gguf-bartowski-q5-k-m"
    # no published whole size: estimated from 308.7B parameters x Q5_K_M's bits per weight, and said so
    assert any("estimated as 220.0 GB (Q5_K_M)" in n for n in plan["notes"])


def test_coverage_dates_mimo_official_path_from_b7538_and_counts_ik_llama_cpp(cli):
    cells = cli("coverage", "--format", "json").json()["cells"]
    (cell,) = [c for c in cells if c["family"] == "mimo-v2-flash" and c["gpu_class"] == "sm86"]
    assert cell["official_since"] == {"build": MIMO_TAG, "released": "2025-12-25"}
    assert IK in [side["build"] for side in cell["community"]]
    assert {NO_FA, LONG_OOM} <= set(cell["defects_fixed"])


# --- before b9085: no CUDA flash attention for K 192 / V 128 ----------------------------------------------------------


def test_a_quantized_v_cache_on_b8295_names_the_defect_and_b9085_does_not(cli):
    during = explain(cli, *MIMO, "--build", "llama.cpp-b8295", "--kv-cache-dtype", "q8_0", "--context", "8192")
    (plan,) = during["plans"][:1]
    assert NO_FA in defect_ids(plan)
    (note,) = [n for n in plan["notes"] if NO_FA in n]
    assert "keep the f16 KV cache" in note and "fixed in llama.cpp-b9085" in note
    after = explain(cli, *MIMO, "--build", FA_TAG, "--kv-cache-dtype", "q8_0", "--context", "8192")["plans"][0]
    assert NO_FA not in defect_ids(after)
    # a derived plan on the affected build keeps the f16 cache the workaround asks for
    derived = explain(cli, *MIMO, "--build", "llama.cpp-b8295", "--context", "8192")["plans"][0]
    assert ("--cache-type-v", "f16") in flags(derived)
    assert NO_FA not in defect_ids(derived)


def test_history_shows_the_flash_attention_defect_until_b9085(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-pro-6000", "mimo-v2-flash", 4, "--kv-cache-dtype", "q8_0"))
    for affected in (MIMO_TAG, "llama.cpp-b7990", "llama.cpp-b8036", "llama.cpp-b8295"):
        assert NO_FA in builds[affected]["defects"], affected
    for fixed in (FA_TAG, "llama.cpp-b9333", "llama.cpp-b9840", "llama.cpp-0c1e570"):
        assert NO_FA not in builds[fixed]["defects"], fixed


def test_a_long_context_without_flash_attention_names_the_oom_and_8192_tokens_do_not(cli):
    long = explain(cli, *MIMO, "--build", "llama.cpp-b8295")["plans"][0]
    assert LONG_OOM in defect_ids(long)
    short = explain(cli, *MIMO, "--build", "llama.cpp-b8295", "--context", "8192")["plans"][0]
    assert LONG_OOM not in defect_ids(short)
    assert LONG_OOM not in defect_ids(explain(cli, *MIMO, "--build", FA_TAG)["plans"][0])


def test_lint_flags_a_quantized_v_cache_for_mimo_on_b8295_and_diagnose_names_the_failure(cli, tmp_path):
    serve = ("--", "llama-server", "--model", MIMO_GGUF, "--cache-type-v", "q8_0", "--ctx-size", "8192")

    def defects(build: str) -> list[str]:
        doc = lint(cli, "--gpu", "rtx-pro-6000", "--build", build, *serve)
        return [f["why"] for f in doc["findings"] if f["code"] == "defect"]

    assert any("K width 192 / V width 128" in why for why in defects("llama.cpp-b8295"))
    assert not [why for why in defects(FA_TAG) if "K width 192" in why]
    text = diagnosed(
        cli,
        tmp_path,
        "sched_reserve: layer 0 is assigned to device CUDA0 but the Flash Attention tensor is assigned to device CPU "
        "(usually due to missing support)\n"
        "sched_reserve: Flash Attention was auto, set to disabled\n"
        "llama_init_from_model: failed to initialize the context: quantized V cache was requested, but this requires "
        "Flash Attention\n",
    )
    # llama.cpp prints this for any model without flash attention: the generic fingerprint answers it and names the
    # MiMo case with its fixing build, rather than the MiMo defect claiming every such log
    assert "llamacpp-quantized-v-cache-needs-flash-attention" in text and NO_FA not in text
    assert "b9085" in text and "Keep the V cache in f16" in text


def test_ik_llama_cpp_serves_mimo_with_its_own_flash_attention(cli):
    doc = explain(cli, *MIMO, "--build", IK, "--kv-cache-dtype", "q8_0", "--context", "8192")
    plan = doc["plans"][0]
    assert plan["build"] == IK
    assert NO_FA not in defect_ids(plan) and LONG_OOM not in defect_ids(plan)
    # its kernel verdict cites the fork's own MiMo support, which brought flash attention for K 192 / V 128
    assert "https://github.com/ikawrakow/ik_llama.cpp/pull/1096" in [
        doc["sources"][key]["url"] for key in plan["sources"]
    ]


# --- Gemma 4 on Ampere with an FP8 KV cache: vLLM forces TRITON_ATTN, which has no fp8e4nv below sm89 -----------------

GEMMA = ("--model", "gemma-4-31b", "--gpus", "2", "--engine", "vllm", "--build", "vllm-0.22.0")


def test_gemma4_with_an_fp8_cache_on_an_rtx_3090_names_the_defect_and_an_rtx_4090_does_not(cli):
    ampere = explain(cli, "--gpu", "rtx-3090", *GEMMA, "--kv-cache-dtype", "fp8")["plans"][0]
    assert GEMMA_FP8 in defect_ids(ampere)
    (note,) = [n for n in ampere["notes"] if GEMMA_FP8 in n]
    assert "--kv-cache-dtype auto" in note
    ada = explain(cli, "--gpu", "rtx-4090", *GEMMA, "--kv-cache-dtype", "fp8")["plans"][0]
    assert GEMMA_FP8 not in defect_ids(ada)
    # the derived plan on Ampere keeps the 16-bit cache
    derived = explain(cli, "--gpu", "rtx-3090", *GEMMA)["plans"][0]
    assert GEMMA_FP8 not in defect_ids(derived)


def test_history_shows_the_gemma4_fp8_defect_on_every_release_that_loads_gemma4(cli):
    builds = verdicts(history_of(cli, "vllm", "rtx-3090", "gemma-4-31b", 2, "--kv-cache-dtype", "fp8"))
    for release in ("vllm-0.19.0", "vllm-0.22.0", "vllm-0.29.0", "vllm-0.33.0"):
        assert GEMMA_FP8 in builds[release]["defects"], release
    for before in ("vllm-0.15.1", "vllm-0.18.0"):  # Gemma 4 does not load there: no defect of it either
        assert builds[before]["verdict"] == "blocked" and GEMMA_FP8 not in builds[before]["defects"], before
    other = verdicts(history_of(cli, "vllm", "rtx-3090", "qwen3-8b", 1, "--kv-cache-dtype", "fp8"))
    assert GEMMA_FP8 not in other["vllm-0.22.0"]["defects"]


def test_lint_flags_an_fp8_gemma4_command_on_ampere_and_diagnose_names_the_triton_error(cli, tmp_path):
    serve = ("--", "vllm", "serve", "google/gemma-4-31B-it", "--kv-cache-dtype", "fp8", "--max-model-len", "32768")
    hits = [
        f
        for f in lint(cli, "--gpu", "rtx-3090", "--build", "vllm-0.22.0", *serve)["findings"]
        if f["code"] == "defect" and "TRITON_ATTN" in f["why"]
    ]
    assert hits and "noonghunna/club-3090/pull/278" in " ".join(hits[0]["sources"])
    text = diagnosed(
        cli,
        tmp_path,
        "(APIServer pid=1) INFO 05-31 10:00:00 [api_server.py:1] vLLM API server version 0.22.0\n"
        "(EngineCore pid=9) ValueError: type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
        "('fp8e4b15', 'fp8e5')\n",
        "--model",
        "gemma-4-31b",
        "--gpu",
        "rtx-3090",
    )
    # the error is Triton's own, not Gemma 4's: the generic fingerprint answers it (a V100 log prints it too), with
    # the fix the defect names
    assert "triton-fp8e4nv-below-sm89" in text and GEMMA_FP8 not in text
    assert "--kv-cache-dtype auto" in text


# --- the survey record ----------------------------------------------------------------------------------------------


def test_the_field8_survey_names_what_it_added_and_why_it_left_the_rest(cli):
    doc = yaml.safe_load(SURVEY.read_text())
    assert doc["surveyed"] == "2026-12-08"
    added = {i for e in doc["entries"] for i in e["catalog"]}
    assert {MIMO_TAG, FA_TAG, NO_FA, LONG_OOM, GEMMA_FP8} <= added
    families = {f for e in doc["entries"] for f in e["families"]}
    for family in ("mimo-v2-flash", "gemma-4-31b", "llama-3.1-8b", "qwen3-8b", "gpt-oss-20b", "phi-4", "glm-5.2"):
        assert family in families, family
    for entry in doc["entries"]:
        assert entry["sources"] and all(s.startswith("https://") for s in entry["sources"])
    result = cli("validate")
    assert result.code == 0, result.err
