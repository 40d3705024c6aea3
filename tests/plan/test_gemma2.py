"""Gemma 2 (Gemma2ForCausalLM): every other layer attends within a 4096-token window, the rest globally; its
attention logits are soft-capped. The plans keep K and V per context token only in the global layers and at most
the window per request in the others, as vLLM's gemma2.py lays them out (layer_types: sliding_attention on even
layers, https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/models/gemma2.py), each per GPU as
max(1, KV heads // tensor parallel size) (vllm/config/model.py get_num_kv_heads)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from recipegen.catalog import harvest
from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
CONFIG = Path(__file__).resolve().parents[1] / "data" / "configs" / "Gemma2ForCausalLM"
# (layers, KV heads, head size) as the recipes state them (MaxText's gemma2_9b_config / gemma2_27b_config)
SHAPES = {"gemma-2-9b": (42, 8, 256), "gemma-2-27b": (46, 16, 128)}
WINDOW = 4096


def _first_vllm_plan(model: str, gpu: str, gpus: int) -> dict[str, Any]:
    explained = run_cli(
        "explain", "--gpu", gpu, "--gpus", str(gpus), "--model", model, "--engine", "vllm", "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    plans = explained.json()["plans"]
    assert plans, explained.out[:400]
    return dict(plans[0])


@pytest.mark.parametrize("model", sorted(SHAPES))
@pytest.mark.parametrize("tp", [1, 2])
def test_gemma_2_keeps_kv_per_token_only_in_its_global_layers(model, tp):
    layers, kv_heads, head = SHAPES[model]
    plan = _first_vllm_plan(model, "h100", tp)
    memory = plan["memory"]
    per_element = 1 if "fp8" in str(plan["settings"].get("kv_cache_dtype", "")) else 2
    per_gpu = max(1, kv_heads // tp)
    per_layer_token = 2 * per_gpu * head * per_element
    assert memory["kv_bytes_per_token"] == layers // 2 * per_layer_token
    assert memory["per_request_bytes"] == layers // 2 * per_layer_token * WINDOW
    assert memory["context"] == 8192  # Gemma2Config's max_position_embeddings


# the 27B's smallest 4-bit file (~16.5 GB) leaves a 16 GB card short, so it is asked of the 24 GB cards only
CARDS = [(g, m) for g in ("rtx-3090", "rtx-4090", "a10") for m in sorted(SHAPES)] + [("rtx-4080", "gemma-2-9b")]


@pytest.mark.parametrize(("gpu", "model"), CARDS)
def test_the_everyday_card_runs_gemma_2_from_gpu_memory(gpu, model):
    # the first plan holds the weights on the GPU (quantized where BF16 does not fit), never offloaded
    explained = run_cli("explain", "--gpu", gpu, "--gpus", "1", "--model", model, "--format", "json", env=OFFLINE)
    assert explained.code == 0, explained.err
    first = explained.json()["plans"][0]
    memory = first["memory"]
    assert not first["offload"] and memory["fits"]
    assert memory["weights_gib"] + memory["runtime_reserve_gib"] < memory["gpu_gib"]
    if model == "gemma-2-27b":  # 54 GB in BF16: only a quantized checkpoint fits one such card
        assert first["quant"] != "bf16"
    if first["engine"] == "llama.cpp":
        assert any(a.endswith(".gguf") for a in first["argv"]), first["argv"]


def test_a_gemma_2_folder_is_laid_out_as_vllm_does_and_named_as_the_family(tmp_path):
    # the real Gemma-2-2B-shaped config.json (tests/data/PROVENANCE.md): no layer_types, so Gemma2Config's default
    # alternation applies; inspect names the catalog's models of the same class (the 2B is not one of them)
    folder = tmp_path / "gemma2"
    folder.mkdir()
    shutil.copy(CONFIG / "config.json", folder / "config.json")
    total = json.loads((CONFIG / "index-metadata.json").read_text())["metadata"]["total_size"]
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
    c = json.loads((folder / "config.json").read_text())
    report = run_cli("inspect", str(folder), env=OFFLINE)
    assert report.code == 0, report.err
    assert "Gemma2ForCausalLM" in report.out and "same class: gemma-2-27b, gemma-2-9b" in report.out
    plan = _first_vllm_plan(str(folder), "h200", 1)
    per_layer_token = 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    assert plan["memory"]["kv_bytes_per_token"] == c["num_hidden_layers"] // 2 * per_layer_token
    assert plan["memory"]["per_request_bytes"] == c["num_hidden_layers"] // 2 * per_layer_token * c["sliding_window"]
    assert harvest.detail("vllm", "0.33.0")["architectures"]["Gemma2ForCausalLM"]["module"] == "gemma2"


CURATED = Path(__file__).resolve().parents[1] / "data" / "curated" / "gemma-2-9b-it"


def test_the_real_gemma_2_9b_folder_plans_its_index_bytes_and_is_named_as_the_catalog_model(tmp_path):
    # google/gemma-2-9b-it's own config.json and its index's total_size (tests/data/PROVENANCE.md), as a user's
    # download holds them: the weights are the index's bytes (within 3 %), the cache is vLLM's gemma2.py layout
    folder = tmp_path / "gemma-2-9b-it"
    folder.mkdir()
    shutil.copy(CURATED / "config.json", folder / "config.json")
    total = json.loads((CURATED / "index-metadata.json").read_text())["metadata"]["total_size"]
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
    c = json.loads((folder / "config.json").read_text())
    report = run_cli("inspect", str(folder), env=OFFLINE)
    assert "catalog family: gemma-2-9b — medium: same architecture and dimensions as gemma-2-9b" in report.out
    plan = _first_vllm_plan(str(folder), "h100", 1)
    assert plan["memory"]["weights_gib"] * 2**30 == pytest.approx(total, rel=0.03)
    per_layer_token = 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    assert plan["memory"]["kv_bytes_per_token"] == c["num_hidden_layers"] // 2 * per_layer_token
    # the catalog's recipe states the same size for the official repo
    catalog = _first_vllm_plan("gemma-2-9b", "h100", 1)
    assert catalog["memory"]["weights_gib"] == plan["memory"]["weights_gib"]
