"""The Blackwell slice of the field survey (issue 28): DGX Spark (GB10, sm121) paths and defects — NVIDIA's NGC
container on two Sparks before any official aarch64 release the catalog knew, and the GB10 defects of vLLM 0.12.0's
aarch64 image (Triton's bundled ptxas, the CUTLASS FP4 GEMM)."""

from __future__ import annotations

from tests.support.contract import rejections, sources

TWO_SPARKS = ("--gpu", "gb10", "--gpus", "1", "--nodes", "2", "--model", "llama-3.3-70b")
PLAYBOOK = "https://github.com/NVIDIA/dgx-spark-playbooks/blob/"


def _explain(cli, *args):
    result = cli("explain", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return result.json()


def test_the_ngc_container_of_nvidias_spark_playbook_runs_llama_3_3_70b_on_two_sparks(cli):
    doc = _explain(cli, *TWO_SPARKS, "--build", "nvcr.io/nvidia/vllm:25.11-py3")
    assert doc["verdict"] == "runnable"
    plan = doc["plans"][0]
    assert plan["build"] == "vllm-ngc-25.11" and plan["provenance"] == "fork"
    assert plan["image"] == "nvcr.io/nvidia/vllm:25.11-py3" and plan["nodes"] == 2
    assert any(s["url"].startswith(PLAYBOOK) and s.get("date") for s in sources(doc, plan["sources"]))


def test_two_sparks_are_blocked_before_december_2025_and_run_from_the_playbooks_container(cli):
    before = _explain(cli, *TWO_SPARKS, "--engine", "vllm", "--as-of", "2025-12-03")
    assert before["verdict"] == "blocked"
    assert "vllm-ngc-25.11" not in {r.get("build") for r in before["rejected"]}
    after = _explain(cli, *TWO_SPARKS, "--engine", "vllm", "--as-of", "2025-12-04")
    assert after["verdict"] == "runnable"
    assert {"vllm-ngc-25.11", "vllm-0.12.0"} <= {p["build"] for p in after["plans"]}


def test_nvfp4_moe_is_refused_on_the_ngc_container_on_gb10_while_fp8_and_bf16_run(cli):
    doc = _explain(cli, "--gpu", "gb10", "--gpus", "1", "--nodes", "2", "--model", "llama-4-scout", "--build",
                   "vllm-ngc-25.11")  # fmt: skip
    assert {p["variant"] for p in doc["plans"]} == {"fp8", "bf16"}
    (nvfp4,) = [r for r in rejections(doc) if r["variant"] == "nvfp4" and r["gate"] == "weight-format"]
    assert nvfp4["reason"].startswith("known defect vllm-")
    assert "-gb10-nvfp4-" in nvfp4["reason"] and "no build known to fix it" in nvfp4["reason"]


def test_vllm_0_12_on_gb10_carries_the_ptxas_workaround_and_only_there(cli):
    spark = _explain(cli, *TWO_SPARKS, "--build", "vllm/vllm-openai:v0.12.0-aarch64")
    plan = spark["plans"][0]
    assert plan["build"] == "vllm-0.12.0" and plan["host_arch"] == "aarch64"
    assert "vllm-0.12-gb10-triton-ptxas-sm121a" in {d["id"] for d in plan["build_defects"]}
    assert {"name": "TRITON_PTXAS_PATH", "value": "/usr/local/cuda/bin/ptxas"} in [
        {"name": e["name"], "value": e["value"]} for e in plan["env"]
    ]
    pro = _explain(cli, "--gpu", "rtx-pro-6000", "--model", "llama-3.3-70b", "--build", "vllm==0.12.0")["plans"][0]
    assert not {d["id"] for d in pro["build_defects"]} & {"vllm-0.12-gb10-triton-ptxas-sm121a"}
    assert "TRITON_PTXAS_PATH" not in {e["name"] for e in pro["env"]}


def test_nvfp4_on_gb10_with_vllm_0_12_is_refused_naming_the_fp4_gemm_defect(cli):
    doc = _explain(cli, *TWO_SPARKS, "--build", "vllm==0.12.0", "--verbose")
    assert "nvfp4" not in {p["variant"] for p in doc["plans"]}
    (nvfp4, *_) = [r for r in rejections(doc) if r["variant"] == "nvfp4" and r["gate"] == "weight-format"]
    assert "FP4" in nvfp4["reason"] or "vllm-0.12-gb10-nvfp4-cutlass-gemm" in nvfp4["reason"]


def test_lint_flags_the_ptxas_defect_of_the_0_12_aarch64_image_on_gb10(cli):
    result = cli(
        "lint", "--format", "json", "--gpu", "gb10", "--",
        "docker", "run", "vllm/vllm-openai:v0.12.0-aarch64", "--model", "meta-llama/Llama-3.1-8B-Instruct",
    )  # fmt: skip
    doc = result.json()
    (defect,) = [f for f in doc["findings"] if f["code"] == "defect"]
    assert "TRITON_PTXAS_PATH" in defect["fix"]
    assert any("vllm-project/vllm/issues/30163" in s for s in defect["sources"])


def test_diagnose_maps_the_gb10_ptxas_line_to_the_defect_and_its_workaround(cli, tmp_path):
    log = tmp_path / "spark.log"
    log.write_text(
        "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
        "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n"
    )
    text = cli("diagnose", str(log)).out
    assert "vllm-0.12-gb10-triton-ptxas-sm121a" in text and "TRITON_PTXAS_PATH" in text
