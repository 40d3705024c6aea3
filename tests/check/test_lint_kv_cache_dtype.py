"""`recipegen lint -- <command>`: a --kv-cache-dtype spelling the named release refuses is an error naming the release,
why (its own choices, its selector's run, SGLang's own words) and the spelling it takes — the rule the planner spells
its own commands by (catalog/kv_spelling.py)."""

from __future__ import annotations

import pytest

VLLM = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
SGLANG_DSV3 = ["python", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3"]
SGLANG_DSV3 += ["--tensor-parallel-size", "8"]


def _lint(cli, gpu, build, command):
    result = cli("lint", "--format", "json", "--gpu", gpu, "--build", build, "--", *command)
    assert result.code in (0, 1), result.err
    doc = result.json()
    return [f for f in doc["findings"] if f["flag"] == "--kv-cache-dtype"], doc


def _planned_kv(cli, gpu, model, build, *more):
    doc = cli("explain", "--gpu", gpu, "--model", model, "--build", build, *more, "--format", "json").json()
    argv = doc["plans"][0]["argv"]
    return argv[argv.index("--kv-cache-dtype") + 1]


@pytest.mark.parametrize(
    ("release", "why"),
    [
        ("0.10.0", "has no bfloat16 (its choices, read from its wheel: auto, fp8"),
        ("0.10.2", "has no bfloat16 (its choices, read from its wheel: auto, fp8"),
        ("0.11.1", "no attention backend of vLLM 0.11.1 takes --kv-cache-dtype bfloat16"),
        ("0.13.0", "no attention backend of vLLM 0.13.0 takes --kv-cache-dtype bfloat16"),
        ("0.14.0", "no attention backend of vLLM 0.14.0 takes --kv-cache-dtype bfloat16"),
    ],
)
def test_vllm_bfloat16_kv_cache_is_an_error_where_the_release_refuses_it(cli, release, why):
    found, doc = _lint(cli, "h100", f"vllm=={release}", [*VLLM, "--kv-cache-dtype", "bfloat16"])
    assert doc["build"] == f"vllm-{release}"
    assert len(found) == 1, found
    finding = found[0]
    assert finding["severity"] == "error" and finding["code"] == "kv-cache-dtype-refused"
    assert f"vLLM {release} exits at" in finding["what"] and why in finding["why"]
    assert finding["fix"] == "--kv-cache-dtype auto"
    assert finding["sources"] == [f"https://pypi.org/project/vllm/{release}/"]
    # the planner spells the same cache as the fix does, from the same rule
    assert _planned_kv(cli, "h100", "llama-3.1-8b", f"vllm=={release}") == "auto"


@pytest.mark.parametrize("release", ["0.11.0", "0.15.1", "0.33.0"])
def test_vllm_bfloat16_kv_cache_passes_where_the_release_takes_it(cli, release):
    found, _ = _lint(cli, "h100", f"vllm=={release}", [*VLLM, "--kv-cache-dtype", "bfloat16"])
    assert found == []
    assert _planned_kv(cli, "h100", "llama-3.1-8b", f"vllm=={release}") == "bfloat16"


@pytest.mark.parametrize("release", ["0.5.11", "0.5.15", "0.5.21"])
def test_sglang_mla_on_sm100_bfloat16_is_refused_by_its_default_backend_in_its_own_words(cli, release):
    found, _ = _lint(cli, "b200", f"sglang=={release}", [*SGLANG_DSV3, "--kv-cache-dtype", "bfloat16"])
    assert len(found) == 1, found
    finding = found[0]
    assert finding["severity"] == "error" and f"SGLang {release} exits at start-up" in finding["what"]
    assert "TensorRT-LLM MLA backend only supports kv-cache-dtype of" in finding["why"]
    assert finding["fix"] == "--kv-cache-dtype bf16"
    assert finding["sources"] == [f"https://pypi.org/project/sglang/{release}/"]
    # its own spelling of the same cache passes, and so does bfloat16 where trtllm_mla is not the pick
    assert _lint(cli, "b200", f"sglang=={release}", [*SGLANG_DSV3, "--kv-cache-dtype", "bf16"])[0] == []
    assert _lint(cli, "h200", f"sglang=={release}", [*SGLANG_DSV3, "--kv-cache-dtype", "bfloat16"])[0] == []
    qwen = ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--kv-cache-dtype", "bfloat16"]
    assert _lint(cli, "b200", f"sglang=={release}", qwen)[0] == []


def test_a_pinned_sglang_backend_that_takes_bfloat16_is_not_flagged(cli):
    pinned = [*SGLANG_DSV3, "--attention-backend", "triton", "--kv-cache-dtype", "bfloat16"]
    assert _lint(cli, "b200", "sglang==0.5.21", pinned)[0] == []
    trtllm = [*SGLANG_DSV3, "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "bfloat16"]
    found, _ = _lint(cli, "b200", "sglang==0.5.21", trtllm)
    assert len(found) == 1 and "--attention-backend trtllm_mla" in found[0]["why"]


def test_sglang_0_5_2_has_no_bf16_choice(cli):
    command = ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--kv-cache-dtype", "bf16"]
    found, _ = _lint(cli, "h100", "sglang==0.5.2", command)
    assert len(found) == 1 and "exits at argument parsing" in found[0]["what"]
    assert found[0]["fix"] == "--kv-cache-dtype auto"
    assert _planned_kv(cli, "h100", "llama-3.1-8b", "sglang==0.5.2") == "auto"
