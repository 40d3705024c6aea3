"""The Hopper slice of the field survey (issue 28): defects of official vLLM releases on sm90 — GLM-5.x nonsense with
a BF16 KV cache on 0.22.x (vllm#44550, fixed by vllm#36616) and its FP8-KV sparse-decode OOM (vllm#44545, #53413),
Kimi-K3 with an FP8 KV cache on 0.27.1 (vllm#51313), DeepSeek-V4-Flash dying in the custom all-reduce during CUDA
graph capture on 0.27.1 (vllm#52457) — and the arm64 CUDA 13.0 image of vLLM 0.15.1 that Grace hosts (GH200) pull
where the release file recorded no aarch64 image."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.release_history import defect_ids, explain, history_of, verdicts

GLM_BF16 = "vllm-0.22-hopper-glm5-sparse-mla-bf16-kv-nonsense"
KIMI_FP8 = "vllm-0.27-kimi-k3-fp8-kv-hopper"
DSV4_AR = "vllm-0.27-dsv4-hopper-custom-allreduce-capture"
GLM_H200 = ("--gpu", "h200", "--model", "glm-5.1", "--gpus", "8", "--engine", "vllm")
DSV4_H800 = ("--gpu", "h800", "--model", "deepseek-v4-flash", "--gpus", "4", "--engine", "vllm")
SURVEYS = Path(__file__).resolve().parents[2] / "recipes" / "surveys"


def rejected_reasons(doc):
    return " ".join(doc["reasons"][r["reason_id"]]["reason"] for r in doc["rejected"])


def defect_findings(cli, *args):
    result = cli("lint", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return [f for f in result.json()["findings"] if f["code"] == "defect"]


# --- GLM-5.x on Hopper with a BF16 KV cache (vllm#44550) ------------------------------------------------


def test_glm5_on_h200_with_0_22_plans_off_the_bf16_kv_cache_and_names_the_defect(cli):
    plan = explain(cli, *GLM_H200, "--build", "vllm-0.22.0")["plans"][0]
    kv = {f["flag"]: f.get("value") for f in plan["flags"]}["--kv-cache-dtype"]
    assert kv != "bfloat16" and GLM_BF16 not in defect_ids(plan)
    assert any(GLM_BF16 in n and "not bf16" in n for n in plan["notes"])


def test_glm5_with_a_bf16_kv_cache_is_refused_on_0_22_and_runs_again_on_0_23(cli):
    asked = explain(cli, *GLM_H200, "--build", "vllm-0.22.0", "--kv-cache-dtype", "bfloat16")
    assert not asked["plans"] and GLM_BF16 in rejected_reasons(asked)
    builds = verdicts(history_of(cli, "vllm", "h200", "glm-5.1", 8, "--kv-cache-dtype", "bfloat16"))
    assert GLM_BF16 in builds["vllm-0.22.0"]["defects"]
    assert GLM_BF16 not in builds["vllm-0.23.0"]["defects"]
    # Blackwell takes other sparse-MLA kernels: not hit
    b200 = explain(cli, "--gpu", "b200", *GLM_H200[2:], "--build", "vllm-0.22.0", "--kv-cache-dtype", "bfloat16")
    assert GLM_BF16 not in rejected_reasons(b200)


def test_lint_flags_a_bf16_kv_glm5_command_on_0_22_and_not_an_fp8_one(cli):
    base = ("--gpu", "h200", "--build", "vllm-0.22.0", "--", "vllm", "serve", "zai-org/GLM-5.1-FP8")
    base += ("--tensor-parallel-size", "8", "--max-model-len", "32768", "--trust-remote-code")
    (hit,) = [f for f in defect_findings(cli, *base, "--kv-cache-dtype", "bfloat16") if "topk_length" in f["why"]]
    assert hit["flag"] == "--kv-cache-dtype" and "vllm-project/vllm/issues/44550" in " ".join(hit["sources"])
    assert not [f for f in defect_findings(cli, *base, "--kv-cache-dtype", "fp8") if "topk_length" in f["why"]]


# --- GLM-5.x on Hopper with an FP8 KV cache: the FlashMLA sparse-decode OOM (vllm#44545, #53413) ---------------

GLM_OOM = "vllm-hopper-glm5-flashmla-sparse-fp8-decode-oom"


def test_glm5_on_0_22_moves_off_bf16_onto_fp8_and_is_told_of_the_sparse_decode_oom(cli):
    plan = explain(cli, *GLM_H200, "--build", "vllm-0.22.0")["plans"][0]
    assert GLM_OOM in defect_ids(plan) and GLM_BF16 not in defect_ids(plan)
    assert any(GLM_OOM in n and "--max-num-batched-tokens" in n for n in plan["notes"])


def test_history_with_fp8_kv_shows_the_sparse_decode_oom_on_0_22_and_0_27_to_0_28_only(cli):
    builds = verdicts(history_of(cli, "vllm", "h200", "glm-5.2", 8, "--kv-cache-dtype", "fp8"))
    assert all(GLM_OOM in builds[b]["defects"] for b in ("vllm-0.22.0", "vllm-0.27.1", "vllm-0.28.0"))
    assert GLM_OOM not in builds["vllm-0.29.0"]["defects"]
    bf16 = verdicts(history_of(cli, "vllm", "h200", "glm-5.2", 8, "--kv-cache-dtype", "bfloat16"))
    assert GLM_OOM not in bf16["vllm-0.28.0"]["defects"]


def test_lint_warns_of_the_sparse_decode_oom_for_an_fp8_kv_glm5_command(cli):
    base = ("--gpu", "h200", "--build", "vllm-0.27.1", "--", "vllm", "serve", "zai-org/GLM-5.2-FP8")
    base += ("--tensor-parallel-size", "8", "--max-model-len", "262144", "--trust-remote-code")
    hits = [f for f in defect_findings(cli, *base, "--kv-cache-dtype", "fp8") if "sparse decode" in f["why"]]
    assert hits and hits[0]["severity"] == "warn"
    assert not [f for f in defect_findings(cli, *base, "--kv-cache-dtype", "bfloat16") if "sparse decode" in f["why"]]


def test_diagnose_maps_the_sparse_decode_oom_line_to_the_releases_that_carry_it(cli, tmp_path):
    log = tmp_path / "glm.log"
    log.write_text("    out, _ = flash_mla_cuda.sparse_decode_fwd(\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    text = cli("diagnose", str(log)).out
    assert GLM_OOM in text and "vllm-0.27.1" in text and "--max-num-batched-tokens" in text


# --- Kimi-K3 with an FP8 KV cache on Hopper (vllm#51313) -------------------------------------------------


def test_history_shows_the_kimi_k3_fp8_kv_defect_on_0_27_1_only_with_an_fp8_kv_cache(cli):
    fp8 = verdicts(history_of(cli, "vllm", "h200", "kimi-k3", 8, "--kv-cache-dtype", "fp8"))
    assert KIMI_FP8 in fp8["vllm-0.27.1"]["defects"] and fp8["vllm-0.27.1"]["verdict"] == "blocked"
    plain = verdicts(history_of(cli, "vllm", "h200", "kimi-k3", 8))
    assert KIMI_FP8 not in plain["vllm-0.27.1"]["defects"]
    blackwell = verdicts(history_of(cli, "vllm", "b200", "kimi-k3", 8, "--kv-cache-dtype", "fp8"))
    assert KIMI_FP8 not in blackwell["vllm-0.27.1"]["defects"]


def test_lint_flags_kimi_k3_with_fp8_kv_on_h200_and_not_with_bf16(cli):
    base = ("--gpu", "h200", "--build", "vllm-0.27.1", "--", "vllm", "serve", "moonshotai/Kimi-K3")
    base += ("--tensor-parallel-size", "8", "--trust-remote-code")
    (hit,) = [f for f in defect_findings(cli, *base, "--kv-cache-dtype", "fp8") if "Kimi-K3" in f["why"]]
    assert hit["severity"] == "error" and hit["flag"] == "--kv-cache-dtype"
    assert not [f for f in defect_findings(cli, *base, "--kv-cache-dtype", "bfloat16") if "Kimi-K3" in f["why"]]


def test_diagnose_maps_the_kimi_k3_assertion_to_the_defect_and_its_configuration(cli, tmp_path):
    log = tmp_path / "kimi.log"
    log.write_text(
        "(APIServer pid=1) INFO 08-06 10:00:00 [api_server.py:1] vLLM API server version 0.27.1\n"
        "ERROR [multiproc_executor.py:1029] AssertionError: Kimi-K3 fp8 KV cache requires an fp8 prefill query; "
        "enable --attention-config '{\"use_prefill_query_quantization\": true}'.\n"
    )
    result = cli("diagnose", str(log), "--format", "json")
    assert result.code in (0, 1), result.err
    assert KIMI_FP8 in result.out and "fp8_e4m3" in result.out


# --- DeepSeek-V4-Flash: custom all-reduce during CUDA graph capture on 0.27.1 (vllm#52457) --------------------


def test_dsv4_on_four_h800_is_refused_on_0_27_1_with_cuda_graphs_and_plans_eagerly(cli):
    graphs = explain(cli, *DSV4_H800, "--build", "vllm-0.27.1")
    assert not graphs["plans"] and DSV4_AR in rejected_reasons(graphs)
    eager = explain(cli, *DSV4_H800, "--build", "vllm-0.27.1", "--eager")["plans"][0]
    assert DSV4_AR not in defect_ids(eager) and "--enforce-eager" in eager["argv"]
    builds = verdicts(history_of(cli, "vllm", "h800", "deepseek-v4-flash", 4))
    assert DSV4_AR not in builds["vllm-0.26.0"]["defects"]
    assert DSV4_AR in builds["vllm-0.27.1"]["defects"]
    assert DSV4_AR not in builds["vllm-0.28.0"]["defects"]


def test_diagnose_maps_the_custom_all_reduce_line_to_the_0_27_1_defect(cli, tmp_path):
    log = tmp_path / "dsv4.log"
    log.write_text(
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   3%|\n"
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'an illegal memory access was encountered'\n"
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n"
    )
    text = cli("diagnose", str(log)).out
    assert DSV4_AR in text and "vllm-0.27.1" in text


# --- GH200: the official arm64 CUDA 13.0 image of 0.15.1 -----------------------------------------------------

ARM_IMAGE = "vllm/vllm-openai:v0.15.1-aarch64-cu130"
GH200_8B = ("--gpu", "gh200", "--model", "llama-3.1-8b", "--gpus", "1")


def test_the_0_15_1_arm64_cu130_image_runs_on_gh200_with_an_r580_driver(cli):
    doc = explain(cli, *GH200_8B, "--build", ARM_IMAGE)
    assert doc["verdict"] == "runnable"
    plan = doc["plans"][0]
    assert plan["build"] == "vllm-0.15.1-aarch64-cu130" and plan["provenance"] == "model-image"
    assert plan["image"] == ARM_IMAGE and plan["host_arch"] == "aarch64"
    (platform,) = [g["reason"] for g in plan["gates"] if g["gate"] == "platform"]
    assert "CUDA 13.0" in platform and "580.65.06" in platform
    # the x86_64 tag of the same release is still the CUDA 12.9 release file, refused on a Grace host
    x86 = explain(cli, *GH200_8B, "--build", "vllm/vllm-openai:v0.15.1")
    assert not x86["plans"] and "no aarch64 image" in rejected_reasons(x86)
    assert explain(cli, "--gpu", "h100", *GH200_8B[2:], "--build", "vllm==0.15.1")["plans"][0]["build"] == "vllm-0.15.1"


def test_gh200_between_0_15_1_and_0_20_1_plans_the_arm64_image_and_x86_hosts_keep_the_release(cli):
    doc = explain(cli, *GH200_8B, "--engine", "vllm", "--as-of", "2026-03-01")
    assert doc["verdict"] == "runnable" and doc["plans"][0]["build"] == "vllm-0.15.1-aarch64-cu130"
    before = explain(cli, *GH200_8B, "--engine", "vllm", "--as-of", "2026-02-12")
    assert "vllm-0.15.1-aarch64-cu130" not in {p["build"] for p in before["plans"]}
    x86 = explain(cli, "--gpu", "h100", *GH200_8B[2:], "--engine", "vllm", "--as-of", "2026-02-20")["plans"][0]
    assert x86["build"] == "vllm-0.15.1"


def test_lint_reads_the_arm64_tag_as_its_own_build_and_refuses_the_x86_tag_on_gh200(cli):
    run = ("--", "docker", "run", ARM_IMAGE, "--model", "meta-llama/Llama-3.1-8B-Instruct")
    doc = cli("lint", "--format", "json", "--gpu", "gh200", *run).json()
    assert doc["build"] == "vllm-0.15.1-aarch64-cu130"
    assert not [f for f in doc["findings"] if f["code"] == "platform"]
    x86 = ("--", "docker", "run", "vllm/vllm-openai:v0.15.1", "--model", "meta-llama/Llama-3.1-8B-Instruct")
    refused = cli("lint", "--format", "json", "--gpu", "gh200", *x86).json()["findings"]
    assert [f for f in refused if f["code"] == "platform"]


# --- the survey records ------------------------------------------------------------------------------


def test_the_survey_records_name_only_catalog_defects_and_public_sources():
    known: set[str] = set()
    for f in (SURVEYS.parent / "engines").rglob("*.yaml"):
        lines = f.read_text().splitlines()
        known |= {line.split("id:", 1)[1].strip() for line in lines if line.startswith(("id:", "  - id:", "- id:"))}
    for name in ("ada.yaml", "hopper.yaml"):
        doc = yaml.safe_load((SURVEYS / name).read_text())
        assert doc["surveyed"] == "2026-12-03" and doc["entries"]
        for entry in doc["entries"]:
            assert set(entry["gpu_classes"]) <= {"sm89", "sm90"}
            assert all(s.startswith("https://") for s in entry["sources"])
            assert set(entry["catalog"]) <= known, entry["catalog"]
