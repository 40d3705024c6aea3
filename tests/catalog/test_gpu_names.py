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
        # the everyday consumer and workstation cards, as users type them and as nvidia-smi prints them
        ("NVIDIA GeForce RTX 3060", "rtx-3060"),
        ("rtx 3070", "rtx-3070"),
        ("3070ti", "rtx-3070-ti"),
        ("3090ti", "rtx-3090-ti"),
        ("NVIDIA GeForce RTX 3090 Ti", "rtx-3090-ti"),
        ("3090", "rtx-3090"),
        ("4060ti-16gb", "rtx-4060-ti-16gb"),
        ("rtx 4060 ti 16gb", "rtx-4060-ti-16gb"),
        ("RTX 4060 Ti 8GB", "rtx-4060-ti-8gb"),
        ("4070", "rtx-4070"),
        ("rtx 4070 ti", "rtx-4070-ti"),
        ("NVIDIA GeForce RTX 4070 SUPER", "rtx-4070-super"),
        ("4070 ti super", "rtx-4070-ti-super"),
        ("RTX 4080 Super", "rtx-4080-super"),
        ("4080", "rtx-4080"),
        ("5060 ti 16gb", "rtx-5060-ti-16gb"),
        ("RTX 5070", "rtx-5070"),
        ("5070ti", "rtx-5070-ti"),
        ("2080ti", "rtx-2080-ti"),
        ("NVIDIA TITAN RTX", "titan-rtx"),
        ("NVIDIA RTX 4000 Ada Generation", "rtx-4000-ada"),
        ("rtx 2000 ada", "rtx-2000-ada"),
        ("NVIDIA RTX PRO 4500 Blackwell", "rtx-pro-4500"),
        ("rtx pro 5000", "rtx-pro-5000"),
    ],
)
def test_gpu_names_people_type(typed: str, expected: str) -> None:
    assert understood_gpu(typed) == expected


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("NVIDIA GeForce RTX 3050", "--gpu sm86 --gpu-memory 8"),
        ("rtx 4060", "--gpu sm89 --gpu-memory 8"),
        ("MI300X", "not an NVIDIA GPU"),
        ("AMD Instinct MI300X", "not an NVIDIA GPU"),
    ],
)
def test_gpu_outside_the_catalog_gets_the_line_to_type(typed: str, hint: str) -> None:
    result = run_cli("explain", "--gpu", typed, "--model", "qwen3-8b")
    assert result.code == 2
    assert hint in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("typed", "choices"),
    [
        ("4060ti", ["rtx-4060-ti-8gb (8 GiB)", "rtx-4060-ti-16gb (16 GiB)"]),
        ("RTX 4060 Ti", ["rtx-4060-ti-8gb (8 GiB)", "rtx-4060-ti-16gb (16 GiB)"]),
        ("NVIDIA GeForce RTX 5060 Ti", ["rtx-5060-ti-8gb (8 GiB)", "rtx-5060-ti-16gb (16 GiB)"]),
    ],
)
def test_a_name_sold_with_two_memory_sizes_is_refused_with_the_choices(typed: str, choices: list[str]) -> None:
    result = run_cli("explain", "--gpu", typed, "--model", "qwen3-8b")
    assert result.code == 2 and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert ", ".join(choices) in result.err and "--gpu-memory" in result.err, result.err


@pytest.mark.parametrize(("memory", "expected"), [("16", "rtx-4060-ti-16gb"), ("8", "rtx-4060-ti-8gb")])
def test_gpu_memory_picks_among_the_parts_one_name_stands_for(memory: str, expected: str) -> None:
    result = run_cli("explain", "--gpu", "4060 ti", "--gpu-memory", memory, "--model", "qwen3-8b", "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["request"]["hardware"] == expected


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


def test_list_gpus_fits_a_screen_and_verbose_lists_every_gpu() -> None:
    ids = [row["id"] for row in run_cli("list", "gpus", "--format", "json").json()]
    short = run_cli("list", "gpus")
    assert short.code == 0, short.err
    lines = short.out.splitlines()
    assert len(lines) <= 40 and max(map(len, lines)) <= 110, (len(lines), max(map(len, lines)))
    assert all(f"{gpu} (" in short.out for gpu in ids)  # every GPU named once, with its memory
    assert lines[-1].startswith(f"{len(ids)} GPUs; --verbose")
    consumer_sm89 = next(line for line in lines if line.startswith("consumer") and " sm89 " in line)
    assert "rtx-4060-ti-8gb (8)" in consumer_sm89  # smallest first
    full = run_cli("list", "gpus", "--verbose")
    assert full.code == 0 and len(full.out.splitlines()) == len(ids) + 1
    assert "4060ti-16gb" in full.out  # the aliases a user can type
