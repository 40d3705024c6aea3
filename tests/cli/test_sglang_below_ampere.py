"""What an SGLang plan says on a T4 (7.5) and a V100 (7.0): where the release starts there, the backend its own
defaults settle on (its run on simulated GPUs, data/harvest/sglang/<v>.ran.json) with the KV caches that backend
takes there; where it does not start, the platform refusal with the source that says why (ModelRunner's sm75 floor
on 7.0; from 0.5.3 an sgl-kernel without code for either GPU)."""

from __future__ import annotations

import pytest

from tests.cli.test_harvested_releases import _sglang_pick as _pick
from tests.support.cli import run_cli
from tests.support.contract import rejections


def _explain(gpu, model, release, *more):
    result = run_cli(
        *("explain", "--gpu", gpu, "--model", model, "--build", f"sglang=={release}", "--gpus", "1"),
        *(*more, "--format", "json"),
    )
    assert result.code == 0, result.err
    return result.json()


def _kernel(plan):
    return next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel")


@pytest.mark.parametrize("release", ["0.4.8", "0.4.10", "0.5.2"])
def test_on_a_v100_sglang_stops_at_its_own_sm75_floor_and_the_refusal_cites_it(release):
    """Every SGLang release resolves its arguments on 7.0 (flashinfer for Llama, its run), then ModelRunner stops:
    "SGLang only supports sm75 and above." The plan is refused at the platform, citing the wheel that says so."""
    assert _pick(release, 70 if release != "0.5.2" else 75, "gqa", "auto") == "flashinfer"
    doc = _explain("v100", "llama-3.1-8b", release)
    assert doc["verdict"] == "blocked" and not doc["plans"]
    platform = [r for r in rejections(doc) if r["gate"] == "platform"]
    assert platform and all("is not compiled for sm70" in r["reason"] for r in platform)
    notes = [s.get("note") or "" for r in platform for s in r["sources"]]
    assert any("SGLang only supports sm75 and above." in n and "sm_70" in n for n in notes), notes


@pytest.mark.parametrize("release", ["0.5.3", "0.5.9", "0.5.21"])
def test_from_0_5_3_a_t4_and_a_v100_are_refused_for_want_of_sgl_kernel_code(release):
    doc = _explain("t4", "llama-3.1-8b", release)
    assert doc["verdict"] == "blocked"
    platform = [r for r in rejections(doc) if r["gate"] == "platform"]
    assert platform and all("is not compiled for sm75 (targets: >=8.0)" in r["reason"] for r in platform)
    v100 = _explain("v100", "llama-3.1-8b", release)
    assert v100["verdict"] == "blocked" and not v100["plans"]


def test_a_t4_plan_with_an_fp8_cache_names_the_flashinfer_sglang_runs_and_keeps_triton_s_fp8_out():
    """On 7.5 SGLang 0.5.0rc2 (the last release whose sgl-kernel has sm75 code) settles Llama on flashinfer with an
    fp8_e4m3 cache (FlashInfer converts FP8 in software
    below 9.0), so that plan stands; DeepSeek-V3's MLA settles on triton, whose fp8e4nv needs SM89: its kernel gate
    refuses an FP8 cache there and passes a 16-bit one (the model fails on 8 T4s for memory and weights anyway)."""
    assert _pick("0.5.0rc2", 75, "gqa", "fp8_e4m3") == "flashinfer"
    doc = _explain("t4", "llama-3.1-8b", "0.5.0rc2", "--kv-cache-dtype", "fp8_e4m3")
    assert doc["plans"] and _kernel(doc["plans"][0]) == "sm75: flashinfer (attention.gqa)"
    assert "fp8_e4m3" in doc["plans"][0]["argv"]
    assert _pick("0.5.0rc2", 75, "mla", "fp8_e4m3") == "triton"

    def mla_kernel_refusals(kv):
        result = run_cli(
            *("explain", "--gpu", "t4", "--gpus", "8", "--model", "deepseek-v3", "--build", "sglang==0.5.0rc2"),
            *("--kv-cache-dtype", kv, "--format", "json"),
        )
        return [r["reason"] for r in rejections(result.json()) if r["gate"] == "kernel"]

    refused = mla_kernel_refusals("fp8_e4m3")
    assert refused and all("no attention.mla kernel for sm75" in r and "triton (MLA)" in r for r in refused)
    assert not mla_kernel_refusals("bf16")


def test_gpt_oss_on_a_t4_reaches_triton_s_sinks_kernel_but_not_past_its_mxfp4_checkpoint():
    """0.5.0rc2 (the last release whose sgl-kernel has sm75 code) settles gpt-oss on triton on 7.5 (no fa3 /
    trtllm_mha below 9.0): the kernel gate passes, and the MXFP4
    checkpoint stops the plan at the weight format, as the release's loader does (mxfp4 needs capability 80)."""
    assert _pick("0.5.0rc2", 75, "sinks", "auto") == "triton"
    doc = _explain("t4", "gpt-oss-20b", "0.5.0rc2")
    assert doc["verdict"] == "blocked"
    mxfp4 = [r for r in rejections(doc) if r["variant"].startswith("mxfp4") or "mxfp4" in r["reason"]]
    assert mxfp4 and {r["gate"] for r in mxfp4} == {"weight-format"}
