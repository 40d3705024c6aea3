"""Classes without a rule of their own in data/architectures.yaml are laid out by the generic rule from the
config.json fields the engines read: real config.json files (tests/data/configs, see PROVENANCE.md), each
planned from a local folder, parameters within 3 % of the index's total_size, the KV cache per token as
vLLM computes it per GPU (vllm/config/model.py: get_num_kv_heads = max(1, KV heads // TP) × get_head_size
× 2 (K and V) per attention layer × num_hidden_layers, at the KV dtype's bytes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.contract import rejections

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


def _folder(tmp_path: Path, arch: str) -> Path:
    folder = tmp_path / arch
    folder.mkdir()
    shutil.copy(CONFIGS / arch / "config.json", folder / "config.json")
    shutil.copy(CONFIGS / arch / "index-metadata.json", folder / "model.safetensors.index.json")
    return folder


@pytest.mark.parametrize("arch", sorted(p.name for p in CONFIGS.iterdir() if p.is_dir()))
def test_a_class_without_a_rule_is_laid_out_by_the_generic_rule(tmp_path, arch):
    folder = _folder(tmp_path, arch)
    config = json.loads((folder / "config.json").read_text())
    total = json.loads((folder / "model.safetensors.index.json").read_text())["metadata"]["total_size"]
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.code == 0, report.err
    data = report.json()
    assert data["rule_from"] == "generic" and data["status"] == "derived", data["problem"]
    weights = data["derived"]["params_total_b"] * 1e9 * BYTES[config["torch_dtype"]]
    assert weights == pytest.approx(total, rel=0.03)
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    kv = config.get("num_key_value_heads") or heads
    explained = run_cli(
        "explain",
        "--gpu",
        "h200",
        "--gpus",
        "8",
        "--model",
        str(folder),
        "--engine",
        "vllm",
        "--format",
        "json",
        env=OFFLINE,
    )
    plans = explained.json()["plans"]
    assert plans, [r["reason"] for r in rejections(explained.json()) if r["engine"] == "vllm"][:3]
    assert "generic" in explained.json()["request"]["understood_as"]
    memory = plans[0]["memory"]
    per_element = 1 if "fp8" in plans[0].get("kv_dtype", "") else 2
    per_gpu = max(1, kv // plans[0]["gpus"])  # vLLM: max(1, total KV heads // tensor parallel size)
    assert memory["kv_bytes_per_token"] == config["num_hidden_layers"] * per_gpu * head_dim * 2 * per_element
