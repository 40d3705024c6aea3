"""A plan and lint hold --kv-cache-dtype to the values the named release's own option takes (read from its wheel)."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli


def _kv(release: str) -> str:
    result = run_cli(
        "explain", "--gpu", "t4", "--model", "llama-3.1-8b", "--build", f"vllm=={release}", "--format", "json"
    )
    assert result.code == 0, result.err
    argv = result.json()["plans"][0]["argv"]
    return argv[argv.index("--kv-cache-dtype") + 1]


@pytest.mark.parametrize(("release", "spelled"), [("0.15.1", "auto"), ("0.10.2", "auto"), ("0.18.0", "float16")])
def test_a_t4_plan_writes_the_16_bit_cache_as_the_release_spells_it(release, spelled):
    # vLLM's CacheDType Literal gains float16 in 0.18.0; before it, a T4 (no bfloat16) takes the model's dtype as auto
    assert _kv(release) == spelled


def test_lint_refuses_a_kv_value_the_release_option_lacks_and_names_the_one_it_takes():
    result = run_cli(
        "lint",
        "--format",
        "json",
        "--build",
        "vllm==0.15.1",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
        "--kv-cache-dtype",
        "float16",
    )
    assert result.code == 1, result.err
    finding = next(f for f in result.json()["findings"] if f["flag"] == "--kv-cache-dtype")
    assert (finding["severity"], finding["fix"]) == ("error", "--kv-cache-dtype auto")
    assert "its choices, read from its wheel: auto, bfloat16, fp8" in finding["why"]
