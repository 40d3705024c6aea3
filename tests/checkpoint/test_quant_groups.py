"""A local checkpoint's quantization_config read per module: compressed-tensors config_groups (targets naming
the routed experts, or the other linear layers) give each part its bits, group size and zero point, and the
size is estimated from them where the folder holds no weights; AWQ/GPTQ give their bits and group size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "hub"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


def _weights(expert_bits: int, linear: dict[str, object]) -> dict[str, object]:
    return {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "config_groups": {
            "group_0": {
                "targets": ["re:.*mlp\\.experts\\..*"],
                "weights": {"type": "int", "num_bits": expert_bits, "group_size": 128, "strategy": "group"},
            },
            "group_1": {"targets": ["Linear"], "weights": linear},
        },
        "ignore": ["lm_head", "re:.*mlp\\.gate$"],
    }


def _folder(tmp_path: Path, quantization: dict[str, object]) -> Path:
    config = json.loads((DATA / "Qwen" / "Qwen3-30B-A3B" / "config.json").read_text())
    config["quantization_config"] = quantization
    folder = tmp_path / "Qwen3-30B-A3B-Mix"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _plan(folder: Path) -> dict[str, object]:
    result = run_cli("explain", "--gpu", "h100", "--model", str(folder), "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    plan: dict[str, object] = result.json()["plans"][0]
    return plan


def _expected(config: dict[str, int], expert_bits: float, linear_bits: float, total: float) -> float:
    embed = 2 * config["vocab_size"] * config["hidden_size"]
    experts = config["num_experts"] * 3 * config["hidden_size"] * config["moe_intermediate_size"] * 48
    return experts * expert_bits / 8 + (total - embed - experts) * linear_bits / 8 + embed * 2


@pytest.mark.parametrize(
    ("linear", "linear_bits", "said"),
    [
        ({"type": "int", "num_bits": 8, "group_size": 128, "strategy": "group"}, 8 + 16 / 128, "int4 g128 + int8 g128"),
        ({"type": "int", "num_bits": 8, "strategy": "channel"}, 8.0, "int4 g128 + int8)"),
    ],
)
def test_an_int4_int8_mix_folder_is_sized_from_its_config_groups(tmp_path, linear, linear_bits, said):
    folder = _folder(tmp_path, _weights(4, linear))
    plan = _plan(folder)
    assert plan["quant"] == "int4_int8_mix"
    memory = plan["memory"]
    assert isinstance(memory, dict) and memory["weights_estimated"].endswith(said.rstrip(")") + ")")
    config = json.loads((folder / "config.json").read_text())
    shown = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()
    total = float(shown["derived"]["params_total_b"]) * 1e9
    notes = " ".join(plan["notes"])  # type: ignore[arg-type]
    assert "the storage the variant's quantization_config records" in notes
    assert "int4, a 16-bit scale per group of 128" in notes
    expected = _expected(config, 4 + 16 / 128, linear_bits, total)
    assert memory["weights_gib"] == pytest.approx(expected / 2**30, rel=0.01)


def test_an_awq_folder_is_sized_with_its_own_group_size(tmp_path):
    quantization = {"quant_method": "awq", "bits": 4, "group_size": 32, "zero_point": True, "version": "gemm"}
    notes = " ".join(_plan(_folder(tmp_path, quantization))["notes"])  # type: ignore[arg-type]
    assert "int4, a 16-bit scale and a 4-bit zero point per group of 32" in notes
    assert f"× {4 + 20 / 32:.3f} bits" in notes
