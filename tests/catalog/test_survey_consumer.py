"""The consumer slice of the field survey (issue 28): RTX 3090/4090, RTX A6000 / L40S (sm86/sm89) and DGX Spark
(GB10, sm121) — the llama.cpp releases that first loaded a family's GGUF architecture, and the vLLM start-up memory
check that a desktop on the card, or the page cache of a unified-memory box, trips."""

from __future__ import annotations

import pytest

from tests.support.contract import rejections, sources
from tests.support.release_history import explain, history_of, verdicts

QWEN3_VL = "llama.cpp-b6887"
QWEN3_NEXT = "llama.cpp-b7186"


@pytest.mark.parametrize(("gpu", "model"), [("rtx-3090", "qwen3-vl-30b-a3b"), ("rtx-4090", "qwen3-vl-32b")])
def test_qwen3_vl_ggufs_run_on_llama_cpp_from_b6887_not_from_the_deepseek_v4_build(cli, gpu, model):
    builds = verdicts(history_of(cli, "llama.cpp", gpu, model, 1))
    assert builds["llama.cpp-b6097"]["verdict"] == "blocked"
    assert builds["llama.cpp-b6097"]["gate"] == "architecture"
    assert builds[QWEN3_VL]["verdict"] == "runnable" and builds[QWEN3_VL]["released"] == "2025-10-30"
    assert builds[QWEN3_NEXT]["verdict"] == "runnable"  # b7186 is written as a change of b6887 and keeps Qwen3-VL


def test_history_text_names_b6887_as_the_flip_for_qwen3_vl(cli):
    result = cli("history", "--gpu", "rtx-3090", "--model", "qwen3-vl-30b-a3b", "--gpus", "1", "--engine", "llama.cpp")
    assert result.code == 0, result.err
    assert f"until {QWEN3_VL} (2025-10-30)" in result.out
    assert f"llama.cpp-b6097 → {QWEN3_VL}: architecture now passes" in result.out


def test_a_qwen3_vl_gguf_on_a_4090_is_blocked_the_day_before_b6887_and_runs_from_its_tag_date(cli):
    args = ("--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-vl-32b", "--engine", "llama.cpp")
    before = explain(cli, *args, "--as-of", "2025-10-29")
    assert before["verdict"] == "blocked"
    (gguf, *_) = [r for r in rejections(before) if r["variant"] == "gguf-q4-k-m"]
    assert gguf["gate"] == "architecture" and gguf["reason"].endswith("does not load GGUF architecture 'qwen3vl'")
    after = explain(cli, *args, "--as-of", "2025-10-30")
    assert after["verdict"] == "runnable"
    plan = after["plans"][0]
    assert plan["build"] == QWEN3_VL and plan["variant"].startswith("gguf")
    assert any(s["url"].endswith("ggml-org/llama.cpp/pull/16780") for s in sources(after, plan["sources"]))


def test_diagnose_maps_vllms_startup_free_memory_check_to_the_memory_gate_and_the_page_cache(cli, tmp_path):
    log = tmp_path / "spark.log"
    log.write_text(
        "ValueError: Free memory on device cuda:0 (109.53/121.69 GiB) on startup is less than desired GPU memory "
        "utilization (0.91, 110.74 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
        "processes.\n",
        encoding="utf-8",
    )
    result = cli("diagnose", str(log), "--gpu", "gb10", "--format", "json")
    doc = result.json()
    (top, *_) = doc["matches"]
    assert top["fingerprint"] == "vllm-startup-free-memory" and top["gate"] == "memory"
    assert "109.53 of 121.69 GiB" in top["explanation"] and "drop_caches" in top["fix"]
    assert "--gpu-memory-utilization" in top["fix"]


# --- DGX Spark: NVIDIA's NGC 26.01 container, the playbook's single-Spark image from 2026-02-02 ----------------

NGC_26_01 = "nvcr.io/nvidia/vllm:26.01-py3"
ONE_SPARK = ("--gpu", "gb10", "--gpus", "1", "--model", "llama-3.1-8b")


def test_the_ngc_26_01_container_runs_on_one_spark_although_vllm_0_11_1_has_no_arm_image(cli):
    doc = explain(cli, *ONE_SPARK, "--build", NGC_26_01)
    assert doc["verdict"] == "runnable"
    plan = doc["plans"][0]
    assert plan["build"] == "vllm-ngc-26.01" and plan["provenance"] == "fork" and plan["host_arch"] == "aarch64"
    assert plan["image"] == NGC_26_01
    assert any("dgx-spark-playbooks" in s["url"] and s.get("date") for s in sources(doc, plan["sources"]))
    upstream = explain(cli, *ONE_SPARK, "--build", "vllm-0.11.1")
    assert upstream["verdict"] == "blocked"
    assert {r["gate"] for r in rejections(upstream) if r["variant"] == "fp8"} == {"platform"}


def test_the_ngc_26_01_container_is_offered_on_a_spark_from_the_playbooks_date(cli):
    before = {p["build"] for p in explain(cli, *ONE_SPARK, "--engine", "vllm", "--as-of", "2026-02-01")["plans"]}
    after = {p["build"] for p in explain(cli, *ONE_SPARK, "--engine", "vllm", "--as-of", "2026-02-02")["plans"]}
    assert "vllm-ngc-26.01" not in before and "vllm-ngc-26.01" in after


# --- llama.cpp b8036: GLM-5.x (glm-dsa) as dense MLA; GLM-5.2's GGUFs do not load there (llama.cpp#24770) ---------

GLM_DSA = "llama.cpp-b8036"
INDEXER = "llama.cpp-glm52-gguf-indexer-tensors-required"


def test_glm_5_1_ggufs_run_on_one_3090_with_host_ram_from_b8036_and_the_plan_says_the_indexer_is_unused(cli):
    args = ("--gpu", "rtx-3090", "--gpus", "1", "--model", "glm-5.1", "--engine", "llama.cpp", "--host-memory", "256")
    doc = explain(cli, *args, "--as-of", "2026-04-27")
    assert doc["verdict"] == "runnable"
    (plan,) = doc["plans"]
    # the newest build by then is b8295 (Nemotron 3 Super), which keeps b8036's glm-dsa graph
    assert plan["build"] == "llama.cpp-b8295"
    kernel = next(g for g in plan["gates"] if g["gate"] == "kernel")
    assert "indexer unused" in kernel["reason"]


def test_glm_5_2_ggufs_are_refused_on_b8036_naming_the_indexer_defect_and_history_keeps_them_at_b9840(cli):
    args = ("--gpu", "rtx-4090", "--gpus", "1", "--model", "glm-5.2", "--engine", "llama.cpp", "--host-memory", "256")
    doc = explain(cli, *args, "--build", GLM_DSA)
    assert doc["verdict"] == "blocked"
    (gguf, *_) = [r for r in rejections(doc) if r["variant"] == "gguf"]
    assert gguf["gate"] == "architecture" and INDEXER in gguf["reason"]
    assert any(s["url"].endswith("ggml-org/llama.cpp/pull/24770") for s in gguf["sources"])
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-3090", "glm-5.2", 4))
    assert INDEXER in builds[GLM_DSA]["defects"] and INDEXER not in builds["llama.cpp-b9840"]["defects"]


def test_lint_flags_a_glm_5_2_gguf_command_on_b8036_and_not_the_same_command_on_b9840(cli):
    gguf = "/models/unsloth/GLM-5.2-GGUF/UD-IQ2_M/GLM-5.2-UD-IQ2_M-00001-of-00006.gguf"
    command = ("--", "llama-server", "--model", gguf, "--ctx-size", "16384")

    def defects(build: str) -> list[str]:
        result = cli("lint", "--gpu", "rtx-3090", "--build", build, "--format", "json", *command)
        assert result.code in (0, 1), result.err
        return [f["why"] for f in result.json()["findings"] if f["code"] == "defect"]

    assert any("GLM-5.2 GGUFs fail to load" in why for why in defects(GLM_DSA))
    assert not defects("llama.cpp-b9840")


def test_diagnose_maps_the_glm_5_2_missing_indexer_tensor_line_to_the_b8036_defect(cli, tmp_path):
    log = tmp_path / "llama-server.log"
    log.write_text(
        "llama_model_load: error loading model: missing tensor 'blk.3.indexer.k_norm.weight'\n", encoding="utf-8"
    )
    (top, *_) = cli("diagnose", str(log), "--format", "json").json()["matches"]
    assert top["fingerprint"] == f"{GLM_DSA}+{INDEXER}" and top["gate"] == "architecture"


def test_history_lists_the_ngc_26_01_container_as_a_runnable_fork_path_on_a_spark(cli):
    result = cli("history", *ONE_SPARK, "--engine", "vllm")
    assert result.code == 0, result.err
    assert "fork path: vllm-ngc-26.01 (2026-02-02): runnable" in result.out
