"""The third field pass over the newest families (field7, 2026-12-07; issue 28): the llama.cpp tags that first
loaded Nemotron 3 Nano (b7418, #18058), Qwen3.5 / 3.6 (b7990, #19468) and Nemotron 3 Super (b8295, #20411), read from
a packaging changelog and a Homebrew pin, so `history` flips there and not months later; the Super's GGUFs refused on
the builds between as a defect with its fixing tag; the CUDA copy abort ending at b7990. Each through the CLI, and
the survey record."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.contract import rejections
from tests.support.release_history import explain, history_of, lint, verdicts

NANO_TAG = "llama.cpp-b7418"
QWEN35_TAG = "llama.cpp-b7990"
SUPER_TAG = "llama.cpp-b8295"
SUPER_GGUF = "llama.cpp-nemotron3-super-gguf-unsupported"
CPY_ABORT = "llama.cpp-cuda-cpy-over-2gib-long-context-abort"
SPARK_MTP = "vllm-spark-arena-eugr-nightly-2026072302"
SPARK_IMAGE = "ghcr.io/spark-arena/dgx-vllm-eugr-nightly:2026072302"
SURVEY = Path(__file__).resolve().parents[2] / "recipes" / "surveys" / "field7.yaml"
SUPER_SERVE = (
    "--",
    "llama-server",
    "--model",
    "/models/UD-Q4_K_XL/NVIDIA-Nemotron-3-Super-120B-A12B-UD-Q4_K_XL-00001-of-00003.gguf",
    "--ctx-size",
    "32768",
)


# --- Qwen3.5 / 3.6 GGUFs (qwen35, qwen35moe): b7990, the tag of #19468 --------------------------------------------


def test_qwen3_5_ggufs_load_from_b7990_and_a_dated_question_answers_as_of_its_day(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-3090", "qwen3.5-35b-a3b", 1))
    assert builds[NANO_TAG]["verdict"] == "blocked" and builds[NANO_TAG]["gate"] == "architecture"
    assert builds[QWEN35_TAG]["verdict"] == "runnable" and builds["llama.cpp-b8036"]["verdict"] == "runnable"
    args = ("--gpu", "rtx-3090", "--gpus", "1", "--model", "qwen3.5-35b-a3b", "--engine", "llama.cpp")
    assert explain(cli, *args, "--as-of", "2026-02-09")["plans"] == []  # the day before the tag
    (plan, *_) = explain(cli, *args, "--as-of", "2026-02-11")["plans"]
    assert plan["build"] == QWEN35_TAG


# --- Nemotron 3 (nemotron_h_moe): the Nano from b7418, the Super only from b8295 ------------------------------------


def test_nemotron_3_nano_ggufs_load_from_b7418_and_on_every_later_build(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-4090", "nemotron-3-nano-30b-a3b", 1))
    assert builds["llama.cpp-b7186"]["verdict"] == "blocked" and builds["llama.cpp-b7186"]["gate"] == "architecture"
    for later in (NANO_TAG, QWEN35_TAG, "llama.cpp-b8036", SUPER_TAG, "llama.cpp-b9333", "llama.cpp-b9840"):
        assert builds[later]["verdict"] == "runnable", later
    assert all(SUPER_GGUF not in b["defects"] for b in builds.values())  # the Super's defect is not the Nano's


def test_nemotron_3_super_ggufs_are_refused_until_b8295_naming_the_defect(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-pro-6000", "nemotron-3-super-120b-a12b", 1))
    for before in (NANO_TAG, QWEN35_TAG, "llama.cpp-b8036"):
        assert builds[before]["verdict"] == "blocked" and SUPER_GGUF in builds[before]["defects"], before
    for fixed in (SUPER_TAG, "llama.cpp-b9333", "llama.cpp-b9840"):
        assert builds[fixed]["verdict"] == "runnable" and SUPER_GGUF not in builds[fixed]["defects"], fixed
    args = ("--gpu", "rtx-pro-6000", "--gpus", "1", "--model", "nemotron-3-super-120b-a12b", "--engine", "llama.cpp")
    doc = explain(cli, *args, "--build", "llama.cpp-b8036")
    (refused, *_) = [r for r in rejections(doc) if r["build"] == "llama.cpp-b8036"]
    assert refused["gate"] == "architecture" and SUPER_GGUF in refused["defects"]
    assert "fixed in llama.cpp-b8295" in refused["reason"]
    assert "https://github.com/ggml-org/llama.cpp/pull/20411" in [s["url"] for s in refused["sources"]]
    assert explain(cli, *args, "--as-of", "2026-03-01")["plans"] == []
    (plan, *_) = explain(cli, *args, "--as-of", "2026-03-15")["plans"]
    assert plan["build"] == SUPER_TAG


def test_lint_flags_a_nemotron_3_super_gguf_command_on_b8036_and_not_on_b8295(cli):
    def defects(build: str) -> list[str]:
        doc = lint(cli, "--gpu", "rtx-pro-6000", "--build", build, *SUPER_SERVE)
        return [f["why"] for f in doc["findings"] if f["code"] == "defect"]

    assert any(SUPER_GGUF in why or "Nemotron 3 Super GGUFs" in why for why in defects("llama.cpp-b8036"))
    assert not [why for why in defects(SUPER_TAG) if "Nemotron 3 Super" in why]


# --- the CUDA tensor-copy abort: fixed by #18433 (2026-01-02), so b7418 has it and b7990 does not -------------------


def test_the_long_context_copy_abort_ends_at_b7990(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "h200", "qwen3-next-80b-a3b-instruct", 1))
    assert CPY_ABORT in builds[NANO_TAG]["defects"]
    assert CPY_ABORT not in builds[QWEN35_TAG]["defects"] and CPY_ABORT not in builds["llama.cpp-b8036"]["defects"]


# --- Nemotron 3 Super NVFP4 with MTP on one DGX Spark: spark-arena's dated image (recipe-registry#19) ----------------


def test_the_dated_spark_image_serves_nemotron_3_super_nvfp4_with_mtp_on_one_gb10(cli):
    args = ("--gpu", "gb10", "--gpus", "1", "--model", "nemotron-3-super-120b-a12b", "--speculative", "mtp")
    doc = explain(cli, *args, "--speculative-tokens", "3", "--build", SPARK_IMAGE)
    assert doc["verdict"] == "runnable"
    (plan, *_) = doc["plans"]
    assert plan["build"] == SPARK_MTP and plan["variant"] == "nvfp4"
    assert '"num_speculative_tokens":3' in " ".join(plan["argv"]).replace(" ", "")
    assert plan["image"] == SPARK_IMAGE
    result = cli("history", *args, "--engine", "vllm")
    assert result.code == 0, result.err
    assert f"community path: {SPARK_MTP} (2026-07-23): runnable" in result.out
    # a question dated before the tag does not see it
    before = explain(cli, *args, "--engine", "vllm", "--as-of", "2026-07-22")
    assert SPARK_MTP not in {p["build"] for p in before["plans"]}


def test_coverage_counts_the_spark_image_for_the_super_only(cli):
    cells = cli("coverage", "--format", "json").json()["cells"]

    def cell(family: str) -> dict:
        return next(c for c in cells if c["family"] == family and c["gpu_class"] == "sm121")

    assert {"build": SPARK_MTP, "released": "2026-07-23"} in cell("nemotron-3-super-120b-a12b")["community"]
    assert SPARK_MTP not in [side["build"] for side in cell("nemotron-3-nano-30b-a3b")["community"]]


# --- the survey record ----------------------------------------------------------------------------------------------


def test_the_field7_survey_names_what_it_added_and_why_it_left_the_rest(cli):
    doc = yaml.safe_load(SURVEY.read_text())
    assert doc["surveyed"] == "2026-12-07"
    added = {i for e in doc["entries"] for i in e["catalog"]}
    assert {NANO_TAG, QWEN35_TAG, SUPER_TAG, SUPER_GGUF, SPARK_MTP} <= added
    families = {f for e in doc["entries"] for f in e["families"]}
    for family in ("qwen3.6-35b-a3b", "mimo-v2-flash", "nemotron-3-super-120b-a12b", "deepseek-v4-pro", "kimi-k3"):
        assert family in families, family
    for entry in doc["entries"]:
        assert entry["sources"] and all(s.startswith("https://") for s in entry["sources"])
    result = cli("validate")
    assert result.code == 0, result.err
