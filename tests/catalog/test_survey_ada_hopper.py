"""The Hopper slice of the field survey (issue 28): defects of official vLLM releases on sm90 — GLM-5.x nonsense with
a BF16 KV cache on 0.22.x (vllm#44550, fixed by vllm#36616), Kimi-K3 with an FP8 KV cache on 0.27.1 (vllm#51313) and
DeepSeek-V4-Flash dying in the custom all-reduce during CUDA graph capture on 0.27.1 (vllm#52457)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.release_history import explain, history_of, verdicts

GLM_BF16 = "vllm-0.22-hopper-glm5-sparse-mla-bf16-kv-nonsense"
KIMI_FP8 = "vllm-0.27-kimi-k3-fp8-kv-hopper"
DSV4_AR = "vllm-0.27-dsv4-hopper-custom-allreduce-capture"
GLM_H200 = ("--gpu", "h200", "--model", "glm-5.1", "--gpus", "8", "--engine", "vllm")
DSV4_H800 = ("--gpu", "h800", "--model", "deepseek-v4-flash", "--gpus", "4", "--engine", "vllm")
SURVEYS = Path(__file__).resolve().parents[2] / "recipes" / "surveys"


def defect_ids(plan):
    return [d["id"] for d in plan["build_defects"]]


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


# --- the survey records ------------------------------------------------------------------------------


def test_the_survey_records_name_only_catalog_defects_and_public_sources():
    known: set[str] = set()
    for f in (SURVEYS.parent / "engines").rglob("*.yaml"):
        known |= {line.split("id:", 1)[1].strip() for line in f.read_text().splitlines() if "- id:" in line}
    for name in ("ada.yaml", "hopper.yaml"):
        doc = yaml.safe_load((SURVEYS / name).read_text())
        assert doc["surveyed"] == "2026-12-03" and doc["entries"]
        for entry in doc["entries"]:
            assert set(entry["gpu_classes"]) <= {"sm89", "sm90"}
            assert all(s.startswith("https://") for s in entry["sources"])
            assert set(entry["catalog"]) <= known, entry["catalog"]
