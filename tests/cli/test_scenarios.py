"""The seeds' scenarios, end to end through the CLI (explain --format json and generate)."""

from __future__ import annotations

import json
import re
from collections import defaultdict

from tests.support.contract import rejections


def explain(cli, *args):
    result = cli("explain", "--format", "json", *args)
    assert result.code == 0, result.err
    return result.json()


def failing(doc, build, variant):
    return [(r["gate"], r["outcome"]) for r in rejections(doc) if r["build"] == build and r["variant"] == variant]


def reason(doc, build, variant, gate):
    return next(r["reason"] for r in rejections(doc) if (r["build"], r["variant"], r["gate"]) == (build, variant, gate))


def test_glm53_flash_fp8_on_rtx4090_is_a_kernel_wall_not_an_fp8_problem(cli):
    stock = explain(
        cli, "--gpu", "rtx-4090", "--model", "glm-5.3-flash", "--engine", "vllm", "--gpus", "8", "--variant", "fp8"
    )
    assert stock["verdict"] == "blocked"
    # FP8 is not the problem: the weight-format gate passes on sm89 in every build that loads the model
    assert failing(stock, "vllm-0.33.0", "fp8") == [("kernel", "fail"), ("memory", "fail")]
    assert failing(stock, "vllm-glm53-flash-image", "fp8")[0] == ("kernel", "fail")
    kernel = reason(stock, "vllm-glm53-flash-image", "fp8", "kernel")
    assert "attention.sparse_mla_nope" in kernel and "sm89" in kernel
    # with 48 GB cards only the kernel wall remains
    big = explain(
        cli,
        "--gpu",
        "rtx-4090",
        "--gpu-memory",
        "48",
        "--model",
        "glm-5.3-flash",
        "--engine",
        "vllm",
        "--gpus",
        "8",
        "--variant",
        "fp8",
    )
    assert failing(big, "vllm-0.33.0", "fp8") == [("kernel", "fail")]
    assert big["request"]["gpu_memory_gib"] == 48


def test_blocked_explanation_lists_alternatives(cli):
    # the official release: the sm89 fork runs the model once weights go to host RAM (offload)
    text = cli(
        "explain",
        "--gpu",
        "rtx-4090",
        "--model",
        "glm-5.3-flash",
        "--engine",
        "vllm",
        "--build",
        "vllm==0.33.0",
        "--gpus",
        "8",
    ).out
    assert "VERDICT: blocked" in text
    advice = text.split("What would make it run:", 1)[1]
    assert "the kernel wall: no attention.sparse_mla_nope kernel for sm89" in advice
    assert re.search(r"on [1248]×h200: runs with", advice), advice  # at the fewest H200s that hold it


def test_rtx_pro_6000_verdict_follows_the_build(cli):
    old = explain(
        cli,
        "--gpu",
        "rtx-pro-6000",
        "--model",
        "glm-5.3-flash",
        "--build",
        "vllm-glm53-flash-image",
        "--gpus",
        "4",
        "--variant",
        "fp8",
    )
    assert old["verdict"] == "blocked"
    assert ("kernel", "fail") in failing(old, "vllm-glm53-flash-image", "fp8")
    new = explain(
        cli, "--gpu", "rtx-pro-6000", "--model", "glm-5.3-flash", "--engine", "vllm", "--gpus", "4", "--variant", "fp8"
    )
    top = new["plans"][0]
    assert (top["build"], top["variant"]) == ("vllm-0.33.0", "fp8")
    # the SM120 sparse-MLA backend of 0.31.0 and 0.33.0 (both selectors run) takes the NoPE shape with FP8 KV, not bf16
    assert {"flag": "--kv-cache-dtype", "value": "fp8_e4m3"}.items() <= next(
        f for f in top["flags"] if f["flag"] == "--kv-cache-dtype"
    ).items()
    change = next(c for c in new["changes"] if c["gate"] == "kernel")
    assert change["before"]["build"] == "vllm-0.30.0" and change["after"]["build"] == "vllm-0.31.0"
    assert "FLASHINFER_MLA_SPARSE_SM120" in change["after"]["reason"]
    text = cli("explain", "--gpu", "rtx-pro-6000", "--model", "glm-5.3-flash", "--engine", "vllm", "--gpus", "4").out
    assert "passes since vllm-0.31.0 (2026-10-05)" in text


def test_glm52_on_a100_runs_only_via_nvfp4_on_the_sm80_image(cli):
    doc = explain(cli, "--gpu", "sm80", "--model", "glm-5.2", "--engine", "vllm")
    assert doc["request"]["hardware"] == "a100-80gb" and doc["request"]["gpus_per_node"] == 8
    # the curated seed image first, then the same publisher's later image (PR #47629), both NVFP4; the
    # Int4-Int8Mix (its size estimated) ranks after them, with the deployment report's A100 defect said
    assert [(p["build"], p["variant"]) for p in doc["plans"][:2]] == [
        ("vllm-glm52-sm80-pr38476", "nvfp4"),
        ("vllm-glm52-sm80-pr47629", "nvfp4"),
    ]
    # the PR author's own earlier nightly (2026-06-06, found by the Ampere survey) runs NVFP4 too, after both
    assert (doc["plans"][2]["build"], doc["plans"][2]["variant"]) == ("vllm-glm5-sm80-haosdent-nightly", "nvfp4")
    for later in doc["plans"][3:]:
        assert later["variant"] == "int4-int8mix"
        assert any(n.startswith("known defect: An 8×A100 deployment report") for n in later["notes"])
    flags = {f["flag"]: f["value"] for f in doc["plans"][0]["flags"]}
    assert flags["--kv-cache-dtype"] == "bfloat16"
    assert flags["--max-model-len"] == "131072" and flags["--max-num-seqs"] == "4"
    assert (flags["--tool-call-parser"], flags["--reasoning-parser"]) == ("glm47", "glm45")
    assert "TRITON_MLA_SPARSE" in doc["plans"][0]["gates"][2]["reason"]
    assert ("kernel", "fail") in failing(doc, "vllm-0.33.0", "fp8")
    assert ("kernel", "fail") in failing(doc, "vllm-0.33.0", "int4-int8mix")
    assert "sm89" not in reason(doc, "vllm-0.33.0", "fp8", "kernel") and "sm80" in reason(
        doc, "vllm-0.33.0", "fp8", "kernel"
    )
    assert failing(doc, "vllm-glm52-sm80-pr38476", "bf16") == [("memory", "fail")]


def test_deepseek_v4_flash_on_a100_runs_on_the_llamacpp_fork(cli):
    for name in ("deepseek-v4-flash", "deepseek-v4-flash-0731"):
        doc = explain(cli, "--gpu", "a100", "--model", name, "--gpus", "8")
        top = doc["plans"][0]
        assert (top["engine"], top["build"], top["status"]) == ("llama.cpp", "llama.cpp-nisparks-dsv4", "community")
        assert ("kernel", "fail") in failing(doc, "vllm-0.33.0", "0731")
        assert "sm80" in reason(doc, "vllm-0.33.0", "0731", "weight-format")


def test_glm53_flash_nvfp4_on_two_sparks(cli):
    doc = explain(cli, "--gpu", "dgx-spark", "--model", "glm-5.3-flash", "--nodes", "2")
    top = doc["plans"][0]
    assert (top["engine"], top["build"], top["deployment"]) == (
        "sglang",
        "sglang-glm53-flash-arm64",
        "glm-5.3-flash-nvfp4-2xgb10-sglang",
    )
    flags = {f["flag"]: f["value"] for f in top["flags"]}
    assert flags["--dsa-prefill-backend"] == flags["--dsa-decode-backend"] == "tilelang"
    assert flags["--kv-cache-dtype"] == "bfloat16" and "--disable-shared-experts-fusion" in flags
    assert (flags["--reasoning-parser"], flags["--tool-call-parser"]) == ("glm45", "glm47")
    assert any("block_I=32, num_stages=1, threads=128" in note for note in top["notes"])
    vllm = explain(cli, "--gpu", "gb10", "--model", "glm-5.3-flash", "--nodes", "2", "--engine", "vllm")
    plan = vllm["plans"][0]
    assert {"flag": "--reasoning-parser", "value": "deepseek_r1"}.items() <= next(
        f for f in plan["flags"] if f["flag"] == "--reasoning-parser"
    ).items()
    assert any("hand-written sparse-MLA CUDA kernel fix" in note for note in plan["notes"])


def test_h200_gets_the_official_seed_commands(cli):
    glm = explain(cli, "--gpu", "h200", "--model", "glm-5.2", "--gpus", "8")
    top = glm["plans"][0]
    assert (top["deployment"], top["build"], top["variant"]) == (
        "glm-5.2-int4-int8mix-8xh200-vllm",
        "vllm-0.33.0",
        "int4-int8mix",
    )
    argv = top["argv"]
    for pair in (
        ["--quantization", "compressed-tensors"],
        ["--kv-cache-dtype", "fp8"],
        ["--max-model-len", "auto"],
        ["--speculative-config.method", "mtp"],
        ["--max-num-seqs", "32"],
    ):
        assert any(argv[i : i + 2] == pair for i in range(len(argv))), pair
    dsv4 = explain(cli, "--gpu", "h200", "--model", "deepseek-v4-flash", "--gpus", "8")
    top = dsv4["plans"][0]
    assert (top["deployment"], top["variant"]) == ("deepseek-v4-flash-0731-8xh200-vllm", "0731")
    assert '{"method":"dspark","num_speculative_tokens":7,"draft_sample_method":"probabilistic"}' in top["argv"]
    # the seed warns the 1M default eats the KV cache: a planned --max-model-len is added
    assert "--max-model-len" in top["argv"]


def test_gpus_default_takes_the_smallest_size_that_runs(cli):
    doc = explain(cli, "--gpu", "h100", "--model", "qwen3-32b")
    assert doc["request"]["gpus_per_node"] == 1
    assert "smallest usual size" in doc["request"]["layout_note"]
    big = explain(cli, "--gpu", "a100", "--model", "llama-3.1-405b")
    # 405B fits 4 × 80 GB as 4-bit AWQ (its size estimated from the parameters, said so); BF16 would need 16
    assert big["request"]["gpus_per_node"] == 4 and "tried 1, 2 first" in big["request"]["layout_note"]
    assert big["plans"][0]["quant"] == "awq"


def test_gpus_default_prefers_a_larger_size_to_a_checkpoint_below_4_bits(cli):
    """4 x A100 hold GLM-5.2 only as Unsloth's 2-bit GGUF; 8 hold NVFP4: the default size is 8, and the note
    names the smaller size with the flag that plans it."""
    doc = explain(cli, "--gpu", "sm80", "--model", "glm-5.2")
    assert doc["request"]["gpus_per_node"] == 8 and doc["plans"][0]["quant"] == "nvfp4"
    assert "4 GPU(s) run only a checkpoint below 4 bits per weight (--gpus 4 plans it)" in doc["request"]["layout_note"]
    pinned = explain(cli, "--gpu", "sm80", "--gpus", "4", "--model", "glm-5.2")
    assert pinned["plans"][0]["variant"] == "gguf"


def test_json_contract_shape(cli):
    doc = explain(cli, "--gpu", "sm80", "--model", "glm-5.2", "--engine", "vllm")
    assert doc["schema"] == "recipegen.resolution/3"
    assert set(doc) >= {"schema", "request", "verdict", "plans", "rejected", "reasons", "sources"}
    # repeated text is written once: a reason shared by many rejected paths, a source cited by many flags
    assert len(doc["reasons"]) < len(doc["rejected"])
    assert len({json.dumps(s, sort_keys=True) for s in doc["sources"].values()}) == len(doc["sources"])
    cited = {s for p in doc["plans"] for f in p["flags"] for s in f["sources"]} | {
        s for r in doc["reasons"].values() for s in r["sources"]
    }
    assert cited <= set(doc["sources"]) and all(s["url"] for s in doc["sources"].values())
    plan = doc["plans"][0]
    assert set(plan) >= {
        "rank",
        "engine",
        "build",
        "image",
        "variant",
        "repo",
        "status",
        "gpus",
        "nodes",
        "argv",
        "flags",
        "env",
        "memory",
        "notes",
        "sources",
    }
    assert {r["gate"] for r in rejections(doc)} <= {
        "architecture",
        "weight-format",
        "kernel",
        "platform",
        "memory",
        "topology",
    }
    per_candidate = defaultdict(list)
    for r in rejections(doc):
        per_candidate[(r["engine"], r["build"], r["variant"])].append(r["gate"])
    assert any(len(gates) >= 2 for gates in per_candidate.values()), "a candidate blocked twice appears twice"


def test_a_measured_load_time_is_the_one_load_figure_every_output_prints(cli, tmp_path):
    """The sm80 GLM-5.2 recipe's source measured 15–25 minutes to load: explain, the folder's README and plan.json
    say that figure for the recipe's plan, and none states a second, estimated one beside it."""
    args = ("--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2")
    first_speed = next(line for line in cli("explain", *args, "--verbose").out.splitlines() if "speed (" in line)
    assert "loading takes 15–25 min (as the recipe's source measured)" in first_speed
    assert "weights load in ~" not in first_speed
    out = tmp_path / "out"
    assert cli("generate", *args, "--out", str(out)).code == 0
    readme = (out / "README.md").read_text()
    assert "loading takes 15–25 min" in readme and "weights load in ~" not in readme
    plan = json.loads((out / "plan.json").read_text())["plans"][0]
    assert plan["speed"]["load_minutes_reported"] == [15, 25]
