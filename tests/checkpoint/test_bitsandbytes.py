"""A pre-quantized bitsandbytes checkpoint (Unsloth's *-bnb-4bit) plans on the releases whose own quantization
table loads bitsandbytes (vLLM up to 0.27.1, SGLang 0.5.8 on: the harvest's ran tables), with the bytes its files
hold or, without them, NF4's 4 bits plus an 8-bit absmax per 64 weights; vLLM 0.28.0 on refuses it with the
release's reason (bitsandbytes moved to the vllm-bnb-plugin package), and both engines' loaders refuse tensor
parallelism for pre-quantized bitsandbytes weights."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Result, run_cli

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCE = DATA / "quantized" / "unsloth-llama-3-8b-Instruct-bnb-4bit"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


def _folder(tmp_path: Path, eight_bit: bool = False, total_size: int | None = None) -> Path:
    folder = tmp_path / ("bnb-8bit" if eight_bit else "bnb-4bit")
    folder.mkdir()
    config = json.loads((SOURCE / "config.json").read_text())
    if eight_bit:  # the same checkpoint as transformers writes an LLM.int8 one
        q = config["quantization_config"]
        for key in ("load_in_4bit", "_load_in_4bit"):
            q[key] = False
        for key in ("load_in_8bit", "_load_in_8bit"):
            q[key] = True
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    if total_size is not None:
        (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total_size}}))
    return folder


def _explain(folder: Path, build: str, gpus: int = 1, gpu: str = "rtx4090") -> Result:
    args = ["explain", "--gpu", gpu, "--gpus", str(gpus), "--model", str(folder), "--build", build, "--format", "json"]
    return run_cli(*args, env=OFFLINE)


def _linear_and_16bit(c: dict[str, Any]) -> tuple[int, int]:
    """Llama's linear-layer weights (q, k, v, o and the gated MLP per layer) and the 16-bit embedding and lm_head."""
    hidden, inner, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    kv = c["num_key_value_heads"] * c["head_dim"]
    linear = layers * (2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inner)
    return linear, 2 * c["vocab_size"] * hidden


def test_the_unsloth_config_reads_as_nf4_with_double_quantized_scales(tmp_path):
    report = run_cli("inspect", str(_folder(tmp_path)), env=OFFLINE)
    assert report.code == 0, report.err
    assert "weight format: bnb4 (bitsandbytes 4-bit nf4, double-quantized scales)" in report.out


@pytest.mark.parametrize("eight_bit", [False, True])
def test_without_weight_files_the_size_is_the_bitsandbytes_storage_of_the_shapes(tmp_path, eight_bit):
    # NF4: 4 bits and an 8-bit absmax per block of 64; LLM.int8: 8 bits (one FP32 scale per row); embedding and
    # lm_head stay 16-bit (bitsandbytes replaces nn.Linear only)
    folder = _folder(tmp_path, eight_bit=eight_bit)
    c = json.loads((folder / "config.json").read_text())
    linear, kept = _linear_and_16bit(c)
    bits = 8.0 if eight_bit else 4 + 8 / 64
    expected = linear * bits / 8 + kept * 2
    build = "vllm-0.27.1"
    result = _explain(folder, build, gpu="l40s")
    assert result.code == 0, result.err
    plan = result.json()["plans"][0]
    assert plan["quant"] == ("bnb8" if eight_bit else "bnb4") and plan["build"] == build
    assert plan["memory"]["weights_gib"] * 2**30 == pytest.approx(expected, rel=0.01, abs=0.005 * 2**30)


def test_with_an_index_the_plan_holds_the_files_bytes_and_vllm_needs_no_quantization_flag(tmp_path):
    # 5.70 GB: the model.safetensors download of unsloth/llama-3-8b-Instruct-bnb-4bit (tests/data/PROVENANCE.md)
    size = 5_700_000_000
    result = _explain(_folder(tmp_path, total_size=size), "vllm-0.27.1")
    assert result.code == 0, result.err
    plan = result.json()["plans"][0]
    assert plan["memory"]["weights_gib"] * 2**30 == pytest.approx(size, abs=0.005 * 2**30)
    # vLLM reads quant_method bitsandbytes from config.json and picks its loader itself (vllm#16027)
    assert not any(a.startswith(("--quantization", "--load-format")) for a in plan["argv"]), plan["argv"]
    # KV: Llama-3-8B's 32 layers × 8 KV heads × 128 × K and V × 2 bytes
    assert plan["memory"]["kv_bytes_per_token"] == 32 * 8 * 128 * 2 * 2


def _reasons(result: Result) -> list[str]:
    doc = result.json()
    return [doc["reasons"][r["reason_id"]]["reason"] for r in doc["rejected"]]


def test_vllm_from_0_28_refuses_it_with_the_releases_reason(tmp_path):
    result = _explain(_folder(tmp_path), "vllm-0.33.0")
    assert result.code == 0, result.err
    assert result.json()["plans"] == []
    reasons = _reasons(result)
    assert any("no bnb4 kernel" in r and "vllm-bnb-plugin" in r for r in reasons), reasons


def test_vllm_refuses_tensor_parallelism_for_a_pre_quantized_bitsandbytes_checkpoint(tmp_path):
    result = _explain(_folder(tmp_path), "vllm-0.27.1", gpus=2)
    assert result.json()["plans"] == []
    reasons = _reasons(result)
    assert any("Prequant BitsAndBytes models with tensor parallelism" in r for r in reasons), reasons


@pytest.mark.parametrize(
    ("build", "runs"),
    [("sglang-0.5.23", True), ("sglang-0.5.8", True), ("sglang-0.5.6.post2", False)],
)
def test_sglang_loads_it_where_its_quantization_table_has_bitsandbytes(tmp_path, build, runs):
    result = _explain(_folder(tmp_path), build)
    assert result.code == 0, result.err
    plans = result.json()["plans"]
    assert bool(plans) == runs, _reasons(result)
    if not runs:
        assert any("no bitsandbytes method" in r for r in _reasons(result)), _reasons(result)
        return
    # SGLang reads the stored quant states only with its bitsandbytes load format, which auto never picks
    argv = plans[0]["argv"]
    assert argv[argv.index("--load-format") + 1] == "bitsandbytes", argv


def test_sglang_refuses_tensor_parallelism_for_it_too(tmp_path):
    result = _explain(_folder(tmp_path), "sglang-0.5.23", gpus=2)
    assert result.json()["plans"] == []
    reasons = _reasons(result)
    assert any("Prequant BitsAndBytes models with TP is not supported" in r for r in reasons), reasons


def test_a_bnb_name_is_read_as_its_format_without_the_files():
    # the catalog's own variant by its repo, and names it does not list read from their words (bnb, 4bit / 8bit)
    for name, quant, how in (
        ("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", "bnb4", "variant bnb4"),
        ("unsloth/Meta-Llama-3.1-8B-Instruct-unsloth-bnb-4bit", "bnb4", "weight format bnb4"),
        ("someone/Meta-Llama-3.1-8B-Instruct-bnb-8bit", "bnb8", "weight format bnb8"),
    ):
        result = run_cli("explain", "--gpu", "rtx4090", "--model", name, "--format", "json", env=OFFLINE)
        assert result.code == 0, result.err
        doc = result.json()
        assert how in doc["request"]["understood_as"], name
        assert doc["plans"] and doc["plans"][0]["quant"] == quant, name
