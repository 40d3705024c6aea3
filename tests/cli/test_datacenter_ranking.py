"""On a data-center GPU asked about without --concurrency — an HBM part like an H100, or a GDDR server card like an
L40S, L4, A10 or A40: what the card is bought for, not its memory — which usually serves many users, a server that
batches concurrent requests comes before a single-slot llama-server whose one request decodes a little faster, full
precision before 4-bit, and the speed that ranks is the plans' total decode; --concurrency 1 (one user) ranks as on a
consumer card, and a workstation card (RTX A6000) is one user's machine."""

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


def hardware_roles() -> dict[str, str]:
    result = run_cli("list", "hardware", "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    return {row["id"]: row["role"] for row in result.json()}


SERVED = [("l40s", "qwen3-8b"), ("l4", "qwen3-8b"), ("a10", "qwen3-8b"), ("a40", "qwen3-8b"), ("l40s", "qwen3-32b")]


@pytest.mark.parametrize(("gpu", "model"), SERVED)
def test_a_gddr_server_card_serves_from_a_batching_server_and_says_why(gpu: str, model: str) -> None:
    # an L40S has GDDR memory, but it is a data-center card: asked about without --concurrency it is serving, so a
    # batching server (vLLM or SGLang, FP8 on Ada, BF16/AWQ on Ampere) comes before a single-slot llama-server Q6_K
    assert hardware_roles()[gpu] == "datacenter"
    result = run_cli("explain", "--gpu", gpu, "--gpus", "1", "--model", model, "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    plans = result.json()["plans"]
    first = plans[0]
    assert first["engine"] in ("vllm", "sglang") and first["offload"] is None
    assert first["settings"]["concurrency"] > 1
    one_slot = [p for p in plans if p["engine"] == "llama.cpp" and p["offload"] is None]
    assert one_slot and plans.index(one_slot[0]) > 0
    fp8 = next(g for g in first["gates"] if g["gate"] == "weight-format")
    assert "no native kernel" not in fp8["reason"], fp8["reason"]
    why = first["why_first"]
    # the reason is the card's use, said with the figures it compares, whichever criterion then decided
    assert "data-center" in why and "--concurrency 1" in why, why
    total = f"~{first['speed']['decode_aggregate_tokens_per_s']:,.0f} tok/s"
    assert total in why or "total decode" in why, why


@pytest.mark.parametrize("gpu", ["l40s", "a10"])
def test_one_user_on_a_gddr_server_card_ranks_as_on_a_desk(gpu: str) -> None:
    # --concurrency 1 says it: one user; then one request's speed ranks and no reason speaks of serving
    first, second = first_two("--gpu", gpu, "--gpus", "1", "--model", "qwen3-8b", "--concurrency", "1")
    assert "data-center" not in first["why_first"] and "total decode" not in first["why_first"]
    assert first["speed"]["decode_tokens_per_s"] >= second["speed"]["decode_tokens_per_s"] or (
        first["settings"]["context"] > second["settings"]["context"]
    )


@pytest.mark.parametrize("gpu", ["rtx-a6000", "rtx-6000-ada", "rtx-4090"])
def test_a_workstation_or_consumer_card_is_one_users_machine(gpu: str) -> None:
    assert hardware_roles()[gpu] in ("workstation", "consumer")
    first, _ = first_two("--gpu", gpu, "--gpus", "1", "--model", "qwen3-8b")
    assert "data-center" not in first["why_first"] and "total decode" not in first["why_first"]


def test_the_serving_reason_is_given_only_where_serving_decided() -> None:
    # GLM-5.2 on 8 x H200: a curated recipe comes first for that reason; the single-slot llama-server far down the
    # list lost to it for that reason too, so the reason does not speak of batching
    first, _ = first_two("--gpu", "h200", "--gpus", "8", "--model", "glm-5.2")
    assert first["status"] != "derived"
    assert first["why_first"].startswith("a curated recipe"), first["why_first"]
    assert "data-center card" not in first["why_first"]


@pytest.mark.parametrize(("gpu", "model"), [("a100-40gb", "qwen3-coder-30b-a3b"), ("l40s", "phi-4")])
def test_two_single_slot_plans_on_a_datacenter_card_rank_by_one_requests_decode(gpu: str, model: str) -> None:
    # no batching plan leads here: two single-slot llama-server plans. The "total" of one request is its decode with
    # the whole planned context filled, which ranked the file planned with the longer context as the slower one and
    # read "higher estimated total decode (101 vs 68 tok/s over 1 vs 1 concurrent requests"
    first, second = first_two("--gpu", gpu, "--gpus", "1", "--model", model)
    assert first["settings"]["concurrency"] == 1 and second["settings"]["concurrency"] == 1, (first, second)
    assert "total decode" not in first["why_first"] and "1 vs 1 concurrent" not in first["why_first"]
    assert first["speed"]["decode_tokens_per_s"] >= second["speed"]["decode_tokens_per_s"]
