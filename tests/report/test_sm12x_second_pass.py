"""The second SM12x pass (issue 28): MiniMax-M2.5 NVFP4 across two DGX Sparks on Avarok's dgx-vllm v22 image (a vLLM
0.16.0 development build, February 2026). The image is named the way users pull it, its plan runs eagerly because CUDA
graphs across two Sparks crash (the inherited GB10 defect, with this report among its sources), pipeline parallel over
the Sparks is refused on it, and the coverage cell counts it as a side path for MiniMax-M2.5 only."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, flags, history_of, verdicts

AVAROK = "vllm-dgx-spark-avarok-v22"
CROSS_NODE = "vllm-gb10-cross-node-cudagraph-capture"
PP = "vllm-dgx-spark-avarok-v22-pp-over-sparks"
TWO_SPARKS = ("--gpu", "gb10", "--gpus", "1", "--nodes", "2", "--engine", "vllm")
M25 = ("--model", "minimax-m2.5", "--variant", "nvfp4")


def test_the_image_tag_resolves_to_the_build_and_its_plan_runs_eagerly_across_the_sparks(cli):
    doc = explain(cli, *TWO_SPARKS, *M25, "--build", "avarok/dgx-vllm-nvfp4-kernel:v22")
    plan = doc["plans"][0]
    assert plan["build"] == AVAROK
    assert CROSS_NODE in defect_ids(plan) and ("--enforce-eager", None) in flags(plan)
    assert ("--tensor-parallel-size", "2") in flags(plan) and PP not in defect_ids(plan)
    # asked to run eagerly, the plan is outside the defect's scope
    eager = explain(cli, *TWO_SPARKS, *M25, "--build", AVAROK, "--eager")["plans"][0]
    assert CROSS_NODE not in defect_ids(eager)


def test_a_report_dated_before_later_releases_answers_with_the_builds_of_its_day(cli):
    doc = explain(cli, *TWO_SPARKS, *M25, "--as-of", "2026-03-01")
    builds = [p["build"] for p in doc["plans"]]
    assert AVAROK in builds and all(b in ("vllm-0.15.1-aarch64-cu130", AVAROK) for b in builds)
    before = explain(cli, *TWO_SPARKS, *M25, "--as-of", "2026-02-20")
    assert AVAROK not in [p["build"] for p in before["plans"]]


def test_history_lists_the_image_as_a_community_path_for_the_two_spark_layout(cli):
    engine = history_of(cli, "vllm", "gb10", "minimax-m2.5", 1, "--nodes", "2", "--variant", "nvfp4")
    side = {b["build"]: b for b in engine["side_paths"]}
    assert side[AVAROK]["verdict"] == "runnable" and side[AVAROK]["provenance"] == "community"
    assert CROSS_NODE in side[AVAROK]["defects"]
    assert AVAROK not in verdicts(engine)  # a side path, not a release of the line


def test_coverage_counts_the_image_for_minimax_m2_5_on_sm121_and_not_for_other_families(cli):
    result = cli("coverage", "--format", "json")
    assert result.code == 0, result.err
    cells = {(c["family"], c["gpu_class"]): c for c in result.json()["cells"]}
    assert AVAROK in [b["build"] for b in cells[("minimax-m2.5", "sm121")]["community"]]
    assert AVAROK not in [b["build"] for b in cells[("minimax-m2.7", "sm121")]["community"]]
    assert AVAROK not in [b["build"] for b in cells[("minimax-m2.5", "sm120")]["community"]]


def test_validate_reads_the_pp_defect_and_lint_flags_pipeline_parallel_over_the_sparks(cli):
    command = ("vllm", "serve", "lukealonso/MiniMax-M2.5-NVFP4", "--pipeline-parallel-size", "2", "--enforce-eager")
    command += ("--max-model-len", "4096", "--trust-remote-code", "--tool-call-parser", "minimax_m2")
    command += ("--reasoning-parser", "minimax_m2", "--enable-auto-tool-choice")
    result = cli("lint", "--gpu", "gb10", "--nodes", "2", "--build", AVAROK, "--format", "json", "--", *command)
    assert result.code in (0, 1), result.err
    hits = [f for f in result.json()["findings"] if f["code"] == "defect" and "Ray channel" in f["why"]]
    assert hits and hits[0]["severity"] in ("error", "warn")
    tp = tuple("--tensor-parallel-size" if a == "--pipeline-parallel-size" else a for a in command)
    clean = cli("lint", "--gpu", "gb10", "--nodes", "2", "--build", AVAROK, "--format", "json", "--", *tp)
    assert not [f for f in clean.json()["findings"] if f["code"] == "defect" and "Ray channel" in f["why"]]


# --- gpt-oss MXFP4 on DGX Spark: Marlin's wrong first Harmony token (vllm#41477 on 0.20.0, #37030) --------------------

GPTOSS_GB10 = "vllm-gb10-gptoss-mxfp4-marlin-null-output"


def test_gpt_oss_mxfp4_on_gb10_is_blocked_from_0_20_1_to_0_22_and_rtx_pro_6000_is_not_hit(cli):
    engine = history_of(cli, "vllm", "gb10", "gpt-oss-120b", 1, "--variant", "mxfp4")
    builds = verdicts(engine)
    for carrying in ("vllm-0.20.1", "vllm-0.21.0", "vllm-0.22.0"):
        assert GPTOSS_GB10 in builds[carrying]["defects"] and builds[carrying]["verdict"] == "blocked", carrying
    assert GPTOSS_GB10 not in builds["vllm-0.23.0"]["defects"] and builds["vllm-0.23.0"]["verdict"] == "runnable"
    assert GPTOSS_GB10 not in builds["vllm-0.15.1"]["defects"]
    pro = verdicts(history_of(cli, "vllm", "rtx-pro-6000", "gpt-oss-120b", 1, "--variant", "mxfp4"))
    assert GPTOSS_GB10 not in pro["vllm-0.22.0"]["defects"]


def test_a_gb10_plan_pinned_to_0_22_is_refused_naming_the_defect_and_lint_flags_the_command(cli):
    doc = explain(
        cli, "--gpu", "gb10", "--gpus", "1", "--model", "gpt-oss-120b", "--variant", "mxfp4", "--build", "vllm-0.22.0"
    )
    assert not doc["plans"]
    reasons = " ".join(doc["reasons"][r["reason_id"]]["reason"] for r in doc["rejected"])
    assert GPTOSS_GB10 in reasons and "Harmony" in reasons
    command = ("vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "32768", "--tool-call-parser", "openai")
    command += ("--reasoning-parser", "openai_gptoss", "--enable-auto-tool-choice")
    doc = cli("lint", "--gpu", "gb10", "--build", "vllm-0.22.0", "--format", "json", "--", *command)
    assert doc.code in (0, 1), doc.err
    assert [f for f in doc.json()["findings"] if f["code"] == "defect" and "Harmony" in f["why"]]
    later = cli("lint", "--gpu", "gb10", "--build", "vllm-0.23.0", "--format", "json", "--", *command)
    assert not [f for f in later.json()["findings"] if f["code"] == "defect" and "Harmony" in f["why"]]
