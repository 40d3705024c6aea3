"""The SGLang releases between 0.4.8 and 0.5.23 that used to be missing, as a user sees them: GLM-4.5 loads from
0.4.10 (out by 2025-08-03), gpt-oss from the 0.5.0rc2 images (2025-08-05), Qwen3-Next from 0.5.2, MiniMax-M2 from
0.5.4.post3 (2025-10-27), the final DeepSeek-V3.2 waits for its parser until 0.5.6.post2, GLM-4.7's glm47 parser is
first known in 0.5.8, GLM-5 loads from 0.5.9 (2026-02-24), and `--build sglang==X` / `--as-of` answer for the release
that was out (each build dated and sourced in recipes/engines/sglang/)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.contract import rejections
from tests.support.release_history import explain, history_of, verdicts


def sglang_history(cli: Any, gpu: str, model: str, gpus: int) -> dict[str, Any]:
    return history_of(cli, "sglang", gpu, model, gpus)


@pytest.mark.parametrize(
    ("model", "gpus", "architecture", "last_without", "first", "released"),
    [
        ("glm-4.5", 8, "Glm4MoeForCausalLM", "sglang-0.4.9", "sglang-0.4.10", "2025-08-03"),
        ("gpt-oss-120b", 1, "GptOssForCausalLM", "sglang-0.4.10", "sglang-0.5.0rc2", "2025-08-05"),
        ("minimax-m2", 4, "MiniMaxM2ForCausalLM", "sglang-0.5.3", "sglang-0.5.4.post3", "2025-10-27"),
    ],
)
def test_2025_models_load_from_the_first_release_after_them(
    cli, model, gpus, architecture, last_without, first, released
):
    """Before these files every one of these flips was attributed to 0.5.6.post2 (2025-12-26)."""
    sglang = sglang_history(cli, "h200", model, gpus)
    builds = verdicts(sglang)
    assert builds[last_without]["gate"] == "architecture"
    assert architecture in builds[last_without]["reason"]
    assert builds[first]["released"] == released
    assert builds[first]["verdict"] == "runnable"
    (flip,) = [f for f in sglang["flips"] if f["to"] == first]
    assert flip["change"].startswith("architecture now passes")
    assert f"until {first} ({released})" in sglang["summary"]


@pytest.mark.parametrize(
    ("model", "gpus", "architecture", "not_yet", "first"),
    [
        (
            "deepseek-v3.2",
            8,
            "DeepseekV32ForCausalLM",
            ("sglang-0.4.10", "sglang-0.5.0rc2", "sglang-0.5.2"),
            "sglang-0.5.3",
        ),
        (
            "qwen3-next-80b-a3b-instruct",
            4,
            "Qwen3NextForCausalLM",
            ("sglang-0.4.10", "sglang-0.5.0rc2"),
            "sglang-0.5.2",
        ),
    ],
)
def test_models_released_after_a_gap_release_are_not_loaded_there(cli, model, gpus, architecture, not_yet, first):
    builds = verdicts(sglang_history(cli, "h200", model, gpus))
    for release in not_yet:
        assert builds[release]["verdict"] == "blocked"
        assert builds[release]["gate"] == "architecture"
        assert architecture in builds[release]["reason"]
    assert f"does not load {architecture}" not in (builds[first].get("reason") or "")


def test_qwen3_next_loads_from_0_5_2_and_stays_unknown_on_its_linear_attention(cli):
    """Qwen3-Next's card asks for sglang>=0.5.2; its gated-DeltaNet kernel is unverified in every build."""
    sglang = sglang_history(cli, "h200", "qwen3-next-80b-a3b-instruct", 4)
    builds = verdicts(sglang)
    assert builds["sglang-0.5.2"]["released"] == "2025-09-19"
    assert builds["sglang-0.5.2"]["verdict"] == "unknown"
    assert "linear_attention.gdn" in builds["sglang-0.5.2"]["reason"]
    assert "until sglang-0.5.2 (2025-09-19)" in sglang["summary"]


def test_the_final_deepseek_v32_waits_for_its_dsml_tool_parser(cli):
    """0.5.3 loads DeepseekV32ForCausalLM (the V3.2-Exp launch images), but the final V3.2 (2025-12-01) writes tool
    calls for the deepseekv32 parser, which the 2025 releases before 0.5.6.post2 lack: they run it without one."""
    builds = verdicts(sglang_history(cli, "h200", "deepseek-v3.2", 8))
    for release in ("sglang-0.5.3", "sglang-0.5.4.post3", "sglang-0.5.5"):
        assert builds[release]["verdict"] == "runnable"
        assert "no tool-call parser" in builds[release]["loses"]
    assert builds["sglang-0.5.6.post2"]["verdict"] == "runnable"
    assert "no tool-call parser" not in builds["sglang-0.5.6.post2"]["loses"]


def test_glm47_on_the_0_5_0rc2_images_lacks_its_tool_parser(cli):
    """GLM-4.7 (December 2025) loads as Glm4MoeForCausalLM, but the August 2025 parser list has no glm47: the plan
    leaves the flag out (the server would refuse the name) and says so."""
    document = explain(cli, "--gpu", "h200", "--model", "glm-4.7", "--build", "sglang==0.5.0")
    assert document["request"]["build"] == "sglang-0.5.0rc2"
    assert document["verdict"] == "runnable"
    plan = document["plans"][0]
    assert "--tool-call-parser" not in plan["argv"]
    assert any(
        n.startswith("no tool-call parser: sglang-0.5.0rc2 has no --tool-call-parser glm47") for n in plan["notes"]
    )


def test_glm47_plans_from_0_5_8_the_first_release_known_to_have_its_parser(cli):
    """GLM-4.7 (2025-12-22) loads as Glm4MoeForCausalLM everywhere from 0.4.10, but its glm47 tool parser is first
    registered in 0.5.8 (the published wheels); the 2025 releases run it without and name 0.5.8."""
    sglang = sglang_history(cli, "h200", "glm-4.7", 8)
    builds = verdicts(sglang)
    for release in ("sglang-0.5.5", "sglang-0.5.6.post2"):
        assert builds[release]["verdict"] == "runnable"
        assert builds[release]["loses"] == ["no tool-call parser"]
    assert builds["sglang-0.5.8"]["verdict"] == "runnable"
    assert builds["sglang-0.5.8"]["loses"] == []
    assert "(no tool-call parser) until sglang-0.5.8 (2026-01-30), runnable since" in sglang["summary"]
    plan = explain(cli, "--gpu", "h200", "--model", "glm-4.7", "--gpus", "8", "--build", "sglang==0.5.8")["plans"][0]
    assert "glm47" in plan["argv"]
    assert not [n for n in plan["notes"] if "--tool-call-parser glm47: not known to exist" in n]


def test_glm5_loads_from_0_5_9_and_sm120_waits_for_the_0_5_17_dsa_kernel(cli):
    """GLM-5 (2026-02-11) is in 0.5.9 (2026-02-24), not in 0.5.8. On RTX PRO 6000 no DSA attention kernel runs
    before 0.5.17: 0.5.9-0.5.16 offer no flashinfer_sparse_mla (their harvested --nsa-/--dsa-*-backend choices) and
    their own resolution picks trtllm on sm_120 (the 0.5.12-0.5.16 runs), which ships no SM120 kernel; 0.5.13's
    "SM120" work is DeepSeek-V4's own attention. From 0.5.17 only the indexer is left unknown."""
    sglang = sglang_history(cli, "h200", "glm-5", 8)
    builds = verdicts(sglang)
    assert builds["sglang-0.5.6.post2"]["gate"] == "architecture"
    assert builds["sglang-0.5.8"]["gate"] == "architecture"
    assert "GlmMoeDsaForCausalLM" in builds["sglang-0.5.8"]["reason"]
    assert builds["sglang-0.5.9"]["released"] == "2026-02-24"
    assert builds["sglang-0.5.9"]["verdict"] == "runnable"
    assert builds["sglang-0.5.10"]["verdict"] == "runnable"
    (flip,) = [f for f in sglang["flips"] if f["to"] == "sglang-0.5.9"]
    assert flip["change"].startswith("architecture now passes")
    sm120 = sglang_history(cli, "rtx-pro-6000", "glm-5.1", 8)
    by_build = verdicts(sm120)
    for release in ("sglang-0.5.9", "sglang-0.5.12", "sglang-0.5.13", "sglang-0.5.14", "sglang-0.5.16"):
        assert by_build[release]["gate"] == "kernel", release
        assert "attention.sparse_mla" in by_build[release]["reason"] and "sm120" in by_build[release]["reason"]
    assert by_build["sglang-0.5.17"]["verdict"] == "unknown" and "indexer.dsa" in by_build["sglang-0.5.17"]["reason"]
    assert "no attention.sparse_mla kernel for sm120) until sglang-0.5.17" in sm120["summary"]


def test_the_2026_point_releases_are_dated_in_history(cli):
    builds = verdicts(sglang_history(cli, "h200", "llama-3.3-70b", 1))
    dated = {release: build["released"] for release, build in builds.items()}
    point_releases = {
        "sglang-0.4.9": "2025-07-06",
        "sglang-0.4.10": "2025-08-03",
        "sglang-0.5.0rc2": "2025-08-05",
        "sglang-0.5.2": "2025-09-19",
        "sglang-0.5.3": "2025-10-12",
        "sglang-0.5.4.post3": "2025-10-27",
        "sglang-0.5.5": "2025-11-17",
        "sglang-0.5.6.post2": "2025-12-26",
        "sglang-0.5.8": "2026-01-30",
        "sglang-0.5.9": "2026-02-24",
        "sglang-0.5.10": "2026-04-06",
        "sglang-0.5.11": "2026-05-06",
        "sglang-0.5.12": "2026-05-18",
        "sglang-0.5.13": "2026-06-13",
        "sglang-0.5.14": "2026-06-29",
        "sglang-0.5.15": "2026-07-11",
        "sglang-0.5.16": "2026-07-26",
        "sglang-0.5.17": "2026-08-08",
        "sglang-0.5.18": "2026-08-25",
        "sglang-0.5.19": "2026-09-07",
        "sglang-0.5.20": "2026-09-18",
        "sglang-0.5.21": "2026-10-02",
        "sglang-0.5.23": "2026-11-29",
    }
    assert point_releases.items() <= dated.items()
    # (history also lists the releases known only from their harvested code, from 2024 on: not asserted here)
    assert all(builds[release]["verdict"] == "runnable" for release in point_releases)


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("sglang==0.4.9", "sglang-0.4.9"),
        ("sglang==0.4.11", "sglang-0.4.10"),
        ("sglang==0.5.0", "sglang-0.5.0rc2"),
        ("sglang==0.5.1", "sglang-0.5.0rc2"),
        ("sglang==0.5.3", "sglang-0.5.3"),
        ("sglang==0.5.4", "sglang-0.5.4.post3"),
        ("sglang==0.5.5", "sglang-0.5.5"),
        ("sglang==0.5.7", "sglang-0.5.6.post2"),
        ("sglang==0.5.8", "sglang-0.5.8"),
        ("sglang==0.5.9", "sglang-0.5.9"),
        ("sglang==0.5.14", "sglang-0.5.14"),
        ("sglang==0.5.17", "sglang-0.5.17"),
        ("sglang==0.5.22", "sglang-0.5.22"),  # no file, harvested: it answers as itself
    ],
)
def test_build_version_answers_for_the_nearest_release_at_or_below(cli, asked, answered):
    document = explain(cli, "--gpu", "h200", "--model", "llama-3.3-70b", "--build", asked)
    assert document["request"]["build"] == answered
    assert {p["build"] for p in document["plans"]} == {answered}


def test_explain_build_names_the_cuda_of_each_line(cli):
    """The 0.4.10/0.5.0rc2 Hopper images are CUDA 12.6, 0.5.3 and 0.5.9/0.5.10 CUDA 12.9, each with its driver floor."""
    expected = {
        "sglang==0.4.10": "CUDA 12.6",
        "sglang==0.5.0": "CUDA 12.6",
        "sglang==0.5.3": "CUDA 12.9",
        "sglang==0.5.9": "CUDA 12.9",
        "sglang==0.5.10": "CUDA 12.9",
    }
    for build, cuda in expected.items():
        text = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", build).out
        assert cuda in text
    assert (
        "driver ≥ 560.28.03"
        in cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "sglang==0.5.0").out
    )
    assert (
        "driver ≥ 575.51.03"
        in cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "sglang==0.5.9").out
    )


def sglang_as_of(cli: Any, model: str, gpus: int, date: str) -> dict[str, Any]:
    return explain(cli, "--gpu", "h200", "--model", model, "--gpus", str(gpus), "--engine", "sglang", "--as-of", date)


def test_as_of_around_the_gap_releases(cli):
    """The day before the gpt-oss images the newest SGLang is 0.4.10; on 2025-08-05 gpt-oss runs; GLM-5 waits for
    2026-02-24; and a date in late July 2026 answers with 0.5.16."""
    before = sglang_as_of(cli, "gpt-oss-120b", 1, "2025-08-04")
    assert before["verdict"] == "blocked"
    assert {r["build"] for r in rejections(before)} == {"sglang-0.4.10"}
    assert any(r["gate"] == "architecture" for r in rejections(before))
    after = sglang_as_of(cli, "gpt-oss-120b", 1, "2025-08-05")
    assert after["verdict"] == "runnable"
    assert after["plans"][0]["build"] == "sglang-0.5.0rc2"
    assert sglang_as_of(cli, "glm-5", 8, "2026-02-23")["verdict"] == "blocked"
    glm5 = sglang_as_of(cli, "glm-5", 8, "2026-02-24")
    assert glm5["verdict"] == "runnable"
    assert glm5["plans"][0]["build"] == "sglang-0.5.9"
    assert sglang_as_of(cli, "llama-3.3-70b", 1, "2026-08-01")["plans"][0]["build"] == "sglang-0.5.16"


@pytest.mark.parametrize("release", ["0.4.8", "0.4.9", "0.4.10", "0.5.0rc2"])
@pytest.mark.parametrize(("gpu", "sm"), [("a100", "sm80"), ("rtx-3090", "sm86")])
@pytest.mark.parametrize(("model", "quant"), [("llama-3.1-8b", "fp8"), ("qwen3-8b", "fp8_block")])
def test_fp8_on_ampere_is_refused_with_the_release_s_own_marlin_rule(cli, release, gpu, sm, model, quant):
    """These releases pick no Marlin FP8 themselves (their Fp8LinearMethod: only SGLANG_FORCE_FP8_MARLIN=1 with vLLM's
    Marlin ops, which they do not install, and never block FP8; their runs have no can_auto_enable_marlin_fp8), so an
    FP8 checkpoint on Ampere is refused with that reason and the run's source, not planned through a Marlin fallback
    inherited from a later release."""
    document = explain(
        cli, "--gpu", gpu, "--model", model, "--variant", "fp8", "--gpus", "1", "--build", f"sglang=={release}"
    )
    assert document["verdict"] == "blocked"
    (row,) = rejections(document)
    assert (row["build"], row["gate"]) == (f"sglang-{release}", "weight-format")
    assert row["reason"].startswith(
        f"no {quant} kernel for {sm} in sglang-{release}: Marlin FP8 (8.0-8.8) only with SGLANG_FORCE_FP8_MARLIN=1"
    )
    assert "fallbacks: none" in row["reason"]
    assert any(
        s["url"] == f"https://pypi.org/project/sglang/{release}/" and "can_auto_enable_marlin_fp8" in s["note"]
        for s in row["sources"]
    )


def test_fp8_runs_natively_on_ada_on_the_old_releases_and_through_marlin_from_0_5_2(cli):
    """What the refusal leaves: the same checkpoint plans natively on SM 8.9 with 0.4.9, and Ampere plans it through
    Marlin W8A16 from the first release whose code enables that itself (0.5.2: can_auto_enable_marlin_fp8)."""
    ada = explain(cli, "--gpu", "rtx-4090", "--model", "llama-3.1-8b", "--variant", "fp8", "--build", "sglang==0.4.9")
    assert ada["verdict"] == "runnable"
    assert ada["plans"][0]["build"] == "sglang-0.4.9"
    sglang = history_of(cli, "sglang", "a100", "llama-3.1-8b", 1, "--variant", "fp8")
    builds = verdicts(sglang)
    for release in ("sglang-0.4.8", "sglang-0.4.9", "sglang-0.4.10", "sglang-0.5.0rc2"):
        assert builds[release]["gate"] == "weight-format", release
        assert "SGLANG_FORCE_FP8_MARLIN" in builds[release]["reason"]
    assert builds["sglang-0.5.2"]["verdict"] == "runnable"
    text = cli(
        "explain",
        "--gpu",
        "a100",
        "--model",
        "llama-3.1-8b",
        "--variant",
        "fp8",
        "--gpus",
        "1",
        "--build",
        "sglang==0.4.9",
    )
    assert text.code == 0 and "VERDICT: blocked" in text.out
    assert (
        "no fp8 kernel for sm80 in sglang-0.4.9: Marlin FP8 (8.0-8.8) only with SGLANG_FORCE_FP8_MARLIN=1" in text.out
    )


def test_on_a_t4_sglang_0_4_10_plans_gptq_with_the_backend_its_sm75_run_picks_and_refuses_fp8(cli):
    """0.4.10's sm_75 run (added with --merge): its model runner picks flashinfer for a Llama-shaped model on a T4 and
    its fp8 method's minimum is 8.0. A GPTQ checkpoint plans there on flashinfer; the FP8 one is refused with the
    release's rule, not planned through a Marlin fallback."""
    from recipegen.catalog import harvest

    tables = harvest.ran("sglang", "0.4.10")
    assert 75 in tables["quantization"]["capabilities"]
    assert tables["quantization"]["methods"]["fp8"]["min_capability"] == 80
    (picked,) = [
        c["resolved"]["attention_backend"]
        for c in tables["attention_selector"]["cases"]
        if (c["capability"], c["shape"], c["kv"], c["asked"]) == (75, "gqa", "auto", None)
    ]
    assert picked == "flashinfer"
    gptq = explain(cli, "--gpu", "t4", "--model", "llama-3.1-8b", "--variant", "gptq", "--build", "sglang==0.4.10")
    assert gptq["verdict"] == "runnable"
    gates = {g["gate"]: g for g in gptq["plans"][0]["gates"]}
    assert gates["kernel"]["reason"] == "sm75: flashinfer (attention.gqa)"
    fp8 = explain(cli, "--gpu", "t4", "--model", "llama-3.1-8b", "--variant", "fp8", "--build", "sglang==0.4.10")
    assert fp8["verdict"] == "blocked"
    assert {row["gate"] for row in rejections(fp8)} == {"weight-format"}
    assert all("its fp8 method refuses GPUs below 8.0" in row["reason"] for row in rejections(fp8))
