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
