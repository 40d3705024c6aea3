"""vLLM sends SM12x FP8 GEMMs to DeepGEMM (support_deep_gemm admits the whole 12.x family), so a release whose
bundled DeepGEMM has no SM120 kernels aborts FP8 checkpoints on RTX PRO 6000 and GB10 alike: 0.24.0 (reported,
vllm#47130 / #47436) and 0.27.1 (read in its wheel); 0.25.0 and 0.26.0 bundle SM120 kernels. Workaround:
VLLM_USE_DEEP_GEMM=0."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

D024 = "vllm-0.24-deepgemm-sm120-fp8"
D027 = "vllm-0.27-deepgemm-sm12x-fp8"
R1_GB10 = ("--gpu", "gb10", "--model", "deepseek-r1", "--gpus", "8", "--engine", "vllm", "--variant", "fp8")


def test_a_gb10_plan_on_0_24_names_the_deepgemm_defect_and_carries_the_env_workaround(cli):
    plan = explain(cli, *R1_GB10, "--build", "vllm==0.24.0")["plans"][0]
    assert D024 in defect_ids(plan)
    assert {e["name"]: e["value"] for e in plan["env"]}.get("VLLM_USE_DEEP_GEMM") == "0"
    clean = explain(cli, *R1_GB10, "--build", "vllm==0.26.0")["plans"][0]
    assert not {D024, D027} & set(defect_ids(clean))
    assert all(e["name"] != "VLLM_USE_DEEP_GEMM" for e in clean["env"])


def test_history_shows_the_defect_leave_at_0_25_and_return_in_0_27_1_on_both_sm12x_classes(cli):
    for gpu in ("rtx-pro-6000", "gb10"):
        builds = verdicts(history_of(cli, "vllm", gpu, "deepseek-r1", 8, "--variant", "fp8"))
        assert D024 in builds["vllm-0.24.0"]["defects"], gpu
        assert D024 not in builds["vllm-0.23.0"]["defects"] and D024 not in builds["vllm-0.25.0"]["defects"]
        assert not {D024, D027} & set(builds["vllm-0.26.0"]["defects"])
        assert D027 in builds["vllm-0.27.1"]["defects"], gpu
    hopper = verdicts(history_of(cli, "vllm", "h200", "deepseek-r1", 8, "--variant", "fp8"))
    assert not {D024, D027} & set(hopper["vllm-0.27.1"]["defects"])


def test_lint_flags_an_fp8_command_on_0_27_1_on_sm120_and_not_on_0_26(cli):
    command = ("vllm", "serve", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8", "--trust-remote-code")

    def flagged(build: str) -> bool:
        doc = lint(cli, "--gpu", "rtx-pro-6000", "--gpus", "8", "--build", build, "--", *command)
        return any(f["code"] == "defect" and "DeepGEMM" in f["why"] for f in doc["findings"])

    assert flagged("vllm-0.27.1")
    assert not flagged("vllm-0.26.0")


def test_diagnose_maps_the_unknown_recipe_assertion_on_gb10(cli, tmp_path):
    log = tmp_path / "engine.log"
    log.write_text(
        "RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/../jit_kernels/impls/../heuristics/"
        "../../utils/layout.hpp:76): Unknown recipe\n",
        encoding="utf-8",
    )
    result = cli("diagnose", str(log), "--gpu", "gb10", "--model", "deepseek-r1", "--format", "json")
    assert D024 in result.out and "VLLM_USE_DEEP_GEMM=0" in result.out


# --- 0.28.0 and later bundle a DeepGEMM with SM120 kernels (read in the 0.28.0-0.33.0 wheels) ------------------------


def test_history_shows_the_0_27_defect_fixed_in_0_28_and_absent_through_the_later_releases(cli):
    for gpu in ("rtx-pro-6000", "gb10"):
        builds = verdicts(history_of(cli, "vllm", gpu, "deepseek-r1", 8, "--variant", "fp8"))
        assert D027 in builds["vllm-0.27.1"]["defects"], gpu
        for later in ("vllm-0.28.0", "vllm-0.29.0", "vllm-0.30.0", "vllm-0.31.0", "vllm-0.33.0"):
            assert not {D024, D027} & set(builds[later]["defects"]), (gpu, later)
    plan = explain(cli, *R1_GB10, "--build", "vllm-0.28.0")["plans"][0]
    assert not {D024, D027} & set(defect_ids(plan))
    assert all(e["name"] != "VLLM_USE_DEEP_GEMM" for e in plan["env"])
    before = explain(cli, *R1_GB10, "--build", "vllm-0.27.1")["plans"][0]
    (defect,) = [d for d in before["build_defects"] if d["id"] == D027]
    assert defect["fixed_in"] == "vllm-0.28.0" and defect["log_line"] == "Unknown SF transformation"


def _sf_log(tmp_path, version: str):
    log = tmp_path / f"engine-{version}.log"
    log.write_text(
        f"INFO 08-27 10:00:00 [api_server.py:1] vLLM API server version {version}\n"
        "RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/layout.hpp:59): "
        "Unknown SF transformation\n",
        encoding="utf-8",
    )
    return log


def test_diagnose_names_the_0_27_defect_for_a_0_27_1_log_and_not_for_a_log_of_a_release_without_it(cli, tmp_path):
    hit = cli("diagnose", str(_sf_log(tmp_path, "0.27.1")), "--gpu", "rtx-pro-6000", "--format", "json")
    assert D027 in hit.out and "VLLM_USE_DEEP_GEMM=0" in hit.out and "vllm-0.28.0" in hit.out
    # 0.24.0 printed the same message and does not carry the 0.27.1 defect: the generic DeepGEMM fingerprint explains it
    other = cli("diagnose", str(_sf_log(tmp_path, "0.24.0")), "--gpu", "rtx-pro-6000", "--format", "json")
    assert D027 not in other.out and "deepgemm-unsupported-arch" in other.out
    # an H200 is not a GPU the defect hits
    hopper = cli("diagnose", str(_sf_log(tmp_path, "0.27.1")), "--gpu", "h200", "--format", "json")
    assert D027 not in hopper.out and "deepgemm-unsupported-arch" in hopper.out
