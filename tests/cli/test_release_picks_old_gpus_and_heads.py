"""What a plan names on T4 / V100 and for DSA at every tensor-parallel size is what each vLLM release runs there:
its own selector's pick (its run, data/harvest/), the release's own rule where the run did not ask that head count
(data/selector_heads.yaml), or what runs instead with the source that says why."""

from __future__ import annotations

import pytest

from tests.cli.test_harvested_releases import _kernel_and_argv, _selected
from tests.support.cli import run_cli
from tests.support.contract import rejections


def _v100(release):
    """`explain` of Llama-3.1-8B on one V100 with that vLLM release, as JSON."""
    return run_cli(
        *("explain", "--gpu", "v100", "--gpus", "1", "--model", "llama-3.1-8b", "--build", f"vllm=={release}"),
        *("--format", "json"),
    ).json()


def _t4(release, *more):
    return _kernel_and_argv("--gpu", "t4", "--model", "llama-3.1-8b", "--build", f"vllm=={release}", *more)


@pytest.mark.parametrize("release", ["0.11.1", "0.15.1", "0.19.0", "0.20.1", "0.21.0"])
def test_on_a_t4_the_plan_names_flashinfer_as_the_release_picks(release):
    """0.11.1-0.21.0 rank FLASHINFER before TRITON_ATTN with a 7.5 floor and ship flashinfer-python as a dependency
    (0.20.1 and 0.21.0: 0.6.8.post1, which serves there, vllm#44379): on a T4 the server runs FlashInfer, so the plan
    names it (and pins nothing)."""
    assert _selected(release, 75, shape="gqa", variant="plain", head_size=128, kv="auto") == "FLASHINFER"
    reason, written, env, data = _t4(release)
    assert reason == "sm75: FLASHINFER (SM75) (attention.gqa)", reason
    assert "--attention-backend" not in written and not any("ATTENTION_BACKEND" in e["name"] for e in env)
    cited = [s["url"] for s in data["sources"].values()]
    assert any(u.endswith("vllm/v1/attention/backends/flashinfer.py#L354") for u in cited), cited


def test_an_fp8_kv_cache_on_a_t4_runs_through_flashinfer_where_the_release_has_it():
    """TRITON_ATTN refuses an FP8 cache below SM89; FlashInfer takes it on SM75 in 0.15.1 (its run: valid), so an
    fp8 cache is planned there, and refused by 0.24.0, whose only T4 backend is TRITON_ATTN."""
    reason, written, _, _ = _t4("0.15.1", "--kv-cache-dtype", "fp8_e4m3")
    assert reason == "sm75: FLASHINFER (SM75) (attention.gqa)" and written["--kv-cache-dtype"] == "fp8_e4m3"
    later = run_cli(
        *("explain", "--gpu", "t4", "--model", "llama-3.1-8b", "--build", "vllm==0.24.0"),
        *("--kv-cache-dtype", "fp8_e4m3", "--format", "json"),
    ).json()
    assert later["verdict"] != "runnable" and not later["plans"]


def test_on_a_t4_vllm_0_23_0_keeps_triton_and_pins_it_against_its_flashinfer():
    """0.23.0 still picks FLASHINFER on SM75, but the FlashInfer it pins (0.6.12) fails its first prefill there
    (flashinfer#3620): the plan names TRITON_ATTN and passes it, as the known defect's workaround, citing both."""
    assert _selected("0.23.0", 75, shape="gqa", variant="plain", head_size=128, kv="auto") == "FLASHINFER"
    reason, written, _, data = _t4("0.23.0")
    assert reason == "sm75: TRITON_ATTN (attention.gqa)", reason
    assert written["--attention-backend"] == "TRITON_ATTN"
    cited = [s["url"] for s in data["sources"].values()]
    assert "https://github.com/flashinfer-ai/flashinfer/issues/3620" in cited
    # on 0.24.0 TRITON_ATTN is the release's own pick: nothing to pin
    assert _selected("0.24.0", 75, shape="gqa", variant="plain", head_size=128, kv="auto") == "TRITON_ATTN"
    reason, written, _, _ = _t4("0.24.0")
    assert reason == "sm75: TRITON_ATTN (attention.gqa)" and "--attention-backend" not in written


@pytest.mark.parametrize("model", ["gemma-2-9b", "gemma-3-12b"])
def test_a_head_256_model_on_a_t4_runs_flashinfer_where_its_flashinfer_fits_and_pins_triton_where_it_does_not(model):
    """Gemma 2/3 have head size 256, whose FlashInfer prefill fills the 64 KiB a Turing block may use: the NVFP4
    scale-factor placeholders of later FlashInfer push it past that (flashinfer#3528). 0.21.0's FlashInfer 0.6.8.post1
    has none, so the plan names the FLASHINFER its selector picks; 0.22.0's 0.6.11.post2 has them, so the plan pins
    TRITON_ATTN under the release's T4 defect, which cites the issue."""
    assert _selected("0.21.0", 75, shape="gqa", variant="plain", head_size=256, kv="auto") == "FLASHINFER"
    args = ("--gpu", "t4", "--model", model)
    reason, written, _, data = _kernel_and_argv(*args, "--build", "vllm==0.21.0")
    assert reason == "sm75: FLASHINFER (SM75) (attention.gqa)" and "--attention-backend" not in written, reason
    assert not [d for d in data["plans"][0]["build_defects"] if "t4" in d["id"] or "sm75" in d["id"]]
    reason, written, _, data = _kernel_and_argv(*args, "--build", "vllm==0.22.0")
    assert reason == "sm75: TRITON_ATTN (attention.gqa)" and written["--attention-backend"] == "TRITON_ATTN", reason
    defects = {d["id"]: d for d in data["plans"][0]["build_defects"]}
    cited = [
        data["sources"][s]["url"] for s in defects["vllm-0.22-t4-flashinfer-paged-prefill-invalid-argument"]["sources"]
    ]
    assert "https://github.com/flashinfer-ai/flashinfer/issues/3528" in cited


@pytest.mark.parametrize(("release", "backend"), [("0.10.2", "FLEX_ATTENTION"), ("0.11.0", "FLEX_ATTENTION")])
def test_below_8_0_a_chain_release_runs_flex_attention(release, backend):
    """The 0.10.2 / 0.11.0 chain returns FlexAttention below 8.0 for every GQA shape; it takes no FP8 cache."""
    reason, written, _, _ = _t4(release)
    assert reason == f"sm75: {backend} (attention.gqa)", reason
    assert written["--kv-cache-dtype"] in ("auto", "float16")
    fp8 = run_cli(
        *("explain", "--gpu", "t4", "--model", "llama-3.1-8b", "--build", f"vllm=={release}"),
        *("--kv-cache-dtype", "fp8_e4m3", "--format", "json"),
    ).json()
    assert not fp8["plans"]


@pytest.mark.parametrize("release", ["0.10.0", "0.10.1"])
def test_below_8_0_vllm_0_10_0_and_0_10_1_fall_back_to_v0_xformers(release):
    """Their V1 chain (what the harvest asked) would return FlexAttention, but below 8.0 the engine falls back to V0,
    whose selector takes XFormers there; the plan names that and cites the fallback."""
    reason, _, _, data = _t4(release)
    assert reason == "sm75: XFORMERS (attention.gqa)", reason
    cited = [s["url"] for s in data["sources"].values()]
    assert any("vllm/engine/arg_utils.py#L" in u for u in cited), cited


DSA = {"shape": "sparse_mla", "head_size": 576, "kv": "bfloat16", "profile": "deepseek_v32_sparse"}


@pytest.mark.parametrize(("release", "gpus", "heads"), [("0.33.0", 4, 32), ("0.33.0", 2, 64), ("0.19.0", 4, 32)])
def test_dsa_on_b200_at_a_head_count_the_run_did_not_ask_takes_the_release_s_own_rule(release, gpus, heads):
    """DeepSeek-V3.2 (128 heads) at TP 4 / TP 2 holds 32 / 64 heads per GPU; the runs asked 16 and 128, and the
    release ranks its sparse-MLA backends by `num_heads <= 16` (vllm/platforms/cuda.py): above 16 it takes what it
    takes at 128, FLASHMLA_SPARSE, which the plan names, citing that line of the release."""
    at_16, at_128 = (_selected(release, 100, heads_per_rank=h, **DSA) for h in (16, 128))
    assert at_16 != at_128 == "FLASHMLA_SPARSE"
    reason, written, _, data = _kernel_and_argv(
        *("--gpu", "b200", "--gpus", str(gpus), "--model", "deepseek-v3.2", "--build", f"vllm=={release}"),
        *("--kv-cache-dtype", "bfloat16"),
    )
    assert written["--tensor-parallel-size"] == str(gpus)
    assert reason.startswith(f"sm100: {at_128} (attention.sparse_mla)"), reason
    assert "catalog's order" not in reason
    rule = f"https://github.com/vllm-project/vllm/blob/v{release}/vllm/platforms/cuda.py#L"
    assert any(s["url"].startswith(rule) for s in data["sources"].values())


def test_dsa_where_the_release_s_head_rule_was_not_read_says_the_kernel_is_the_catalog_s_order(monkeypatch):
    """A release whose run answers differently at 16 and 128 heads per GPU and whose code was not read for the line
    between them: at 32 heads the plan names the catalog's first kernel and says so."""
    from recipegen.catalog import selector_picks

    monkeypatch.setattr(selector_picks, "heads_rule", lambda *args: None)
    reason, _, _, _ = _kernel_and_argv(
        *("--gpu", "b200", "--gpus", "4", "--model", "deepseek-v3.2", "--build", "vllm==0.33.0"),
        *("--kv-cache-dtype", "bfloat16"),
    )
    assert "the vllm-0.33.0 run picks by heads per GPU and did not ask 32, so this is the catalog's order" in reason


def test_a_v100_runs_vllm_0_10_x_in_float16_and_is_refused_by_the_cuda_13_releases():
    """vLLM 0.10.2's x86_64 wheel carries sm_70 cubins (the harvest's compiled_for) and its selector returns
    FLEX_ATTENTION there: a bf16 model runs cast to float16 (--dtype half), a GPTQ checkpoint through the gptq method
    (its minimum is 6.0), an AWQ one is refused (awq needs 7.5). 0.21.0 is a CUDA 13.0 build, which cannot target
    sm_70: the plan stops at the platform."""
    assert _selected("0.10.2", 70, shape="gqa", variant="plain", head_size=128, kv="auto") == "FLEX_ATTENTION"
    doc = _v100("0.10.2")
    plans = {p["variant"]: p for p in doc["plans"]}
    assert {"bf16", "gptq"} <= set(plans)
    bf16 = plans["bf16"]["argv"]
    assert bf16[bf16.index("--dtype") + 1] == "half"
    for plan in plans.values():
        assert (
            next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel") == "sm70: FLEX_ATTENTION (attention.gqa)"
        )
    refused = {r["variant"]: r for r in rejections(doc)}
    assert refused["awq"]["gate"] == "weight-format"
    later = _v100("0.21.0")
    assert not later["plans"]
    platform = [r for r in rejections(later) if r["gate"] == "platform"]
    assert platform and all("(CUDA 13.0) is not compiled for sm70" in r["reason"] for r in platform)


@pytest.mark.parametrize(
    ("release", "backend"), [("0.11.0", "FLEX_ATTENTION"), ("0.15.1", "TRITON_ATTN"), ("0.19.0", "TRITON_ATTN")]
)
def test_a_v100_runs_the_cuda_12_releases_after_0_10_in_float16(release, backend):
    """The x86_64 wheels of 0.11.0 to 0.19.0 carry sm_70 cubins (read from each wheel), so a V100 plan passes the
    platform: a bf16 model is cast to float16, a GPTQ checkpoint runs through the gptq method, an AWQ one stops at its
    7.5 minimum, and the attention kernel is the one the release's selector returns on a simulated sm_70."""
    assert _selected(release, 70, shape="gqa", variant="plain", head_size=128, kv="auto") == backend
    doc = _v100(release)
    plans = {p["variant"]: p for p in doc["plans"]}
    assert {"bf16", "gptq"} <= set(plans), release
    bf16 = plans["bf16"]["argv"]
    assert bf16[bf16.index("--dtype") + 1] == "half"
    for plan in plans.values():
        kernel = next(g["reason"] for g in plan["gates"] if g["gate"] == "kernel")
        assert kernel == f"sm70: {backend} (attention.gqa)", release
    assert {r["variant"]: r["gate"] for r in rejections(doc)}.get("awq") == "weight-format"


def test_a_plan_first_by_a_few_megabytes_says_by_how_much():
    """On a V100 with vLLM 0.15.1, the bitsandbytes and GPTQ 4-bit checkpoints of Llama-3.1-8B tie on speed and
    differ by ~30 MB: the why-first line shows sizes that differ, not '5.3 vs 5.3 GiB'."""
    doc = _v100("0.15.1")
    why = doc["plans"][0]["why_first"]
    assert why.startswith("a smaller checkpoint (")
    first, second = why.removeprefix("a smaller checkpoint (").split(" GiB")[0].split(" vs ")
    assert first != second and float(first) < float(second)
