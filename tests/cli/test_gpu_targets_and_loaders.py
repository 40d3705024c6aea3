"""What a plan says about whether a release runs on the GPU at all, from the release's own wheel: the GPU targets its
cubins carry (the harvest's compiled_for, compressed CUDA 13 fatbins included), a refusal at the platform told first
and sourced to that reading alone, and the loaders' own refusals (SGLang's MXFP4 minimum, its bitsandbytes through
vLLM; old vLLM's bitsandbytes flags)."""

from __future__ import annotations

from itertools import takewhile
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.contract import rejections, sources


def _explain(gpu: str, build: str, *more: str, model: str = "llama-3.1-8b") -> dict[str, Any]:
    result = run_cli(
        *("explain", "--gpu", gpu, "--gpus", "1", "--model", model, "--build", build), *more, "--format", "json"
    )
    assert result.code == 0, result.err
    return result.json()


def _cubins(cited: list[dict[str, Any]], release: str) -> list[dict[str, Any]]:
    """The sources that are the release's wheel's cubins, as the harvest read them."""
    return [
        s
        for s in cited
        if s["url"] == f"https://pypi.org/project/vllm/{release}/" and (s.get("note") or "").startswith("compiled ")
    ]


@pytest.mark.parametrize(("gpu", "sm", "release"), [("v100", "sm_70", "0.13.0"), ("t4", "sm_75", "0.24.0")])
def test_a_plan_passes_the_platform_on_the_targets_its_release_s_wheel_carries(gpu, sm, release):
    """vLLM 0.13.0's CUDA 12 wheel carries sm_70 cubins; 0.24.0's CUDA 13 wheel compresses every cubin (ZSTD), and
    their fat binary headers name sm_75 among its targets: each plan passes the platform citing that reading."""
    doc = _explain(gpu, f"vllm=={release}")
    assert doc["plans"], doc["verdict"]
    (wheel,) = _cubins(sources(doc, doc["plans"][0]["sources"]), release)
    assert sm in wheel["note"] and "sha256" in wheel["note"]
    if release == "0.24.0":
        assert "sm_70" not in wheel["note"] and "sm_120" in wheel["note"]


def test_a_v100_on_a_cuda_13_release_is_refused_at_the_platform_first_citing_the_wheel_alone():
    """Every path of vLLM 0.24.0 on a V100 fails at the platform (its CUDA 13 wheel has no sm_70 code), and most
    also at the weight format: the platform is what is said first, in the closest paths and in the history line,
    and the refusal cites the wheel's cubins, not every source of the release."""
    doc = _explain("v100", "vllm==0.24.0")
    assert doc["verdict"] == "blocked"
    platform = [r for r in rejections(doc) if r["gate"] == "platform"]
    assert platform and all(
        r["reason"].startswith("vllm-0.24.0 (CUDA 13.0) is not compiled for sm70") for r in platform
    )
    for row in platform:
        (wheel,) = row["sources"]
        assert _cubins([wheel], "0.24.0") == [wheel] and "sm_75" in wheel["note"]
    text = run_cli("explain", "--gpu", "v100", "--gpus", "1", "--model", "llama-3.1-8b", "--build", "vllm==0.24.0")
    closest = [line for line in text.out.splitlines() if line.startswith("  ✗ vLLM vllm-0.24.0 · ")]
    assert closest and all("[platform" in line and ": vllm-0.24.0 (CUDA 13.0) is not" in line for line in closest)
    lines = text.out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("  vLLM: "))
    wrapped = [lines[first], *takewhile(lambda line: line.startswith("    "), lines[first + 1 :])]
    history = " ".join(" ".join(wrapped).split())  # the line wraps at 160 columns
    assert history.endswith("blocked (platform: is not compiled for sm70) since"), history
    assert "weight-format" not in history
    sglang = next(line for line in text.out.splitlines() if line.startswith("  SGLang: "))
    assert sglang.startswith("  SGLang: blocked (platform: is not compiled for sm70) in every build"), sglang


def test_sglang_s_mxfp4_refusal_on_a_t4_is_what_its_loader_says():
    """gpt-oss's MXFP4 checkpoint on SGLang 0.5.0rc2 (which starts on a T4): the release's loader compares the GPU with
    Mxfp4Config.get_min_capability(), 80, and stops with its own message, which the refusal quotes."""
    doc = _explain("t4", "sglang==0.5.0rc2", model="gpt-oss-20b")
    (row,) = [r for r in rejections(doc) if r["variant"] == "mxfp4" and r["gate"] == "weight-format"]
    assert (
        "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80." in row["reason"]
    )
    assert any(s["url"].endswith("/python/sglang/srt/model_loader/loader.py") for s in row["sources"])


@pytest.mark.parametrize("release", ["0.4.9", "0.5.1", "0.5.3"])
def test_sglang_before_0_5_4_refuses_a_bitsandbytes_checkpoint_for_want_of_vllm(release):
    """SGLang 0.4.8-0.5.3 take bitsandbytes from vLLM, which their official images do not carry: a pre-quantized
    NF4 checkpoint stops with the release's own message (0.5.1 answers as 0.5.0rc2, the release at or below it)."""
    doc = _explain("a100-80gb", f"sglang=={release}", "--variant", "unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit")
    assert doc["verdict"] == "blocked" and not doc["plans"]
    (row,) = [r for r in rejections(doc) if r["gate"] == "weight-format"]
    assert "bitsandbytes quantization requires some operators from vllm" in row["reason"]
    assert any(s["url"] == "https://github.com/sgl-project/sglang/issues/7407" for s in row["sources"])
    later = _explain("a100-80gb", "sglang==0.5.8", "--variant", "unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit")
    assert later["plans"]


@pytest.mark.parametrize(("release", "flags"), [("0.5.5", True), ("0.8.0", True), ("0.8.5", False), ("0.9.2", False)])
def test_an_old_vllm_release_loads_a_bitsandbytes_checkpoint_as_its_engine_arguments_require(release, flags):
    """vLLM releases known only from their wheels register bitsandbytes from 0.5 (minimum 7.0, read); before 0.8.5
    their engine arguments refuse a bitsandbytes checkpoint unless both --quantization and --load-format say
    bitsandbytes, from then on they take the load format from the checkpoint: the plan runs, with the flags where
    the release needs them."""
    doc = _explain("a100-80gb", f"vllm=={release}", "--variant", "unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit")
    assert doc["verdict"] == "runnable", doc["verdict"]
    argv = doc["plans"][0]["argv"]
    given = {flag: argv[argv.index(flag) + 1] for flag in ("--quantization", "--load-format") if flag in argv}
    assert given == ({"--quantization": "bitsandbytes", "--load-format": "bitsandbytes"} if flags else {})
    old = _explain("a100-80gb", "vllm==0.4.3", "--variant", "unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit")
    (row,) = [r for r in rejections(old) if r["gate"] == "weight-format"]
    assert row["reason"].startswith("vllm-0.4.3 has no bnb4 loader")
