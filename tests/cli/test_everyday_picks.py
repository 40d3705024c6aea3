"""The first plan for representative everyday questions, as an experienced user would pick it, through the CLI:
an 8-bit integer checkpoint (GPTQ-Int8) counts as 8-bit, not as a 4-bit one, so on two RTX 3090s Qwen's own Int8
checkpoint across both GPUs comes before a layer-split Q6_K that decodes slower; and below 4 bits per weight every
bit is worth more than a few tokens per second, so on two 16 GB cards a 70B runs from a 3-bit file, not a 2-bit one
that is a little faster. A weight-only fallback (vLLM's or SGLang's Marlin kernel dequantising FP8 or FP4 weights on a
GPU without FP8/FP4 tensor cores) reads the bytes a native kernel reads, so for one user it is weighed by its speed
like any other path: Qwen3-32B-FP8 across two RTX 3090s comes before a layer-split Q6_K that decodes slower."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
FILE_TYPE = re.compile(r"(?i)(?<![a-z0-9])(I?Q\d_[A-Z0-9_]+?)\.gguf$")


def plans_for(gpu: str, gpus: int, model: str) -> list[dict[str, Any]]:
    result = run_cli("explain", "--gpu", gpu, "--gpus", str(gpus), "--model", model, "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    plans: list[dict[str, Any]] = result.json()["plans"]
    assert plans
    return plans


def file_type(plan: dict[str, Any]) -> str | None:
    if plan["quant"] != "gguf":
        return None
    argv = plan["argv"]
    found = FILE_TYPE.search(argv[argv.index("--model") + 1])
    return found.group(1).upper() if found else None


def tps(plan: dict[str, Any]) -> float:
    return float(plan["speed"]["decode_tokens_per_s"])


@pytest.mark.parametrize("model", ["qwen2.5-32b", "qwen2.5-coder-32b"])
def test_two_3090s_run_the_official_int8_checkpoint_across_both_gpus(model: str):
    plans = plans_for("rtx-3090", 2, model)
    first = plans[0]
    assert first["variant"] == "gptq-int8" and first["offload"] is None, (first["engine"], first["variant"])
    assert first["settings"]["tensor_parallel"] == 2 and first["settings"]["context"] >= 32768
    # every layer-split GGUF of 6 bits or more decodes slower on these two cards
    for gguf in (p for p in plans if file_type(p) in ("Q6_K", "Q8_0") and p["offload"] is None):
        assert tps(first) > tps(gguf), gguf["variant"]
    # the reason names the criterion that decided, and calls the Int8 checkpoint what it is
    why, second = first["why_first"], plans[1]
    assert not why.startswith("a 4-bit checkpoint before"), why
    if why.startswith("an 8-bit checkpoint before a 4-bit one"):
        assert second["quant"] in ("awq", "gptq", "int4") or file_type(second) in ("Q4_K_M", "Q5_K_M", "IQ4_XS"), second
    else:
        assert why.startswith("faster estimated decode") and tps(first) > tps(second), why


@pytest.mark.parametrize("model", ["llama-3.3-70b", "llama-3.1-70b", "deepseek-r1-distill-llama-70b"])
def test_two_16gb_cards_run_a_70b_from_a_3_bit_file_before_a_faster_2_bit_one(model: str):
    plans = plans_for("rtx-4080", 2, model)
    first = plans[0]
    assert first["offload"] is None and file_type(first) == "IQ3_XXS", (first["variant"], file_type(first))
    assert first["settings"]["context"] >= 16384 and "--tensor-split" in first["argv"]
    two_bit = [p for p in plans if p["offload"] is None and (file_type(p) or "").startswith("IQ2")]
    assert two_bit and any(tps(p) > tps(first) for p in two_bit)  # speed gave way to the bits
    why = first["why_first"]
    assert "more bits per weight below 4 (IQ3_XXS ~3." in why, why
    assert f"fully on the GPU (~{tps(first):.0f} tok/s)" in why, why


def test_the_text_output_names_the_3_bit_file_and_fits_a_screen(tmp_path):
    result = run_cli(
        "--gpu", "rtx-4080", "--gpus", "2", "--model", "llama-3.3-70b", "--out", str(tmp_path / "o"), env=OFFLINE
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "gguf-iq3-xxs" in result.out.splitlines()[3]
    assert len(result.out.splitlines()) <= 30
    assert "IQ3_XXS" in (tmp_path / "o" / "launch.sh").read_text()


def test_two_3090s_run_qwen2_5_72b_at_its_native_context_before_awq_cut_to_12k():
    # Qwen2.5-72B's AWQ checkpoint across two 24 GB cards leaves ~2 GiB of KV pool per GPU, 12k tokens: below the
    # 16k a long chat or a document needs; an IQ4_XS GGUF (4.25 bits, still the 4-bit class) keeps the native 32k
    plans = plans_for("rtx-3090", 2, "qwen2.5-72b")
    first = plans[0]
    assert first["offload"] is None and file_type(first) == "IQ4_XS" and "--tensor-split" in first["argv"]
    assert first["settings"]["context"] == 32768
    awq = next(p for p in plans if p["quant"] == "awq" and p["offload"] is None)
    assert awq["settings"]["context"] < 16384 and tps(awq) > tps(first)
    assert first["why_first"].startswith(f"larger planned context (32768 vs {awq['settings']['context']})")


def marlin(plan: dict[str, Any]) -> bool:
    return any("runs through Marlin" in n for n in plan["notes"])


def eight_bit(plan: dict[str, Any]) -> bool:
    return plan["quant"] in ("fp8", "fp8_block") or "int8" in plan["variant"] or file_type(plan) in ("Q6_K", "Q8_0")


@pytest.mark.parametrize(("gpu", "model"), [("rtx-3090", "qwen3-32b"), ("rtx-3090-ti", "qwen3-32b")])
def test_two_ampere_cards_run_qwen3_32b_fp8_through_marlin_across_both_before_a_slower_q6_k_split(gpu: str, model: str):
    plans = plans_for(gpu, 2, model)
    first = plans[0]
    assert first["quant"] == "fp8_block" and marlin(first) and first["offload"] is None, (
        first["engine"],
        first["variant"],
    )
    assert first["settings"]["tensor_parallel"] == 2 and first["settings"]["context"] >= 32768
    split = next(p for p in plans if file_type(p) == "Q6_K" and p["offload"] is None)
    assert tps(first) > 1.2 * tps(split)
    assert first["why_first"].startswith(f"faster estimated decode (~{tps(first):.0f} vs ~{tps(split):.0f} tok/s")


def test_an_8_bit_checkpoint_through_marlin_at_an_interactive_speed_comes_before_a_faster_4_bit_one():
    # 2 x RTX A5000 (24 GB each, sm86), Qwen3-32B: FP8 through Marlin on both cards decodes at ~28 tok/s, AWQ at ~46;
    # both are interactive, and near-lossless 8 bits is what a user takes first when it runs at a usable speed
    plans = plans_for("rtx-a5000", 2, "qwen3-32b")
    first = plans[0]
    assert first["quant"] == "fp8_block" and marlin(first) and tps(first) >= 25
    awq = next(p for p in plans if p["quant"] == "awq" and p["offload"] is None)
    assert tps(awq) > tps(first)
    assert first["why_first"].startswith("an 8-bit checkpoint before a 4-bit one"), first["why_first"]


@pytest.mark.parametrize(
    ("gpu", "gpus", "model"),
    [
        ("rtx-3090", 2, "qwen3-14b"), ("rtx-3090", 2, "mistral-nemo-12b"), ("rtx-4090", 2, "qwen3-14b"),
        ("rtx-3060", 2, "qwen3-8b"), ("rtx-a4000", 2, "qwen3-14b"), ("titan-rtx", 2, "qwen3-8b"),
        ("rtx-4060-ti-16gb", 2, "qwen3-8b"), ("rtx-6000-ada", 2, "qwen3-32b"),
    ],
)  # fmt: skip
def test_for_one_user_the_first_8_bit_plan_is_the_fastest_of_its_class_native_kernel_or_not(
    gpu: str, gpus: int, model: str
):
    # the audit grid's changed picks: wherever the first plan is 8-bit and fully on the GPU, no other 8-bit plan of the
    # same standing with as roomy a context decodes faster, whether it runs native kernels or Marlin
    plans = plans_for(gpu, gpus, model)
    first = plans[0]
    assert first["offload"] is None and eight_bit(first), (first["engine"], first["variant"])
    for other in plans[1:]:
        peer = other["offload"] is None and eight_bit(other) and other["provenance"] == first["provenance"]
        if peer and min(other["settings"]["context"], 32768) >= min(first["settings"]["context"], 32768):
            assert round(tps(other)) <= round(tps(first)), (other["engine"], other["variant"])


def kv_flags(plan: dict[str, Any]) -> tuple[str, str]:
    argv = plan["argv"]
    return argv[argv.index("--cache-type-k") + 1], argv[argv.index("--cache-type-v") + 1]


@pytest.mark.parametrize("gpu", ["rtx-3060", "rtx-4060-ti-16gb", "rtx-5070-ti"])
def test_qwen3_30b_a3b_on_one_12_or_16gb_card_runs_qwens_q4_k_m_with_a_q8_0_cache_to_keep_more_experts_on_the_gpu(
    gpu: str,
):
    # the MoE does not fit whole; llama.cpp keeps some layers' experts in host RAM. An f16 cache of 32k tokens takes
    # GPU memory those experts could use: a q8_0 cache halves it, fewer experts cross to the CPU, decode is faster
    plans = plans_for(gpu, 1, "qwen3-30b-a3b")
    first = plans[0]
    assert first["variant"] == "gguf-q4-k-m" and first["repo"] == "Qwen/Qwen3-30B-A3B-GGUF"
    assert first["argv"][first["argv"].index("--model") + 1].endswith("/Qwen3-30B-A3B-Q4_K_M.gguf")
    assert first["offload"]["mechanism"] == "expert-layers" and first["settings"]["context"] >= 32768
    assert first["settings"]["kv_cache_dtype"] == "q8_0" and kv_flags(first) == ("q8_0", "q8_0")
    note = next(n for n in first["notes"] if n.startswith("KV cache q8_0, not fp16: at "))
    pushed, kept = re.findall(r"([\d.]+) GiB", note)[:2]
    assert float(kept) == pytest.approx(first["offload"]["host_weights_gib"], abs=0.05) and float(kept) < float(pushed)
    # the Q8_0 file of the same repo moves twice the expert bytes over to the CPU: slower, so after
    q8 = next(p for p in plans if p["variant"] == "gguf-q8-0" and p["build"] == first["build"])
    assert tps(q8) < tps(first)


def test_a_q8_0_cache_is_not_taken_where_the_build_garbles_a_quantized_cache_on_this_gpu():
    # llama.cpp b9333 on sm120 (RTX 50 series) garbles its output with a quantized KV cache and flash attention
    # (llama.cpp-b9333-sm120-quantized-kv-fa-garbled): the offloaded plan keeps the f16 cache there, not on sm89
    args = ("--model", "qwen3-30b-a3b", "--build", "llama.cpp-b9333", "--variant", "gguf-q4-k-m", "--format", "json")
    on_120 = run_cli("explain", "--gpu", "rtx-5060-ti-16gb", "--gpus", "1", *args, env=OFFLINE)
    on_89 = run_cli("explain", "--gpu", "rtx-4060-ti-16gb", "--gpus", "1", *args, env=OFFLINE)
    assert on_120.code == 0 and on_89.code == 0, on_120.err + on_89.err
    blackwell, ada = on_120.json()["plans"][0], on_89.json()["plans"][0]
    assert blackwell["offload"] is not None and ada["offload"] is not None
    assert blackwell["settings"]["kv_cache_dtype"] == "fp16" and not blackwell["build_defects"]
    assert ada["settings"]["kv_cache_dtype"] == "q8_0"
    assert ada["offload"]["host_weights_gib"] < blackwell["offload"]["host_weights_gib"]


def test_the_summary_says_which_kernel_runs_weights_the_gpu_has_no_native_kernel_for(tmp_path):
    result = run_cli(
        "--gpu", "rtx-3090", "--gpus", "2", "--model", "qwen3-32b", "--out", str(tmp_path / "o"), env=OFFLINE
    )
    assert result.code == 0, result.err
    assert "  kernel: no native fp8_block kernel on sm86: the weights run through Marlin FP8 (W8A16)" in result.out
    assert len(result.out.splitlines()) <= 30
    native = run_cli(
        "--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-8b", "--out", str(tmp_path / "n"), env=OFFLINE
    )
    assert native.code == 0 and "  kernel: " not in native.out


@pytest.mark.parametrize(
    ("gpu", "gpus", "model"),
    [
        ("rtx-4090", 2, "qwen3.5-122b-a10b"),
        ("rtx-4070", 1, "nemotron-3-nano-30b-a3b"),
        ("rtx-4060-ti-16gb", 1, "gemma-4-26b-a4b"),
    ],
)
def test_a_moe_larger_than_the_cards_keeps_its_experts_in_host_ram_rather_than_copying_weights_over_pcie(
    gpu: str, gpus: int, model: str
):
    """A MoE checkpoint a little or a lot larger than the GPUs: llama.cpp keeps some layers' routed experts in host
    RAM (`--n-cpu-moe`) and reads them there, tens of tokens per second; vLLM's `--cpu-offload-gb` copies the offloaded
    weights over PCIe every step, a few. The first plan is the GGUF one, and only the chosen quant is downloaded."""
    plans = plans_for(gpu, gpus, model)
    first = plans[0]
    assert first["quant"] == "gguf", (first["engine"], first["variant"])
    argv = first["argv"]
    assert argv[argv.index("--model") + 1].endswith(".gguf")
    pcie = [p for p in plans if p["quant"] != "gguf" and p["offload"] is not None]
    assert all(tps(first) > 3 * tps(p) for p in pcie), [(p["variant"], tps(p)) for p in pcie]


def test_a_3_bit_file_that_plans_a_longer_context_does_not_outrank_a_4_bit_one_on_the_gpu():
    """One RTX 3090 and Qwen3-32B: Q4_K_M fits with 28k of context, IQ3_M with 32k. Below 4 bits per weight every bit
    costs clear quality, more than the last 4k of a window past 16k: the first plan is the 4-bit file, and the 3-bit
    one still ranks before every plan that offloads."""
    plans = plans_for("rtx-3090", 1, "qwen3-32b")
    first = plans[0]
    assert file_type(first) in ("Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0") and first["offload"] is None, first["variant"]
    iq3 = next(i for i, p in enumerate(plans) if file_type(p) == "IQ3_M" and p["offload"] is None)
    assert iq3 > 0 and all(p["offload"] is None for p in plans[:iq3])


@pytest.mark.parametrize(
    ("gpu", "model", "file"),
    [
        ("rtx-4080", "qwen3-32b", "IQ3_XXS"),
        ("rtx-5060-ti-16gb", "qwen3-32b", "IQ3_XXS"),
        ("rtx-4080", "qwen3.5-27b", "IQ3_XXS"),
        ("rtx-4080", "qwen2.5-coder-32b", "IQ3_XXS"),
        ("rtx-5060-ti-16gb", "qwen2.5-coder-32b", "IQ3_XXS"),
        ("rtx-4080", "gemma-4-31b", "IQ3_XXS"),
        ("rtx-5060-ti-16gb", "gemma-4-31b", "IQ3_XXS"),
    ],
)
def test_a_dense_27_to_32b_model_on_one_16gb_card_runs_a_3_bit_file_on_the_gpu_before_offloading_a_4_bit_one(
    gpu: str, model: str, file: str
):
    """No 4-bit file of a 27-32B dense model fits a 16 GB card; whole layers on the CPU decode a few tokens per second.
    The experienced pick is a 3-bit file fully on the GPU with a context of 16k or more (Qwen3-32B: bartowski's IQ3_XXS,
    12.82 GB, not his IQ3_M, 14.93 GB, which leaves too little room for the cache), and the reason names the trade."""
    plans = plans_for(gpu, 1, model)
    first = plans[0]
    assert first["offload"] is None and file_type(first) == file, (first["variant"], first["offload"])
    assert first["settings"]["context"] >= 16384
    offloaded = [
        p for p in plans if p["offload"] is not None and not (file_type(p) or "").startswith(("IQ2", "IQ3", "Q3"))
    ]
    assert offloaded and all(tps(first) > 3 * tps(p) for p in offloaded)
    why = first["why_first"]
    assert why.startswith(f"fully on the GPU (~{tps(first):.0f} tok/s) before "), why
    assert "with whole layers on the CPU" in why and f"{file} ~3." in why


def test_a_q6_k_file_is_called_what_it_is_when_the_8_bit_class_decides():
    # one RTX 5090, Qwen3-32B: bartowski's Q6_K (~6.7 bits per weight) ranks in the 8-bit class before AWQ; the reason
    # names the file's own bits, not "an 8-bit checkpoint ... at half the bytes of BF16"
    first = plans_for("rtx-5090", 1, "qwen3-32b")[0]
    assert file_type(first) == "Q6_K", first["variant"]
    why = first["why_first"]
    assert why.startswith(
        "a Q6_K (~6.7-bit) checkpoint before a 4-bit one (near-lossless at ~42% of the bytes of BF16)"
    )


@pytest.mark.parametrize("model", ["qwen2.5-32b", "deepseek-r1-distill-qwen-32b"])
def test_a_32b_model_whose_smallest_published_3_bit_file_is_iq3_xs_runs_it_on_one_16gb_card(model: str):
    """bartowski's Qwen2.5-32B-Instruct and DeepSeek-R1-Distill-Qwen-32B repos have no IQ3_XXS; their IQ3_XS (13.71 GB
    on the cards' tables) is the one 3-bit file that leaves a 16 GB card room for a usable context: it runs fully on
    the GPU, not Q4_K_M with whole layers on the CPU, and on a 24 GB card the 4-bit file still comes first."""
    first = plans_for("rtx-4080", 1, model)[0]
    assert first["offload"] is None and file_type(first) == "IQ3_XS", (first["variant"], first["offload"])
    assert first["settings"]["context"] >= 8192
    assert first["why_first"].startswith(f"fully on the GPU (~{tps(first):.0f} tok/s) before Q4_K_M with whole layers")
    bigger = plans_for("rtx-4090", 1, model)[0]
    assert bigger["offload"] is None and file_type(bigger) == "Q4_K_M", bigger["variant"]


@pytest.mark.parametrize(
    ("model", "gib"),
    [("qwq-32b", 11.6), ("gemma-2-27b", 9.7), ("qwen3-vl-32b", 11.9)],
)
def test_a_dense_model_offloaded_for_want_of_a_3_bit_file_says_so(model: str, gib: float):
    """Where the catalog holds no file of a dense 27-32B model below 4 bits with a published size, the first plan on
    one 16 GB card still offloads whole layers of a 4-bit file, and its reason says that this is why, with the size an
    IQ3_XXS would have (llama-quantize's 3.06 bits per weight over the model's parameters), rather than offloading
    silently; on a 24 GB card that 4-bit file fits and no such reason appears."""
    first = plans_for("rtx-4080", 1, model)[0]
    assert first["offload"] is not None and first["offload"]["mechanism"] == "cpu-layers", first["offload"]
    why = first["why_first"]
    shown = f"{tps(first):.1f}" if tps(first) < 10 else f"{tps(first):.0f}"
    assert why.startswith(f"whole layers on the CPU (~{shown} tok/s) only because"), why
    assert "no file of this model below 4 bits with a published size" in why
    assert f"an IQ3_XXS (~3.06 bits per weight, about {gib} GiB) would run fully on this GPU" in why
    roomy = plans_for("rtx-4090", 1, model)[0]
    assert "below 4 bits with a published size" not in roomy["why_first"]


@pytest.mark.parametrize("gpu", ["rtx-4080", "rtx-5060-ti-16gb"])
def test_mistral_small_24b_on_one_16gb_card_runs_iq4_xs_with_a_q8_0_cache_not_q4_k_m_with_12k(gpu: str):
    """Mistral-Small-24B on one 16 GB card: Q4_K_M (14.33 GB) leaves 12k tokens even with a q8_0 KV cache; IQ4_XS
    (12.76 GB, still 4-bit) with the same q8_0 cache plans 16k or more, and a Q3_K_M (11.47 GB) with a still longer
    context does not outrank it: the ranking's roomy-context place buys the context with the smaller 4-bit file, and
    its below-4-bit place keeps the 3-bit one behind. On a 24 GB card the larger files come back first."""
    plans = plans_for(gpu, 1, "mistral-small-24b")
    first = plans[0]
    assert first["offload"] is None and file_type(first) == "IQ4_XS", (first["variant"], first["offload"])
    assert first["settings"]["context"] >= 16384
    argv = first["argv"]
    assert argv[argv.index("--cache-type-k") + 1] == "q8_0" and argv[argv.index("--cache-type-v") + 1] == "q8_0"
    q4 = next(p for p in plans if file_type(p) == "Q4_K_M" and p["offload"] is None)
    assert q4["settings"]["context"] < 16384 <= first["settings"]["context"]
    q3 = next(i for i, p in enumerate(plans) if file_type(p) == "Q3_K_M")
    assert plans[q3]["settings"]["context"] >= first["settings"]["context"] and q3 > 0
    assert first["why_first"].startswith(f"larger planned context ({first['settings']['context']} vs ")
    roomy = plans_for("rtx-4090", 1, "mistral-small-24b")[0]
    assert file_type(roomy) not in ("IQ4_XS", "Q3_K_M"), roomy["variant"]


@pytest.mark.parametrize("gpu", ["rtx-4080", "rtx-5060-ti-16gb"])
def test_qwen3_6_27b_on_one_16gb_card_runs_a_13_gib_file_with_a_long_context_not_4k(gpu: str):
    """Qwen3.6-27B keeps KV in only 16 of its 64 layers (the rest are gated DeltaNet with a fixed state), so
    bartowski's Q3_K_M (13.37 GiB) leaves a 16 GB card room for tens of thousands of tokens; llama.cpp allocates the
    context up front and serves one request (--parallel 1), so the plan must not shrink the context to keep room for a
    batch of requests it will never serve (it planned 4,096 tokens). The larger IQ4_XS (14.27 GiB) offloads layers."""
    plans = plans_for(gpu, 1, "qwen3.6-27b")
    first = plans[0]
    assert first["offload"] is None and file_type(first) == "Q3_K_M", (first["variant"], first["offload"])
    context = first["settings"]["context"]
    assert context >= 16384
    argv = first["argv"]
    assert argv[argv.index("--ctx-size") + 1] == str(context) and argv[argv.index("--parallel") + 1] == "1"
    assert first["memory"]["limit"] != "state", first["memory"]
    iq4 = next(p for p in plans if file_type(p) == "IQ4_XS")
    assert iq4["offload"] is not None and tps(iq4) < tps(first)
