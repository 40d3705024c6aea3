"""Releases known from their harvested code (data/harvest/) are answered, listed and linted, through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.contract import rejections

ROOT = Path(__file__).resolve().parents[2]


def test_build_of_a_2025_vllm_release_answers_from_its_own_facts():
    result = run_cli(
        "explain", "--gpu", "h100", "--model", "llama-3.3-70b", "--build", "vllm==0.8.5", "--format", "json"
    )
    assert result.code == 0, result.err
    data = result.json()
    assert "older than the oldest" not in result.err
    builds = {p["build"] for p in data["plans"]} | {r["build"] for r in rejections(data)}
    assert builds == {"vllm-0.8.5"}
    # its own wheel's selector and quantization code decide: FLASH_ATTN (CC >= 8.0) and native FP8 on Hopper
    assert data["verdict"] == "runnable"
    first = data["plans"][0]
    gates = {g["gate"]: g for g in first["gates"]}
    assert gates["kernel"]["reason"] == "sm90: FLASH_ATTN (attention.gqa)"
    cited = data["sources"].values()
    kernel = [s for s in cited if s["note"].startswith("FLASH_ATTN (attention.gqa), its selector's conditions")]
    assert kernel and kernel[0]["url"] == "https://pypi.org/project/vllm/0.8.5/" and not kernel[0].get("unverified")


def _gates(result, variant):
    """A plan's gates, or a rejected path's deciding gate, for one variant: gate -> {outcome, reason}."""
    data = result.json()
    plan = next((p for p in data["plans"] if p["variant"] == variant), None)
    if plan is not None:
        return {g["gate"]: g for g in plan["gates"]}
    row = next(r for r in rejections(data) if r["variant"] == variant)
    return {row["gate"]: {"outcome": row["outcome"], "reason": row["reason"]}}


def test_old_vllm_releases_give_real_verdicts_from_their_own_wheels():
    def explain(gpu, model, build, *more):
        return run_cli("explain", "--gpu", gpu, "--model", model, "--build", build, *more, "--format", "json")

    llama = explain("h100", "llama-3.1-8b", "vllm==0.8.5")
    assert llama.json()["verdict"] == "runnable"
    assert "--kv-cache-dtype auto" in " ".join(llama.json()["plans"][0]["argv"])  # 0.8.5 has no "bfloat16" choice
    # A100: FP8 weights through Marlin below 8.9 (Fp8LinearMethod's has_device_capability(89)); BF16 native
    a100 = explain("a100", "llama-3.1-8b", "vllm==0.8.5")
    assert "runs through Marlin FP8 (W8A16)" in _gates(a100, "fp8")["weight-format"]["reason"]
    assert _gates(a100, "bf16")["weight-format"]["outcome"] == "pass"
    # V100 (7.0): no bfloat16 (the worker's check) but --dtype half; attention falls back to XFORMERS
    v100 = explain("v100", "llama-3.1-8b", "vllm==0.8.5")
    assert _gates(v100, "bf16")["kernel"]["reason"] == "sm70: XFORMERS (attention.gqa)"
    assert "FP16 cast" in _gates(v100, "bf16")["weight-format"]["reason"]
    # DeepSeek-V3 on H100: FlashMLA (Hopper only in is_flashmla_supported); on A100 block FP8 has no Marlin in 0.8.5
    dsv3 = explain("h200", "deepseek-v3", "vllm==0.8.5", "--gpus", "8")
    assert dsv3.json()["verdict"] == "runnable"
    assert "FLASHMLA (attention.mla)" in dsv3.json()["plans"][0]["gates"][2]["reason"]
    a100_dsv3 = explain("a100", "deepseek-v3", "vllm==0.8.5", "--gpus", "8")
    assert "no fp8_block kernel for sm80" in _gates(a100_dsv3, "fp8")["weight-format"]["reason"]
    # vLLM 0.6.3's wheel carries cubins for 7.x-9.x only: a Blackwell GPU is not a target, nor of its kernels
    b200 = explain("b200", "llama-3.1-8b", "vllm==0.6.3")
    assert b200.json()["verdict"] == "blocked"
    shown = run_cli("explain", "--gpu", "b200", "--model", "llama-3.1-8b", "--build", "vllm==0.6.3", "--verbose").out
    assert "vllm-0.6.3 (CUDA 12) is not compiled for sm100 (targets: 7.x, 8.x, 9.x)" in shown
    assert "FLASH_ATTN: needs 8.x, 9.x; XFORMERS: needs 7.x, 8.x, 9.x" in shown
    # 0.6.x has no MLA backend: that fact is left unknown, not carried as a claim
    old_mla = explain("h200", "deepseek-v3", "vllm==0.6.6", "--gpus", "8")
    assert old_mla.json()["verdict_detail"] == "unknown"
    assert _gates(old_mla, "fp8")["kernel"]["outcome"] == "unknown"
    # a 2024 release: FP8 weights in 0.5.3.post1 run natively on Hopper, AWQ from 7.5 (get_min_capability 75)
    # (0.5.3 itself cannot read Llama 3.1's rope_scaling: tests/cli/test_rope_scaling.py)
    old = explain("h100", "llama-3.1-8b", "vllm==0.5.3.post1")
    assert old.json()["verdict"] == "runnable"
    assert _gates(explain("t4", "llama-3.1-8b", "vllm==0.5.3.post1"), "awq")["weight-format"]["outcome"] == "pass"


def test_sglang_0_4_6_gives_real_verdicts_from_its_own_wheel():
    result = run_cli("explain", "--gpu", "h100", "--model", "qwen3-8b", "--build", "sglang==0.4.6", "--format", "json")
    data = result.json()
    assert data["verdict"] == "runnable"
    # fa3 is the default only where is_hopper_with_cuda_12_3() holds (major 9)
    assert _gates(result, "bf16")["kernel"]["reason"] == "sm90: fa3 (attention.gqa)"
    a100 = run_cli("explain", "--gpu", "a100", "--model", "qwen3-8b", "--build", "sglang==0.4.6", "--format", "json")
    assert _gates(a100, "bf16")["kernel"]["reason"] == "sm80: flashinfer (attention.gqa)"


def test_build_of_sglang_0_4_6_uses_that_release_s_parser_registry():
    from recipegen.catalog import harvest

    result = run_cli("explain", "--gpu", "h100", "--model", "qwen3-8b", "--build", "sglang==0.4.6")
    assert "older than the oldest" not in result.err
    assert "--build sglang==0.4.6 → SGLang 0.4.6 = build sglang-0.4.6" in result.out
    # SGLang 0.4.6's DetectorMap holds deepseek-r1 only (sglang/srt/reasoning_parser.py in its wheel)
    found = harvest.load("sglang", "0.4.6")
    assert found is not None and found.reasoning_parsers == ("deepseek-r1",)


def test_lint_names_the_release_that_added_a_flag_the_named_release_lacks():
    args = ("docker", "run", "vllm/vllm-openai:v0.8.5", "--model", "Qwen/Qwen3-8B", "--async-scheduling")
    result = run_cli("lint", "--gpu", "a100", "--format", "json", "--", *args, "--kv_cache_dtype", "auto")
    findings = [f for f in result.json()["findings"] if f["code"] == "flag-not-in-release"]
    assert [(f["flag"], f["fix"]) for f in findings] == [
        ("--async-scheduling", "use vllm==0.10.0 or later, or drop --async-scheduling")
    ]
    assert "vLLM added it in 0.10.0" in findings[0]["why"]
    assert findings[0]["sources"][0] == "https://pypi.org/project/vllm/0.8.5/"


def test_a_plan_on_a_capability_added_to_a_release_s_run_names_the_backend_that_release_picks():
    """vLLM 0.26.0-0.20.1's selectors, run on simulated SM 10.3 and 7.5 as well (`--merge`), pick
    FlashInfer for GQA on B300 as on B200, where a plan named FLASH_ATTN (the catalog's first kernel that fits) before
    10.3 was run; for gpt-oss's sinks 0.25.0-0.20.1 pick FlashInfer's TRT-LLM kernels there, 0.26.0 FlashAttention.
    On T4 the run confirms Triton attention, the only kernel these releases take there for these heads."""

    def kernel(gpu, model, release):
        result = run_cli("explain", "--gpu", gpu, "--model", model, "--build", f"vllm=={release}", "--format", "json")
        assert result.code == 0, result.err
        plan = result.json()["plans"][0]
        return next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel")

    assert kernel("b300", "llama-3.1-8b", "0.26.0") == "sm103: FLASHINFER (attention.gqa)"
    assert kernel("b200", "llama-3.1-8b", "0.26.0") == "sm100: FLASHINFER (attention.gqa)"
    assert kernel("t4", "llama-3.1-8b", "0.26.0") == "sm75: TRITON_ATTN (attention.gqa)"
    for release in ("0.22.0", "0.21.0", "0.20.1"):
        assert kernel("b300", "qwen3-32b", release) == "sm103: FLASHINFER (attention.gqa)", release
    for release in ("0.25.0", "0.24.0", "0.23.0", "0.22.0", "0.21.0", "0.20.1"):
        sinks = kernel("b300", "gpt-oss-20b", release)
        assert sinks == "sm103: FLASHINFER (attention.gqa), FLASHINFER (trtllm-gen) (attention.sinks)", release
    assert (
        kernel("b300", "gpt-oss-20b", "0.26.0")
        == "sm103: FLASHINFER (attention.gqa), FLASH_ATTN (FA3/FA4) (attention.sinks)"
    )


def _sglang_pick(release, capability, shape, kv="auto"):
    """The attention backend an SGLang release resolves to by default for one stand-in shape (its ran table)."""
    from recipegen.catalog import harvest

    cases = harvest.ran("sglang", release)["attention_selector"]["cases"]
    found = {
        c["resolved"]["attention_backend"]
        for c in cases
        if c["asked"] is None and "resolved" in c and (c["capability"], c["shape"], c["kv"]) == (capability, shape, kv)
    }
    assert len(found) == 1, found
    return found.pop()


@pytest.mark.parametrize("release", ["0.5.19", "0.5.18"])
def test_an_sglang_plan_on_a_gpu_added_to_its_run_names_the_backend_that_release_picks(release):
    """SGLang 0.5.19 first ran on 8.0/9.0/10.0/12.0, 0.5.18 on those and 8.6/8.9; the other GPUs were added with
    --merge. Resolved on a simulated B300 both pick trtllm_mha for Llama and for gpt-oss's sinks, as on B200, where a
    plan named flashinfer and triton (the catalog's first kernels that fit) before; on GB10 (12.1) triton for gpt-oss,
    as on 12.0, where a plan named flashinfer for its full-attention layers; on Ada and Ampere consumer cards flashinfer
    for Llama and triton for gpt-oss, where a 0.5.19 plan named fa3."""

    def kernel(gpu, model):
        result = run_cli("explain", "--gpu", gpu, "--model", model, "--build", f"sglang=={release}", "--format", "json")
        assert result.code == 0, result.err
        return next(g["reason"] for g in result.json()["plans"][0]["gates"] if g["gate"] == "kernel")

    assert (_sglang_pick(release, 103, "gqa"), _sglang_pick(release, 103, "sinks")) == ("trtllm_mha", "trtllm_mha")
    assert kernel("b300", "llama-3.1-8b") == "sm103: trtllm_mha (attention.gqa)"
    assert kernel("b300", "gpt-oss-20b") == "sm103: trtllm_mha (attention.gqa), trtllm_mha (sinks) (attention.sinks)"
    assert (_sglang_pick(release, 89, "gqa"), _sglang_pick(release, 86, "sinks")) == ("flashinfer", "triton")
    assert kernel("rtx-4090", "llama-3.1-8b") == "sm89: flashinfer (attention.gqa)"
    assert kernel("rtx-3090", "gpt-oss-20b") == "sm86: triton (attention.gqa), triton (attention.sinks)"
    assert _sglang_pick(release, 121, "sinks") == "triton"
    assert kernel("dgx-spark", "gpt-oss-20b") == "sm121: triton (attention.gqa), triton (attention.sinks)"


def test_a_t4_plan_on_vllm_0_22_0_and_0_23_0_steers_off_the_flashinfer_backend_its_selector_picks_there():
    """vLLM 0.22.0's and 0.23.0's selectors, run on simulated SM 7.5, pick FLASHINFER first for GQA at head size 128,
    and on a T4 the FlashInfer they pin dies at the first request (vllm#44379, flashinfer#3620): the plan passes
    --attention-backend TRITON_ATTN and says why, which no plan of 0.21.0 (FlashInfer 0.6.8, which serves there) or
    0.26.0 (whose selector takes Triton there itself) passes."""
    for release in ("0.22.0", "0.23.0"):
        result = run_cli(
            "explain", "--gpu", "t4", "--model", "llama-3.1-8b", "--build", f"vllm=={release}", "--format", "json"
        )
        assert result.code == 0, result.err
        plans = result.json()["plans"]
        assert plans and all(p["build"] == f"vllm-{release}" for p in plans)
        for plan in plans:
            argv = plan["argv"]
            assert argv[argv.index("--attention-backend") + 1] == "TRITON_ATTN", (release, plan["variant"])
            kernel = next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel")
            assert kernel == "sm75: TRITON_ATTN (attention.gqa)", release
            defect = {"0.22.0": "vllm-0.22-t4-flashinfer-paged-prefill-invalid-argument"}.get(
                release, "vllm-0.23-sm75-flashinfer-prefill"
            )
            assert defect in {d["id"] for d in plan["build_defects"]}, release
    for release in ("0.21.0", "0.26.0"):
        other = run_cli(
            "explain", "--gpu", "t4", "--model", "llama-3.1-8b", "--build", f"vllm=={release}", "--format", "json"
        )
        assert other.code == 0 and other.json()["plans"], release
        assert all("--attention-backend" not in p["argv"] for p in other.json()["plans"]), release


def test_sglang_plans_on_b300_and_t4_say_what_the_release_does_there():
    """SGLang 0.5.9, run on simulated SM 10.3 and 7.5 as well (`--merge`), picks trtllm_mha for GQA and gpt-oss's sinks
    on B300 as on B200, where a plan named flashinfer and triton (the catalog's first kernels that fit) before 10.3 was
    run. On a T4 its resolution picks flashinfer and its ModelRunner switches a bf16 model to float16, but the
    sgl-kernel it pins carries no sm75 code (cubins for sm80 and up, read from the wheel): the plan stops at the
    platform with that source, while 0.4.9, whose sgl-kernel has sm75 cubins, runs a bf16 model through that
    float16 switch (no --dtype flag: SGLang makes it itself)."""

    from recipegen.catalog import harvest

    def explain(gpu, model, release):
        result = run_cli("explain", "--gpu", gpu, "--model", model, "--build", f"sglang=={release}", "--format", "json")
        assert result.code == 0, result.err
        return result

    def kernel(gpu, model, release):
        plan = explain(gpu, model, release).json()["plans"][0]
        return next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel")

    assert 103 in harvest.ran("sglang", "0.5.9")["attention_selector"]["capabilities"]
    assert kernel("b300", "llama-3.1-8b", "0.5.9") == "sm103: trtllm_mha (attention.gqa)"
    assert (
        kernel("b300", "gpt-oss-20b", "0.5.9")
        == "sm103: trtllm_mha (attention.gqa), trtllm_mha (sinks) (attention.sinks)"
    )

    t4 = explain("t4", "qwen3-4b-instruct-2507", "0.5.9")
    assert t4.json()["verdict"] == "blocked"
    refused = _gates(t4, "bf16")["platform"]
    assert refused["reason"] == "sglang-0.5.9 (CUDA 12.9) is not compiled for sm75 (targets: >=8.0)"
    cited = [s for r in rejections(t4.json()) if r["gate"] == "platform" for s in r["sources"]]
    assert any(s["url"] == "https://pypi.org/project/sgl-kernel/0.3.21/" and "sm_75" in s["note"] for s in cited)

    older = explain("t4", "qwen3-4b-instruct-2507", "0.4.9")
    gates = _gates(older, "bf16")
    assert gates["weight-format"]["reason"].startswith("bf16 has no native kernel on sm75; runs through FP16 cast")
    assert gates["kernel"]["reason"] == "sm75: flashinfer (attention.gqa)"
    argv = older.json()["plans"][0]["argv"]
    assert "--dtype" not in argv and "--kv-cache-dtype" not in argv


def test_sglang_0_5_2_resolves_on_a_t4_and_a_v100_but_its_sgl_kernel_has_no_code_there():
    """SGLang 0.5.2, run on simulated sm_70 as well (`--merge`), resolves flashinfer for a Llama-shaped model on a V100
    as on a T4: its arguments do not stop either GPU. The sgl-kernel 0.3.9.post2 it pins does (cubins for sm80 and up,
    no PTX, read from the wheel): both plans stop at the platform with that source. Before, 0.5.2 listed 7.5 and planned
    flashinfer on a T4, a kernel library it does not ship."""
    from recipegen.catalog import harvest

    tables = harvest.ran("sglang", "0.5.2")
    picks = {
        c["capability"]: c["resolved"]["attention_backend"]
        for c in tables["attention_selector"]["cases"]
        if (c["shape"], c["kv"], c["asked"]) == ("gqa", "auto", None) and c["capability"] < 80
    }
    assert picks == {70: "flashinfer", 75: "flashinfer"}
    for gpu, sm in (("t4", "sm75"), ("v100", "sm70")):
        result = run_cli(
            "explain", "--gpu", gpu, "--model", "llama-3.1-8b", "--build", "sglang==0.5.2", "--format", "json"
        )
        assert result.code == 0, result.err
        data = result.json()
        assert data["verdict"] == "blocked" and not data["plans"], gpu
        platform = [r for r in rejections(data) if r["gate"] == "platform"]
        assert {r["variant"] for r in platform} >= {"bf16", "gptq"}, gpu
        assert {r["reason"] for r in platform} == {
            f"sglang-0.5.2 (CUDA 12.6) is not compiled for {sm} (targets: 8.0, 8.6, 8.9, 9.0)"
        }
        cited = [s for r in platform for s in r["sources"]]
        assert any(
            s["url"] == "https://pypi.org/project/sgl-kernel/0.3.9.post2/" and "nothing for sm_75 or sm_70" in s["note"]
            for s in cited
        ), gpu


def test_sglang_0_5_0rc2_runs_on_a_t4_and_the_history_stops_there_at_0_5_2():
    """0.5.0rc2's sgl-kernel 0.3.5 still carries sm_75 cubins (no sm_70): a T4 plans a bf16 model through the release's
    own float16 switch on the flashinfer its sm_75 run picks, a V100 stops at the platform with that wheel as source
    (its sm_70 run, added with `--merge`, resolves flashinfer there too: the arguments are not what stops it), and a
    T4's history turns blocked at 0.5.2, whose sgl-kernel 0.3.9.post2 dropped sm_75, not at 0.5.3 as it did."""
    from recipegen.catalog import harvest

    selector = harvest.ran("sglang", "0.5.0rc2")["attention_selector"]
    assert {70, 103, 110, 121} <= set(selector["capabilities"])
    (picked,) = [
        c["resolved"]["attention_backend"]
        for c in selector["cases"]
        if (c["capability"], c["shape"], c["kv"], c["asked"]) == (70, "gqa", "auto", None)
    ]
    assert picked == "flashinfer"

    def explain(gpu):
        return run_cli(
            "explain", "--gpu", gpu, "--model", "llama-3.1-8b", "--build", "sglang==0.5.0rc2", "--format", "json"
        )

    t4 = explain("t4")
    assert t4.code == 0 and t4.json()["verdict"] == "runnable", t4.err
    gates = _gates(t4, "bf16")
    assert gates["weight-format"]["reason"].startswith("bf16 has no native kernel on sm75; runs through FP16 cast")
    assert gates["kernel"]["reason"] == "sm75: flashinfer (attention.gqa)"
    assert gates["platform"]["outcome"] == "pass"

    v100 = explain("v100")
    assert v100.code == 0 and v100.json()["verdict"] == "blocked", v100.err
    platform = [r for r in rejections(v100.json()) if r["gate"] == "platform"]
    assert {r["reason"] for r in platform} == {
        "sglang-0.5.0rc2 (CUDA 12.6) is not compiled for sm70 (targets: 7.5, 8.0, 8.6, 8.9, 9.0)"
    }
    cited = [s for r in platform for s in r["sources"]]
    assert any(s["url"] == "https://pypi.org/project/sgl-kernel/0.3.5/" and "sm_75" in s["note"] for s in cited)

    history = run_cli("history", "--gpu", "t4", "--model", "llama-3.1-8b", "--engine", "sglang", "--format", "json")
    assert history.code == 0, history.err
    (sglang,) = history.json()["engines"]
    (flip,) = [f for f in sglang["flips"] if f["change"].startswith("platform fails")]
    assert (flip["from"], flip["to"]) == ("sglang-0.5.0rc2", "sglang-0.5.2")


def test_sglang_0_5_10_run_on_every_gpu_names_its_b300_picks_and_keeps_its_t4_stop():
    """SGLang 0.5.10's first run (8.0-12.0) stamped no nvidia-cutlass-dsl, so the other GPUs could not be merged into
    it: all 11 were run again in one venv. On a simulated B300 (10.3) it resolves as on B200, so its plans name
    trtllm_mha for Llama's GQA and gpt-oss's sinks and trtllm_mla for DeepSeek-V3's MLA, where they named flashinfer,
    triton and flashinfer MLA (the catalog's first kernels that fit) before 10.3 was run. On a T4 its resolution
    picks flashinfer as on 8.0, but sglang-kernel 0.4.1 has no sm75 code: the plan still stops at the platform."""
    from recipegen.catalog import harvest

    tables = harvest.ran("sglang", "0.5.10")
    assert {75, 103}.issubset(tables["attention_selector"]["capabilities"]) and "earlier_run" not in tables

    def explain(gpu, model, *more):
        result = run_cli(
            "explain", "--gpu", gpu, "--model", model, "--build", "sglang==0.5.10", *more, "--format", "json"
        )
        assert result.code == 0, result.err
        return result

    def kernel(gpu, model, *more):
        plan = explain(gpu, model, *more).json()["plans"][0]
        assert "--attention-backend" not in plan["argv"]  # the release picks it itself: nothing pinned
        return next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel")

    assert kernel("b300", "llama-3.1-8b") == "sm103: trtllm_mha (attention.gqa)"
    sinks = kernel("b300", "gpt-oss-20b")
    assert sinks == "sm103: trtllm_mha (attention.gqa), trtllm_mha (sinks) (attention.sinks)", sinks
    assert kernel("b300", "deepseek-v3", "--gpus", "8") == "sm103: trtllm_mla (MLA) (attention.mla)"

    assert harvest.load("sglang", "0.5.10").picked["gqa"]["auto"]["75"] == "flashinfer"
    t4 = explain("t4", "qwen3-4b-instruct-2507")
    assert t4.json()["verdict"] == "blocked"
    assert _gates(t4, "bf16")["platform"]["reason"] == (
        "sglang-0.5.10 (CUDA 12.9) is not compiled for sm75 (targets: >=8.0)"
    )
    cited = [s for r in rejections(t4.json()) if r["gate"] == "platform" for s in r["sources"]]
    assert any(s["url"] == "https://pypi.org/project/sglang-kernel/0.4.1/" and "sm_75" in s["note"] for s in cited)


def test_list_engines_json_says_per_release_which_tables_are_harvested_and_how():
    rows = run_cli("list", "engines", "--format", "json").json()
    by_release = {(r["engine"], r.get("release") or r["build"]): r for r in rows}
    official = by_release[("vllm", "vllm-0.33.0")]["harvested"]
    assert official["tables"]["architectures"] == {
        "method": "read",
        "from": "vllm/model_executor/models/registry.py",
        "count": 415,
    }
    # the selector and quantization tables were run (the release's own code on simulated GPUs), not read
    selector = official["tables"]["attention_selector"]
    assert (selector["method"], selector["file"]) == ("ran", "data/harvest/vllm/0.33.0.ran.json")
    assert selector["count"] == 11 * 147 and selector["from"].startswith("vllm/platforms/cuda.py")
    assert official["tables"]["quantization"]["method"] == "ran" and official["not_harvested"] == []
    assert len(official["sha256"]) == 64
    # a release with a file whose selector was not run says so (whichever is left; none, once all were run)
    unrun = [
        r["harvested"]
        for r in rows
        if r["engine"] == "vllm" and r["build"] and (r["harvested"] or {}).get("not_harvested")
    ]
    assert all(h["not_harvested"] == ["attention_selector", "quantization"] for h in unrun)
    # 8.0-12.0 first, the other five merged
    for release in ("vllm-0.29.0", "vllm-0.28.0", "vllm-0.27.1", "vllm-0.13.0", "vllm-0.12.0", "vllm-0.11.1"):
        whole = by_release[("vllm", release)]["harvested"]
        assert whole["tables"]["attention_selector"]["count"] == 11 * 147 and whole["why_not"] == {}, release
    partial = by_release[("vllm", "vllm-0.26.0")]["harvested"]  # run on fewer capabilities
    assert partial["tables"]["attention_selector"]["method"] == "ran" and partial["not_harvested"] == []
    # run on sm_80/86/89/90/100/120, then 7.0/7.5/10.3/11.0/12.1 merged from the torch-2.11.0 venv made again
    for release in ("vllm-0.22.0", "vllm-0.21.0", "vllm-0.20.1"):
        whole = by_release[("vllm", release)]["harvested"]
        assert whole["tables"]["attention_selector"]["count"] == 11 * 147 and whole["why_not"] == {}, release
        assert whole["tables"]["quantization"]["file"] == f"data/harvest/vllm/{release[5:]}.ran.json"
    # 8.0-12.0 first, then 7.0/7.5/10.3/11.0/12.1 merged from the same torch-2.10.0 venv
    for release in ("vllm-0.19.0", "vllm-0.18.0"):
        whole = by_release[("vllm", release)]["harvested"]
        assert whole["tables"]["attention_selector"]["count"] == 11 * 147 and whole["why_not"] == {}, release
        assert whole["tables"]["quantization"]["file"] == f"data/harvest/vllm/{release[5:]}.ran.json"
    # 0.11.0 and older: an if/else chain, run on all eleven capabilities (0.11.0 and 0.10.2: six, then five merged);
    # the chosen backend only, said so
    for release in ("vllm-0.11.0", "vllm-0.10.2", "vllm-0.10.1", "vllm-0.10.0"):
        chain = by_release[("vllm", release)]["harvested"]
        selector = chain["tables"]["attention_selector"]
        assert (selector["method"], selector["count"], chain["why_not"]) == ("ran", 11 * 147, {}), release
        assert "if/else chain: the chosen backend only" in selector["from"], release
    old = by_release[("vllm", "0.8.5")]
    assert old["build"] is None and old["use"] == "--build vllm==0.8.5" and old["released"] == "2025-04-28"
    kernels = old["harvested"]["tables"]["kernels"]  # what decides its kernel verdicts, read from its wheel
    assert kernels["method"] == "read" and "vllm/platforms/cuda.py" in kernels["from"]
    assert "vllm/_C.abi3.so" in kernels["from"] and kernels["count"] > 20
    forks = [r for r in rows if r["provenance"] in ("community", "fork")]
    assert forks and all(r["harvested"] is None for r in forks)
    text = run_cli("list", "engines")
    assert "harvested" not in text.out  # the table stays one line per build


def test_list_engines_json_says_per_release_why_a_ran_table_is_missing():
    rows = run_cli("list", "engines", "--format", "json").json()
    harvested = [r for r in rows if r.get("harvested")]
    for row in harvested:
        facts = row["harvested"]
        for table in ("attention_selector", "quantization"):
            # each table is there with its method, or named with why it is not
            assert (table in facts["tables"]) != (table in facts["why_not"]), (row["build"], table)
            if table in facts["why_not"]:
                assert facts["why_not"][table]["reason"], (row["build"], table)
    by_release = {(r["engine"], r.get("release") or r["build"]): r["harvested"] for r in harvested}
    assert by_release[("vllm", "vllm-0.33.0")]["why_not"] == {}
    for row in harvested:
        if row["engine"] == "vllm" and row["build"] and row["harvested"]["not_harvested"]:
            version = row["build"].removeprefix("vllm-")
            never = row["harvested"]["why_not"]["attention_selector"]
            if never["method"] is None:  # never tried (a tried run names its failure instead)
                assert never["reason"] == f"not run (python scripts/harvest vllm=={version} --run)"


def test_an_architecture_only_the_harvested_registry_has_is_known_to_be_loaded(tmp_path):
    config = '{"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 4096}'
    (tmp_path / "config.json").write_text(config)
    result = run_cli("inspect", str(tmp_path))
    assert "no engine in the catalog registers" not in result.out
    assert "JambaForCausalLM (model_type jamba); loaded by vllm-0.33.0" in result.out


def test_a_class_the_release_dropped_is_refused_with_the_last_release_that_loaded_it():
    args = ("explain", "--gpu", "h200", "--model", "minimax-m1", "--engine", "vllm")
    newest = run_cli(*args, "--build", "vllm==0.33.0")
    # vLLM 0.33.0's registry.py lists it in _PREVIOUSLY_SUPPORTED_MODELS
    assert "vllm-0.33.0 does not load MiniMaxM1ForCausalLM (its registry: supported until 0.23.0" in newest.out
    last = run_cli(*args, "--build", "vllm==0.23.0", "--format", "json").json()
    gates = [g for r in [*last["plans"], *rejections(last)] for g in r.get("gates", []) if g["gate"] == "architecture"]
    assert gates and all(g["outcome"] == "pass" for g in gates)


def test_a_flag_the_named_release_has_is_not_called_unknown_by_a_newer_vocabulary():
    # --enable-reasoning is in vLLM 0.8.5's own arg_utils.py/cli_args.py and gone from 0.33.0's CLI
    command = ("--model", "Qwen/Qwen3-8B", "--enable-reasoning", "--reasoning-parser", "deepseek_r1")

    def flag_codes(image):
        out = run_cli("lint", "--gpu", "a100", "--format", "json", "--", "docker", "run", image, *command).json()
        return {f["code"] for f in out["findings"] if f["flag"] == "--enable-reasoning"}

    assert flag_codes("vllm/vllm-openai:v0.8.5") == set()
    assert flag_codes("vllm/vllm-openai:v0.33.0") == {"flag-removed"}  # gone since an older release that had it


def test_list_engines_json_shows_the_sglang_tables_its_release_ran():
    rows = run_cli("list", "engines", "--format", "json").json()
    by_build = {r["build"]: r["harvested"] for r in rows if r.get("harvested") and r["engine"] == "sglang"}
    ran = by_build["sglang-0.5.21"]
    selector = ran["tables"]["attention_selector"]
    assert (selector["method"], selector["file"]) == ("ran", "data/harvest/sglang/0.5.21.ran.json")
    # SGLang chooses while it resolves its server arguments: that is what was run, per shape and GPU
    assert selector["from"].startswith("sglang/srt/server_args.py: ServerArgs.resolve_once")
    assert selector["count"] == 11 * 6 * 3 * 11  # GPUs x shapes x KV dtypes x (10 backends asked + the default)
    assert ran["tables"]["quantization"]["method"] == "ran" and ran["why_not"] == {}
    assert by_build["sglang-0.5.20"]["tables"]["attention_selector"]["count"] == selector["count"]
    # 0.5.19 first ran on four GPUs (--caps 80,90,100,120), the other seven merged into that run later
    assert by_build["sglang-0.5.19"]["tables"]["attention_selector"]["count"] == selector["count"]
    # 0.5.17 resolves while ServerArgs is constructed (no resolve_once): the table says so; all 11 GPUs asked (six,
    # then 7.0/7.5/10.3/11.0/12.1 merged)
    older = by_build["sglang-0.5.17"]["tables"]["attention_selector"]
    assert older["count"] == 11 * 6 * 3 * 11 and older["from"].startswith(
        "sglang/srt/server_args.py: ServerArgs.__post_init__"
    )
    newer = by_build["sglang-0.5.18"]["tables"]["attention_selector"]  # first six GPUs, the other five merged later
    assert (newer["count"], newer["from"]) == (selector["count"], older["from"])
    # GPUs x shapes x KV dtypes x (backends asked + the default): 0.5.15 first ran with --caps 80,90,100,120, 0.5.16 and
    # older on six GPUs, and a release's 7.0/7.5/10.3/11.0/12.1 (with 8.6/8.9 for 0.5.15) were merged later; 0.5.12 has
    # no cutedsl_mla and calls DSA nsa (9 backends asked besides its own pick), 0.5.11 has no tokenspeed_mla either
    for release, gpus, asked in (
        ("0.5.16", 11, 11),
        ("0.5.15", 11, 11),
        ("0.5.14", 11, 11),
        ("0.5.13", 11, 11),
        ("0.5.12", 11, 10),
        ("0.5.11", 11, 9),
    ):
        assert by_build[f"sglang-{release}"]["tables"]["attention_selector"]["count"] == gpus * 6 * 3 * asked, release
    # 0.5.10 (torch 2.9.1): the same eight backends and nsa asked, on all 11 GPUs (run afresh in one venv)
    tables = by_build["sglang-0.5.10"]["tables"]
    assert tables["attention_selector"]["count"] == 11 * 6 * 3 * 9 and tables["quantization"]["method"] == "ran"
    # 0.5.9 and older size their defaults from nvidia-smi: the harvester's stand-in answered it, on the same six GPUs
    # (0.5.5 and 0.5.4.post3 with their torch 2.8.0 pins), then on 7.0/7.5/10.3/11.0/12.1 too (--merge)
    all_gpus = {"0.5.9": 11, "0.5.8": 11, "0.5.6.post2": 11, "0.5.5": 11, "0.5.4.post3": 11}
    for release in ("0.5.9", "0.5.8", "0.5.6.post2", "0.5.5", "0.5.4.post3"):
        tables = by_build[f"sglang-{release}"]["tables"]
        assert tables["attention_selector"]["count"] == all_gpus.get(release, 6) * 6 * 3 * 9, release
        assert tables["quantization"]["method"] == "ran" and by_build[f"sglang-{release}"]["why_not"] == {}, release
    # 0.5.3 and older choose in ModelRunner: the probe runs that code of the release too, back to 0.4.8
    for release in ("0.5.3", "0.4.10", "0.4.9", "0.4.8"):
        assert by_build[f"sglang-{release}"]["tables"]["attention_selector"]["method"] == "ran", release
    # a release not run says how to run it
    not_run = [b for b, h in by_build.items() if b and "attention_selector" not in h["tables"]]
    for build in not_run:
        why = by_build[build]["why_not"]["quantization"]["reason"]
        assert why == f"not run (python scripts/harvest sglang=={build.removeprefix('sglang-')} --run)", build


def test_history_lists_the_releases_known_only_from_their_code_with_their_own_verdicts():
    result = run_cli("history", "--gpu", "h200", "--model", "deepseek-v3", "--gpus", "8", "--engine", "vllm")
    assert result.code == 0, result.err
    # before 0.6.6 the registry has no DeepseekV3ForCausalLM; 0.7.3's wheel has TRITON_MLA, 0.6.6/0.7.0 no MLA backend
    assert "vllm-0.3.0 … vllm-0.6.3 (10) blocked (architecture: does not load DeepseekV3ForCausalLM)" in result.out
    assert "vllm-0.6.6 … vllm-0.7.0 (2)  unknown (kernel: attention.mla" in result.out
    assert "vllm-0.7.0 → vllm-0.7.3: kernel now passes: sm90: TRITON_MLA (attention.mla)" in result.out


def test_a_16_bit_kv_cache_is_spelled_as_the_named_release_accepts_it():
    # SGLang 0.5.2's --kv-cache-dtype offers auto, fp8_e5m2, fp8_e4m3 (its server_args.py): no "bfloat16"
    old = run_cli("explain", "--gpu", "h100", "--model", "llama-3.1-8b", "--build", "sglang==0.5.2", "--format", "json")
    argv = " ".join(old.json()["plans"][0]["argv"])
    assert "--kv-cache-dtype auto" in argv and "bfloat16" not in argv
    newer = run_cli(
        "explain", "--gpu", "h100", "--model", "llama-3.1-8b", "--build", "sglang==0.5.9", "--format", "json"
    )
    assert "--kv-cache-dtype bf16" in " ".join(newer.json()["plans"][0]["argv"])  # 0.5.9 lists bf16 and bfloat16
    # vLLM's CacheDType gains "bfloat16" only in 0.11.0 (0.10.x: auto and the FP8 spellings, read from each wheel)
    for release, spelled in (("0.10.1", "auto"), ("0.11.0", "bfloat16")):
        vllm = run_cli(
            "explain", "--gpu", "h100", "--model", "llama-3.1-8b", "--build", f"vllm=={release}", "--format", "json"
        )
        assert f"--kv-cache-dtype {spelled}" in " ".join(vllm.json()["plans"][0]["argv"]), release


def test_sglang_mla_on_blackwell_spells_a_16_bit_kv_cache_as_trtllm_mla_accepts_it():
    # SGLang's default MLA backend on SM 10.0 (trtllm_mla) refuses "bfloat16" and takes "bf16" (its ValueError, in the
    # ran tables): a DeepSeek-V3 command on B200 must not pass the spelling that stops the server at start
    result = run_cli(
        "explain", "--gpu", "b200", "--model", "deepseek-v3", "--gpus", "8", "--engine", "sglang", "--format", "json"
    )
    assert result.code == 0, result.err
    argv = result.json()["plans"][0]["argv"]
    assert "bfloat16" not in argv
    refused = "TensorRT-LLM MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto"
    assert refused in (ROOT / "generator/data/harvest/sglang/0.5.21.ran.json").read_text(encoding="utf-8")
    # the user's own spelling still reads as the 16-bit cache
    asked = run_cli(
        "explain",
        "--gpu",
        "b200",
        "--model",
        "deepseek-v3",
        "--gpus",
        "8",
        "--engine",
        "sglang",
        "--kv-cache-dtype",
        "bfloat16",
        "--format",
        "json",
    )
    assert asked.code == 0, asked.err and "--kv-cache-dtype" in asked.json()["plans"][0]["argv"]


# SGLang releases whose runs gained 7.0/7.5/10.3/11.0/12.1 with --merge (their first runs: 8.0-12.0 only)
SGLANG_MERGED = ["0.5.17", "0.5.16", "0.5.15", "0.5.14", "0.5.13", "0.5.12", "0.5.11"]


@pytest.mark.parametrize("release", SGLANG_MERGED)
def test_an_sglang_plan_on_b300_and_dgx_spark_names_the_backend_the_release_picks_there(release):
    """On a simulated B300 (10.3) these releases pick trtllm_mha for Llama's GQA and for gpt-oss's sink layers, and
    trtllm_mla for DeepSeek-V3's MLA, as on B200; before 10.3 was run a B300 plan named flashinfer and triton (and
    FlashInfer MLA), the catalog's first kernels that fit. On DGX Spark (12.1) they run gpt-oss on triton throughout
    (their pick for the gpt-oss stand-in), where a plan named flashinfer for its full-attention layers."""
    from recipegen.catalog import harvest

    assert {103, 121} <= set(harvest.ran("sglang", release)["attention_selector"]["capabilities"])
    picked = harvest.load("sglang", release).picked
    assert (picked["gqa"]["auto"]["103"], picked["sinks"]["auto"]["121"]) == ("trtllm_mha", "triton")

    def kernel(gpu, model):
        reason, _, _, _ = _kernel_and_argv("--gpu", gpu, "--model", model, "--build", f"sglang=={release}")
        return reason

    assert kernel("b300", "llama-3.1-8b") == "sm103: trtllm_mha (attention.gqa)"
    sinks = kernel("b300", "gpt-oss-20b")
    assert sinks == "sm103: trtllm_mha (attention.gqa), trtllm_mha (sinks) (attention.sinks)", sinks
    assert picked["mla"]["auto"]["103"] == "trtllm_mla"
    mla, _, _, _ = _kernel_and_argv(
        "--gpu", "b300", "--gpus", "8", "--model", "deepseek-v3", "--build", f"sglang=={release}"
    )
    assert mla == "sm103: trtllm_mla (MLA) (attention.mla)", mla
    spark = kernel("gb10", "gpt-oss-20b")
    assert spark == "sm121: triton (attention.gqa), triton (attention.sinks)", spark


@pytest.mark.parametrize("release", ["0.5.22", "0.5.23"])
def test_lint_names_the_kv_spelling_the_newest_sglang_releases_refuse_in_their_own_run(release):
    """SGLang 0.5.22 (no release file: kernels inherited from 0.5.21) and 0.5.23 were run on all 11 GPUs: on B200 the
    MLA backend each picks by default for DeepSeek-V3 refuses `--kv-cache-dtype bfloat16` in the release's own words,
    so lint of such a command names the release, its words and the spelling it takes (before the run: no finding)."""
    from recipegen.catalog import harvest

    assert 100 in harvest.ran("sglang", release)["attention_selector"]["capabilities"]
    result = run_cli(
        *("lint", "--gpu", "b200", "--build", f"sglang=={release}", "--format", "json", "--"),
        *("python", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8"),
        *("--kv-cache-dtype", "bfloat16"),
    )
    data = result.json()
    assert data["build"] == f"sglang-{release}", data["build"]
    refused = [f for f in data["findings"] if f["code"] == "kv-cache-dtype-refused"]
    assert len(refused) == 1 and refused[0]["severity"] == "error", data["findings"]
    assert f"SGLang {release} with the attention backend it picks by default" in refused[0]["why"]
    assert "TensorRT-LLM MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto" in refused[0]["why"]
    assert refused[0]["fix"] == "--kv-cache-dtype bf16"
    assert refused[0]["sources"] == [f"https://pypi.org/project/sglang/{release}/"]


def test_vllm_0_9_2_on_blackwell_is_unknown_where_its_code_leans_on_a_package_it_does_not_ship():
    result = run_cli(
        "explain", "--gpu", "b200", "--model", "llama-3.1-8b", "--build", "vllm==0.9.2", "--format", "json"
    )
    data = result.json()
    # its wheel has cubins for 10.0 (platform passes), its vendored FlashAttention only for 8.x/9.x, and its V1
    # selector prefers FlashInfer on exactly 10.0 when that optional package imports: not read, so unknown
    assert data["verdict_detail"] == "unknown"
    kernel = _gates(result, "bf16")["kernel"]
    assert (
        kernel["outcome"] == "unknown" and "only FLASHINFER, XFORMERS of vllm-0.9.2 would serve it" in kernel["reason"]
    )


def test_vllm_0_7_3_plans_name_the_backend_its_v0_chain_returns_when_run():
    """vLLM 0.7.3 serves with its V0 engine unless VLLM_USE_V1=1 (its envs.py default). Its chain, run for that engine
    on simulated GPUs, returns FlashAttention for Llama's 128-wide heads on an A100, and XFORMERS on a T4 (below 8.0)
    and for an FP8 KV cache: the plans, built from the table read from its wheel, name the same backends."""
    from recipegen.catalog import harvest

    assert harvest.ran("vllm", "0.7.3")["attention_selector"]["chain"]["use_v1"] is False
    asked = (
        ("a100-80gb", 80, "auto", ()),
        ("t4", 75, "auto", ()),
        ("a100-80gb", 80, "fp8_e4m3", ("--kv-cache-dtype", "fp8")),
    )
    for gpu, capability, kv, more in asked:
        picked = _selected("0.7.3", capability, shape="gqa", variant="plain", head_size=128, kv=kv)
        result = run_cli(
            *("explain", "--gpu", gpu, "--model", "llama-3.1-8b", "--build", "vllm==0.7.3", *more, "--format", "json")
        )
        assert result.code == 0, result.err
        kernel = {g["gate"]: g for g in result.json()["plans"][0]["gates"]}["kernel"]["reason"]
        assert kernel == f"sm{capability}: {picked} (attention.gqa)", (gpu, kv)
    assert _selected("0.7.3", 80, shape="gqa", variant="plain", head_size=128, kv="auto") == "FLASH_ATTN"
    assert _selected("0.7.3", 75, shape="gqa", variant="plain", head_size=128, kv="auto") == "XFORMERS"
    assert _selected("0.7.3", 80, shape="gqa", variant="plain", head_size=128, kv="fp8_e4m3") == "XFORMERS"


def test_as_of_before_every_release_file_answers_with_the_release_out_that_day():
    # a report from September 2024 ran a vLLM of 2024: the newest harvested release built by then answers, not
    # "no build released by then"
    result = run_cli("explain", "--gpu", "h100", "--model", "llama-3.1-8b", "--as-of", "2024-09-01", "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    plans = data["plans"]
    assert data["verdict"] == "runnable" and plans
    vllm = [p for p in plans if p["engine"] == "vllm"]
    assert vllm and {p["build"] for p in vllm} == {"vllm-0.5.5"}  # built 2024-08-23; 0.6.0 came in September
    assert "the 0 build(s)" not in " ".join(data["request"]["understood_as"])
    sglang = run_cli(
        "explain",
        "--gpu",
        "h100",
        "--model",
        "qwen2.5-7b",
        "--engine",
        "sglang",
        "--as-of",
        "2025-03-01",
        "--format",
        "json",
    )
    assert sglang.code == 0, sglang.err
    assert {p["build"] for p in sglang.json()["plans"]} == {"sglang-0.4.3"}


def test_a_release_whose_backends_take_no_bfloat16_kv_cache_is_launched_with_auto():
    """0.14.0 and 0.13.0 list `bfloat16` among --kv-cache-dtype's choices, but their selector, run, refuses it for
    every shape (`No valid attention backend found`): the plan passes `auto`, says why and cites the run; 0.15.1's
    backends take bfloat16."""
    for build, spelled in (("vllm==0.13.0", "auto"), ("vllm==0.14.0", "auto"), ("vllm==0.15.1", "bfloat16")):
        result = run_cli("explain", "--gpu", "rtx-4090", "--model", "qwen3-8b", "--build", build, "--format", "json")
        data = result.json()
        plan = data["plans"][0]
        assert f"--kv-cache-dtype {spelled}" in " ".join(plan["argv"]), build
        flag = next(f for f in plan["flags"] if f["flag"] == "--kv-cache-dtype")
        if spelled == "auto":
            assert f"no attention backend of vLLM {build[6:]} takes --kv-cache-dtype bfloat16" in flag["reason"]
            cited = [data["sources"][s] for s in flag["sources"]]
            assert cited[0]["url"] == f"https://pypi.org/project/vllm/{build[6:]}/"
            assert "attention_selector ran" in cited[0]["note"]


def _selected(release, capability, **shape):
    """The backend a release's own selector, run (its ran table), picks for one case (a chain release, 0.11.0 and
    older: what it returned at the block size it sets itself)."""
    from recipegen.catalog import harvest

    cases = harvest.ran("vllm", release)["attention_selector"]["cases"]
    found = {
        c["selected"] for c in cases if c["capability"] == capability and all(c.get(k) == v for k, v in shape.items())
    }
    assert len(found) == 1, found
    return found.pop()


def test_the_attention_backend_a_plan_names_is_the_one_the_release_picks():
    """DeepSeek-V3 on B200: 0.13.0 ranks CUTLASS_MLA first, 0.15.1 FLASHINFER_MLA; gpt-oss's sink layers on H100 run
    FlashAttention 3, ranked before TRITON_ATTN. The plan names what each release's selector, run, selects."""
    mla = {"shape": "mla", "head_size": 576, "profile": "deepseek_v3_dense", "kv": "fp8_e4m3"}
    for release in ("0.13.0", "0.15.1"):
        data = run_cli(
            *("explain", "--gpu", "b200", "--gpus", "8", "--model", "deepseek-v3", "--build", f"vllm=={release}"),
            *("--format", "json"),
        ).json()
        kernel = {g["gate"]: g for g in data["plans"][0]["gates"]}["kernel"]["reason"]
        assert f"{_selected(release, 100, **mla)} (attention.mla)" in kernel, (release, kernel)
    sinks = {"shape": "gqa", "variant": "sinks", "head_size": 64, "kv": "auto"}
    for release in ("0.13.0", "0.33.0"):
        data = run_cli(
            "explain", "--gpu", "h100", "--model", "gpt-oss-20b", "--build", f"vllm=={release}", "--format", "json"
        ).json()
        kernel = {g["gate"]: g for g in data["plans"][0]["gates"]}["kernel"]["reason"]
        assert _selected(release, 90, **sinks) == "FLASH_ATTN" and "FLASH_ATTN (FA3/FA4) (attention.sinks)" in kernel


def _sglang_default(release, capability, shape, kv):
    """The DSA prefill + decode kernels an SGLang release resolves to by default for one case (its ran table)."""
    from recipegen.catalog import harvest

    cases = harvest.ran("sglang", release)["attention_selector"]["cases"]
    found = [
        c["resolved"]
        for c in cases
        if (c["asked"], c["capability"], c["shape"], c["kv"]) == (None, capability, shape, kv) and "resolved" in c
    ]
    assert len(found) == 1, found
    prefix = found[0]["attention_backend"]  # `nsa` in 0.5.12 and older, `dsa` from 0.5.13
    return found[0][f"{prefix}_prefill_backend"], found[0][f"{prefix}_decode_backend"]


def test_an_sglang_plan_names_the_dsa_kernels_its_release_picks():
    """DeepSeek-V3.2 on B200 with an FP8 KV cache: SGLang 0.5.9's own run resolves DSA to flashmla_auto prefill +
    flashmla_kv decode (0.5.10 and later: trtllm for both), and the plan names that pair, citing the run, not the
    trtllm kernel that comes first in the build's list; with a BF16 cache that run picks flashmla_sparse + trtllm."""
    assert _sglang_default("0.5.9", 100, "sparse_mla", "fp8_e4m3") == ("flashmla_auto", "flashmla_kv")
    assert _sglang_default("0.5.10", 100, "sparse_mla", "fp8_e4m3") == ("trtllm", "trtllm")
    for release, kv, pair in (
        ("0.5.9", "fp8", "flashmla_auto + flashmla_kv (DSA auto, FP8 KV)"),
        ("0.5.10", "fp8", "trtllm (FlashInfer trtllm-gen sparse MLA)"),
        ("0.5.9", "bf16", "flashmla_sparse + trtllm (DSA auto, BF16 KV)"),
    ):
        result = run_cli(
            *("explain", "--gpu", "b200", "--model", "deepseek-v3.2", "--build", f"sglang=={release}"),
            *("--kv-cache-dtype", kv, "--format", "json"),
        )
        assert result.code == 0, result.err
        data = result.json()
        plan = data["plans"][0]
        kernel = {g["gate"]: g for g in plan["gates"]}["kernel"]
        assert kernel["reason"].startswith(f"sm100: {pair} (attention.sparse_mla)"), (release, kernel["reason"])
        assert plan["build"] == f"sglang-{release}"
    cited = [s["note"] for s in data["sources"].values()]
    assert any("attention_selector ran" in n and "0.5.9" in n for n in cited), cited


def test_a_harvested_release_without_a_file_answers_as_itself():
    """vLLM 0.32.0 and SGLang 0.5.22 have no release file but were harvested: `--build` answers as that release (its
    version, image tag, wheel date and tables), with what code cannot say inherited from the file below, said so."""
    cases = (
        ("vllm", "0.32.0", "vllm-0.31.0", "vllm/vllm-openai:v0.32.0"),
        ("sglang", "0.5.22", "sglang-0.5.21", "lmsysorg/sglang:v0.5.22-cu130"),
    )
    for engine, release, below, image in cases:
        from recipegen.catalog import harvest

        facts = harvest.load(engine, release)
        result = run_cli(
            *("explain", "--gpu", "h100", "--model", "llama-3.1-8b", "--build", f"{engine}=={release}"),
            *("--format", "json"),
        )
        assert result.code == 0, result.err
        data = result.json()
        resolution = data["request"]["build_resolution"]
        assert (resolution["build"], resolution["rule"], resolution["confidence"]) == (
            f"{engine}-{release}",
            "harvested",
            "exact",
        )
        assert "nearest known release" not in resolution["how"] and f"inherited from {below}" in resolution["how"]
        plan = data["plans"][0]
        assert data["verdict"] == "runnable" and plan["build"] == f"{engine}-{release}" and plan["image"] == image
        assert plan["build_released"] == facts.uploaded and facts.built <= facts.uploaded
        cited = list(data["sources"].values())
        dated = [s for s in cited if s["note"].startswith(f"release date: the day {facts.artifact} was uploaded")]
        assert dated and dated[0]["url"] == f"https://pypi.org/project/{engine}/{release}/"
    # its own tables: 0.5.22's CLI dropped --cuda-graph-tc-compiler, which 0.5.21's has
    command = ("python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-tc-compiler", "x")
    for build, flagged in (("sglang==0.5.21", False), ("sglang==0.5.22", True)):
        linted = run_cli("lint", "--gpu", "h100", "--build", build, "--format", "json", "--", *command).json()
        errors = {f["flag"]: f for f in linted["findings"] if f["severity"] == "error"}
        assert ("--cuda-graph-tc-compiler" in errors) == flagged, build
    why = errors["--cuda-graph-tc-compiler"]["why"]
    assert "not a SGLang 0.5.22 option" in why, why
    assert "SGLang 0.5.21 (2026-10-01) is the newest release read that still has it" in why, why


def _kernel_and_argv(*args):
    data = run_cli("explain", *args, "--format", "json").json()
    plan = data["plans"][0]
    argv = plan["argv"]
    written = {flag: argv[i + 1] for i, flag in enumerate(argv[:-1]) if flag.startswith("--")}
    return {g["gate"]: g for g in plan["gates"]}["kernel"]["reason"], written, plan["env"], data


@pytest.mark.parametrize(
    ("release", "gpu", "capability"),
    [
        ("0.11.1", "b200", 100),
        ("0.14.0", "b300", 103),
        ("0.19.0", "b200", 100),
        ("0.18.0", "b300", 103),  # FA2, the catalog's first kernel, until 10.3 was run
        ("0.19.0", "b300", 103),
        ("0.25.0", "gb200", 100),
        ("0.29.0", "b300", 103),  # 10.3 added to its run with --merge: FLASH_ATTN was named there before
        ("0.30.0", "b300", 103),
        ("0.32.0", "gb300", 103),  # 10.3 added to its run with --merge: FLASH_ATTN was named there before
        ("0.33.0", "b200", 100),
    ],
)
def test_on_blackwell_a_gqa_plan_names_the_backend_the_release_selects(release, gpu, capability):
    """vLLM ranks FlashInfer first for decoder attention on SM 10.x; the catalog lists FLASH_ATTN first (it is first
    on Hopper). The plan names what the release's own selector, run, picks there, and still pins nothing."""
    reason, written, env, data = _kernel_and_argv(
        "--gpu", gpu, "--model", "llama-3.1-8b", "--build", f"vllm=={release}"
    )
    expected = _selected(release, capability, shape="gqa", variant="plain", head_size=128, kv="auto")
    assert expected == "FLASHINFER" and reason == f"sm{capability}: FLASHINFER (attention.gqa)", reason
    assert "--attention-backend" not in written and not any("ATTENTION_BACKEND" in e["name"] for e in env)
    assert written["--kv-cache-dtype"] in ("auto", "bfloat16")
    cited = [s["note"] for s in data["sources"].values()]
    assert any(n.startswith("attention_selector ran") for n in cited)


@pytest.mark.parametrize("release", ["0.19.0", "0.22.0", "0.25.0"])
def test_gpt_oss_sink_layers_on_b200_run_what_the_release_selects(release):
    reason, _, _, _ = _kernel_and_argv("--gpu", "b200", "--model", "gpt-oss-20b", "--build", f"vllm=={release}")
    assert _selected(release, 100, shape="gqa", variant="sinks", head_size=64, kv="auto") == "FLASHINFER"
    assert "FLASHINFER (trtllm-gen) (attention.sinks)" in reason, reason


@pytest.mark.parametrize("release", ["0.27.1", "0.28.0", "0.29.0", "0.32.0"])
def test_gpt_oss_on_dgx_spark_runs_what_the_release_selects_on_sm121(release):
    """12.1 was added to these runs with --merge: the release's own selector on a simulated GB10 ranks FLASH_ATTN first
    for gpt-oss's full-attention layers and has only TRITON_ATTN for its sink layers (FLASH_ATTN, FLASHINFER and
    FLEX_ATTENTION: "attention sinks not supported"), which the plan names: the run confirms the catalog's answer."""
    reason, _, _, _ = _kernel_and_argv("--gpu", "dgx-spark", "--model", "gpt-oss-20b", "--build", f"vllm=={release}")
    assert _selected(release, 121, shape="gqa", variant="plain", head_size=64, kv="auto") == "FLASH_ATTN"
    assert _selected(release, 121, shape="gqa", variant="sinks", head_size=64, kv="auto") == "TRITON_ATTN"
    assert reason == "sm121: FLASH_ATTN (FA2) (attention.gqa), TRITON_ATTN (attention.sinks)", reason


@pytest.mark.parametrize("release", ["0.11.0", "0.10.2"])
def test_on_b300_a_chain_release_plans_what_its_chain_returns_not_the_b200_defaults(release):
    """0.11.0 and older take CUTLASS MLA and FlashInfer's sinks only where the GPU is exactly SM 10.0: their chain run
    on 10.3 returned TRITON_MLA (no FP8 KV cache there) and TRITON_ATTN. A B300 plan names those and writes a 16-bit
    KV cache for DeepSeek-V3, where it named CUTLASS MLA with FP8 before 10.3 was run."""
    mla = {"shape": "mla", "head_size": 576, "profile": "deepseek_v3_dense", "kv": "auto", "heads_per_rank": 128}
    assert (_selected(release, 100, **mla), _selected(release, 103, **mla)) == ("CUTLASS_MLA", "TRITON_MLA")
    reason, written, _, _ = _kernel_and_argv("--gpu", "b300", "--model", "deepseek-v3", "--build", f"vllm=={release}")
    assert reason == "sm103: TRITON_MLA (attention.mla)", reason
    assert written["--kv-cache-dtype"] in ("auto", "bfloat16")
    sinks = {"shape": "gqa", "variant": "sinks", "head_size": 64, "kv": "auto"}
    assert _selected(release, 103, **sinks) == "TRITON_ATTN"
    reason, _, _, _ = _kernel_and_argv("--gpu", "b300", "--model", "gpt-oss-120b", "--build", f"vllm=={release}")
    assert "TRITON_ATTN (attention.sinks)" in reason and "FLASHINFER" not in reason, reason


@pytest.mark.parametrize("release", ["0.25.0", "0.26.0"])
def test_dsa_on_hopper_names_flashattention_sparse_mla_as_the_release_does(release):
    reason, written, _, _ = _kernel_and_argv("--gpu", "h200", "--model", "deepseek-v3.2", "--build", f"vllm=={release}")
    for heads in (16, 128):
        picked = _selected(
            release,
            90,
            shape="sparse_mla",
            head_size=576,
            kv="auto",
            heads_per_rank=heads,
            profile="deepseek_v32_sparse",
        )
        assert picked == "FLASH_ATTN_MLA_SPARSE"
    assert reason.startswith("sm90: FLASH_ATTN_MLA_SPARSE (attention.sparse_mla)"), reason
    assert written["--kv-cache-dtype"] in ("auto", "bfloat16")  # the only KV cache that backend takes


def test_dsa_on_b200_names_the_backend_the_release_selects_for_the_heads_each_gpu_holds():
    """0.33.0 on SM 10.0 ranks FA4 sparse MLA first when each GPU holds 16 heads (TP8 of 128) with a 16-bit KV cache,
    and FlashInfer's for an FP8 cache; the plan names the pick for the KV cache it writes."""
    common = ("--gpu", "b200", "--gpus", "8", "--model", "deepseek-v3.2", "--build", "vllm==0.33.0")
    sixteen, written, _, _ = _kernel_and_argv(*common, "--kv-cache-dtype", "bfloat16")
    fa4 = _selected(
        "0.33.0",
        100,
        shape="sparse_mla",
        head_size=576,
        kv="bfloat16",
        heads_per_rank=16,
        profile="deepseek_v32_sparse",
    )
    assert fa4 == "FLASH_ATTN_MLA_SPARSE_FA4" and sixteen.startswith(f"sm100: {fa4} (attention.sparse_mla)"), sixteen
    assert written["--kv-cache-dtype"] == "bfloat16" and written["--tensor-parallel-size"] == "8"
    default, written, _, _ = _kernel_and_argv(*common)
    kv = written["--kv-cache-dtype"]
    chosen = _selected(
        "0.33.0", 100, shape="sparse_mla", head_size=576, kv=kv, heads_per_rank=16, profile="deepseek_v32_sparse"
    )
    assert default.startswith(f"sm100: {chosen} (attention.sparse_mla)"), (kv, default)


def test_as_of_between_release_files_answers_with_the_harvested_release_out_that_day():
    # vLLM 0.32.0 went up on PyPI on 2026-10-18 (its facts file's upload stamp); 0.31.0 has a file, 0.33.0 came later
    def builds(as_of):
        result = run_cli(
            *("explain", "--gpu", "h100", "--model", "llama-3.1-8b", "--engine", "vllm", "--as-of", as_of),
            *("--format", "json"),
        )
        assert result.code == 0, result.err
        return {p["build"] for p in result.json()["plans"] if p["provenance"] == "official"}

    assert builds("2026-10-20") == {"vllm-0.32.0"}
    assert builds("2026-10-17") == {"vllm-0.31.0"}


def test_history_lists_the_releases_between_files_with_their_own_dates():
    result = run_cli("history", "--gpu", "h100", "--model", "llama-3.1-8b", "--engine", "sglang", "--format", "json")
    assert result.code == 0, result.err
    rows = {b["build"]: b for b in result.json()["engines"][0]["builds"]}
    assert rows["sglang-0.5.22"]["released"] == "2026-10-16" and rows["sglang-0.5.22"]["verdict"] == "runnable"
    order = list(rows)
    assert order.index("sglang-0.5.21") < order.index("sglang-0.5.22") < order.index("sglang-0.5.23")


@pytest.mark.parametrize("release", ["0.6.6", "0.6.3", "0.5.5"])
def test_a_v0_release_s_plan_names_the_backend_its_run_returned(release):
    """vLLM 0.6.6, 0.6.3 and 0.5.5 run the V0 engine only; the selector (vllm/attention/selector.py
    get_attn_backend), run on each simulated GPU, returned FLASH_ATTN from 8.0 for Llama's head size 128 and XFORMERS
    below it or with an FP8 KV cache. The plan read from its wheel names the same backend, with the --kv-cache-dtype
    it writes."""
    from recipegen.catalog import harvest

    cases = harvest.ran("vllm", release)["attention_selector"]["cases"]

    def ran(capability, kv):
        (case,) = [
            c
            for c in cases
            if (c["shape"], c.get("variant"), c["head_size"], c["kv"], c["capability"])
            == ("gqa", "plain", 128, kv, capability)
        ]
        return case["selected"]

    seen = set()
    for gpu, capability in (("t4", 75), ("rtx-3090", 86), ("h100", 90)):
        for asked, spelled in ((None, "auto"), ("fp8", "fp8")):
            more = ("--kv-cache-dtype", asked) if asked else ()
            result = run_cli(
                "explain", "--gpu", gpu, "--model", "llama-3.1-8b", "--build", f"vllm=={release}", *more,
                "--format", "json",
            )  # fmt: skip
            assert result.code == 0, result.err
            plan = result.json()["plans"][0]
            backend = ran(capability, spelled)
            kernel = next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel")
            assert kernel == f"sm{capability}: {backend} (attention.gqa)", (gpu, asked)
            seen.add(backend)
    assert seen == {"FLASH_ATTN", "XFORMERS"}
