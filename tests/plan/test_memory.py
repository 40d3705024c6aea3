"""Memory planner: per-token KV and per-request state pinned to hand derivations from config.json
values (shared/reference/models.md), plus the solve behaviour users rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from recipegen.plan.footprint import footprint
from recipegen.plan.memory import round_contexts


def fp(catalog, model_id, kv="bf16", tp=1, layer_split=1, slots=1):
    result = footprint(catalog.models[model_id], kv, tp, layer_split, slots)
    assert not hasattr(result, "reason"), result
    return result


def test_glm_5_2_dsa(catalog):
    # MLA latent kv_lora_rank 512 + qk_rope 64 = 576 values × 2 B (bf16) × 78 layers = 89,856 B,
    # replicated on every TP rank; IndexShare: 21 indexer layers × (128 FP8 + 4 B scale) = 2,772 B.
    assert fp(catalog, "glm-5.2", tp=8).per_token == 89_856 + 2_772
    # FlashMLA's packed FP8 layout is 656 B per token per layer: 78 × 656 = 51,168 B.
    assert fp(catalog, "glm-5.2", kv="fp8_ds_mla", tp=8).per_token == 51_168 + 2_772


def test_glm_5_3_flash_hybrid(catalog):
    # 11 DSA layers × 512 NoPE latent × 2 B = 11,264 B; indexer keys pooled 4:1: 11 × 132 / 4 = 363 B.
    result = fp(catalog, "glm-5.3-flash", tp=2, slots=5)
    assert result.per_token == 11_264 + 363
    # KDA state per request at TP2: 34 layers × 32 heads × 128 × 128 × 4 B (fp32) = 71,303,168 B,
    # plus the short-conv state 34 × (4-1) × 32 × (128+128+128) × 2 B = 2,506,752 B; SGLang keeps 5 slots.
    assert result.state_per_request == (71_303_168 + 2_506_752) * 5


def test_deepseek_v4_flash_compressed(catalog):
    # FP8 entries are 584 B: CSA 21 layers / 4 tokens + HCA 20 layers / 128 tokens,
    # CSA indexer 21 layers × 132 B / 4; every one of the 43 layers keeps a 128-token window.
    result = fp(catalog, "deepseek-v4-flash", kv="fp8_e4m3", tp=8)
    assert result.per_token == pytest.approx(21 * 584 / 4 + 20 * 584 / 128 + 21 * 132 / 4)
    assert result.per_request == 43 * 128 * 584


def test_deepseek_v3_2_dsa(catalog):
    # 61 layers × 576 × 2 B = 70,272 B + indexer 61 × 132 B = 8,052 B
    assert fp(catalog, "deepseek-v3.2", tp=8).per_token == 70_272 + 8_052


def test_kimi_k2_dense_mla(catalog):
    # 61 layers × (512 + 64) × 2 B, the same on every TP rank
    assert fp(catalog, "kimi-k2", tp=1).per_token == fp(catalog, "kimi-k2", tp=8).per_token == 70_272


def test_qwen3_235b_gqa(catalog):
    # 94 layers × K+V × 4 KV heads × 128 × 2 B = 192,512 B at TP1; at TP8 each rank holds one
    # (replicated) KV head: 94 × 2 × 1 × 128 × 2 = 48,128 B.
    assert fp(catalog, "qwen3-235b-a22b", tp=1).per_token == 192_512
    assert fp(catalog, "qwen3-235b-a22b", tp=8).per_token == 48_128


def test_llama_3_1_405b_gqa(catalog):
    # 126 layers × 2 × (8 KV heads / TP8) × 128 × 2 B
    assert fp(catalog, "llama-3.1-405b", tp=8).per_token == 64_512


def test_gpt_oss_120b_sliding_window(catalog):
    # 18 full layers × 2 × 8 KV heads × 64 × 2 B = 36,864 B/token; the 18 sliding layers hold at
    # most 128 tokens per request: 18 × 2 × 8 × 64 × 2 × 128 = 4,718,592 B.
    result = fp(catalog, "gpt-oss-120b")
    assert result.per_token == 36_864
    assert result.per_request == 4_718_592


def test_layer_split_divides_per_gpu_cost(catalog):
    whole = fp(catalog, "kimi-k2", kv="fp16")
    split = fp(catalog, "kimi-k2", kv="fp16", layer_split=8)
    assert split.per_token == whole.per_token / 8


def test_round_contexts_start_at_the_model_max():
    assert round_contexts(1_048_576)[:3] == [1_048_576, 524_288, 262_144]
    assert round_contexts(163_840)[:3] == [163_840, 131_072, 65_536]
    assert round_contexts(40_960)[-1] == 4_096


def test_mtp_drafting_adds_the_draft_layers_cache(catalog):
    # GLM-5.2 has one MTP layer: drafting with it caches one more latent layer (79 × 1,152 B)
    result = footprint(catalog.models["glm-5.2"], "bf16", 8, 1, 1, mtp=True)
    assert result.per_token == 79 * 1_152 + 2_772


def test_h200_seed_recipe_with_mtp_plans_the_draft_layer(cli):
    doc = cli("explain", "--format", "json", "--gpu", "h200", "--model", "glm-5.2", "--gpus", "8").json()
    assert doc["plans"][0]["deployment"] == "glm-5.2-int4-int8mix-8xh200-vllm"
    fp8 = cli(
        "explain",
        "--format",
        "json",
        "--gpu",
        "h200",
        "--model",
        "glm-5.2",
        "--gpus",
        "8",
        "--variant",
        "fp8",
        "--engine",
        "vllm",
    ).json()["plans"][0]["memory"]
    # the derived FP8 plan does not draft, so no MTP layer in its breakdown
    assert fp8["breakdown"][0]["what"].startswith("MLA latent: 78 layers")


def test_vllm_default_concurrency_stays_within_what_vllm_accepts(cli, tmp_path):
    # a tiny model leaves room for ~10,000 full-length requests; vLLM refuses --max-num-seqs above its default
    # max_num_batched_tokens (2048 on most GPUs), so the default stops there; llama.cpp has no such bound
    recipes = Path(__file__).resolve().parents[1] / "e2e" / "recipes"
    base = ["--recipes", str(recipes), "--gpu", "rtx-4090", "--gpus", "1", "--model", "tiny-chatml", "--format", "json"]
    vllm = cli(*base, "--engine", "vllm", "--out", str(tmp_path / "v")).json()
    memory = vllm["plans"][0]["memory"]
    assert memory["concurrency"] == 2048 < memory["full_length_requests"]
    args = vllm["container"]["nodes"][0]["args"]
    assert args[args.index("--max-num-seqs") + 1] == "2048"
    # what a user asks for is kept
    asked = cli(*base, "--engine", "vllm", "--concurrency", "4000", "--out", str(tmp_path / "u")).json()
    assert asked["plans"][0]["memory"]["concurrency"] == 4000
