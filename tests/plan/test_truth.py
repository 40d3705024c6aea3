"""Truth rules a user sees through the CLI: no ✓ on an unverified fact, required flags applied as
data, notes only for the builds they are true for, memory reasons about the layout they judge."""

from __future__ import annotations

from typing import Any

import pytest

from recipegen.catalog.vocabulary import check_argv, vocabulary
from tests.support.contract import rejections

VLLM_8 = ("--engine", "vllm", "--gpus", "8")


def _unverified_kernels(catalog: Any) -> set[tuple[str, str]]:
    return {(b.id, k.name) for e in catalog.engines.values() for b in e.builds for k in b.kernels if k.unverified}


def test_no_check_mark_rests_on_an_unverified_fact(cli, catalog):
    """The plan behind every ✓ cell passes its kernel gate with kernels that have a checked source."""
    unverified = _unverified_kernels(catalog)
    assert ("sglang-0.5.23", "flashinfer_sparse_mla") in unverified  # the fact behind issue 9 item 6
    doc = cli("matrix", "--format", "json", "--model", "glm-5.3-flash", "--model", "glm-5.2").json()
    checked = [c for c in doc["cells"] if c["symbol"] == "✓"]
    seen = 0
    for cell in checked:  # a default column is a GPU at the smallest layout that runs: explain without --gpus
        plans = cli("explain", "--format", "json", "--model", cell["model"], "--gpu", cell["target"])
        for p in plans.json()["plans"]:
            if f"{p['build']} · {p['variant']} ({p['status']})" not in cell["summary"]:
                continue
            seen += 1
            kernel_gate = next(g for g in p["gates"] if g["gate"] == "kernel")
            assert not any(name in kernel_gate["reason"] for build, name in unverified if build == p["build"])
    assert seen == len(checked) > 0
    # SGLang 0.5.23 on sm12x rests only on that unverified kernel: it is '?', never a plan
    for gpu, args in (("gb10", ["--nodes", "2"]), ("rtx-pro-6000", ["--gpus", "8"])):
        doc = cli("explain", "--format", "json", "--gpu", gpu, "--model", "glm-5.3-flash", *args).json()
        assert not [p for p in doc["plans"] if p["build"] == "sglang-0.5.23"]
        kernel = [r for r in rejections(doc) if r["build"] == "sglang-0.5.23" and r["gate"] == "kernel"]
        assert kernel and all(r["outcome"] == "unknown" for r in kernel)
        assert all("flashinfer_sparse_mla" in r["reason"] and "unverified" in r["reason"] for r in kernel)


def test_seed_003_still_gets_the_curated_spark_recipe(cli):
    doc = cli("explain", "--format", "json", "--gpu", "gb10", "--model", "glm-5.3-flash", "--nodes", "2").json()
    top = doc["plans"][0]
    assert (top["deployment"], top["status"]) == ("glm-5.3-flash-nvfp4-2xgb10-sglang", "community")
    kernel = next(g for g in top["gates"] if g["gate"] == "kernel")
    assert "tilelang (GB10 tile) is unverified in the catalog; the community recipe" in kernel["reason"]
    # the GB10 tile is an edit of the kernel, not a launch flag: no derived plan may rest on it
    image = "sglang-glm53-flash-arm64"
    assert not [p for p in doc["plans"] if p["build"] == image and p["deployment"] is None]
    open_ = [
        r for r in rejections(doc) if r["build"] == image and r["gate"] == "kernel" and r["variant"] == "nvfp4-redhat"
    ]
    assert open_ and all(r["outcome"] == "unknown" and "tilelang (GB10 tile)" in r["reason"] for r in open_)


@pytest.mark.parametrize(
    ("gpu", "wanted"),
    [
        ("rtx-pro-6000", {"--attention-config.indexer_kv_dtype": "fp8", "--moe-backend": "auto"}),
        ("h200", {"--kv-cache-dtype": "fp8_ds_mla", "--block-size": "256"}),
    ],
)
def test_derived_deepseek_v4_plans_carry_required_flags(cli, gpu, wanted):
    doc = cli("explain", "--format", "json", "--gpu", gpu, "--model", "deepseek-v4-flash", *VLLM_8).json()
    derived = [p for p in doc["plans"] if p["deployment"] is None and p["build"] == "vllm-0.33.0"]
    assert derived
    vocab = vocabulary("vllm-0.33.0")
    for plan in derived:
        flags = {f["flag"]: f for f in plan["flags"]}
        for flag, value in wanted.items():
            assert flags[flag]["value"] == value, (plan["variant"], flag)
            assert flags[flag]["reason"] and flags[flag]["sources"]
        assert flags["--tokenizer-mode"]["value"] == "deepseek_v4"
        assert check_argv(vocab, plan["argv"][2:]) == []


def test_required_flags_stay_off_other_gpus(cli):
    doc = cli("explain", "--format", "json", "--gpu", "h200", "--model", "deepseek-v4-flash", *VLLM_8).json()
    for plan in doc["plans"]:
        assert "--moe-backend" not in plan["argv"] and "--attention-config.indexer_kv_dtype" not in plan["argv"]


def test_matrix_memory_reason_gives_the_per_gpu_figure_of_the_fleet(cli):
    cell = cli("matrix", "--format", "json", "--model", "minimax-m1", "--target", "8xa100-80gb").json()["cells"][0]
    assert (cell["symbol"], cell["gate"]) == ("✗", "memory")
    assert cell["reasons"][0].startswith("on 8 GPU(s): weights need 106.2 GiB per GPU")
    # FP8 and BF16 do not fit; the NVFP4 checkpoint's size is estimated from its bits (4-bit with an FP8 scale
    # per 16), said so, and it fits through Marlin
    cell = cli("matrix", "--format", "json", "--model", "deepseek-r1", "--target", "8xa100-80gb").json()["cells"][0]
    assert cell["symbol"] == "◐" and "nvfp4" in cell["summary"]
    explain = cli("explain", "--format", "json", "--gpu", "a100-80gb", "--gpus", "8", "--model", "deepseek-r1").json()
    nvfp4 = next(p for p in explain["plans"] if p["variant"].startswith("nvfp4"))
    assert any(
        n.startswith("checkpoint size not in the catalog: estimated") and "block of 16" in n for n in nvfp4["notes"]
    )
    reasons = [r["reason"] for r in rejections(explain) if r["gate"] == "memory" and r["variant"] == "fp8"]
    assert any("78.3 GiB per GPU" in r for r in reasons)  # 671B: 669B FP8 + 128×128 FP32 scales, 16-bit embeddings


def test_build_scoped_notes_reach_only_their_builds(cli):
    stale = "Upstream vLLM has no NoPE sparse-MLA backend for sm80, sm89 (RTX 4090/L40S), sm120"
    doc = cli("explain", "--format", "json", "--gpu", "rtx-pro-6000", "--model", "glm-5.3-flash", "--gpus", "8").json()
    vllm = [p for p in doc["plans"] if p["build"] == "vllm-0.33.0"]
    assert vllm, "vLLM 0.33.0 selects FLASHINFER_MLA_SPARSE_SM120 for the NoPE shape on sm120"
    assert not any(stale in n for p in vllm for n in p["notes"])
    a100 = cli("explain", "--format", "json", "--gpu", "a100", "--model", "glm-5.3-flash", "--gpus", "8").json()
    kernel = [r["reason"] for r in rejections(a100) if r["build"] == "vllm-0.33.0" and r["gate"] == "kernel"]
    assert kernel and all("sparse_mla_nope" in r for r in kernel)


def test_usable_memory_is_what_nvidia_smi_reports(cli):
    doc = cli("list", "hardware", "--format", "json").json()
    memory = {h["id"]: float(h["memory_gib"]) for h in doc}
    # 81,559 MiB and ~97,887 MiB, in GiB
    assert memory["h100-pcie"] == memory["h800"] == round(81559 / 1024, 1)
    assert memory["rtx-pro-6000"] == round(97887 / 1024, 1)


def test_one_checked_source_turns_the_unknown_into_a_plan_with_its_required_flags(cli, tmp_path):
    """The user's own folder adds a checked source to SGLang's SM120 indexer fact: GLM-5.2 on sm120 then
    runs on sglang-0.5.23 and the derived plan carries the DSA kernel arguments that kernel declares."""
    from tests.support.data import REPO

    unverified = (
        "      note: 'late-2026 SGLang ships dsa/sm120_mqa_fallback.py and sm120_mqa_triton.py; "
        "details not verified'\n      unverified: true\n"
    )
    text = (REPO / "recipes" / "engines" / "sglang.yaml").read_text()  # the base build; releases live beside it
    assert text.count(unverified) == 1
    checked = unverified + "    - url: https://example.invalid/my-run\n      note: served GLM-5.2 on 8x RTX PRO 6000\n"
    (tmp_path / "engines").mkdir()
    mine = text.replace(unverified, checked)
    (tmp_path / "engines" / "sglang.yaml").write_text(mine)
    args = ("explain", "--format", "json", "--gpu", "rtx-pro-6000", "--gpus", "8", "--model", "glm-5.2")
    before = cli(*args, "--engine", "sglang").json()
    assert not [p for p in before["plans"] if p["build"] == "sglang-0.5.23"]
    after = cli(*args, "--engine", "sglang", "--recipes", str(tmp_path)).json()
    plan = next(p for p in after["plans"] if p["build"] == "sglang-0.5.23" and p["variant"] == "nvfp4")
    flags = {f["flag"]: f["value"] for f in plan["flags"]}
    assert flags["--dsa-prefill-backend"] == flags["--dsa-decode-backend"] == "flashinfer_sparse_mla"
    assert flags["--attention-backend"] == "dsa" and "--disable-shared-experts-fusion" in flags
    assert check_argv(vocabulary("sglang-0.5.23"), plan["argv"][3:]) == []


def test_a_required_argument_the_engine_does_not_accept_is_a_catalog_error(cli, tmp_path):
    from tests.support.data import REPO

    text = (REPO / "recipes" / "models" / "deepseek-v4-flash.yaml").read_text()
    assert text.count("flag: --moe-backend\n") == 1
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "deepseek-v4-flash.yaml").write_text(
        text.replace("flag: --moe-backend\n", "flag: --moe-backendd\n")
    )
    result = cli("validate", str(tmp_path))
    assert result.code != 0 and "Traceback" not in result.err
    lines = [line for line in (result.out + result.err).splitlines() if "--moe-backendd" in line]
    assert len(lines) == 1 and "deepseek-v4-flash.yaml:" in lines[0] and "required_args[" in lines[0]
