"""The speed estimate: hand derivations, the directions it must move, and the calibration table
that keeps its band honest."""

from __future__ import annotations

import pytest

from recipegen.plan.calibration import Measurement, by_regime, compare, load, prefill_ratios, summary
from recipegen.plan.offload import HostFacts
from recipegen.plan.speed import BANDS, PREFILL_BAND, Scenario, estimate
from tests.support.cli import run_cli


def scenario(catalog, model: str, gpu: str, gpus: int, size_gib: float, kv_per_token: float, **kw) -> Scenario:
    base = dict(
        model=catalog.models[model],
        hardware=catalog.hardware[gpu],
        gpus_per_node=gpus,
        nodes=1,
        layer_split=True,
        size_bytes=size_gib * 2**30,
        quant="gguf",
        kv_per_token_gpu=kv_per_token,
        per_request_gpu=0.0,
        context=256,
        concurrency=1,
        host=HostFacts(),
    )
    return Scenario(**{**base, **kw})


def test_dense_70b_on_two_3090s_equals_the_hand_derivation(catalog):
    """Llama-3.3-70B Q4_K_M (39.60 GiB = 42,520,176,230 B) split by layers over 2 × RTX 3090.

    KV (fp16) per token per GPU: 80 layers × 2 (K,V) × 8 KV heads × 128 × 2 B ÷ 2 GPUs = 163,840 B;
    at 256 tokens on both GPUs: 256 × 163,840 × 2 = 83,886,080 B.
    The GPUs run one after another, so one step reads 42,520,176,230 + 83,886,080 B at
    936 GB/s × 0.7 = 655.2 GB/s: 65.02 ms. Compute (2 × 70e9 FLOPs ÷ 71 TFLOPS × 0.5 = 3.9 ms) hides
    under it. 1 ÷ 65.02 ms = 15.38 tok/s (published: 16.57, XiongjieDai tg512).
    """
    est = estimate(scenario(catalog, "llama-3.3-70b", "rtx-3090", 2, 39.60, 163_840))
    assert est.decode_tps == pytest.approx(15.3788, rel=1e-4)
    assert est.bound == "GPU memory bandwidth" and est.regime == "roofline"


def test_gpt_oss_120b_with_ten_expert_layers_on_the_cpu_equals_the_hand_derivation(catalog):
    """gpt-oss-120b GGUF (59.02 GiB = 63,372,242,452 B) on 2 × RTX 3090, --n-cpu-moe 10, 4,096 tokens.

    Routed experts: 128 × 3 × 2880 × 2880 × 36 = 114,661,785,600 params; the other
    117e9 − 114.66e9 = 2,338,214,400 params stay at ≥ 1 B each (the file averages 0.54 B/param):
    2,338,214,400 B on the GPUs; experts 63,372,242,452 − 2,338,214,400 = 61,034,028,052 B,
    1,695,389,668 B per layer. One request reads top-4 of 128 = 3.125 % of each layer's experts.
    GPU: 2,338,214,400 + 26 × 1,695,389,668 × 0.03125 = 3,715,718,505 B of weights, plus KV:
    (4,096 × 18,432 B + 2,359,296 B window) per GPU × 2 = 155,713,536 B → ÷ 655.2 GB/s = 5.909 ms.
    Host: 10 × 1,695,389,668 × 0.03125 = 529,809,271 B ÷ (51.2 GB/s × 0.6) = 17.246 ms.
    Step 23.155 ms → 43.19 tok/s.
    """
    est = estimate(
        scenario(
            catalog,
            "gpt-oss-120b",
            "rtx-3090",
            2,
            59.02,
            18_432,
            per_request_gpu=2_359_296.0,
            context=4096,
            cpu_expert_layers=10,
        )
    )
    assert est.decode_tps == pytest.approx(43.1869, rel=1e-4)
    assert est.bound == "host RAM bandwidth"


def test_estimate_moves_the_right_way(catalog):
    base = scenario(catalog, "gpt-oss-120b", "rtx-3090", 2, 59.02, 18_432, context=4096, cpu_expert_layers=10)
    speed = estimate(base).decode_tps
    faster_ram = Scenario(**{**base.__dict__, "host": HostFacts(bandwidth_gbs=102.4, bandwidth_default=False)})
    assert estimate(faster_ram).decode_tps > speed
    assert estimate(Scenario(**{**base.__dict__, "context": 65536})).decode_tps < speed
    assert estimate(Scenario(**{**base.__dict__, "cpu_expert_layers": 20})).decode_tps < speed
    assert estimate(Scenario(**{**base.__dict__, "cpu_expert_layers": 0})).decode_tps > speed
    faster_gpu = Scenario(**{**base.__dict__, "hardware": catalog.hardware["rtx-5090"]})
    assert estimate(faster_gpu).decode_tps > speed


def test_every_plan_carries_an_estimate_that_the_cli_varies_with_the_host():
    def decode(*extra: str) -> float:
        result = run_cli(
            "explain",
            "--format",
            "json",
            "--gpu",
            "rtx-3090",
            "--gpus",
            "2",
            "--model",
            "gpt-oss-120b",
            "--engine",
            "llama.cpp",
            *extra,
        )
        assert result.code == 0, result.err
        plans = result.json()["plans"]
        assert all(p["speed"] is not None and p["speed"]["estimate"] is True for p in plans)
        return plans[0]["speed"]["decode_tokens_per_s"]

    assert decode("--host-bandwidth", "100") > decode("--host-bandwidth", "40")
    assert decode("--context", "131072") < decode("--context", "8192")


def test_offload_plans_estimate_slower_than_the_same_gpus_without_offload():
    def top(gpus: str) -> dict:
        result = run_cli(
            "explain",
            "--format",
            "json",
            "--gpu",
            "rtx-3090",
            "--gpus",
            gpus,
            "--model",
            "gpt-oss-120b",
            "--engine",
            "llama.cpp",
            "--context",
            "32768",
        )
        return result.json()["plans"][0]

    offloaded, resident = top("2"), top("4")
    assert offloaded["offload"] is not None and resident["offload"] is None
    assert offloaded["speed"]["decode_tokens_per_s"] < resident["speed"]["decode_tokens_per_s"]


def test_explain_and_readme_show_the_estimate_with_its_band(tmp_path):
    text = run_cli("explain", "--gpu", "h200", "--gpus", "8", "--model", "deepseek-v3").out
    assert "speed (estimate" in text and "the published tensor-parallel MoE runs reached only" in text
    result = run_cli("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--out", str(tmp_path / "o"))
    assert result.code == 0, result.err
    readme = (tmp_path / "o" / "README.md").read_text()
    assert "## Expected speed (an estimate, not a measurement)" in readme
    assert "assumes: efficiency" in readme


def test_the_calibration_table_is_sourced_and_the_bands_cover_it(catalog):
    """At least 15 published measurements, each with a source URL; each regime's band spans the
    10th–90th percentile of measured ÷ estimated (and, from 3 rows on, is not padded far beyond it)."""
    rows = load()
    assert len(rows) >= 15
    assert all(r.source.url.startswith("https://") for r in rows)
    assert {r.parallelism for r in rows} == {"layers", "tensor"} and any(r.offload != "none" for r in rows)
    comparisons = [compare(catalog, r) for r in rows]
    for regime, group in by_regime(comparisons).items():
        _, p10, p90 = summary(group)
        low, high = BANDS[regime]
        assert low <= p10 and high >= p90, (regime, p10, p90)
        if len(group) >= 3:  # with fewer rows the band may only widen toward the other regimes
            assert low >= p10 * 0.75 and high <= p90 * 1.25, (regime, p10, p90)
    prefill = prefill_ratios(comparisons)
    assert len(prefill) >= 5
    low, high = PREFILL_BAND
    assert low <= prefill[0] and high >= prefill[-1], prefill
    assert low >= prefill[0] * 0.75 and high <= prefill[-1] * 1.25, prefill


def test_a_measurement_row_is_strict():
    with pytest.raises(ValueError, match="speed"):
        Measurement.model_validate(
            {
                "id": "x",
                "engine": "vllm",
                "model": "qwen3-32b",
                "hardware": "h100-sxm",
                "gpus": 1,
                "parallelism": "tensor",
                "quant": "bf16",
                "kv_dtype": "bf16",
                "context": 1,
                "decode_tps": 1,
                "source": {"url": "https://example.org"},
                "speed": 3,
            }
        )
