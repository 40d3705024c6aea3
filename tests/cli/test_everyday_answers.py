"""The everyday consumer question, asked through the CLI as a user would: a 7-70B model on one or two 24-48 GB
cards. The first plan is a 4- or 8-bit checkpoint held fully in GPU memory with a usable context (at least 8,192
tokens), on a native weight kernel whenever any plan has one; the reason it is first names a criterion that
really differs from the second plan's."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
FOUR_OR_EIGHT_BIT = {"awq", "gptq", "int4", "nvfp4", "mxfp4", "fp8", "fp8_block", "gguf"}
# a GGUF quant of 4 to 8 bits, as the file names it (Q4_K_M, Q5_K_S, Q6_K, Q8_0, IQ4_XS ...)
GGUF_4_TO_8 = re.compile(r"(?i)(?<![a-z0-9])(I?Q[4-8](_[0-9A-Z]+)*|MXFP4)\.gguf")

EVERYDAY = [
    ("rtx-4090", 1, "qwen3-8b"),
    ("rtx-4090", 1, "qwen3-14b"),
    ("rtx-4090", 1, "qwen3-32b"),
    ("rtx-4090", 1, "gemma-3-27b"),
    ("rtx-4090", 1, "mistral-small-24b"),
    ("rtx-4090", 1, "gpt-oss-20b"),
    ("rtx-3090", 2, "llama-3.3-70b"),
    ("rtx-3090", 2, "qwen3-32b"),
    ("rtx-3090", 1, "qwen3-30b-a3b"),
    ("rtx-a6000", 1, "llama-3.3-70b"),
    ("rtx-4090", 2, "qwen3-30b-a3b"),
    ("rtx-5090", 1, "qwen3-32b"),
    ("rtx-4090", 1, "mistral-small-3.1-24b"),
    ("rtx-3090", 1, "mistral-small-3.1-24b"),
    ("rtx-5090", 1, "mistral-small-3.1-24b"),
    ("rtx-a6000", 1, "mistral-small-3.1-24b"),
    ("rtx-4090", 1, "qwen3-vl-30b-a3b"),
    ("rtx-3090", 1, "qwen3-vl-30b-a3b"),
    ("rtx-4090", 1, "qwen3-vl-32b"),
    ("rtx-3090", 1, "qwen3-vl-32b"),
    ("rtx-a6000", 1, "qwen3-vl-32b"),
    ("rtx-4090", 1, "qwen2.5-7b"),
]


def plans_for(gpu: str, gpus: int, model: str, *extra: str) -> list[dict[str, Any]]:
    result = run_cli(
        "explain", "--gpu", gpu, "--gpus", str(gpus), "--model", model, "--format", "json", *extra, env=OFFLINE
    )
    assert result.code == 0, result.err
    plans: list[dict[str, Any]] = result.json()["plans"]
    assert plans, f"no plan for {model} on {gpus}x{gpu}"
    return plans


def precision(plan: dict[str, Any]) -> int:
    """The precision class a user reads: 8 for FP8, INT8 and 6- to 8-bit GGUF files, else 4."""
    model_file = plan["argv"][plan["argv"].index("--model") + 1] if plan["quant"] == "gguf" else ""
    eight = plan["quant"] in ("fp8", "fp8_block") or "int8" in plan["variant"] or re.search(r"Q[68]_", model_file)
    return 8 if eight else 4


def shown(plan: dict[str, Any]) -> float:
    """One request's decode as the outputs print it (the ranking compares what a user can see)."""
    tps = float(plan["speed"]["decode_tokens_per_s"])
    return float(round(tps)) if tps >= 10 else round(tps, 1)


def native(plan: dict[str, Any]) -> bool:
    reason = next(g["reason"] for g in plan["gates"] if g["gate"] == "weight-format")
    return "no native kernel" not in reason


@pytest.mark.parametrize(("gpu", "gpus", "model"), EVERYDAY, ids=[f"{n}x{g}-{m}" for g, n, m in EVERYDAY])
def test_first_plan_is_a_4_or_8_bit_checkpoint_on_the_gpu_with_a_usable_context(gpu: str, gpus: int, model: str):
    plans = plans_for(gpu, gpus, model)
    first = plans[0]
    assert first["quant"] in FOUR_OR_EIGHT_BIT, first["variant"]
    if first["quant"] == "gguf":
        assert any(GGUF_4_TO_8.search(arg) for arg in first["argv"]), first["argv"]
    assert first["offload"] is None, first["offload"]
    assert first["settings"]["context"] >= 8192
    assert first["gpus"] == gpus
    if not native(first):
        # a weight-only fallback (Marlin dequantising FP8/FP4 weights) decodes one request at full speed: it may come
        # first, but only where no native plan of the same standing, precision class and context tier is faster
        for p in plans:
            if native(p) and p["offload"] is None and all(p[k] == first[k] for k in ("status", "provenance")):
                same_class = precision(p) >= precision(first)
                same_tier = min(p["settings"]["context"], 32768) >= min(first["settings"]["context"], 32768)
                assert not (same_class and same_tier and shown(p) > shown(first)), (p["engine"], p["variant"])


def test_two_3090s_run_llama_3_3_70b_from_a_4bit_integer_checkpoint_not_nvfp4_through_marlin():
    plans = plans_for("rtx-3090", 2, "llama-3.3-70b")
    first = plans[0]
    assert first["quant"] in {"awq", "gptq", "int4", "gguf"}, first["variant"]
    assert native(first)
    marlin = [i for i, p in enumerate(plans) if p["quant"] == "nvfp4"]
    integer = [i for i, p in enumerate(plans) if p["quant"] in {"awq", "gptq", "int4", "gguf"}]
    assert integer and (not marlin or min(integer) < min(marlin))


@pytest.mark.parametrize(("gpu", "gpus", "model"), EVERYDAY, ids=[f"{n}x{g}-{m}" for g, n, m in EVERYDAY])
def test_the_reason_printed_for_the_first_plan_is_true(gpu: str, gpus: int, model: str):
    plans = plans_for(gpu, gpus, model)
    first, second = plans[0], plans[1]
    why = first["why_first"] or ""
    assert why.endswith(f"{second['build']} / {second['variant']}"), why  # it names the plan it beats
    assert "ordered by id" not in why or first["quant"] != second["quant"], why  # a tie says what it is
    if why.startswith("equal on every criterion"):
        assert second["repo"] in why and first["repo"] != second["repo"]
    context = re.search(r"larger planned context \((\d+) vs (\d+)\)", why)
    if context:
        assert (int(context.group(1)), int(context.group(2))) == (
            first["settings"]["context"],
            second["settings"]["context"],
        )
        assert first["settings"]["context"] > second["settings"]["context"]
    speed = re.search(r"faster estimated decode \(~([\d.]+) vs ~([\d.]+) tok/s for one request", why)
    if speed:
        assert first["speed"]["decode_tokens_per_s"] >= second["speed"]["decode_tokens_per_s"]
        assert float(speed.group(1)) == pytest.approx(first["speed"]["decode_tokens_per_s"], abs=0.5)
        assert float(speed.group(2)) == pytest.approx(second["speed"]["decode_tokens_per_s"], abs=0.5)
        if "both with at least 32,768 tokens" in why:
            assert min(first["settings"]["context"], second["settings"]["context"]) >= 32768
    assert "offload" not in why or first["offload"] is None


def test_between_two_copies_of_one_checkpoint_at_full_context_the_faster_engine_is_first():
    # 1 x RTX 3090, Qwen3-30B-A3B: vLLM and SGLang both hold RedHatAI's W4A16 checkpoint with the whole
    # 40,960-token context, so the estimated decode speed decides between them (Qwen's own Q4_K_M GGUF on llama.cpp,
    # faster still, comes before both, and its reason names the faster of the two)
    plans = plans_for("rtx-3090", 1, "qwen3-30b-a3b")
    assert plans[0]["variant"] == "gguf-q4-k-m" and plans[0]["offload"] is None
    first, second = (p for p in plans if p["variant"] == "int4-redhatai" and p["provenance"] == "official")
    assert first["engine"] != second["engine"]
    assert first["settings"]["context"] == second["settings"]["context"] == 40960
    assert first["speed"]["decode_tokens_per_s"] > second["speed"]["decode_tokens_per_s"]
    assert plans[1] is first and plans[0]["why_first"].startswith("faster estimated decode")
    assert plans[0]["why_first"].endswith(f"{first['build']} / {first['variant']}")


def test_an_8bit_checkpoint_that_fits_with_the_whole_context_comes_before_a_4bit_one():
    # 1 x RTX 4090, Qwen3-14B on SGLang: Qwen's FP8 checkpoint (native FP8 on sm89) fits with 40,960 tokens, so it
    # is first, ahead of the AWQ 4-bit checkpoint, and the reason says so (across engines a 6- or 8-bit GGUF with
    # its exact size may decode faster and come first)
    result = run_cli(
        "explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-14b", "--engine", "sglang",
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert result.code == 0, result.err
    plans = result.json()["plans"]
    first = plans[0]
    assert first["quant"] == "fp8_block" and native(first)
    assert first["settings"]["context"] == 40960
    assert "an 8-bit checkpoint before a 4-bit one" in (first["why_first"] or "")
    assert any(p["quant"] == "awq" for p in plans[1:])


def test_a_gguf_file_without_a_catalog_size_is_sized_from_its_quant_type_and_says_so():
    # unsloth/Qwen3-8B-GGUF Q4_K_M: no size in the catalog; llama.cpp's table gives Q4_K_M 4.8944 bits per weight
    result = run_cli(
        "explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-8b", "--variant", "gguf-unsloth-q4-k-m",
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert result.code == 0, result.err
    plan = result.json()["plans"][0]
    assert plan["argv"][:3] == ["llama-server", "--model", "/models/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf"]
    assert plan["memory"]["weights_gib"] == pytest.approx(8.2e9 * 4.8944 / 8 / 2**30, rel=0.01)
    assert any("estimated as" in n and "Q4_K_M" in n and "bits per weight" in n for n in plan["notes"])


@pytest.mark.parametrize("gpu", ["rtx-4090", "rtx-3090"])
def test_70b_on_one_24gb_card_runs_whole_from_a_2bit_gguf_before_any_offloaded_plan(gpu: str):
    # Llama 3.3 70B on one 24 GB card: only the 2-bit GGUFs fit whole, so IQ2_XS comes before every plan that keeps
    # weights in host RAM; among those, the one of 4 bits or more that moves the fewest bytes per token (a 4-bit
    # one, not the FP8 one) leads, and a 3-bit file that would not fit whole either comes after it
    plans = plans_for(gpu, 1, "llama-3.3-70b")
    first = plans[0]
    assert first["offload"] is None and first["quant"] == "gguf", first["variant"]
    assert any(arg.endswith("IQ2_XS.gguf") for arg in first["argv"]), first["argv"]
    assert first["settings"]["context"] >= 8192
    offloaded = [p for p in plans if p["offload"] is not None]
    assert offloaded and all(p["offload"] is None for p in plans[: plans.index(offloaded[0])])
    assert all(p["offload"] is not None for p in plans[plans.index(offloaded[0]) :])
    lead = offloaded[0]
    same_cost = [p for p in offloaded if p["offload"]["mechanism"] == lead["offload"]["mechanism"]]
    four_bit = [
        p for p in same_cost if p["quant"] != "gguf" or GGUF_4_TO_8.search(p["argv"][p["argv"].index("--model") + 1])
    ]
    speeds = [p["speed"]["decode_tokens_per_s"] for p in four_bit if p["status"] == lead["status"]]
    assert lead["speed"]["decode_tokens_per_s"] == max(speeds)
    assert lead["quant"] != "fp8"


def test_the_speed_quoted_first_is_one_request_of_a_typical_chat_and_every_output_agrees(tmp_path):
    # gpt-oss-20b on 1 x RTX A6000 plans 10 requests of the full 131,072-token context; a user asking "how fast"
    # reads one request of a typical chat first, then the total at the planned load, with the same numbers in the
    # summary, the README, plan.json and --format json (OpenAI's checkpoint on a batching server, not the GGUF copy)
    args = ("--gpu", "rtx-a6000", "--gpus", "1", "--model", "gpt-oss-20b", "--variant", "mxfp4")
    speed = plans_for("rtx-a6000", 1, "gpt-oss-20b", "--variant", "mxfp4")[0]["speed"]
    assert speed["decode_context"] <= 8192 < speed["context"]
    assert speed["concurrency"] > 1
    assert speed["decode_tokens_per_s"] > speed["decode_per_request_at_concurrency_tokens_per_s"]
    assert speed["decode_aggregate_tokens_per_s"] == pytest.approx(
        speed["concurrency"] * speed["decode_per_request_at_concurrency_tokens_per_s"], rel=0.01
    )
    result = run_cli(*args, "--out", str(tmp_path / "o"), env=OFFLINE)
    assert result.code == 0, result.err
    line = " ".join(result.out.split()).split("speed (estimate): ", 1)[1]
    quoted = re.match(
        r"~([\d,.]+) tok/s for one request at ([\d,]+) tokens of context \(likely [\d.,]+–[\d.,]+\); "
        r"~([\d,.]+) tok/s total at (\d+) requests of ([\d,]+) tokens \(~([\d,.]+) each\)",
        line,
    )
    assert quoted, line

    def number(text: str) -> float:
        return float(text.replace(",", ""))

    assert number(quoted.group(1)) == pytest.approx(speed["decode_tokens_per_s"], rel=0.05)
    assert number(quoted.group(2)) == speed["decode_context"]
    assert number(quoted.group(3)) == pytest.approx(speed["decode_aggregate_tokens_per_s"], rel=0.05)
    assert int(quoted.group(4)) == speed["concurrency"]
    assert number(quoted.group(5)) == speed["context"]
    written = json.loads((tmp_path / "o" / "plan.json").read_text())["plans"][0]["speed"]
    assert {k: written[k] for k in speed if k != "derivation"} == {k: speed[k] for k in speed if k != "derivation"}
    readme = (tmp_path / "o" / "README.md").read_text().replace("\\~", "~")
    assert quoted.group(0) in readme


def test_the_why_line_names_the_one_criterion_that_decided():
    # on sm86 vLLM runs MXFP4 through Marlin while SGLang has a native path. On an A10, a server card, that weight-only
    # kernel costs the compute a batching server pays: the reason is that fallback, said alone, not "a fallback, or a
    # known defect" (OpenAI's MXFP4 checkpoint only: the GGUF copy runs on llama.cpp's own kernels)
    plans = plans_for("a10", 1, "gpt-oss-20b", "--variant", "mxfp4")
    first, second = plans[0], plans[1]
    why = first["why_first"] or ""
    assert ", or " not in why, why
    assert native(first) and not native(second)
    assert why.startswith("native weight kernels before a fallback ("), why
    fallback = next(g["reason"] for g in second["gates"] if g["gate"] == "weight-format").split(";")[0]
    assert fallback in why and "a weight-only kernel costs a server that batches requests compute" in why


def test_for_one_user_a_weight_only_fallback_is_weighed_by_its_speed_not_demoted():
    # on one RTX A6000 (a workstation: one user) the same Marlin path decodes one request at the speed the estimate
    # gives, so speed decides between it and SGLang's native kernel, and the reason says so
    plans = plans_for("rtx-a6000", 1, "gpt-oss-20b", "--variant", "mxfp4")
    first, second = plans[0], plans[1]
    assert native(first) and not native(second) and shown(first) > shown(second)
    why = first["why_first"] or ""
    assert why.startswith(f"faster estimated decode (~{shown(first):.0f} vs ~{shown(second):.0f} tok/s"), why
    assert any("runs through Marlin" in n for n in second["notes"])  # the plan itself still says what runs


def test_a_hybrid_linear_attention_model_is_sized_from_its_parameters_and_plans_on_two_24gb_cards():
    # Qwen3-Next-80B-A3B (36 gated DeltaNet layers of 48): its recurrent state is per request, its projections are
    # weights; the AWQ checkpoint records which modules are INT4 (the routed experts), so it gets a size and a plan
    plans = plans_for("rtx-3090", 2, "qwen3-next-80b-a3b")
    awq = next(p for p in plans if p["quant"] == "awq")
    assert awq["memory"]["weights_estimated"]
    assert any("estimated as" in n and "routed-expert weights × 4.500 bits" in n for n in awq["notes"]), awq["notes"]
    # what an experienced user runs first: a 4-bit GGUF on llama.cpp, its few overflowing experts computed from host
    # RAM, not vLLM copying weights over PCIe every step; on one 48 GB card it fits whole
    first = plans[0]
    assert first["engine"] == "llama.cpp" and GGUF_4_TO_8.search(first["argv"][first["argv"].index("--model") + 1])
    assert first["offload"] is None or first["offload"]["mechanism"] in {"expert-layers", "all-experts"}
    copied = [i for i, p in enumerate(plans) if p["offload"] is not None and p["offload"]["mechanism"] == "weights-gb"]
    assert copied and plans.index(awq) >= min(copied)  # the AWQ plan copies weights over PCIe
    assert all(p["offload"] is not None and p["offload"]["mechanism"] == "weights-gb" for p in plans[min(copied) :])
    assert plans_for("rtx-a6000", 1, "qwen3-next-80b-a3b")[0]["offload"] is None
    # a checkpoint with no recorded quantization_config counts the recurrent projections at 16 bits, and says so
    fp8 = run_cli(
        "explain", "--gpu", "h200", "--gpus", "1", "--model", "qwen3-next-80b-a3b", "--variant", "fp8",
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert fp8.code == 0, fp8.err
    notes = fp8.json()["plans"][0]["notes"]
    assert any("recurrent-layer projections × 16 bits" in n and "less if they are quantized" in n for n in notes)


@pytest.mark.parametrize(
    ("gpu", "model", "variant"),
    [("rtx-4090", "qwen3-vl-30b-a3b", "gguf-unsloth-q4-k-s"), ("rtx-3090", "qwen3-vl-32b", "gguf-q4-k-m")],
)
def test_a_vision_gguf_plan_downloads_and_loads_its_projector_and_only_the_chosen_quant(
    tmp_path, gpu: str, model: str, variant: str
):
    # llama-server answers text only without --mmproj: the plan passes the repo's projector file, launch.sh
    # fetches it and the chosen quant and nothing else, and lint accepts the command it wrote
    out = tmp_path / "o"
    args = ("--gpu", gpu, "--gpus", "1", "--model", model, "--variant", variant)
    result = run_cli(*args, "--out", str(out), env=OFFLINE)
    assert result.code == 0, result.err
    plan = json.loads((out / "plan.json").read_text())["plans"][0]
    argv = plan["argv"]
    model_file = argv[argv.index("--model") + 1]
    projector = argv[argv.index("--mmproj") + 1]
    assert projector.startswith(model_file.rsplit("/", 1)[0] + "/") and "mmproj" in projector.rsplit("/", 1)[1]
    launch = (out / "launch.sh").read_text()
    includes = re.findall(r"hf download \S+ --include '([^']+)'", launch)
    assert includes == [model_file.rsplit("/", 1)[1], projector.rsplit("/", 1)[1]], includes
    assert len(re.findall(r"^\s*hf download ", launch, re.M)) == 2  # no other download: only these two files
    lint = run_cli("lint", "--gpu", gpu, str(out / "launch.sh"), env=OFFLINE)
    assert "0 error, 0 silent, 0 warn" in lint.out, lint.out


def test_a_vision_gguf_plan_counts_its_projector_on_the_gpu():
    # unsloth's Qwen3-VL-30B-A3B Q4_K_S with mmproj-F16.gguf (1.08 GB on its Hub page, recipes/models): llama-server
    # loads the projector whole onto the GPU, so the plan's weights are the model file's and the projector's
    args = ("--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-vl-30b-a3b", "--engine", "llama.cpp")
    explained = run_cli("explain", *args, "--variant", "gguf-unsloth-q4-k-s", "--format", "json", env=OFFLINE)
    assert explained.code == 0, explained.err
    plan = explained.json()["plans"][0]
    note = next(n for n in plan["notes"] if "vision projector mmproj-F16.gguf" in n)
    assert "plus the vision projector mmproj-F16.gguf (--mmproj, 1.08 GB), loaded whole onto the GPU" in note
    model_file = float(re.search(r"estimated as ([\d.]+) GB", note).group(1)) * 1e9  # type: ignore[union-attr]
    assert plan["memory"]["weights_gib"] * 2**30 == pytest.approx(model_file + 1.08e9, abs=0.06e9)
    # a projector whose size the catalog does not give is said to be left out, not counted as nothing silently
    other = run_cli(
        "explain", "--gpu", "rtx-3090", "--gpus", "1", "--model", "qwen3-vl-32b", "--variant", "gguf-q4-k-m",
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert other.code == 0, other.err
    notes = other.json()["plans"][0]["notes"]
    assert any("is not in this plan: its size is not in the catalog" in n for n in notes), notes


def _llama_plan(model: str, *extra: str) -> dict[str, Any]:
    result = run_cli(
        "explain", "--gpu", "rtx-3090", "--gpus", "1", "--model", model, "--engine", "llama.cpp",
        "--variant", "gguf-bartowski-q4-k-m", *extra, "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert result.code == 0, result.err
    plan: dict[str, Any] = result.json()["plans"][0]
    return plan


def _cache_types(argv: list[str]) -> tuple[str | None, str | None]:
    def value(flag: str) -> str | None:
        return argv[argv.index(flag) + 1] if flag in argv else None

    return value("--cache-type-k"), value("--cache-type-v")


def test_a_32b_gguf_on_one_24gb_card_buys_context_with_a_q8_0_kv_cache_and_says_so(tmp_path):
    # DeepSeek-R1-Distill-Qwen-32B Q4_K_M on one RTX 3090: an f16 cache leaves less than 32,768 tokens (a reasoning
    # model writes up to 32k); the q8_0 cache, near-lossless, is what r/LocalLLaMA users set first (-ctk/-ctv q8_0)
    model = "deepseek-r1-distill-qwen-32b"
    f16 = _llama_plan(model, "--kv-cache-dtype", "fp16")
    assert _cache_types(f16["argv"]) == ("f16", "f16")
    assert f16["settings"]["context"] < 32768
    auto = _llama_plan(model)
    assert _cache_types(auto["argv"]) == ("q8_0", "q8_0")
    assert auto["settings"]["context"] > f16["settings"]["context"]
    assert auto["settings"]["context"] == int(auto["argv"][auto["argv"].index("--ctx-size") + 1])
    assert any(n.startswith("KV cache q8_0, not fp16") for n in auto["notes"])
    result = run_cli("--gpu", "rtx-3090", "--gpus", "1", "--model", model, "--out", str(tmp_path / "o"), env=OFFLINE)
    assert result.code == 0, result.err
    memory = next(line for line in result.out.splitlines() if line.strip().startswith("memory:"))
    launch = (tmp_path / "o" / "launch.sh").read_text()
    assert "'--cache-type-k' 'q8_0'" in launch and "'--cache-type-v' 'q8_0'" in launch
    assert "(KV cache q8_0)" in memory


def test_a_kv_dtype_the_user_names_reaches_both_llama_server_cache_flags():
    # the memory plan sizes K and V at the named dtype, so the command must set both, not K alone or neither
    plan = _llama_plan("qwen2.5-14b", "--kv-cache-dtype", "q8_0")
    assert _cache_types(plan["argv"]) == ("q8_0", "q8_0")


def test_a_full_precision_cache_that_already_gives_a_usable_context_is_kept():
    # Qwen2.5-14B Q4_K_M on one RTX 3090 holds its whole 32,768-token context with an f16 cache: nothing to buy
    plan = _llama_plan("qwen2.5-14b")
    assert plan["settings"]["context"] == 32768
    assert _cache_types(plan["argv"]) == ("f16", "f16")


def test_a_fast_4_bit_plan_comes_before_an_8_bit_one_too_slow_to_chat_with():
    # DeepSeek-R1-Distill-Llama-70B on 2 × RTX A6000: its Q8_0 GGUF fits (~8 tok/s for one request), and so does a
    # 4-bit AWQ at about three times that; an 8-bit checkpoint only wins while both are fast enough to chat with
    result = run_cli(
        "explain", "--gpu", "rtx-a6000", "--gpus", "2", "--model", "deepseek-r1-distill-llama-70b",
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert result.code == 0, result.err
    plans = result.json()["plans"]
    first = plans[0]["speed"]["decode_tokens_per_s"]
    assert first >= 25, plans[0]["variant"]
    slower_8_bit = [p for p in plans if p["variant"].endswith("q8-0") and p["speed"]["decode_tokens_per_s"] < 25]
    assert slower_8_bit, [p["variant"] for p in plans]
    assert "an interactive decode speed before a slower one" in plans[0]["why_first"]
    # while every plan is fast, the 8-bit one still comes first (Llama 3.1 8B on one RTX 4090)
    small = run_cli(
        "explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "llama-3.1-8b", "--format", "json", env=OFFLINE
    )
    assert small.code == 0, small.err
    top = small.json()["plans"][0]
    assert top["speed"]["decode_tokens_per_s"] >= 25 and top["quant"] in ("fp8", "gguf") and "q4" not in top["variant"]
