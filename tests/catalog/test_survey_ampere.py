"""The Ampere slice of the field survey (issue 28): sm80 (A100/A800) and sm86 (RTX 3090, A6000, A40, A10) — the
defects of official releases there and the community paths that made a blocked model run, each asked the way a
user asks."""

from __future__ import annotations

from tests.support.contract import sources
from tests.support.release_history import defect_ids, explain, flags, history_of, lint, verdicts

CUTLASS_FP8 = "vllm-0.29-ampere-fp8-linear-cutlass"
CUTLASS_KERNEL = "CutlassFP8ScaledMMLinearKernel"  # lint's finding quotes the defect's title
LLAMA_FP8_3090 = ("--gpu", "rtx-3090", "--gpus", "1", "--model", "llama-3.1-8b", "--variant", "fp8", "--engine", "vllm")


# --- vLLM 0.29.0: the CUTLASS FP8 linear kernel is chosen on Ampere (vllm#55008) -----------------------------


def test_a_per_tensor_fp8_plan_on_0_29_names_the_cutlass_defect_and_forces_marlin(cli):
    doc = explain(cli, *LLAMA_FP8_3090, "--build", "vllm-0.29.0")
    plan = doc["plans"][0]
    assert plan["variant"] == "fp8" and CUTLASS_FP8 in defect_ids(plan)
    assert ("--linear-backend", "marlin") in flags(plan)
    (defect,) = [d for d in plan["build_defects"] if d["id"] == CUTLASS_FP8]
    assert not defect["blocks"] and defect["symptom"] == "crash"
    assert any(s["url"].endswith("vllm-project/vllm/issues/55008") for s in sources(doc, defect["sources"]))


def test_the_cutlass_defect_spares_hopper_block_fp8_and_the_release_before(cli):
    hopper = explain(cli, "--gpu", "h100", *LLAMA_FP8_3090[2:], "--build", "vllm-0.29.0")["plans"][0]
    assert CUTLASS_FP8 not in defect_ids(hopper) and "--linear-backend" not in hopper["argv"]
    block = explain(cli, "--gpu", "a100", "--gpus", "1", "--model", "qwen3-32b", "--variant", "fp8", "--build",
                    "vllm-0.29.0")["plans"][0]  # fmt: skip
    assert CUTLASS_FP8 not in defect_ids(block)
    before = explain(cli, *LLAMA_FP8_3090, "--build", "vllm-0.27.1")["plans"][0]
    assert CUTLASS_FP8 not in defect_ids(before) and "--linear-backend" not in before["argv"]


def test_history_shows_the_cutlass_defect_at_0_29_0_and_not_before(cli):
    builds = verdicts(history_of(cli, "vllm", "rtx-3090", "llama-3.1-8b", 1, "--variant", "fp8"))
    assert CUTLASS_FP8 in builds["vllm-0.29.0"]["defects"]
    assert CUTLASS_FP8 not in builds["vllm-0.27.1"]["defects"]
    assert builds["vllm-0.29.0"]["verdict"] == "runnable"  # the workaround keeps it runnable


def test_lint_flags_an_fp8_command_on_0_29_ampere_and_not_one_with_the_marlin_backend(cli):
    base = ("--gpu", "rtx-3090", "--build", "vllm-0.29.0", "--", "vllm", "serve", "/models/Llama-3.1-8B-Instruct-FP8")
    base += ("--max-model-len", "32768")
    hits = [f for f in lint(cli, *base)["findings"] if f["code"] == "defect" and CUTLASS_KERNEL in f["why"]]
    assert hits and "--linear-backend marlin" in hits[0]["fix"]
    clean = lint(cli, *base, "--linear-backend", "marlin")["findings"]
    assert not [f for f in clean if f["code"] == "defect" and CUTLASS_KERNEL in f["why"]]


# --- GLM-5.1 on 8x A100 from the vllm#38476 author's image (2026-06-06) --------------------------------------

HAOSDENT = "vllm-glm5-sm80-haosdent-nightly"
GLM51_A100 = ("--gpu", "a100", "--gpus", "8", "--model", "glm-5.1", "--engine", "vllm")


def test_glm_5_1_on_eight_a100_is_blocked_before_the_authors_image_and_runs_from_it(cli):
    assert explain(cli, *GLM51_A100, "--as-of", "2026-06-05")["verdict"] == "blocked"
    after = explain(cli, *GLM51_A100, "--as-of", "2026-06-06")
    assert after["verdict"] == "runnable"
    (plan,) = after["plans"]
    assert plan["build"] == HAOSDENT and plan["provenance"] == "community" and plan["build_released"] == "2026-06-06"
    kernel = next(g for g in plan["gates"] if g["gate"] == "kernel")
    assert "TRITON_MLA_SPARSE" in kernel["reason"]


def test_the_rolling_tag_the_reports_pulled_names_the_authors_image(cli):
    plan = explain(cli, *GLM51_A100, "--build", "haosdent/vllm-nightly:latest")["plans"][0]
    assert plan["build"] == HAOSDENT and plan["image"].startswith("haosdent/vllm-nightly:latest@sha256:3eedf87d8451")
    assert ("--kv-cache-dtype", "bfloat16") in flags(plan)  # the PR's sparse-MLA path has no FP8 KV on SM80
