"""scripts/arch_coverage.py measures which decoder classes of the newest harvested vLLM registry recipegen plans
from the real config.json files in tests/data; a config that names no dtype plans 16-bit weights, as vLLM serves
them (its dtype auto: a missing dtype reads as float32, cast to 16 bits on load, vllm/config/model.py)."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recipegen.catalog import harvest
from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
# the folders whose classes have no recipe and are laid out by the generic rules (PROVENANCE.md)
GENERIC = ("configs", "transcribed", "hybrids", "windowed", "quantized")


@functools.cache
def _measure() -> dict[str, object]:  # one sweep (about a minute) for every test of this file
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "arch_coverage.py"), "--format", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_the_coverage_script_plans_every_class_without_a_recipe_on_the_newest_vllm():
    measured = _measure()
    newest = max(harvest.releases("vllm"), key=lambda r: harvest.release_key(r) or ())
    assert measured["build"] == f"vllm-{newest}"
    registry = harvest.detail("vllm", newest)["architectures"]
    rows = measured["classes"]
    assert isinstance(rows, list)
    by_class = {r["class"]: r for r in rows}
    # every decoder class of that registry with a config in tests/data is measured, once
    decoders = {"text_generation", "multimodal", "transformers_supported"}
    with_config = set()
    for path in DATA.rglob("config.json"):
        archs = json.loads(path.read_text()).get("architectures") or [None]
        if decoders & set(registry.get(archs[0], {}).get("kinds", ())):
            with_config.add(archs[0])
    assert set(by_class) == with_config and len(rows) == len(with_config)
    generic = {r["class"]: r for r in rows if r["config"].split("/")[2] in GENERIC}
    assert len(generic) >= 40
    refused = {a: r["reason"] for a, r in generic.items() if not r["planned"]}
    assert not refused, refused
    for r in generic.values():
        assert r["kv_bytes_per_token"] >= 0 and r["weights_gib"] > 0, r
    # MiMo-V2-Flash (window layers with KV heads of their own, V narrower than K) is laid out from its config and
    # planned on the H200s: vLLM's mimo_v2.py hands K 192 / V 128 to FLASH_ATTN_DIFFKV there (data/diff_kv.yaml),
    # its cache K 192 + V 128 wide on the 9 full layers, one KV head each on 8 GPUs
    mimo = by_class["MiMoV2FlashForCausalLM"]
    assert mimo["weights_from"] == "published-params.json"
    assert mimo["planned"] and mimo["kv_bytes_per_token"] == 9 * 1 * (192 + 128) * 2, mimo


def test_a_config_that_names_no_dtype_and_has_no_weight_files_plans_16_bit_weights(tmp_path):
    # bigcode/gpt_bigcode-santacoder's config as mlc-llm quotes it names no torch_dtype; with no weight file to
    # read, vLLM still serves it in 16 bits, so the plan holds 2 bytes a parameter, not a refusal
    folder = tmp_path / "santacoder"
    folder.mkdir()
    shutil.copy(DATA / "transcribed" / "GPTBigCodeForCausalLM" / "config.json", folder / "config.json")
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.code == 0, report.err
    params = report.json()["derived"]["params_total_b"] * 1e9
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", "1", "--model", str(folder), "--engine", "vllm", "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    plans = explained.json()["plans"]
    assert plans, explained.out[:500]
    assert plans[0]["memory"]["weights_gib"] * 2**30 == pytest.approx(params * 2, rel=0.02, abs=0.005 * 2**30)
    verbose = run_cli("inspect", str(folder), env=OFFLINE)
    assert "no dtype stated" in verbose.out and "16 bits" in verbose.out


def _moonvit_params(v: dict[str, Any], text_hidden: int) -> int:
    """MoonViT's blocks (q, k, v, o and a two-matrix GELU MLP), its patch embedding, and the projector of merged
    patches (merged → merged → text width), as vLLM's kimi_vl.py builds them."""
    width, inner, depth, patch = v["vt_hidden_size"], v["vt_intermediate_size"], v["vt_num_hidden_layers"], 14
    merged = v["merge_kernel_size"][0] * v["merge_kernel_size"][1] * width
    blocks = depth * (4 * width * width + 2 * width * inner)
    return blocks + 3 * patch * patch * width + merged * merged + merged * text_hidden


def test_a_quantized_vision_model_is_estimated_with_its_tower_at_16_bits(tmp_path):
    # moonshotai/Kimi-K2.5's real config.json (tests/data/hub): INT4 compressed-tensors, a MoonViT tower whose shape
    # the vision_config states as vt_* fields. With no weight file, the size is estimated from the shapes, the
    # tower counted 16-bit as the quantizer leaves it, where it used to be refused ("in an amount the catalog does
    # not give")
    folder = tmp_path / "kimi-k2.5"
    folder.mkdir()
    shutil.copy(DATA / "hub" / "moonshotai" / "Kimi-K2.5" / "config.json", folder / "config.json")
    config = json.loads((folder / "config.json").read_text())
    tower = _moonvit_params(config["vision_config"], config["text_config"]["hidden_size"])
    report = run_cli("inspect", str(folder), env=OFFLINE)
    assert f"the vision tower's {tower / 1e9:.3f}B included" in report.out
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", "8", "--model", str(folder), "--engine", "vllm", "--verbose", env=OFFLINE
    )
    assert explained.code == 0, explained.err
    assert f"vision tower {tower / 1e9:.2f}B × 16 bits" in explained.out
    assert "in an amount the catalog does not give" not in explained.out


# tests/data/registry: real config.json files of decoder classes vLLM 0.33.0's registry lists that tests/data had no
# config for (PROVENANCE.md). No index of any of them was found, so their size is planned from the shapes; each plans
# on the coverage script's H200s, or is refused for memory alone, with the figures. The KV cache per token per GPU is
# vLLM's: GQA layers typed full_attention keep 2 × max(1, KV heads // TP) × head_dim × 2 bytes (the sliding layers a
# window per request: vllm/v1/kv_cache_interface.py SlidingWindowSpec; laguna.py, muse_glimmer.py read layer_types);
# DeepSeek-V3.2 keeps one MLA latent of kv_lora_rank + qk_rope_head_dim per layer (deepseek_v2.py, MLAAttentionSpec)
# and the DSA indexer's FP8 keys, index_head_dim bytes plus a 4-byte scale per 128 (deepseek_v2.py's indexer cache);
# GLM-4.7-Flash (glm4_moe_lite.py) the same latent without an indexer; GLM-4.7 (glm4_moe.py) plain GQA on every layer
REGISTRY = DATA / "registry"


def _expected_kv(config: dict[str, Any], tp: int) -> int:
    c = config.get("text_config") or config
    layers = c["num_hidden_layers"]
    if c.get("kv_lora_rank"):  # GLM-4.7-Flash's glm4_moe_lite.py is DeepSeek-V2's MLA: no indexer
        indexer = layers * (c["index_head_dim"] + 4) if c.get("index_head_dim") else 0
        return layers * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * 2 + indexer
    # no layer_types (glm4_moe.py): every decoder layer is full attention
    full = sum(1 for t in c.get("layer_types", ["full_attention"] * layers)[:layers] if t == "full_attention")
    return full * 2 * max(1, c["num_key_value_heads"] // tp) * c["head_dim"] * 2


def test_every_registry_class_added_for_coverage_plans_or_is_refused_for_memory_alone_with_vllms_kv_formula():
    measured = _measure()
    added = {p.name for p in REGISTRY.iterdir() if p.is_dir()}
    # a class may be measured from another copy of the same config elsewhere in tests/data; each must be measured
    rows = {r["class"]: r for r in measured["classes"] if r["class"] in added}  # type: ignore[index]
    assert sorted(rows) == sorted(added)
    assert len(rows) >= 7
    for arch, row in rows.items():
        config = json.loads((REGISTRY / arch / "config.json").read_text())
        assert config["architectures"][0] == arch
        if not row["planned"]:  # memory alone, with the figures: what the weights need and what the GPUs hold
            assert str(row["reason"]).startswith(f"on {row['gpus']} GPU(s): weights need "), row
            assert "GiB per GPU" in row["reason"] and "short by" in row["reason"], row
            continue
        assert row["kv_bytes_per_token"] == _expected_kv(config, row["gpus"]), arch
    # the coverage script says how many decoder classes of the registry it cannot speak for
    assert isinstance(measured["without_config"], dict) and "LagunaForCausalLM" not in measured["without_config"]


# tests/data/defaults: a config.json for every decoder class of the registry tests/data holds no checkpoint config
# for, made by scripts/default_configs.py from the class's own configuration code with its defaults (SOURCES.json)
DEFAULTS = DATA / "defaults"
# the classes whose defaults recipegen cannot lay out yet, each with the fields its one-line reason must name: when
# one of them plans, this list shrinks (the test fails until it does). Inkling (vllm/models/inkling) runs
# relative-position attention whose window layers carry their own heads and a short-conv state kept as a paged
# window cache; none of that is modelled
NOT_YET = {a: "swa_num_attention_heads" for a in ("InklingForCausalLM", "InklingForConditionalGeneration")}


def test_every_class_of_defaults_plans_or_is_refused_for_memory_alone_with_the_figures():
    measured = _measure()
    sources = json.loads((DEFAULTS / "SOURCES.json").read_text())
    rows = {r["class"]: r for r in measured["classes"] if r["config_kind"] == "defaults"}  # type: ignore[index]
    written = {a for a, v in sources["classes"].items() if v["config"]}
    # every config of defaults is measured, as defaults, unless a checkpoint's own config is in tests/data
    real = {r["class"] for r in measured["classes"] if r["config_kind"] == "checkpoint"}  # type: ignore[index]
    assert set(rows) == written - real and len(rows) >= 100
    for arch, row in rows.items():
        config = json.loads((DEFAULTS / arch / "config.json").read_text())
        assert config["architectures"] == [arch]
        assert sources["classes"][arch]["from"].startswith(("transformers ", "vLLM ")), arch
        if row["planned"]:
            assert row["weights_gib"] > 0 and row["kv_bytes_per_token"] >= 0, row
            continue
        if arch in NOT_YET:
            assert NOT_YET[arch] in row["reason"] and "\n" not in row["reason"], row
            continue
        assert row["memory_only"], (arch, row["reason"])
        assert "GiB per GPU" in row["reason"] and "short by" in row["reason"], row
    assert {a for a, r in rows.items() if not r["planned"] and not r["memory_only"]} == set(NOT_YET)
    # a class no code gives a config for is listed with the reason, never silently dropped
    missing = measured["without_config"]
    assert isinstance(missing, dict)
    for arch, why in missing.items():
        assert arch not in rows and arch not in real and why == sources["classes"][arch]["why"], arch


def test_an_expert_width_stated_as_expert_ffn_hidden_size_sizes_the_experts(tmp_path):
    # LongCat-Flash states its expert width as expert_ffn_hidden_size (LongcatFlashConfig's attribute_map makes it
    # moe_intermediate_size, which vLLM's longcat_flash.py reads), not ffn_hidden_size, the dense MLPs' width: the
    # routed experts alone are layers × experts × 3 matrices of hidden × that width, the rest a few percent more
    folder = tmp_path / "longcat"
    folder.mkdir()
    shutil.copy(DEFAULTS / "LongcatFlashForCausalLM" / "config.json", folder / "config.json")
    c = json.loads((folder / "config.json").read_text())
    experts = c["num_layers"] * c["n_routed_experts"] * 3 * c["hidden_size"] * c["expert_ffn_hidden_size"]
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.code == 0, report.err
    assert experts <= report.json()["derived"]["params_total_b"] * 1e9 <= 1.05 * experts


def test_a_transformers_5_config_with_only_a_per_layer_list_plans_a_hybrid(tmp_path):
    # NemotronHConfig (transformers 5) writes layers_block_type (linear_attention = Mamba, full_attention) and no
    # num_hidden_layers: the layer count is the list's length, the Mamba layers the linear_attention entries
    folder = tmp_path / "nemotron-h"
    folder.mkdir()
    shutil.copy(DEFAULTS / "NemotronHPuzzleForCausalLM" / "config.json", folder / "config.json")
    config = json.loads((folder / "config.json").read_text())
    assert "num_hidden_layers" not in config
    types = config["layers_block_type"]
    report = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE)
    assert report.code == 0, report.err
    explained = run_cli(
        "explain", "--gpu", "h200", "--gpus", "1", "--model", str(folder), "--engine", "vllm", "--format", "json",
        env=OFFLINE,
    )  # fmt: skip
    assert explained.code == 0, explained.err
    memory = explained.json()["plans"][0]["memory"]
    attention = types.count("full_attention")
    # vLLM's nemotron_h.py: K and V of num_key_value_heads × head_dim on each attention layer, 2 bytes
    assert memory["kv_bytes_per_token"] == attention * 2 * config["num_key_value_heads"] * config["head_dim"] * 2
    assert memory["state_bytes_per_request"] > 0  # the Mamba layers' state


def test_an_all_window_model_says_its_kv_is_bounded_by_the_window(tmp_path):
    # Starcoder2 windows every layer (sliding_window 4096): a request's KV stops growing at the window, so the
    # per-token figure is 0 and the memory line says what a request holds instead of "0.00 GiB"
    folder = tmp_path / "starcoder2"
    folder.mkdir()
    shutil.copy(DATA / "transcribed" / "Starcoder2ForCausalLM" / "config.json", folder / "config.json")
    config = json.loads((folder / "config.json").read_text())
    args = ["explain", "--gpu", "h200", "--gpus", "4", "--model", str(folder), "--engine", "vllm"]
    doc = run_cli(*args, "--format", "json", env=OFFLINE).json()
    memory = doc["plans"][0]["memory"]
    # vllm/v1/kv_cache_interface.py SlidingWindowSpec: each layer keeps the window's tokens, K and V of its KV heads
    kv_heads = max(1, config["num_key_value_heads"] // 4)
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    window = config["num_hidden_layers"] * 2 * kv_heads * head_dim * 2 * config["sliding_window"]
    assert memory["kv_bytes_per_token"] == 0 and memory["kv_window_bytes_per_request"] == window
    text = run_cli(*args, env=OFFLINE).out
    assert f"keeps only its window: {window / 2**20:.1f} MiB, whatever the" in text.replace("\n", " ")
    assert "needs 0.00 GiB of KV" not in text
