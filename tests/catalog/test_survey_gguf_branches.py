"""The GGUF survey of 2026-12-07 (issue 28): llama.cpp b9333 garbles text on sm120 with a quantized KV cache (a
quantized V cache alone is enough), and DeepSeek-V4 answered gibberish with a quantized K cache from b9840 until the
rotation fix. Each through the CLI: the plan on the affected build names the defect and its workaround, history
shows it on the builds that carry it and not on the fixed one, lint points at the flag, and a plan dated before the
fix answers as of its date."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

SM120_KV = "llama.cpp-b9333-sm120-quantized-kv-fa-garbled"
DSV4_K = "llama.cpp-b9840-dsv4-quantized-k-rotation-garbage"
GPTOSS_OFFLOAD = "llama.cpp-b7186-gptoss-expert-offload-long-prompt"

QWEN_GGUF = ("llama-server", "-m", "/models/Qwen_Qwen3-8B-Q6_K.gguf", "-ngl", "99", "-fa", "on", "-c", "32768")
DSV4_GGUF = (
    "llama-server",
    "-m",
    "/models/DeepSeek-V4-Flash-0731-UD-IQ2_XXS-00001-of-00003.gguf",
    "-ngl",
    "99",
    "-c",
    "32768",
    "--cpu-moe",
)
DSV4 = ("--model", "deepseek-v4-flash", "--engine", "llama.cpp", "--variant", "gguf-unsloth-0731-ud-iq2-xxs")


def defect_findings(doc, flag=None):
    return [f for f in doc["findings"] if f["code"] == "defect" and (flag is None or f["flag"] == flag)]


def top(cli, *args):
    plans = explain(cli, *args)["plans"]
    assert plans, args
    return plans[0]


# --- b9333: a quantized KV cache with flash attention on sm120 ----------------------------------------------------


def test_a_q8_0_plan_on_b9333_on_an_rtx_5090_names_the_defect_and_its_workaround(cli):
    plan = top(
        cli,
        "--gpu",
        "rtx-5090",
        "--model",
        "qwen3-8b",
        "--engine",
        "llama.cpp",
        "--build",
        "llama.cpp-b9333",
        "--kv-cache-dtype",
        "q8_0",
    )
    assert plan["build"] == "llama.cpp-b9333" and SM120_KV in defect_ids(plan)
    (note,) = [n for n in plan["notes"] if SM120_KV in n]
    assert "KV cache q8_0/q4_0" in note and "keep the f16 KV cache" in note and "fixed in llama.cpp-b9334" in note


def test_the_b9333_defect_stays_out_of_f16_plans_and_off_other_gpus(cli):
    default = top(
        cli, "--gpu", "rtx-5090", "--model", "qwen3-8b", "--engine", "llama.cpp", "--build", "llama.cpp-b9333"
    )
    assert SM120_KV not in defect_ids(default)
    ada = top(
        cli,
        "--gpu",
        "rtx-4090",
        "--model",
        "qwen3-8b",
        "--engine",
        "llama.cpp",
        "--build",
        "llama.cpp-b9333",
        "--kv-cache-dtype",
        "q8_0",
    )
    assert SM120_KV not in defect_ids(ada)


def test_history_with_a_q4_0_cache_shows_the_defect_on_b9333_only(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-5090", "qwen3-8b", 1, "--kv-cache-dtype", "q4_0"))
    assert SM120_KV in builds["llama.cpp-b9333"]["defects"]
    # it leaves at b9334, the tag of PR #23690's commit, the day after
    for other in ("llama.cpp-b8036", "llama.cpp-b9334", "llama.cpp-b9840", "llama.cpp-0c1e570"):
        assert SM120_KV not in builds[other]["defects"], other
    plain = verdicts(history_of(cli, "llama.cpp", "rtx-5090", "qwen3-8b", 1))
    assert SM120_KV not in plain["llama.cpp-b9333"]["defects"]


def test_lint_points_at_the_quantized_cache_flag_k_or_v_and_is_quiet_for_f16(cli):
    base = ("--gpu", "rtx-5090", "--build", "llama.cpp-b9333", "--", *QWEN_GGUF)
    (k,) = defect_findings(lint(cli, *base, "-ctk", "q8_0", "-ctv", "q8_0"))
    assert k["flag"] == "--cache-type-k" and "answers wrong" in k["what"] and "f16" in k["fix"]
    (v,) = defect_findings(lint(cli, *base, "-ctk", "f16", "-ctv", "q4_0"))  # the V cache alone (llama.cpp#23689)
    assert v["flag"] == "--cache-type-v"
    assert not defect_findings(lint(cli, *base, "-ctk", "f16", "-ctv", "f16"))
    assert not defect_findings(lint(cli, *base))
    ada = ("--gpu", "rtx-4090", "--build", "llama.cpp-b9333", "--", *QWEN_GGUF, "-ctk", "q8_0", "-ctv", "q8_0")
    assert not defect_findings(lint(cli, *ada))


def test_a_plan_dated_before_b9334_answers_with_b9333_and_its_defect(cli):
    plan = top(
        cli,
        "--gpu",
        "rtx-5090",
        "--model",
        "qwen3-8b",
        "--engine",
        "llama.cpp",
        "--as-of",
        "2026-05-25",
        "--kv-cache-dtype",
        "q8_0",
    )
    assert plan["build"] == "llama.cpp-b9333" and SM120_KV in defect_ids(plan)
    later = top(
        cli,
        "--gpu",
        "rtx-5090",
        "--model",
        "qwen3-8b",
        "--engine",
        "llama.cpp",
        "--as-of",
        "2026-06-01",
        "--kv-cache-dtype",
        "q8_0",
    )
    assert later["build"] == "llama.cpp-b9334" and SM120_KV not in defect_ids(later)


def test_b9333_still_carries_the_gpt_oss_expert_offload_defect_of_b7186(cli):
    builds = verdicts(history_of(cli, "llama.cpp", "rtx-5090", "gpt-oss-120b", 1))
    assert GPTOSS_OFFLOAD in builds["llama.cpp-b9333"]["defects"]


# --- DeepSeek-V4 with a quantized K cache, b9840 until b9905 (#25202's commit) -------------------------------------


def test_dsv4_on_b9840_with_a_q8_0_cache_names_the_rotation_defect_and_its_fix(cli):
    plan = top(cli, "--gpu", "rtx-5090", "--gpus", "2", *DSV4, "--build", "llama.cpp-b9840", "--kv-cache-dtype", "q8_0")
    assert plan["build"] == "llama.cpp-b9840" and DSV4_K in defect_ids(plan)
    (note,) = [n for n in plan["notes"] if DSV4_K in n]
    assert "fixed in llama.cpp-b9905" in note and "--cache-type-k f16" in note
    default = top(cli, "--gpu", "rtx-5090", "--gpus", "2", *DSV4, "--build", "llama.cpp-b9840")
    assert DSV4_K not in defect_ids(default)


def test_history_of_dsv4_with_q8_0_flips_at_b9905(cli):
    builds = verdicts(
        history_of(
            cli,
            "llama.cpp",
            "rtx-5090",
            "deepseek-v4-flash",
            2,
            "--variant",
            "gguf-unsloth-0731-ud-iq2-xxs",
            "--kv-cache-dtype",
            "q8_0",
        )
    )
    assert builds["llama.cpp-b9840"]["verdict"] == "runnable" and DSV4_K in builds["llama.cpp-b9840"]["defects"]
    for later in ("llama.cpp-b9905", "llama.cpp-0c1e570"):
        assert builds[later]["verdict"] == "runnable" and DSV4_K not in builds[later]["defects"], later
    assert builds["llama.cpp-b9905"]["released"] == "2026-07-07"
    assert builds["llama.cpp-b9333"]["verdict"] == "blocked"  # deepseek4 landed in b9840


def test_lint_flags_a_quantized_k_for_dsv4_on_b9840_but_not_a_quantized_v_alone_or_b9905(cli):
    base = ("--gpu", "rtx-5090", "--build", "llama.cpp-b9840", "--", *DSV4_GGUF)
    (hit,) = defect_findings(lint(cli, *base, "-ctk", "q8_0", "-ctv", "q8_0"))
    assert hit["flag"] == "--cache-type-k" and "--cache-type-k f16" in hit["fix"]
    assert not defect_findings(lint(cli, *base, "-ctk", "f16", "-ctv", "q8_0"))  # the report: V may stay q8_0
    for fixed in ("llama.cpp-b9905", "llama.cpp==b9905", "llama.cpp-0c1e570"):
        newer = ("--gpu", "rtx-5090", "--build", fixed, "--", *DSV4_GGUF, "-ctk", "q8_0")
        assert not defect_findings(lint(cli, *newer)), fixed


def test_a_dsv4_q8_0_question_dated_before_b9905_answers_with_the_defect_and_one_after_without(cli):
    args = ("--gpu", "rtx-5090", "--gpus", "2", *DSV4, "--kv-cache-dtype", "q8_0")
    during = top(cli, *args, "--as-of", "2026-07-05")
    assert during["build"] == "llama.cpp-b9840" and DSV4_K in defect_ids(during)
    after = top(cli, *args, "--as-of", "2026-07-08")
    assert after["build"] == "llama.cpp-b9905" and DSV4_K not in defect_ids(after)


def test_coverage_counts_upstream_llama_cpp_for_dsv4_from_b9840_with_the_defect_fixed(cli):
    result = cli("coverage", "--format", "json")
    assert result.code == 0, result.err
    cells = {(c["family"], c["gpu_class"]): c for c in result.json()["cells"]}
    for gpu_class in ("sm80", "sm86", "sm120"):
        cell = cells[("deepseek-v4-flash", gpu_class)]
        assert cell["official_since"]["build"] == "llama.cpp-b9840", gpu_class
        assert DSV4_K in cell["defects_fixed"], gpu_class
        assert cell["surveyed"] == "2026-12-07", gpu_class
    assert SM120_KV in cells[("qwen3-8b", "sm120")]["defects_closed"]
    assert SM120_KV not in cells[("qwen3-8b", "sm89")]["defects_closed"] + cells[("qwen3-8b", "sm89")]["defects_open"]


# --- the schema ---------------------------------------------------------------------------------------------------

V_ALONE = """id: llama.cpp-b9333-v
extends: llama.cpp-b9333
version: b9333-v
ref: b9333
released: '2026-05-26'
provenance: community
origin: a test branch
source_build:
  repo: https://github.com/ggml-org/llama.cpp
  ref: b9333
  base_image: nvidia/cuda:12.9.1-devel-ubuntu24.04
  runtime_image: nvidia/cuda:12.9.1-runtime-ubuntu24.04
  configure: [cmake, -B, build]
  build: [cmake, --build, build]
  binary: build/bin/llama-server
defects:
  add:
  - id: test-v-alone
    title: garbage with a quantized V
    symptom: wrong-output
    gate: kernel
    kv_v_alone: true
    sources: [{url: 'https://example.com/v', date: '2026-05-26', note: a report}]
sources: [{url: 'https://example.com/branch', date: '2026-05-26', note: the branch}]
"""


def test_validate_refuses_kv_v_alone_without_kv_dtypes_naming_file_and_field(cli, tmp_path):
    folder = tmp_path / "recipes" / "engines" / "llama.cpp"
    folder.mkdir(parents=True)
    (folder / "llama.cpp-b9333-v.yaml").write_text(V_ALONE, encoding="utf-8")
    result = cli("validate", str(tmp_path / "recipes"))
    text = result.out + result.err
    assert result.code not in (0, 70) and "Traceback" not in text
    assert "llama.cpp-b9333-v.yaml" in text and "kv_v_alone" in text and "kv_dtypes" in text, text
