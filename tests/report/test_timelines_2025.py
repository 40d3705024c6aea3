"""The 2025 release lines as a user sees them: vLLM 0.11.0/0.11.1/0.12.0 and SGLang 0.4.8 in `history`,
`explain --build` and `--as-of` (each build dated and sourced in recipes/engines/<engine>/)."""

from __future__ import annotations

from typing import Any

from tests.support.contract import rejections
from tests.support.release_history import engine_history, history_of, verdicts


def test_vllm_loads_deepseek_v32_from_0_11_0(cli):
    """DeepSeek-V3.2 (DSA) came out on 2025-09-29; 0.11.0 is the first vLLM release that registers it, and 0.13.0
    the first whose wheel registers its deepseek_v32 tool parser (until then a plan runs without it)."""
    vllm = history_of(cli, "vllm", "h200", "deepseek-v3.2", 8)
    builds = verdicts(vllm)
    assert builds["vllm-0.10.2"]["gate"] == "architecture"
    assert builds["vllm-0.11.0"]["released"] == "2025-10-02"
    assert builds["vllm-0.11.0"]["verdict"] == "runnable"
    assert builds["vllm-0.11.0"]["loses"] == ["no tool-call parser", "no reasoning parser"]
    assert builds["vllm-0.11.1"]["loses"] == ["no tool-call parser"]  # deepseek_v3 reasoning arrives in 0.11.1
    (flip,) = [f for f in vllm["flips"] if f["to"] == "vllm-0.11.0"]
    assert flip["change"].startswith("architecture now passes: vllm-0.11.0 loads DeepseekV32ForCausalLM")
    assert builds["vllm-0.13.0"]["verdict"] == "runnable"
    assert builds["vllm-0.13.0"]["loses"] == []
    (flip,) = [f for f in vllm["flips"] if f["to"] == "vllm-0.13.0"]
    assert flip["change"].startswith("parsers: ")
    assert "vllm-0.13.0 has --tool-call-parser deepseek_v32 (its sourced list)" in flip["change"]
    assert "until vllm-0.11.0 (2025-10-02), then runnable (no tool-call parser, no reasoning parser)" in vllm["summary"]
    assert "until vllm-0.13.0 (2025-12-19), runnable since" in vllm["summary"]


def test_vllm_0_11_0_has_no_sparse_mla_kernel_off_hopper_and_blackwell(cli):
    """In 0.11.x/0.12.0 the one sparse-MLA backend is FlashMLA (sm90/sm100): RTX PRO 6000 stops at the kernel."""
    for build in ("vllm==0.11.0", "vllm==0.12.0"):
        result = cli(
            "explain",
            "--gpu",
            "rtx-pro-6000",
            "--model",
            "deepseek-v3.2",
            "--gpus",
            "8",
            "--build",
            build,
            "--format",
            "json",
        )
        document = result.json()
        assert document["verdict"] == "blocked"
        kernel = [r for r in rejections(document) if r["gate"] == "kernel"]
        assert kernel and all("attention.sparse_mla" in r["reason"] and "sm120" in r["reason"] for r in kernel)


def test_minimax_m2_loads_from_vllm_0_11_1(cli):
    """MiniMax-M2 (2025-10-27) is rejected by 0.11.0 and loads from the 0.11.1 release line."""
    vllm = history_of(cli, "vllm", "h200", "minimax-m2", 4)
    builds = verdicts(vllm)
    assert builds["vllm-0.11.0"]["verdict"] == "blocked"
    assert builds["vllm-0.11.0"]["gate"] == "architecture"
    assert "MiniMaxM2ForCausalLM" in builds["vllm-0.11.0"]["reason"]
    assert builds["vllm-0.11.1"]["verdict"] == "runnable"


def test_explain_build_names_the_2025_release_and_its_cuda(cli):
    result = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "vllm==0.11.0", "--format", "json")
    assert result.code == 0, result.err
    assert result.json()["request"]["build"] == "vllm-0.11.0"
    assert {p["build"] for p in result.json()["plans"]} == {"vllm-0.11.0"}
    text = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "vllm==0.11.0")
    assert "CUDA 12.8" in text.out
    # a patch release the catalog does not list answers for the one below it
    between = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "vllm==0.11.2", "--format", "json")
    assert between.json()["request"]["build"] == "vllm-0.11.1"
    newer = cli("explain", "--gpu", "h200", "--model", "llama-3.3-70b", "--build", "vllm==0.12.0")
    assert "CUDA 12.9" in newer.out


def vllm_on_h200_as_of(cli: Any, model: str, gpus: int, date: str) -> dict[str, Any]:
    result = cli(
        "explain",
        "--gpu",
        "h200",
        "--model",
        model,
        "--gpus",
        str(gpus),
        "--engine",
        "vllm",
        "--as-of",
        date,
        "--format",
        "json",
    )
    answer = result.json()
    assert isinstance(answer, dict)
    return answer


def test_as_of_around_the_0_11_releases(cli):
    """The day 0.11.0 is out DeepSeek-V3.2 runs on H200 but its tool parser waits for 0.13.0 (2025-12-19);
    MiniMax-M2 waits for 0.11.1 (2025-11-19)."""
    assert vllm_on_h200_as_of(cli, "deepseek-v3.2", 8, "2025-10-01")["verdict"] == "blocked"
    loads = vllm_on_h200_as_of(cli, "deepseek-v3.2", 8, "2025-10-02")
    assert loads["verdict"] == "runnable"
    assert loads["plans"][0]["build"] == "vllm-0.11.0"
    assert any("no tool-call parser: vllm-0.11.0 has no --tool-call-parser deepseek_v32" in n
               for n in loads["plans"][0]["notes"])  # fmt: skip
    after = vllm_on_h200_as_of(cli, "deepseek-v3.2", 8, "2025-12-19")
    assert after["verdict"] == "runnable"
    assert after["plans"][0]["build"] == "vllm-0.13.0"
    m2 = vllm_on_h200_as_of(cli, "minimax-m2", 4, "2025-11-18")
    assert m2["verdict"] == "blocked"
    rejected = rejections(m2)
    # every candidate build of that day fails the architecture gate (whatever else it also fails)
    assert {r["build"] for r in rejected if r["gate"] == "architecture"} == {r["build"] for r in rejected}
    assert vllm_on_h200_as_of(cli, "minimax-m2", 4, "2025-11-19")["verdict"] == "runnable"


def test_sglang_0_4_8_predates_glm_4_5(cli):
    """SGLang 0.4.8 (2025-06-26) came out a month before GLM-4.5: the architecture gate says so."""
    sglang = history_of(cli, "sglang", "h200", "glm-4.5", 8)
    builds = verdicts(sglang)
    assert builds["sglang-0.4.8"]["released"] == "2025-06-26"
    assert builds["sglang-0.4.8"]["gate"] == "architecture"
    assert "Glm4MoeForCausalLM" in builds["sglang-0.4.8"]["reason"]
    # DeepSeek-V3 (dense MLA) already loads there
    dsv3 = history_of(cli, "sglang", "h200", "deepseek-v3", 8)
    assert verdicts(dsv3)["sglang-0.4.8"]["verdict"] == "runnable"


def test_glm53_flash_on_ampere_workstation_cards_has_a_fork_path(cli):
    """sm86 (RTX A6000 / RTX 3090): every official build lacks a NoPE sparse-MLA kernel; ik_llama.cpp's glm5next
    commit (#2376, reported on RTX 3090s) is the path, and only from the day that PR exists."""
    result = cli("explain", "--gpu", "rtx-a6000", "--model", "glm-5.3-flash", "--gpus", "8", "--format", "json")
    document = result.json()
    assert document["verdict"] == "runnable"
    plan = document["plans"][0]
    assert (plan["engine"], plan["build"], plan["variant"]) == ("llama.cpp", "ik_llama.cpp-42a9a2fd", "gguf")
    official = [r for r in rejections(document) if r["build"] in ("vllm-0.33.0", "sglang-0.5.23")]
    assert official and any(r["gate"] == "kernel" and "sparse_mla_nope" in r["reason"] for r in official)
    before = cli(
        "explain",
        "--gpu",
        "rtx-a6000",
        "--model",
        "glm-5.3-flash",
        "--gpus",
        "8",
        "--as-of",
        "2026-08-27",
        "--format",
        "json",
    )
    assert before.json()["verdict"] == "blocked"
    args = ("history", "--gpu", "rtx-a6000", "--model", "glm-5.3-flash", "--gpus", "8", "--engine", "llama.cpp")
    assert "fork path: ik_llama.cpp-42a9a2fd (2026-08-31): runnable" in cli(*args).out
    # a blocked side path has its own line, with its date, in --verbose (by default it may share its reason's line)
    assert "fork path: ik_llama.cpp-8337e4c (2026-08-15): blocked (architecture" in cli(*args, "--verbose").out


def test_dsv4_b300_startup_crash_blocks_only_the_release_it_was_reported_on(cli):
    """vllm#46796: DeepSeek-V4-Flash crashes at start on 8x B300 with 0.23.0 and serves on 0.20.1 (sm103 only)."""
    vllm = engine_history(
        cli("history", "--gpu", "b300", "--model", "deepseek-v4-flash", "--engine", "vllm", "--format", "json")
    )
    builds = verdicts(vllm)
    assert builds["vllm-0.20.1"]["verdict"] == "runnable"
    assert builds["vllm-0.23.0"]["verdict"] == "blocked" and builds["vllm-0.23.0"]["gate"] == "kernel"
    assert "vllm-0.23-dsv4-b300-hc-prenorm-gemm" in builds["vllm-0.23.0"]["reason"]
    # B200 (sm100) is not in the report
    b200 = verdicts(
        engine_history(
            cli("history", "--gpu", "b200", "--model", "deepseek-v4-flash", "--engine", "vllm", "--format", "json")
        )
    )
    assert b200["vllm-0.23.0"]["verdict"] == "runnable"


def test_gpt_oss_launch_image_runs_before_0_10_1_and_warns_on_ampere(cli):
    """vllm/vllm-openai:gptoss (2025-08-05) ran gpt-oss before 0.10.1; on sm86 it needs the Triton backend."""
    history = cli("history", "--gpu", "h200", "--model", "gpt-oss-120b", "--engine", "vllm")
    assert "model-image path: vllm-gptoss-image (2025-08-05): runnable" in history.out
    result = cli(
        "explain",
        "--gpu",
        "rtx-3090",
        "--model",
        "gpt-oss-20b",
        "--engine",
        "vllm",
        "--as-of",
        "2025-08-12",
        "--format",
        "json",
    )
    document = result.json()
    assert document["verdict"] == "runnable"
    plan = document["plans"][0]
    assert plan["build"] == "vllm-gptoss-image"
    assert any("VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1" in note for note in plan["notes"])


def test_dsv4_on_sm12x_is_blocked_in_the_releases_with_the_mhc_prenorm_regression(cli):
    """vllm#51758 / vllm-gb10#106: DeepSeek-V4-Flash loads on GB10 with 0.24.0 but not with 0.27.x/0.28.0."""
    builds = verdicts(history_of(cli, "vllm", "gb10", "deepseek-v4-flash", 2))
    for release in ("vllm-0.27.1", "vllm-0.28.0"):
        assert builds[release]["verdict"] == "blocked" and builds[release]["gate"] == "kernel"
        assert "vllm-dsv4-sm12x-mhc-prenorm-gemm" in builds[release]["reason"]
    assert builds["vllm-0.24.0"]["verdict"] == "runnable"
    # Hopper is not affected by this defect
    hopper = verdicts(
        engine_history(
            cli("history", "--gpu", "h200", "--model", "deepseek-v4-flash", "--engine", "vllm", "--format", "json")
        )
    )
    assert hopper["vllm-0.28.0"]["verdict"] == "runnable"
    assert "vllm-dsv4-sm12x-mhc-prenorm-gemm" not in str(hopper["vllm-0.28.0"]["defects"])
