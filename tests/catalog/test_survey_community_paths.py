"""Community paths of the December 2026 survey (recipes/surveys/*.yaml, entries dated 2026-12-04): a model the
official releases could not run on a GPU plans with the path once it exists, names it and its source, and a
question asked before the path's date answers as of that date."""

from __future__ import annotations

import pytest

SPARK_PAIR = ("--gpu", "gb10", "--gpus", "1", "--nodes", "2", "--model", "deepseek-v4-flash")


def _plan_sources(answer: dict, plan: dict) -> set[str]:
    return {answer["sources"][key]["url"] for key in plan["sources"]}


def test_sglang_dgx_spark_image_runs_deepseek_v4_on_two_sparks(cli):
    # 2026-09-05: vLLM 0.28.0 failed DeepSeek-V4 at load on SM12x and no SGLang release had an SM121 kernel
    answer = cli("explain", *SPARK_PAIR, "--as-of", "2026-09-05", "--format", "json").json()
    assert answer["verdict"] == "runnable"
    plan = answer["plans"][0]
    assert plan["build"] == "sglang-dsv4-dgx-spark-image" and plan["image"] == "lmsysorg/sglang:dev-v4f-2dgx-v2"
    assert plan["deployment"] == "deepseek-v4-flash-0731-2xgb10-sglang"
    assert "https://github.com/sgl-project/sglang/pull/37737" in _plan_sources(answer, plan)
    assert ("SGLANG_SM120_FLASHMLA_BACKEND", "b12x") in {(e["name"], e["value"]) for e in plan["env"]}


def test_before_the_image_two_sparks_are_still_blocked(cli):
    answer = cli("explain", *SPARK_PAIR, "--as-of", "2026-09-02", "--format", "json").json()
    assert answer["verdict"] == "blocked"
    assert all(p["build"] != "sglang-dsv4-dgx-spark-image" for p in answer["plans"])


@pytest.mark.parametrize(("as_of", "listed"), [(None, True), ("2026-09-02", False)])
def test_history_lists_the_spark_image_as_a_side_path_from_its_date(cli, as_of, listed):
    args = ("history", *SPARK_PAIR, "--engine", "sglang")
    text = cli(*args, *(("--as-of", as_of) if as_of else ())).out
    line = "model-image path: sglang-dsv4-dgx-spark-image (2026-09-03): runnable"
    assert (line in text) is listed
    # the releases themselves still have no SM121 DeepSeek-V4 kernel
    assert "blocked (kernel: no attention.dsv4 kernel for sm121)" in text


def test_coverage_counts_the_spark_image_for_deepseek_v4_only(cli):
    table = cli("coverage", "--format", "json").json()["cells"]
    cells = {(c["family"], c["gpu_class"]): c for c in table}
    assert "sglang-dsv4-dgx-spark-image" in [s["build"] for s in cells[("deepseek-v4-flash", "sm121")]["community"]]
    assert all(
        s["build"] != "sglang-dsv4-dgx-spark-image"
        for c in table
        for s in c["community"]
        if c["family"] != "deepseek-v4-flash"
    )


PRO_6000_X8 = ("--gpu", "rtx-pro-6000", "--gpus", "8", "--model", "glm-5")
WIKI = "https://github.com/voipmonitor/rtx6kpro/blob/b13bf21c17c4f8db6f3a366915e92e8a700ffbb0/models/glm5.md"


def test_glm5_on_rtx_pro_6000_plans_with_the_community_sglang_image_in_non_dsa_mode(cli):
    # April 2026: no vLLM or SGLang release had a DSA path for SM120 (vLLM's came with 0.24.0 in July)
    answer = cli("explain", *PRO_6000_X8, "--as-of", "2026-04-15", "--format", "json").json()
    plan = answer["plans"][0]
    assert plan["build"] == "sglang-sm120-voipmonitor-cu130" and plan["provenance"] == "community"
    assert plan["image"] == "voipmonitor/sglang:cu130"
    assert WIKI in _plan_sources(answer, plan)
    argv = plan["argv"]
    # the report's BF16 KV (FP8 garbles; SGLang reads bf16 and bfloat16 alike) and the SM120 FlashInfer MLA backend
    assert argv[argv.index("--kv-cache-dtype") + 1] == "bf16"
    assert argv[argv.index("--attention-backend") + 1] == "flashinfer"


def test_glm5_on_rtx_pro_6000_before_the_report_is_blocked(cli):
    answer = cli("explain", *PRO_6000_X8, "--as-of", "2026-03-20", "--format", "json").json()
    assert answer["verdict"] == "blocked"


def test_history_shows_the_sm120_image_and_only_glm5_is_counted(cli):
    text = cli("history", *PRO_6000_X8, "--engine", "sglang").out
    assert "community path: sglang-sm120-voipmonitor-cu130 (2026-03-30): runnable" in text
    cells = {(c["family"], c["gpu_class"]): c for c in cli("coverage", "--format", "json").json()["cells"]}
    assert "sglang-sm120-voipmonitor-cu130" in [s["build"] for s in cells[("glm-5", "sm120")]["community"]]
    # GLM-5.1 shares the architecture, so a plan may use the image, but no report ran it there
    assert "sglang-sm120-voipmonitor-cu130" in cells[("glm-5.1", "sm120")]["community_not_reported"]
