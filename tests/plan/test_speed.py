"""The speed estimate: hand derivations, the directions it must move, and the calibration table
that keeps its band honest."""

from __future__ import annotations

import re

import pytest

from recipegen.plan.calibration import Measurement, scenario_of_row
from recipegen.plan.offload import HostFacts
from recipegen.plan.speed import Scenario, class_of, estimate
from recipegen.plan.steptime import terms
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


def test_layer_split_terms_equal_the_hand_derivation(catalog):
    """Llama-3.3-70B Q4_K_M (39.60 GiB = 42,520,176,230 B) split by layers over 2 × RTX 3090.

    The input embedding table is read one row per token: (128,256 − 1) × 8,192 × 0.6074 B/param (the file's
    average) = 638,206,560 B stay unread. KV (fp16) per token per GPU: 163,840 B; at 256 tokens on both GPUs
    83,886,080 B. The GPUs run one after another, so one step reads 41,881,969,670 + 83,886,080 B at the
    RTX 3090's published read figure (91.2 % of 936 GB/s = 853.6 GB/s): 49.16 ms at unit coefficient; one
    hop between the two GPUs; 80 layers, each dequantising its GGUF weights; no all-reduce.
    """
    t = terms(scenario(catalog, "llama-3.3-70b", "rtx-3090", 2, 39.60, 163_840, engine="llama.cpp"))
    assert t.gpu_bytes == pytest.approx(41_881_969_670, rel=1e-6)
    assert t.x["mem"] == pytest.approx(0.0491615, rel=1e-4)
    assert (t.x["hop"], t.x["layer"], t.x["dequant"], t.x["moe"]) == (1, 80, 80, 0)
    assert t.x["allreduce_nvlink"] == t.x["allreduce_pcie"] == 0


def test_cpu_offload_terms_equal_the_hand_derivation(catalog):
    """gpt-oss-120b GGUF (59.02 GiB = 63,372,242,452 B) on 2 × RTX 3090, --n-cpu-moe 10, 4,096 tokens.

    Routed experts: 128 × 3 × 2880 × 2880 × 36 = 114,661,785,600 params; the other 2,338,214,400 params stay
    at ≥ 1 B each: experts 61,034,028,052 B, 1,695,389,668 B per layer, of which one request reads top-4 of
    128 = 3.125 %. Host: 10 × 1,695,389,668 × 0.03125 = 529,809,271 B ÷ 51.2 GB/s = 10.348 ms at unit
    coefficient; on the GPUs 26 layers' share plus the 2,338,214,400 B of the rest (less the unread embedding).
    """
    s = scenario(
        catalog,
        "gpt-oss-120b",
        "rtx-3090",
        2,
        59.02,
        18_432,
        per_request_gpu=2_359_296.0,
        context=4096,
        cpu_expert_layers=10,
        engine="llama.cpp",
    )
    t = terms(s)
    assert t.host_bytes == pytest.approx(529_809_271, rel=1e-6)
    assert t.x["host"] == pytest.approx(0.0103478, rel=1e-4)
    assert t.x["moe"] == 36 and class_of(s) == "CPU offload"
    assert estimate(s).bound == "host RAM bandwidth" and estimate(s).slow


def test_tensor_parallel_moe_terms_count_two_all_reduces_per_layer(catalog):
    """Qwen3-235B-A22B BF16 (470 GB) over TP 8 on H20 (NVLink): 2 × 94 layers = 188 all-reduces, 94 MoE layers;
    the weights read per GPU are an eighth of the dense part plus an eighth of the 8 of 128 experts touched."""
    model = catalog.models["qwen3-235b-a22b"]
    s = scenario(catalog, "qwen3-235b-a22b", "h20", 8, 470e9 / 2**30, 0.0, layer_split=False, quant="bf16")
    t = terms(s)
    assert t.x["allreduce_nvlink"] == 188 and t.x["allreduce_pcie"] == 0 and t.x["moe"] == 94
    assert class_of(s) == "tensor-parallel MoE"
    assert model.moe is not None and t.split is not None
    touched = t.split.resident_bytes + t.split.moe_layers * t.split.expert_layer_bytes * 8 / 128
    assert t.gpu_bytes < touched  # less the unread embedding table
    assert t.x["mem"] == pytest.approx(t.gpu_bytes / 8 / (4000e9 * 0.465), rel=1e-6)
    pcie = terms(scenario(catalog, "qwen3-235b-a22b", "rtx-pro-6000", 8, 470e9 / 2**30, 0.0, layer_split=False))
    assert pcie.x["allreduce_pcie"] == 188 and pcie.x["allreduce_nvlink"] == 0


def test_single_gpu_unified_and_multi_node_classes(catalog):
    one = scenario(catalog, "qwen3-8b", "h100-sxm", 1, 15.3, 0.0, layer_split=False, quant="bf16", engine="sglang")
    assert class_of(one) == "single-GPU dense · sglang" and terms(one).x["dequant"] == 0
    spark = scenario(catalog, "gpt-oss-120b", "gb10", 1, 60.0, 0.0, layer_split=False, quant="mxfp4")
    assert class_of(spark) == "unified memory" and terms(spark).read_share == 0.85
    nodes = scenario(catalog, "qwen3-32b", "gb10", 1, 33.0, 0.0, layer_split=False, nodes=4)
    assert class_of(nodes) == "multi-node" and terms(nodes).x["allreduce_network"] == 2 * 64


def test_tied_embeddings_are_read_whole_and_untied_ones_one_row(catalog):
    tied = terms(scenario(catalog, "qwen3-0.6b", "h100-sxm", 1, 1.4, 0.0, layer_split=False, quant="bf16"))
    untied = terms(scenario(catalog, "qwen3-8b", "h100-sxm", 1, 15.3, 0.0, layer_split=False, quant="bf16"))
    assert tied.gpu_bytes == pytest.approx(1.4 * 2**30)
    assert untied.gpu_bytes == pytest.approx(15.3 * 2**30 - 151_935 * 4096 * 2)


def test_mla_layers_on_the_triton_path_are_their_own_term(catalog):
    """DeepSeek-V3 (61 MLA layers) over TP 8 on H200: the fused MLA kernels by default; a run recorded with
    `mla_backend: triton` (releases before FlashInfer MLA / FlashMLA) charges its layers to the Triton term,
    which the published early runs make dearer. DSA (DeepSeek-V3.2) is MLA plus an indexer: MLA layers too."""
    base = scenario(catalog, "deepseek-v3", "h200", 8, 642.0, 70_272, layer_split=False, quant="fp8_block")
    fused, triton = terms(base), terms(Scenario(**{**base.__dict__, "mla_triton": True}))
    assert (fused.x["mla"], fused.x["mla_triton"]) == (61, 0)
    assert (triton.x["mla"], triton.x["mla_triton"]) == (0, 61)
    assert estimate(Scenario(**{**base.__dict__, "mla_triton": True})).decode_tps < estimate(base).decode_tps
    v32 = catalog.models["deepseek-v3.2"]
    dsa = terms(scenario(catalog, "deepseek-v3.2", "h20", 8, 690.0, 70_272, layer_split=False, quant="fp8_block"))
    assert v32.attention.kind == "dsa" and dsa.x["mla"] == v32.layers
    gqa = terms(scenario(catalog, "qwen3-235b-a22b", "h20", 8, 470e9 / 2**30, 0.0, layer_split=False, quant="bf16"))
    assert gqa.x["mla"] == gqa.x["mla_triton"] == 0


def test_a_measurement_names_its_mla_backend(catalog):
    row = {
        "id": "x",
        "engine": "sglang",
        "model": "deepseek-v3",
        "hardware": "h200",
        "gpus": 8,
        "parallelism": "tensor",
        "quant": "fp8_block",
        "kv_dtype": "bf16",
        "context": 256,
        "decode_tps": 30,
        "source": {"url": "https://example.org"},
    }
    assert not scenario_of_row(catalog, Measurement.model_validate(row)).mla_triton
    assert scenario_of_row(catalog, Measurement.model_validate({**row, "mla_backend": "triton"})).mla_triton
    with pytest.raises(ValueError, match="mla_backend"):
        Measurement.model_validate({**row, "mla_backend": "cutlass"})


def test_eager_mode_and_mtp_move_the_estimate(catalog):
    base = scenario(catalog, "deepseek-v3", "h200", 8, 642.0, 70_272, layer_split=False, quant="fp8_block")
    speed = estimate(base).decode_tps
    assert estimate(Scenario(**{**base.__dict__, "cuda_graphs": False})).decode_tps < speed
    assert estimate(Scenario(**{**base.__dict__, "mtp": True})).decode_tps > speed


def test_estimate_moves_the_right_way(catalog):
    base = scenario(catalog, "gpt-oss-120b", "rtx-3090", 2, 59.02, 18_432, context=4096, cpu_expert_layers=10)
    speed = estimate(base).decode_tps
    faster_ram = Scenario(**{**base.__dict__, "host": HostFacts(bandwidth_gbs=102.4, bandwidth_default=False)})
    assert estimate(faster_ram).decode_tps > speed
    # a longer context slows the planned load; the single-stream figure is quoted at a typical context
    longer = estimate(Scenario(**{**base.__dict__, "context": 65536}))
    assert longer.loaded_tps < estimate(base).loaded_tps and longer.decode_tps == pytest.approx(speed)
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


def test_explain_and_readme_show_one_figure_with_its_band(tmp_path):
    text = run_cli("explain", "--gpu", "h200", "--gpus", "8", "--model", "deepseek-v3").out
    assert re.search(
        r"speed \(an estimate, not a measurement\): ~[\d,.]+ tok/s for one request at [\d,]+ tokens of context "
        r"\(likely [\d,.]+–[\d,.]+\)",
        text,
    )
    result = run_cli("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--out", str(tmp_path / "o"))
    assert result.code == 0, result.err
    assert re.search(
        r"speed \(estimate\): offload-bound \(paced by host RAM bandwidth\): ~[\d.]+ tok/s for one request", result.out
    )
    readme = (tmp_path / "o" / "README.md").read_text()
    assert "## Expected speed (an estimate, not a measurement)" in readme
    assert re.search(
        r"\*\*offload-bound \(paced by host RAM bandwidth\): \\?~[\d.]+ tok/s for one request at [\d,]+ tokens "
        r"of context \(likely",
        readme,
    )


def test_a_slow_plan_says_so_first_and_names_faster_hardware(tmp_path):
    # the FP8 checkpoint on GB10's ~273 GB/s: the 4-bit one recipegen picks itself is faster, still below 25 tok/s
    args = ("--gpu", "gb10", "--model", "llama-3.3-70b", "--context", "131072", "--variant", "fp8")
    result = run_cli(*args, "--out", str(tmp_path / "o"))
    assert result.code == 0, result.err
    line = next(x for x in result.out.splitlines() if "speed (estimate)" in x)
    assert "speed (estimate): slow (under 5 tok/s for one request): ~" in line
    faster = result.out.split("faster, with more or other GPUs:")[1].splitlines()[1]
    assert re.search(r"• \d+×[\w-]+: runs with .*~[\d,.]+ tok/s for one request \(likely", faster)


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


def test_a_step_reads_no_more_kv_than_the_pool_holds():
    """The seed's H200 recipe plans GLM-5.2 at its full 1M-token context with 32 requests, but the KV pool holds
    about one such request: a step cannot read 32 full contexts, so the estimate caps the KV read at the pool."""
    args = ("explain", "--gpu", "h200", "--gpus", "8", "--model", "glm-5.2")
    plan = run_cli(*args, "--format", "json").json()["plans"][0]
    assert plan["variant"] == "int4-int8mix" and plan["memory"]["concurrency"] == 32
    assert plan["speed"]["decode_tokens_per_s"] > 5  # 32 full contexts read per step would give ~4
    text = " ".join(run_cli(*args, "--verbose").out.split())
    assert "capped by the KV pool" in text


def test_the_layers_a_dense_offload_keeps_on_the_cpu_read_their_whole_kv_cache_in_host_ram():
    # Llama 70B Q4_K_M on 2 x 16 GB: some of its 80 layers stay in host RAM with their KV cache; the plan's q8_0 cache
    # (an f16 one would push more layers out) holds 8 KV heads x 128 x 2 (K and V) x 34/32 B a token in each, so
    # 32,768 tokens read cpu x 2,176 B x 32,768 from host RAM a step
    args = ("explain", "--gpu", "rtx-4080", "--gpus", "2", "--model", "deepseek-r1-distill-llama-70b")
    result = run_cli(*args, "--variant", "gguf-bartowski-q4-k-m", "--engine", "llama.cpp", "--format", "json")
    assert result.code == 0, result.err
    plan = result.json()["plans"][0]
    cpu = plan["offload"]["cpu_layers"]
    assert plan["offload"]["mechanism"] == "cpu-layers" and plan["settings"]["context"] == 32768
    assert plan["settings"]["kv_cache_dtype"] == "q8_0"
    element = 34 / 32  # q8_0: 32 values in 34 bytes
    line = next(x for x in plan["speed"]["derivation"] if x.startswith(f"KV of the {cpu} CPU layers"))
    assert line.endswith(f"{cpu * 8 * 128 * 2 * element * 32768 / 1e9:.2f} GB"), line
    # the GPUs read their own layers' KV, one after another: the other layers' worth in all
    gpu = next(x for x in plan["speed"]["derivation"] if x.startswith("KV read per step"))
    per_gpu = (80 - cpu) * 8 * 128 * 2 * element / 2
    assert f"{per_gpu / 1024:.1f} KiB/token per GPU" in gpu, gpu
