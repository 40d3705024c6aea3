"""On a datacenter (HBM) GPU asked about without --concurrency, which usually serves many users, a server that batches
concurrent requests comes before a single-slot llama-server whose one request decodes a little faster, full precision
before 4-bit, and the speed that ranks is the plans' total decode; --concurrency 1 (one user) ranks as on a consumer
card."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


def first_two(*args: str) -> list[dict[str, Any]]:
    result = run_cli("explain", *args, "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    plans: list[dict[str, Any]] = result.json()["plans"]
    return plans[:2]


@pytest.mark.parametrize("gpu", ["h100", "h200", "a100-80gb"])
def test_a_datacenter_gpu_ranks_by_total_decode(gpu: str) -> None:
    first, second = first_two("--gpu", gpu, "--gpus", "1", "--model", "qwen3-8b")
    assert first["engine"] in ("vllm", "sglang")
    assert first["quant"] in ("fp8", "fp8_block", "bf16")  # the memory is there: not a 4-bit checkpoint
    assert first["speed"]["decode_aggregate_tokens_per_s"] >= second["speed"]["decode_aggregate_tokens_per_s"]
    if "total decode" in first["why_first"]:
        assert "--concurrency 1" in first["why_first"]


def test_one_user_on_a_datacenter_gpu_ranks_by_one_requests_speed() -> None:
    first, second = first_two("--gpu", "h100", "--gpus", "1", "--model", "qwen3-8b", "--concurrency", "1")
    assert "total decode" not in first["why_first"]
    assert first["speed"]["decode_tokens_per_s"] >= second["speed"]["decode_tokens_per_s"]


def test_a_consumer_card_still_ranks_by_one_requests_speed() -> None:
    first, _ = first_two("--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-14b")
    assert "total decode" not in first["why_first"]
