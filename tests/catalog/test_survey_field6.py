"""The second field pass over the newest families (field6, 2026-12-07; issue 28): the Kimi-K3 NVFP4 report on B300
(vllm#51798) as a defect of the 0.27 line, with RedHatAI's checkpoint size from its vLLM recipe; NVIDIA's NVFP4 Gemma 4
on a DGX Spark, which 0.24 does not start and the vLLM recipe's dated community image serves; MiniMax-M2 GGUFs on
llama.cpp from b9333. Each through the CLI (the plan on the affected build names the defect, history shows where it
starts and ends, lint flags the command, a dated question answers as of its date), and the survey record."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.contract import rejections
from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

K3_NVFP4 = "vllm-0.27-kimi-k3-nvfp4-b300-degenerate-reasoning"
GEMMA_GB10 = "vllm-0.24-gb10-gemma4-nvfp4-no-start"
EUGR = "vllm-spark-eugr-nightly-20260704"
SURVEY = Path(__file__).resolve().parents[2] / "recipes" / "surveys" / "field6.yaml"
K3 = ("--model", "kimi-k3", "--gpus", "8", "--engine", "vllm")
K3_SERVE = ("--", "vllm", "serve", "RedHatAI/Kimi-K3-NVFP4", "--tensor-parallel-size", "8", "--max-model-len", "262144")


def defect_findings(doc):
    return [f for f in doc["findings"] if f["code"] == "defect"]


# --- Kimi-K3 NVFP4 on 8x B300: degenerate reasoning on the 0.27 line (vllm#51798) ---------------------------------


def test_the_nvfp4_kimi_k3_path_on_0_27_1_is_refused_for_the_defect_and_mxfp4_is_not_concerned(cli):
    doc = explain(cli, "--gpu", "b300", *K3, "--build", "vllm-0.27.1")
    (refused,) = [r for r in rejections(doc) if r["variant"] == "nvfp4-redhat" and r["build"] == "vllm-0.27.1"]
    assert refused["gate"] == "weight-format" and refused["outcome"] == "fail" and refused["defects"] == [K3_NVFP4]
    assert "no build known to fix it" in refused["reason"]
    assert "https://github.com/vllm-project/vllm/issues/51798" in [s["url"] for s in refused["sources"]]
    assert not [r for r in rejections(doc) if r["variant"] == "mxfp4" and K3_NVFP4 in r["defects"]]


def test_history_of_kimi_k3_nvfp4_on_b300_is_blocked_on_0_27_1_only(cli):
    builds = verdicts(history_of(cli, "vllm", "b300", "kimi-k3", 8, "--variant", "nvfp4-redhat"))
    assert builds["vllm-0.27.1"]["verdict"] == "blocked" and K3_NVFP4 in builds["vllm-0.27.1"]["defects"]
    assert builds["vllm-0.28.0"]["verdict"] == "runnable" and K3_NVFP4 not in builds["vllm-0.28.0"]["defects"]
    assert builds["vllm-0.26.0"]["verdict"] == "blocked"  # no Kimi-K3 before 0.27
    # the checkpoint's size (the recipe's 1645.9 GB) now decides memory: eight B300 hold it
    assert "size" not in (builds["vllm-0.28.0"]["reason"] or "")


def test_the_defect_is_scoped_to_b300_and_to_the_nvfp4_checkpoint(cli):
    # the report is on B300 (sm103) only: a GB300 rack of the same capability is concerned, a B200 node is not named
    b200 = verdicts(history_of(cli, "vllm", "b200", "kimi-k3", 16, "--variant", "nvfp4-redhat"))
    assert K3_NVFP4 not in b200["vllm-0.27.1"]["defects"]
    mxfp4 = verdicts(history_of(cli, "vllm", "b300", "kimi-k3", 8, "--variant", "mxfp4"))
    assert K3_NVFP4 not in mxfp4["vllm-0.27.1"]["defects"]


def test_lint_flags_an_nvfp4_kimi_k3_command_on_0_27_1_and_not_on_0_28_0(cli):
    (hit,) = [f for f in defect_findings(lint(cli, "--gpu", "b300", "--build", "vllm-0.27.1", *K3_SERVE))]
    assert "degenerate" in hit["why"] and "vllm-project/vllm/issues/51798" in " ".join(hit["sources"])
    assert hit["severity"] == "silent" and hit["flag"] == "image"  # it starts, then answers wrong
    assert not [
        f
        for f in defect_findings(lint(cli, "--gpu", "b300", "--build", "vllm-0.28.0", *K3_SERVE))
        if "degenerate" in f["why"]
    ]


def test_a_kimi_k3_nvfp4_question_dated_in_august_answers_with_the_defect(cli):
    args = ("--gpu", "b300", *K3, "--variant", "nvfp4-redhat")
    during = explain(cli, *args, "--as-of", "2026-08-20")
    assert not during["plans"]
    assert any(K3_NVFP4 in r["defects"] for r in during["rejected"] if r["build"] == "vllm-0.27.1")
    after = explain(cli, *args, "--as-of", "2026-08-27")["plans"][0]
    assert after["build"] == "vllm-0.28.0" and K3_NVFP4 not in defect_ids(after)


# --- NVIDIA's NVFP4 Gemma 4 26B-A4B on one DGX Spark: 0.24 fails, the recipe's dated ARM64 image serves it ----------

GEMMA = ("--gpu", "gb10", "--model", "gemma-4-26b-a4b", "--variant", "nvfp4", "--engine", "vllm")


def test_history_blocks_nvfp4_gemma4_on_gb10_at_0_24_0_only_and_lists_the_community_image(cli):
    engine = history_of(cli, "vllm", "gb10", "gemma-4-26b-a4b", 1, "--variant", "nvfp4")
    builds = verdicts(engine)
    assert builds["vllm-0.24.0"]["verdict"] == "blocked" and GEMMA_GB10 in builds["vllm-0.24.0"]["defects"]
    for other in ("vllm-0.23.0", "vllm-0.25.0", "vllm-0.28.0"):
        assert builds[other]["verdict"] == "runnable" and GEMMA_GB10 not in builds[other]["defects"], other
    image = next(p for p in engine["side_paths"] if p["build"] == EUGR)
    assert image["verdict"] == "runnable" and image["released"] == "2026-07-04"
    # other GPUs and the BF16 checkpoint are not concerned
    assert (
        GEMMA_GB10
        not in verdicts(history_of(cli, "vllm", "rtx-pro-6000", "gemma-4-26b-a4b", 1, "--variant", "nvfp4"))[
            "vllm-0.24.0"
        ]["defects"]
    )
    assert (
        GEMMA_GB10
        not in verdicts(history_of(cli, "vllm", "gb10", "gemma-4-26b-a4b", 1, "--variant", "bf16"))["vllm-0.24.0"][
            "defects"
        ]
    )


def test_a_gb10_question_dated_between_0_24_and_0_25_gets_the_recipes_community_image_with_its_flags(cli):
    plan = explain(cli, *GEMMA, "--as-of", "2026-07-05")["plans"][0]
    assert plan["build"] == EUGR and plan["deployment"] == "gemma-4-26b-a4b-nvfp4-1xgb10-vllm"
    assert plan["image"] == "eugr/spark-vllm:nightly-20260704"
    argv = plan["argv"]
    assert argv[:2] == ["vllm", "serve"]  # the image's entrypoint is not vllm serve
    for flag, value in (("--gpu-memory-utilization", "0.8"), ("--load-format", "fastsafetensors")):
        assert argv[argv.index(flag) + 1] == value
    assert {(e["name"], e["value"]) for e in plan["env"]} >= {("VLLM_USE_V2_MODEL_RUNNER", "1")}
    on_release = explain(cli, *GEMMA, "--gpus", "1", "--build", "vllm-0.24.0")
    assert not on_release["plans"]
    (refused,) = [r for r in rejections(on_release) if r["build"] == "vllm-0.24.0"]
    assert refused["defects"] == [GEMMA_GB10] and refused["gate"] == "weight-format"


def test_lint_refuses_the_nvfp4_gemma4_command_on_gb10_with_0_24_0_but_not_with_the_image(cli):
    serve = ("--", "vllm", "serve", "nvidia/Gemma-4-26B-A4B-NVFP4", "--gpu-memory-utilization", "0.8")
    (hit,) = defect_findings(lint(cli, "--gpu", "gb10", "--build", "vllm-0.24.0", *serve))
    assert hit["severity"] == "error" and "does not start on a DGX Spark" in hit["why"]
    assert not defect_findings(lint(cli, "--gpu", "gb10", "--build", EUGR, *serve))
    assert not defect_findings(lint(cli, "--gpu", "rtx-pro-6000", "--build", "vllm-0.24.0", *serve))


# --- the survey record ----------------------------------------------------------------------------------------------


def test_the_field6_survey_names_what_it_added_and_why_it_left_the_rest(cli):
    doc = yaml.safe_load(SURVEY.read_text())
    assert doc["surveyed"] == "2026-12-07"
    added = {i for e in doc["entries"] for i in e["catalog"]}
    assert {K3_NVFP4, "llama.cpp-b9905"} <= added
    families = {f for e in doc["entries"] for f in e["families"]}
    for family in ("qwen3.5-27b", "qwen3.6-35b-a3b", "gemma-4-31b", "mimo-v2-flash", "nemotron-3-super-120b-a12b"):
        assert family in families, family
    for entry in doc["entries"]:
        assert entry["sources"] and all(s.startswith("https://") for s in entry["sources"])
    result = cli("validate")
    assert result.code == 0, result.err


# --- MiniMax-M2 GGUFs on upstream llama.cpp: loaded by b9333, before DeepSeek-V4 landed -------------------------------


def test_history_of_a_minimax_gguf_on_llama_cpp_flips_at_b9333_not_b9840(cli):
    args = ("--variant", "gguf-apex-i-compact")
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-pro-6000", "minimax-m2.7", 2, *args))
    assert builds["llama.cpp-b8036"]["gate"] == "architecture" and builds["llama.cpp-b8036"]["verdict"] == "blocked"
    for loads in ("llama.cpp-b9333", "llama.cpp-b9334", "llama.cpp-b9840"):
        assert builds[loads]["gate"] != "architecture", loads
    plan = explain(
        cli,
        "--gpu",
        "rtx-pro-6000",
        "--gpus",
        "2",
        "--model",
        "minimax-m2.7",
        "--engine",
        "llama.cpp",
        *args,
        "--as-of",
        "2026-06-01",
    )["plans"][0]
    assert plan["build"] == "llama.cpp-b9334"
