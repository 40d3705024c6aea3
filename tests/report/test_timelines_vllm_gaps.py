"""The vLLM releases that filled the gaps of the release line (issue 13) as a user sees them: GLM-5 from 0.16.0,
Kimi-K2.5 not yet in 0.14.0, DeepSeek-V4 on DGX Spark with 0.26.0, `--build` mapping point releases onto the dated
files, and `--as-of` answering with the release of that day (each build dated and sourced in recipes/engines/vllm/)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tests.support.release_history import explain, history_of, verdicts


def vllm_history(cli: Any, gpu: str, model: str, gpus: int) -> dict[str, Any]:
    return history_of(cli, "vllm", gpu, model, gpus)


GAP_RELEASES = {
    "vllm-0.14.0": dt.date(2026, 1, 20),
    "vllm-0.16.0": dt.date(2026, 2, 26),
    "vllm-0.17.0": dt.date(2026, 3, 7),
    "vllm-0.18.0": dt.date(2026, 3, 20),
    "vllm-0.19.0": dt.date(2026, 4, 3),
    "vllm-0.21.0": dt.date(2026, 5, 15),
    "vllm-0.22.0": dt.date(2026, 5, 29),
    "vllm-0.25.0": dt.date(2026, 7, 11),
    "vllm-0.26.0": dt.date(2026, 7, 25),
    "vllm-0.31.0": dt.date(2026, 10, 5),
}


def test_every_gap_release_is_an_official_dated_sourced_diff(catalog):
    builds = {b.id: b for _, b in catalog.builds()}
    for build_id, released in GAP_RELEASES.items():
        build = builds[build_id]
        assert build.provenance == "official" and build.released == released, build_id
        assert [s for s in build.sources if s.date and s.url.startswith("https://")], build_id
        assert build.images.get("x86_64") == f"vllm/vllm-openai:v{build.version}", build_id


def test_glm5_loads_from_vllm_0_16_0(cli):
    """GLM-5 (2026-02-11) ran only in the glm5 model image on 0.15.1; 0.16.0 is the first release that loads it."""
    vllm = vllm_history(cli, "h200", "glm-5", 8)
    builds = verdicts(vllm)
    assert builds["vllm-0.15.1"]["gate"] == "architecture"
    assert "GlmMoeDsaForCausalLM" in builds["vllm-0.15.1"]["reason"]
    assert builds["vllm-0.16.0"]["released"] == "2026-02-26"
    assert builds["vllm-0.16.0"]["verdict"] == "runnable"
    (flip,) = [f for f in vllm["flips"] if f["to"] == "vllm-0.16.0"]
    assert flip["from"] == "vllm-0.15.1" and flip["change"].startswith("architecture now passes")
    assert "until vllm-0.16.0 (2026-02-26), runnable since" in vllm["summary"]


def test_dsa_on_sm120_still_waits_for_0_24_after_glm5_loads(cli):
    """From 0.16.0 the architecture loads, but every release before 0.24.0 lacks an SM120 sparse-MLA kernel."""
    vllm = vllm_history(cli, "rtx-pro-6000", "glm-5.2", 8)
    builds = verdicts(vllm)
    for release in ("vllm-0.16.0", "vllm-0.19.0", "vllm-0.21.0", "vllm-0.22.0"):
        assert builds[release]["verdict"] == "blocked" and builds[release]["gate"] == "kernel", release
        assert "sparse_mla" in builds[release]["reason"] and "sm120" in builds[release]["reason"]
    assert builds["vllm-0.24.0"]["verdict"] == "runnable"
    assert vllm["summary"].startswith(
        "vLLM: blocked (architecture: does not load GlmMoeDsaForCausalLM) until vllm-0.16.0 (2026-02-26), "
        "then blocked (kernel: no attention.sparse_mla kernel for sm120) until vllm-0.24.0"
    )


def test_as_of_the_day_before_and_the_day_of_0_16_0(cli):
    """The day before 0.16.0 only the GLM-5 model image runs it; from 2026-02-26 the official release comes first."""
    args = ("--gpu", "h200", "--model", "glm-5", "--gpus", "8", "--engine", "vllm")
    before = explain(cli, *args, "--as-of", "2026-02-25")
    assert before["verdict"] == "runnable"
    assert {p["build"] for p in before["plans"]} == {"vllm-glm5-image"}
    after = explain(cli, *args, "--as-of", "2026-02-26")
    assert after["plans"][0]["build"] == "vllm-0.16.0"
    assert after["plans"][0]["provenance"] == "official"


def test_kimi_k25_is_not_in_0_14_0(cli):
    """Kimi-K2.5 came out on 2026-01-27, after 0.14.0: the flip stays at 0.15.1, now from 0.14.0."""
    vllm = vllm_history(cli, "h200", "kimi-k2.5", 8)
    builds = verdicts(vllm)
    assert builds["vllm-0.14.0"]["released"] == "2026-01-20"
    assert builds["vllm-0.14.0"]["gate"] == "architecture"
    assert "KimiK25ForConditionalGeneration" in builds["vllm-0.14.0"]["reason"]
    (flip,) = [f for f in vllm["flips"] if f["to"] == "vllm-0.15.1"]
    assert flip["from"] == "vllm-0.14.0"


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        ("vllm==0.14.1", "vllm-0.14.0"),
        ("vllm/vllm-openai:v0.16.0", "vllm-0.16.0"),
        ("vllm==0.17.1", "vllm-0.17.0"),
        ("vllm==0.18.1", "vllm-0.18.0"),
        ("vllm/vllm-openai:v0.19.1", "vllm-0.19.0"),
        ("vllm==0.21.0", "vllm-0.21.0"),
        ("vllm==0.22.1", "vllm-0.22.0"),
        ("vllm==0.25.1", "vllm-0.25.0"),
        ("vllm==0.26.0", "vllm-0.26.0"),
        ("vllm==0.31.0", "vllm-0.31.0"),
        ("vllm==0.32.1", "vllm-0.32.0"),  # 0.32.x has no file: the nearest harvested release, 0.32.0, answers as itself
    ],
)
def test_build_maps_a_release_onto_the_dated_file(cli, build, expected):
    document = explain(cli, "--gpu", "h200", "--model", "llama-3.3-70b", "--build", build)
    assert document["request"]["build"] == expected
    assert {p["build"] for p in document["plans"]} == {expected}


def test_cuda_of_the_gap_releases(cli):
    """The upstream images of 0.13-0.19 are CUDA 12.9 builds, those of 0.21 on CUDA 13.0."""
    releases = ("vllm==0.13.0", "vllm==0.14.0", "vllm==0.15.1", "vllm==0.19.0")
    for build, cuda in (*((r, "CUDA 12.9") for r in releases), ("vllm==0.21.0", "CUDA 13.0")):
        text = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", build)
        assert text.code == 0, text.err
        assert f"{cuda} covers sm90" in text.out, build


def test_as_of_picks_the_gap_release_of_that_day(cli):
    args = ("--gpu", "h200", "--model", "llama-3.3-70b", "--gpus", "4", "--engine", "vllm")
    for date, build in (
        ("2026-01-19", "vllm-0.13.0"),
        ("2026-01-20", "vllm-0.14.0"),
        ("2026-04-20", "vllm-0.19.0"),
        ("2026-05-20", "vllm-0.21.0"),
        ("2026-06-01", "vllm-0.22.0"),
        ("2026-07-20", "vllm-0.25.0"),
        ("2026-08-01", "vllm-0.26.0"),
        ("2026-10-05", "vllm-0.31.0"),
    ):
        document = explain(cli, *args, "--as-of", date)
        assert document["plans"][0]["build"] == build, date


def test_dsv4_on_dgx_spark_runs_on_0_26_0_and_breaks_with_0_27(cli):
    """vllm#51758: DeepSeek-V4-Flash-0731 loads on 2x GB10 with v0.26.0 and not with 0.27.x (DeepGEMM 2.6.1)."""
    vllm = vllm_history(cli, "gb10", "deepseek-v4-flash", 2)
    builds = verdicts(vllm)
    assert builds["vllm-0.26.0"]["verdict"] == "runnable" and builds["vllm-0.26.0"]["defects"] == []
    # 0.25.0 still carries the 0.24.0 FlashInfer API defect (with a workaround: ranked lower, not blocked)
    assert builds["vllm-0.25.0"]["verdict"] == "runnable"
    assert builds["vllm-0.25.0"]["defects"] == ["vllm-0.24-dsv4-sm120-flashinfer-api"]
    (flip,) = [f for f in vllm["flips"] if f["to"] == "vllm-0.27.1"]
    assert flip["from"] == "vllm-0.26.0" and flip["change"].startswith("kernel fails from this build")
    assert "vllm-dsv4-sm12x-mhc-prenorm-gemm" in flip["change"]
    args = ("--gpu", "gb10", "--model", "deepseek-v4-flash", "--gpus", "2", "--engine", "vllm")
    on_release_day = explain(cli, *args, "--as-of", "2026-07-25")["plans"][0]
    assert on_release_day["build"] == "vllm-0.26.0" and on_release_day["build_defects"] == []
    day_before = explain(cli, *args, "--as-of", "2026-07-24")["plans"][0]
    assert day_before["build"] == "vllm-0.25.0"
    assert [d["id"] for d in day_before["build_defects"]] == ["vllm-0.24-dsv4-sm120-flashinfer-api"]
    # Hopper is not affected: the release line stays runnable across the gap releases
    hopper = verdicts(vllm_history(cli, "h200", "deepseek-v4-flash", 8))
    assert all(hopper[b]["verdict"] == "runnable" for b in ("vllm-0.21.0", "vllm-0.22.0", "vllm-0.25.0", "vllm-0.26.0"))


def test_glm53_flash_on_sm120_runs_from_0_31_0_whose_own_selector_takes_nope(cli):
    """0.30.0 has no NoPE sparse-MLA path on SM12x; 0.31.0's selector, run on a simulated SM 12.0, accepts
    FLASHINFER_MLA_SPARSE_SM120 for the 512-wide NoPE shape (not with a bf16 KV cache), so the line flips there."""
    vllm = vllm_history(cli, "rtx-pro-6000", "glm-5.3-flash", 8)
    builds = verdicts(vllm)
    assert builds["vllm-0.30.0"]["verdict"] == "blocked" and builds["vllm-0.30.0"]["gate"] == "kernel"
    assert builds["vllm-0.31.0"]["released"] == "2026-10-05"
    assert builds["vllm-0.31.0"]["verdict"] == "runnable"
    assert builds["vllm-0.33.0"]["verdict"] == "runnable"
    pinned = explain(cli, "--gpu", "rtx-pro-6000", "--model", "glm-5.3-flash", "--gpus", "8", "--build", "vllm==0.31.0")
    assert pinned["plans"] and pinned["plans"][0]["build"] == "vllm-0.31.0"
    kv = next(f for f in pinned["plans"][0]["flags"] if f["flag"] == "--kv-cache-dtype")
    assert kv["value"] != "bf16"
    # Hopper has the NoPE path in every release from 0.30.0 on
    assert verdicts(vllm_history(cli, "h200", "glm-5.3-flash", 8))["vllm-0.31.0"]["verdict"] == "runnable"


def test_a_runnable_release_older_than_the_model_says_so(cli):
    """GLM-5.1 (April 2026) shares GLM-5's architecture, so 0.16.0-0.18.0 load it: history says those releases
    came out before the model (text and JSON), and says nothing for releases after it or for blocked ones."""
    builds = verdicts(vllm_history(cli, "h200", "glm-5.1", 8))
    assert builds["vllm-0.16.0"]["verdict"] == "runnable" and builds["vllm-0.16.0"]["before_model_release"]
    assert not builds["vllm-0.19.0"]["before_model_release"]
    text = cli("history", "--gpu", "h200", "--model", "glm-5.1", "--gpus", "8", "--engine", "vllm").out
    # a run of releases with the same verdict is one row, keyed here by its first release
    rows = {line.split()[1]: line.split("  [to ")[0] for line in text.splitlines() if line.startswith("  20")}
    assert rows["vllm-0.16.0"].endswith("runnable (released before the model, 2026-04)")
    assert rows["vllm-0.19.0"].endswith("runnable")
    blocked = next(row for row in rows.values() if "vllm-0.15.1" in row)
    assert "released before the model" not in blocked  # blocked: nothing to qualify
