"""A DeepSeek-style block FP8 checkpoint (128x128 weight blocks) on an SM89 card (L40S, RTX 4090) through vLLM, per
release, as its own kernel table decides (generator/data/harvest/vllm/*.ran.json, the wheel's kernel classes run on a
simulated sm_89): 0.28.0 and earlier pick the Triton block-scaled FP8 GEMM (W8A8, FP8 tensor cores); 0.29.0 and later
list Marlin (W8A16, weight-only) ahead of it and let it run on 8.9, so Marlin runs — but the GPU is not without a
native kernel, and the reason says which one the release passes over. CUTLASS block FP8 refuses 8.9 in every
harvested release, and no plan names it there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
HARVEST = Path(__file__).resolve().parents[2] / "generator" / "data" / "harvest" / "vllm"


def weight_gate(gpu: str, build: str) -> dict[str, Any]:
    result = run_cli(
        "explain", "--gpu", gpu, "--gpus", "1", "--model", "qwen3-32b", "--engine", "vllm", "--build", build,
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert result.code == 0, result.err
    plan = next(p for p in result.json()["plans"] if p["variant"] == "fp8")
    gate: dict[str, Any] = next(g for g in plan["gates"] if g["gate"] == "weight-format")
    return gate


def first_on_89(release: str) -> str:
    table = json.loads((HARVEST / f"{release}.ran.json").read_text())["quantization"]["linear_kernels"]["fp8_block"]
    return str(table["first_supported"]["89"])


@pytest.mark.parametrize("gpu", ["l40s", "rtx-4090"])
def test_block_fp8_on_sm89_names_the_kernel_each_vllm_release_picks(gpu: str):
    assert first_on_89("0.28.0") == "TritonFp8BlockScaledMMKernel"
    older = weight_gate(gpu, "vllm-0.28.0")["reason"]
    assert older.startswith("fp8_block runs natively on sm89: TritonFp8BlockScaledMMKernel"), older

    assert first_on_89("0.33.0") == "MarlinFP8ScaledMMLinearKernel"
    for build in ("vllm-0.29.0", "vllm-0.33.0"):
        reason = weight_gate(gpu, build)["reason"]
        assert reason.startswith(f"fp8_block on sm89: {build} runs it through Marlin FP8 block (W8A16)"), reason
        assert "ahead of TritonFp8BlockScaledMMKernel (W8A8), a native kernel that also supports sm89" in reason
        assert "no native kernel" not in reason and "Cutlass" not in reason


def test_cutlass_block_fp8_refuses_sm89_in_every_harvested_release():
    releases = sorted(p.name.removesuffix(".ran.json") for p in HARVEST.glob("*.ran.json"))
    tables = [json.loads((HARVEST / f"{r}.ran.json").read_text())["quantization"]["linear_kernels"] for r in releases]
    with_block = [t["fp8_block"]["by_capability"]["89"] for t in tables if "fp8_block" in t]
    assert len(with_block) >= 14
    assert all(row["CutlassFp8BlockScaledMMKernel"].startswith("no:") for row in with_block)
    assert all(row["TritonFp8BlockScaledMMKernel"] == "supported" for row in with_block)
