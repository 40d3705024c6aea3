"""Sizes of weight-only and mixed checkpoints estimated from the parameter count × each part's bits per weight
(a scale per group, a zero point where asymmetric), said to be estimates with the group size assumed; the
8×H200 GLM-5.2 Int4-Int8Mix recipe gets a memory plan and a speed from it."""

from __future__ import annotations

import pytest

from recipegen.catalog.schema import QuantGroup
from recipegen.plan.checkpoint_size import bits_per_weight, checkpoint_bytes, routed_expert_params, why_not_estimated
from tests.support.cli import run_cli
from tests.support.contract import rejections

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
H200 = ("explain", "--gpu", "h200", "--gpus", "8", "--model", "glm-5.2")


@pytest.mark.parametrize(
    ("group", "bits"),
    [
        (QuantGroup(modules="routed_experts", type="int", bits=4, group_size=128), 4 + 16 / 128),  # W4A16 symmetric
        (QuantGroup(modules="linear", type="int", bits=4, group_size=128, zero_point=True), 4 + (16 + 4) / 128),
        (QuantGroup(modules="linear", type="int", bits=4, group_size=32, zero_point=True), 4 + (16 + 4) / 32),
        (QuantGroup(modules="linear", type="int", bits=8, group_size=128), 8 + 16 / 128),
        (QuantGroup(modules="linear", type="int", bits=8), 8.0),  # a scale per row
        (QuantGroup(modules="linear", type="float", bits=4, group_size=16, scale_bits=8), 4 + 8 / 16),  # NVFP4
        (QuantGroup(modules="linear", type="float", bits=4, group_size=32, scale_bits=8), 4 + 8 / 32),  # MXFP4
        (QuantGroup(modules="linear", type="float", bits=8, group_size=128 * 128, scale_bits=32), 8 + 32 / 16384),
    ],
)
def test_bits_per_weight_of_each_format(group, bits):
    assert bits_per_weight(group) == pytest.approx(bits)


def test_the_usual_storage_of_each_format_is_assumed_and_said(catalog):
    model = catalog.models["llama-3.1-8b"]
    embed = model.vocab_size * model.hidden_size * 2
    linear = model.params_total_b * 1e9 - embed
    for quant, bits, said in (
        ("awq", 4 + 20 / 128, "group size 128"),
        ("nvfp4", 4.5, "block of 16"),
        ("mxfp4", 4.25, "block of 32"),
        ("fp8_block", 8 + 32 / 16384, "128×128 block"),
    ):
        size, note = checkpoint_bytes(model, None, quant) or (0.0, None)
        assert size == pytest.approx(linear * bits / 8 + embed * 2), quant
        assert note is not None and "estimated as" in note and said in note, note
    assert checkpoint_bytes(model, 5e9, "awq") == (5e9, None)  # a known size is used as it is


def test_glm52_int4_int8mix_on_8_h200_has_a_memory_plan_and_a_speed(catalog):
    doc = run_cli(*H200, "--format", "json", env=OFFLINE).json()
    plan = next(p for p in doc["plans"] if p["variant"] == "int4-int8mix" and p["deployment"])
    assert plan["rank"] == 1 and plan["memory"] is not None and plan["memory"]["fits"]
    assert plan["speed"] is not None and plan["speed"]["decode_tokens_per_s"] > 0
    # the quantization_config the catalog records: routed experts INT4, every other linear layer INT8, group 128
    model = catalog.models["glm-5.2"]
    experts, _ = routed_expert_params(model) or (0.0, "")
    embed = 2 * model.vocab_size * model.hidden_size
    other = model.params_total_b * 1e9 - experts - embed
    expected = experts * (4 + 16 / 128) / 8 + other * (8 + 16 / 128) / 8 + embed * 2
    assert plan["memory"]["weights_gib"] * 8 == pytest.approx(expected / 2**30, rel=0.001)
    # a write-up lists the repo at 405.5 GB with its MTP layer, which the 744B count leaves out
    assert 0.95 < expected / 405.5e9 < 1.0
    assert plan["memory"]["weights_estimated"] == f"{expected / 1e9:.1f} GB (int4 g128 + int8 g128)"
    assert any("estimated as" in n and "per group of 128" in n for n in plan["notes"]), plan["notes"]
    shown = run_cli(*H200, "--verbose", env=OFFLINE).out
    first = shown.split("  #2 ")[0]
    assert "not in the catalog, so memory is not planned" not in first and "speed: unknown" not in first
    speed = next(line for line in first.splitlines() if "speed (an estimate" in line)
    assert f"(estimated size: {expected / 1e9:.1f} GB (int4 g128 + int8 g128))" in speed
    assert "weights  " in first and "(estimated size" in next(line for line in first.splitlines() if "weights " in line)


def test_the_planned_load_says_the_concurrent_requests_share_the_kv_pool_when_it_cannot_hold_them_all_at_full_length():
    # GLM-5.2 Int4-Int8Mix on 8 x H200: 32 requests admitted (vLLM's --max-num-seqs) beside one of 1,048,576 tokens, but
    # the pool holds ~1.5M tokens per GPU: the speed line said "32 requests of 1,048,576 tokens", 33M tokens in all
    doc = run_cli(*H200, "--variant", "int4-int8mix", "--format", "json", env=OFFLINE).json()
    memory = doc["plans"][0]["memory"]
    assert memory["concurrency"] > memory["full_length_requests"] >= 1
    pool_tokens = memory["kv_pool_gib"] * 2**30 / memory["kv_bytes_per_token"]
    shown = run_cli(*H200, "--variant", "int4-int8mix", env=OFFLINE).out
    line = " ".join(shown.split())
    assert f"requests of {memory['context']:,} tokens" not in line
    share = int(line.split("requests sharing the KV pool (~")[1].split(" tokens each")[0].replace(",", ""))
    assert share * memory["concurrency"] <= pool_tokens * 1.001 and share < memory["context"]


def test_an_estimated_size_ranks_by_what_runs_best_and_unsized_says_why(catalog):
    """No plan says a size is not in the catalog where parameters × bits give one; where they cannot (a
    vision tower kept 16-bit in unknown amount), the reason says why no estimate is made."""
    doc = run_cli(*H200, "--format", "json", env=OFFLINE).json()
    first = doc["plans"][0]
    assert first["memory"]["weights_estimated"] and first["variant"] == "int4-int8mix"
    for model in catalog.models.values():
        for variant in model.variants:
            if variant.quant not in ("int4_int8_mix", "awq", "gptq", "int4", "fp8_block"):
                continue
            if not model.multimodal:  # linear-attention models too: their state is per request, not a weight
                assert checkpoint_bytes(model, variant.size_bytes, variant.quant, variant.quant_groups), variant.id
            elif checkpoint_bytes(model, variant.size_bytes, variant.quant, variant.quant_groups) is None:
                assert "in an amount the catalog does not give" in why_not_estimated(model, variant.quant), variant.id
    kimi = run_cli("explain", "--gpu", "h200", "--gpus", "8", "--model", "kimi-k2.5", "--format", "json", env=OFFLINE)
    unsized = [r["reason"] for r in rejections(kimi.json()) if (r["variant"], r["gate"]) == ("nvfp4", "memory")]
    assert unsized and all("no estimate from the parameter count (its vision tower stays 16-bit" in r for r in unsized)


@pytest.mark.parametrize(
    ("file", "name", "bits"),
    [
        # llama-quantize's own table: Q4_K_M is 4.58 GiB for Llama-3-8B's 8,030,261,248 parameters
        ("Devstral-Small-2507-Q4_K_M.gguf", "Q4_K_M", 4.58 * 2**30 * 8 / 8_030_261_248),
        ("gemma-3-1b-it-q4_0.gguf", "Q4_0", 4.34 * 2**30 * 8 / 8_030_261_248),
        ("UD-IQ2_M/GLM-5.2-UD-IQ2_M-00001-of-00006.gguf", "IQ2_M", 2.7),  # stated as 2.7 bpw
        ("Qwen3-Coder-30B-A3B-Instruct-UD-Q4_K_XL.gguf", "Q4_K_XL", 4.58 * 2**30 * 8 / 8_030_261_248),
    ],
)
def test_a_gguf_file_is_sized_from_its_quantization_name(catalog, file, name, bits):
    model = catalog.models["qwen3-32b"]
    size, note = checkpoint_bytes(model, None, "gguf", file=file) or (0.0, None)
    assert size == pytest.approx(model.params_total_b * 1e9 * bits / 8)
    assert note is not None and f"({name})" in note and "llama-quantize" in note
    assert checkpoint_bytes(model, None, "gguf", file="model.gguf") is None  # no quantization in the name


def test_a_gguf_plan_of_unknown_size_is_estimated_and_said(catalog):
    doc = run_cli(
        "explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "devstral-small-2507", "--format", "json", env=OFFLINE
    ).json()
    gguf = [p for p in doc["plans"] if p["quant"] == "gguf" and p["memory"]]
    assert gguf and all(p["memory"]["weights_estimated"].endswith("(Q4_K_M)") for p in gguf)
    ids = {v.id for v in catalog.models["devstral-small-2507"].variants if v.quant == "gguf"}
    unknown = [r for r in rejections(doc) if r["variant"] in ids and (r["gate"], r["outcome"]) == ("memory", "unknown")]
    assert not unknown, unknown
