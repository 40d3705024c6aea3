"""GPU and model names as people write them, through the CLI."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli


def understood_gpu(gpu: str) -> str:
    result = run_cli("explain", "--gpu", gpu, "--model", "qwen3-8b", "--format", "json")
    assert result.code == 0, result.err
    return str(result.json()["request"]["hardware"])


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("RTX 4090", "rtx-4090"),
        ("rtx4090", "rtx-4090"),
        ("rtx pro 6000", "rtx-pro-6000"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),  # nvidia-smi's name for the SXM board
        ("h100-80gb", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"),
        ("Tesla V100-SXM2-32GB", "v100-32gb"),
    ],
)
def test_gpu_names_people_type(typed: str, expected: str) -> None:
    assert understood_gpu(typed) == expected


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("NVIDIA GeForce RTX 3060", "--gpu sm86 --gpu-memory 12"),
        ("rtx 3070", "--gpu sm86 --gpu-memory 8"),
        ("MI300X", "not an NVIDIA GPU"),
        ("AMD Instinct MI300X", "not an NVIDIA GPU"),
    ],
)
def test_gpu_outside_the_catalog_gets_the_line_to_type(typed: str, hint: str) -> None:
    result = run_cli("explain", "--gpu", typed, "--model", "qwen3-8b")
    assert result.code == 2
    assert hint in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_model_suggestions_go_by_family_one_slot_per_model() -> None:
    result = run_cli("explain", "--gpu", "h100", "--model", "deepseek-v3.5")
    assert result.code == 2
    suggested = result.err.split("did you mean", 1)[1].strip(" ?\n").split(", ")
    assert suggested[0].startswith("deepseek-v3")
    ids = {row["id"] for row in run_cli("list", "models", "--format", "json").json()}
    assert set(suggested) <= ids and len(suggested) == len(set(suggested))  # model ids, not aliases


def test_a_family_name_with_several_models_lists_them_with_their_sizes() -> None:
    result = run_cli("explain", "--gpu", "h100", "--model", "deepseek-v4")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "deepseek-v4-flash (284B, 13B active)" in result.err and "deepseek-v4-pro (" in result.err


def test_list_gpus_is_list_hardware() -> None:
    gpus, hardware = run_cli("list", "gpus", "--format", "json"), run_cli("list", "hardware", "--format", "json")
    assert gpus.code == 0 and gpus.json() == hardware.json()
