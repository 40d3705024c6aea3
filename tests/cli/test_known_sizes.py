"""A plan for a checkpoint whose exact size the catalog holds uses that size: its weights are the file's bytes and it
prints no "estimated" note; a checkpoint without one still says its size is estimated."""

from __future__ import annotations

from typing import Any

from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
ESTIMATE_NOTE = "checkpoint size not in the catalog"


def plans(gpu: str, model: str) -> list[dict[str, Any]]:
    result = run_cli("explain", "--gpu", gpu, "--gpus", "1", "--model", model, "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    found: list[dict[str, Any]] = result.json()["plans"]
    return found


def test_qwen3_14b_gguf_plans_use_the_hub_file_sizes(catalog):
    model = catalog.models["qwen3-14b"]
    sized = {v.id: v.size_bytes for v in model.variants if v.quant == "gguf" and v.size_bytes}
    gguf = [p for p in plans("rtx-4090", "qwen3-14b") if p["variant"] in sized]
    assert {p["variant"] for p in gguf} >= {"gguf-bartowski-q6-k", "gguf-bartowski-q8-0"}
    for p in gguf:
        assert not any(ESTIMATE_NOTE in n for n in p["notes"]), p["variant"]
        assert p["memory"]["weights_estimated"] is None, p["variant"]
        # one GPU holds every layer: the weights in memory are the file's bytes
        assert abs(p["memory"]["weights_gib"] - sized[p["variant"]] / 2**30) < 0.01, p["variant"]


def test_q6_k_fits_a_24_gb_card_with_its_whole_context():
    q6 = next(p for p in plans("rtx-4090", "qwen3-14b") if p["variant"] == "gguf-bartowski-q6-k")
    assert q6["memory"]["fits"] and not q6["offload"]
    assert q6["memory"]["context"] >= 32768
    assert "Qwen_Qwen3-14B-Q6_K.gguf" in " ".join(q6["argv"])


def test_a_checkpoint_without_a_size_still_says_it_is_estimated():
    unsized = next(p for p in plans("rtx-4090", "qwen3-32b") if p["variant"] == "gguf-unsloth-q4-k-m")
    assert any(ESTIMATE_NOTE in n for n in unsized["notes"])
    assert unsized["memory"]["weights_estimated"]


def test_at_the_same_shown_speed_a_known_size_ranks_before_an_estimated_one() -> None:
    # two Q4_K_M copies of Qwen3-32B: bartowski's size is on its Hub listing, unsloth's is estimated from the bits
    result = run_cli(
        "explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-32b", "--format", "json", env=OFFLINE
    )
    assert result.code == 0, result.err
    first, second = result.json()["plans"][:2]
    assert first["variant"] == "gguf-bartowski-q4-k-m"
    assert "size is known before one whose size is estimated" in first["why_first"]
    assert round(first["speed"]["decode_tokens_per_s"]) == round(second["speed"]["decode_tokens_per_s"])
