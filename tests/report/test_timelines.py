"""Verdicts belong to builds: --build ENGINE==VERSION or an image, --as-of, known defects, and
`recipegen history` (seed 000 across time: the Aug 2026 model image vs the newest release)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from recipegen.catalog.names import release_line, version_key
from tests.support.contract import rejections

SEED_000 = ("--model", "glm-5.3-flash", "--gpus", "8")


def test_version_between_releases_answers_for_the_one_below(cli, catalog):
    line = release_line(catalog.engines["vllm"])
    assert len(line) >= 2
    lower, upper = line[-2], line[-1]
    low, high = version_key(lower.version), version_key(upper.version)
    assert low is not None and high is not None and low < high
    between = ".".join(map(str, (*low[:-1], low[-1] + 1))) if (*low[:-1], low[-1] + 1) < high else lower.version
    result = cli(
        "explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", f"vllm=={between}", "--format", "json"
    )
    assert result.code == 0, result.err
    request = result.json()["request"]
    assert request["build"] == lower.id
    assert f"--build vllm=={between} →" in request["understood_as"] and lower.id in request["understood_as"]
    assert {p["build"] for p in result.json()["plans"]} == {lower.id}


def test_image_reference_picks_its_build_or_the_nearest_release(cli, catalog):
    newest = release_line(catalog.engines["vllm"])[-1]
    image = newest.images["x86_64"]
    exact = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", image, "--format", "json")
    assert exact.json()["request"]["build"] == newest.id
    later = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "vllm/vllm-openai:v99.0.0")
    assert later.code == 0
    said = " ".join(later.out.split())  # the default view wraps the line at a word
    assert f"newer than any release in the catalog; answering for {newest.id}" in said


@pytest.mark.parametrize(
    ("build", "message"),
    [
        ("vllm==0.0.1", "older than the oldest vLLM release in the catalog"),
        ("vllm==latest", "'latest' is not a version"),
        ("nosuch/image:v1.0", "no engine in the catalog publishes images under 'nosuch/image'"),
    ],
)
def test_unusable_build_values_are_one_line_errors(cli, build, message):
    result = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", build)
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1 and message in result.err


def test_bad_as_of_date_is_a_one_line_error(cli):
    result = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--as-of", "27.08.2026")
    assert result.code == 2 and "--as-of '27.08.2026' is not a date" in result.err


def test_as_of_seed_000_reproduces_the_rtx_4090_report(cli, catalog):
    """Seed 000: on 2026-08-27, 8x RTX 4090 with vLLM's GLM-5.3-Flash image stop at the sparse-MLA backend."""
    result = cli(
        "explain", "--gpu", "rtx-4090", *SEED_000, "--engine", "vllm", "--as-of", "2026-08-27", "--format", "json"
    )
    document = result.json()
    assert document["verdict"] == "blocked"
    released = {b.id: b.released for _, b in catalog.builds()}
    builds = {r["build"] for r in rejections(document)}
    assert "vllm-glm53-flash-image" in builds
    assert all(released[b] <= dt.date(2026, 8, 27) for b in builds)  # nothing the user could not have had
    kernel = [r for r in rejections(document) if r["build"] == "vllm-glm53-flash-image" and r["gate"] == "kernel"]
    assert kernel and all("sm89" in r["reason"] and "sparse_mla_nope" in r["reason"] for r in kernel)
    # the weights themselves load: FP8 is not what blocks
    assert not [
        r
        for r in rejections(document)
        if r["build"] == "vllm-glm53-flash-image" and r["variant"] == "fp8" and r["gate"] == "weight-format"
    ]


def test_rtx_pro_6000_blocked_on_the_model_image_and_the_newest_build_says_its_own(cli, catalog):
    image = cli("explain", "--gpu", "rtx-pro-6000", *SEED_000, "--build", "vllm-glm53-flash-image", "--format", "json")
    assert image.json()["verdict"] == "blocked"
    assert {r["gate"] for r in rejections(image.json()) if r["variant"] == "fp8"} >= {"kernel"}
    newest = release_line(catalog.engines["vllm"])[-1]
    now = cli("explain", "--gpu", "rtx-pro-6000", *SEED_000, "--build", f"vllm=={newest.version}", "--format", "json")
    assert now.json()["verdict"] == "runnable"
    assert {p["build"] for p in now.json()["plans"]} == {newest.id}


def test_history_says_since_when_and_what_flipped_it(cli):
    result = cli("history", "--gpu", "rtx-pro-6000", *SEED_000, "--engine", "vllm", "--format", "json")
    assert result.code == 0, result.err
    (vllm,) = result.json()["engines"]
    builds = vllm["builds"]
    assert builds and all(b["provenance"] == "official" for b in builds)
    assert [b["released"] for b in builds] == sorted(b["released"] for b in builds)
    # the Aug 2026 model image is a side path, blocked at the kernel on sm120
    image = next(b for b in vllm["side_paths"] if b["build"] == "vllm-glm53-flash-image")
    assert image["verdict"] == "blocked" and image["gate"] == "kernel" and "sm120" in image["reason"]
    first = next(b for b in builds if b["verdict"] == "runnable")
    # before it: blocked, or unknown where a release's kernel is not known (vllm-0.31.0's NoPE path on SM12x)
    assert all(b["verdict"] in ("blocked", "unknown") for b in builds[: builds.index(first)])
    (flip,) = [f for f in vllm["flips"] if f["to"] == first["build"]]
    assert flip["change"].startswith(f"{builds[builds.index(first) - 1]['gate']} now passes")
    assert vllm["summary"].startswith("vLLM: blocked (")
    assert vllm["summary"].endswith(f"until {first['build']} ({first['released']}), runnable since")
    text = cli("history", "--gpu", "rtx-pro-6000", *SEED_000, "--engine", "vllm", "--verbose")
    assert vllm["summary"] in text.out and "model-image path: vllm-glm53-flash-image" in text.out
    explained = cli("explain", "--gpu", "rtx-pro-6000", *SEED_000, "--engine", "vllm")
    assert " ".join(explained.out.split()).endswith(vllm["summary"])  # wrapped at words, whole


def test_history_of_a_kernel_that_landed_in_a_release(cli):
    """GLM-5.2 on RTX PRO 6000: no sparse-MLA kernel for sm120 until a release added one."""
    result = cli(
        "history", "--gpu", "rtx-pro-6000", "--model", "glm-5.2", "--gpus", "8", "--engine", "vllm", "--format", "json"
    )
    (vllm,) = result.json()["engines"]
    kernel_flips = [f for f in vllm["flips"] if f["change"].startswith("kernel now passes: sm120")]
    assert kernel_flips, vllm["flips"]
    # older releases do not load the architecture at all; the kernel block comes after them
    assert "blocked (kernel: no attention.sparse_mla kernel for sm120) until" in vllm["summary"]


DEFECT = """\
id: vllm-test-defect
extends: vllm-0.33.0
version: 0.33.1
released: {date}
defects:
  add:
  - id: test-gqa-crash
    title: the FA3 backend crashes on Hopper for dense GQA models
    symptom: crash
    gate: kernel
    sm: ['9.0']
    ops: [attention.gqa]
    log_line: 'CUDA error: an illegal memory access was encountered'
{workaround}    sources:
    - url: https://example.org/issue/1
      date: 2026-12-02
"""


def user_build(tmp_path: Path, workaround: str | None) -> str:
    date = dt.date(2026, 12, 1).isoformat()
    extra = f"    workaround: {workaround}\n" if workaround else ""
    path = tmp_path / "engines" / "vllm" / "vllm-test-defect.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEFECT.format(date=date, workaround=extra))
    return str(tmp_path)


def test_defect_without_workaround_blocks_the_build_at_its_gate(cli, tmp_path):
    recipes = user_build(tmp_path, None)
    args = ("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--gpus", "4", "--engine", "vllm")
    result = cli(*args, "--recipes", recipes, "--format", "json")
    document = result.json()
    assert "vllm-test-defect" not in {p["build"] for p in document["plans"]}
    mine = [r for r in rejections(document) if r["build"] == "vllm-test-defect" and r["gate"] == "kernel"]
    assert len(mine) == len({r["variant"] for r in rejections(document) if r["build"] == "vllm-test-defect"}) >= 2
    for gate in mine:
        assert gate["reason"].startswith("known defect test-gqa-crash (crash)")
        assert "illegal memory access" in gate["reason"] and gate["sources"][0]["url"] == "https://example.org/issue/1"
    # a GPU outside the defect's capability set is not hit
    a100 = cli(
        "explain",
        "--gpu",
        "a100-80gb",
        "--model",
        "llama-3.3-70b",
        "--gpus",
        "4",
        "--engine",
        "vllm",
        "--recipes",
        recipes,
        "--format",
        "json",
    )
    assert a100.json()["plans"][0]["build"] == "vllm-test-defect"


def test_defect_with_workaround_ranks_the_build_below_clean_ones(cli, tmp_path):
    """Two model images alike but for a defect: without it the id order would put the defective one first."""
    folder = tmp_path / "engines" / "vllm"
    folder.mkdir(parents=True)
    defect = DEFECT.format(date="2026-12-01", workaround="    workaround: pass --attention-backend TRITON_ATTN\n")
    image = "provenance: model-image\nimages: {x86_64: example/vllm:img}\n"
    (folder / "vllm-a-defect.yaml").write_text(
        defect.replace("id: vllm-test-defect", "id: vllm-a-defect").replace("released:", image + "released:")
    )
    (folder / "vllm-b-clean.yaml").write_text(
        f"id: vllm-b-clean\nextends: vllm-0.33.0\nversion: b\nreleased: 2026-12-01\n{image}"
    )
    args = ("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--gpus", "4", "--engine", "vllm")
    plans = cli(*args, "--recipes", str(tmp_path), "--format", "json").json()["plans"]
    order = [p["build"] for p in plans]
    assert order.index("vllm-b-clean") < order.index("vllm-a-defect")
    hit = next(p for p in plans if p["build"] == "vllm-a-defect")
    assert [d["id"] for d in hit["build_defects"]] == ["test-gqa-crash"] and hit["build_defects"][0]["blocks"] is False
    assert any(n.startswith("known defect: vllm-a-defect: test-gqa-crash (crash)") for n in hit["notes"])
    clean = next(p for p in plans if p["build"] == "vllm-b-clean")
    assert clean["build_defects"] == []


def test_every_defect_and_community_build_has_a_dated_source(catalog):
    checked = 0
    for engine, build in catalog.builds():
        dated = [s for s in build.sources if s.date and s.url.startswith("https://")]
        if build.provenance in ("community", "fork"):
            assert dated, f"{engine.id}/{build.id}"
            checked += 1
        for defect in build.defects:
            assert [s for s in defect.sources if s.date and s.url.startswith("https://")], f"{build.id}/{defect.id}"
            checked += 1
    assert checked >= 2


def test_generate_as_of_writes_the_date_into_the_rerun_command(cli, tmp_path):
    out = tmp_path / "o"
    args = ("--gpu", "h200", "--model", "llama-3.3-70b", "--gpus", "4", "--engine", "vllm", "--as-of", "2026-07-15")
    result = cli(*args, "--out", str(out))
    assert result.code == 0, result.err
    plan = (out / "plan.json").read_text()
    assert '"build": "vllm-0.25.0"' in plan  # the newest vLLM release on that day (0.25.0, 2026-07-11)
    assert "--as-of 2026-07-15" in (out / "README.md").read_text()


def test_gpt_oss_loads_from_the_release_after_its_launch(cli):
    """gpt-oss came out between vLLM 0.10.0 and 0.10.1: 0.10.1 loads it, on Hopper and Ampere alike, but its tool
    parser (openai) and reasoning parser (openai_gptoss) are registered from 0.10.2 (PR #22386): until then a plan
    runs without them and says so."""
    for gpu in ("h200", "a100"):
        result = cli("history", "--gpu", gpu, "--model", "gpt-oss-120b", "--engine", "vllm", "--format", "json")
        assert result.code == 0, result.err
        (vllm,) = result.json()["engines"]
        verdicts = {b["build"]: b for b in vllm["builds"]}
        assert verdicts["vllm-0.10.0"]["verdict"] == "blocked"
        assert verdicts["vllm-0.10.0"]["gate"] == "architecture"
        assert verdicts["vllm-0.10.1"]["verdict"] == "runnable"
        assert verdicts["vllm-0.10.1"]["loses"] == [
            "no tool-call parser",
            "no reasoning parser",
        ]
        (flip,) = [f for f in vllm["flips"] if f["to"] == "vllm-0.10.1"]
        assert flip["change"].startswith("architecture now passes: vllm-0.10.1 loads GptOssForCausalLM")
        assert "vllm-0.10.1 has no --tool-call-parser openai" in flip["change"]
        assert verdicts["vllm-0.10.2"]["verdict"] == "runnable"
        assert verdicts["vllm-0.10.2"]["loses"] == []
        (flip,) = [f for f in vllm["flips"] if f["to"] == "vllm-0.10.2"]
        assert flip["change"].startswith("parsers: ")
        assert "vllm-0.10.2 has --tool-call-parser openai (its sourced list)" in flip["change"]


def test_as_of_before_deepseek_v32_has_no_dsa_release(cli):
    """On 2025-10-01, the day before 0.11.0, the newest vLLM release is 0.10.2, which loads no DSA model."""
    result = cli("explain", "--gpu", "h200", "--model", "deepseek-v3.2", "--engine", "vllm", "--as-of", "2025-10-01")
    assert "vllm-0.10.2" in result.out
    assert "DeepseekV32ForCausalLM" in result.out


def test_sglang_loads_deepseek_v4_from_0_5_12_and_the_launch_image_before(cli):
    """DeepSeek-V4 on H200: the launch image ran it before any release did; 0.5.12 is the first release."""
    result = cli("history", "--gpu", "h200", "--model", "deepseek-v4-flash", "--engine", "sglang", "--format", "json")
    assert result.code == 0, result.err
    (sglang,) = result.json()["engines"]
    verdicts = {b["build"]: b for b in sglang["builds"]}
    assert verdicts["sglang-0.5.11"]["gate"] == "architecture"
    assert verdicts["sglang-0.5.12"]["verdict"] == "runnable"
    sides = {b["build"]: b for b in sglang["side_paths"]}
    assert sides["sglang-dsv4-hopper-image"]["verdict"] == "runnable"
    assert sides["sglang-dsv4-hopper-image"]["released"] < verdicts["sglang-0.5.12"]["released"]
    # the Blackwell image is not built for Hopper, and the text line says why rather than a cut-off fragment
    assert sides["sglang-dsv4-blackwell-image"]["gate"] == "platform"
    text = cli("history", "--gpu", "h200", "--model", "deepseek-v4-flash", "--engine", "sglang").out
    line = next(x for x in text.splitlines() if "sglang-dsv4-blackwell-image" in x)
    assert "not compiled for sm90" in line


def test_a100_glm53_flash_has_a_community_path_where_every_official_build_is_blocked(cli):
    result = cli(
        "history", "--gpu", "a100", "--gpus", "8", "--model", "glm-5.3-flash", "--engine", "vllm", "--format", "json"
    )
    (vllm,) = result.json()["engines"]
    assert all(b["verdict"] == "blocked" for b in vllm["builds"])
    sides = {b["build"]: b for b in vllm["side_paths"]}
    assert sides["vllm-glm53-flash-image"]["gate"] == "kernel"
    community = sides["vllm-glm53-flash-sm80-malavp"]
    assert community["verdict"] == "runnable" and community["provenance"] == "community"


def test_v0_24_deepgemm_regression_ranks_fp8_below_on_sm120_only(cli):
    """vLLM 0.24.0 crashes FP8 checkpoints on SM12x (DeepGEMM pin without SM120); 0.23.0 and Hopper are clean."""

    def fp8_defects(gpu: str, build: str) -> list[str]:
        result = cli("explain", "--gpu", gpu, "--model", "qwen3-32b", "--build", build, "--format", "json")
        assert result.code == 0, result.err
        plans = result.json()["plans"]
        (fp8,) = [p for p in plans if p["variant"] == "fp8"]
        return [d["id"] for d in fp8["build_defects"]]

    assert fp8_defects("rtx-pro-6000", "vllm==0.24.0") == ["vllm-0.24-deepgemm-sm120-fp8"]
    assert fp8_defects("rtx-pro-6000", "vllm==0.23.0") == []
    assert fp8_defects("h200", "vllm==0.24.0") == []


def test_glm53_flash_loads_from_vllm_0_30_but_sm120_waits_for_a_nope_kernel(cli):
    def vllm_history(gpu: str) -> dict[str, dict[str, str]]:
        result = cli("history", "--gpu", gpu, *SEED_000, "--engine", "vllm", "--format", "json")
        assert result.code == 0, result.err
        (vllm,) = result.json()["engines"]
        return {b["build"]: b for b in vllm["builds"]}

    hopper = vllm_history("h200")
    assert hopper["vllm-0.29.0"]["gate"] == "architecture"
    assert hopper["vllm-0.30.0"]["verdict"] == "runnable"
    blackwell_ws = vllm_history("rtx-pro-6000")
    assert blackwell_ws["vllm-0.30.0"]["verdict"] == "blocked"
    assert blackwell_ws["vllm-0.30.0"]["gate"] == "kernel"
    # 0.30.0's own selector accepts a NoPE sparse-MLA backend on SM12x (the harvest); the kernel behind it asserts
    # DeepSeek's 64-dim RoPE part, a known defect of that release, so the gate names the defect
    assert "vllm-0.30-sm12x-nope-sparse-mla-pe-dim" in blackwell_ws["vllm-0.30.0"]["reason"]


def test_a_build_not_compiled_for_the_gpu_reads_whole_in_history(cli):
    # SM120/Blackwell images on an A100: the platform gate names the build and its CUDA version first ("B (CUDA
    # 12.9) is not compiled for sm80 (…)"); history drops the build's own name and the parentheticals, and must
    # keep the sentence whole, never "platform:  is not compiled" with its subject gone
    result = cli("history", "--gpu", "sm80", "--model", "qwen3-32b", "--verbose")  # each side path on its line
    assert result.code == 0, result.err
    compiled = [line for line in result.out.splitlines() if "not compiled for sm80" in line]
    assert compiled, result.out
    for line in compiled:
        assert "(platform: is not compiled for sm80)" in line, line
        assert "  " not in line.strip(), line
    payload = cli("history", "--gpu", "sm80", "--model", "qwen3-32b", "--format", "json").json()
    uncompiled = [
        side
        for engine in payload["engines"]
        for side in engine["side_paths"]
        if side["gate"] == "platform" and "is not compiled for sm80" in side["reason"]
    ]
    assert uncompiled
    for side in uncompiled:  # the JSON keeps the whole reason; the text line names the build once, before it
        assert side["reason"].startswith(f"{side['build']} (CUDA "), side["reason"]
        assert any(f"{side['build']} ({side['released']}): blocked (platform: is not" in line for line in compiled)
