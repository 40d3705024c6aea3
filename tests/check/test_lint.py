"""`recipegen lint`: the issue's examples, every finding kind, every input form, examples/ clean, and a
property test over generated plans (clean as generated; one load-bearing flag flipped → the matching finding)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recipegen.catalog.vocabulary import vocabulary
from recipegen.check.invocation import from_argv
from recipegen.check.lint import lint
from recipegen.plan.flags import local_image
from recipegen.plan.resolve import resolve
from recipegen.plan.types import Request

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SM80_IMAGE = "openguardrails/vllm-glm52-sm80:435f82d61-pr38476"
GLM52_SM80 = ["docker", "run", "--gpus", "all", SM80_IMAGE, "/models/GLM-5.2-NVFP4", "--tensor-parallel-size", "8"]
GLM_PARSERS = ["--tool-call-parser", "glm47", "--reasoning-parser", "glm45", "--trust-remote-code"]


def run(cli, *args):
    result = cli("lint", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    doc = result.json()
    assert doc["schema"] == "recipegen.check.lint/1"
    assert result.code == (1 if doc["failing"] else 0)
    return doc


def finding(doc, code):
    hits = [f for f in doc["findings"] if f["code"] == code]
    assert hits, [(f["code"], f["flag"], f["why"]) for f in doc["findings"]]
    return hits[0]


# --- the examples -------------------------------------------------------------------------


def test_dense_mla_backend_forced_on_a_dsa_model(cli):
    doc = run(
        cli,
        "--gpu",
        "h200",
        "--",
        "vllm",
        "serve",
        "/models/GLM-5.2-NVFP4",
        "-tp",
        "8",
        "--attention-backend",
        "FLASHMLA",
        *GLM_PARSERS,
    )
    f = finding(doc, "attention-backend")
    assert (f["severity"], f["flag"], f["value"], f["gate"]) == ("error", "--attention-backend", "FLASHMLA", "kernel")
    assert "provides attention.mla" in f["why"] and "attention.sparse_mla" in f["why"]
    assert f["fix"] == "remove --attention-backend" and "with the fix vLLM picks" in f["why"] and "sm90" in f["why"]
    assert doc["plan"] is not None


def test_backend_forced_through_the_environment(cli):
    doc = run(cli, "--gpu", "h200", "--", "VLLM_ATTENTION_BACKEND=FLASHMLA vllm serve /models/GLM-5.2-NVFP4 -tp 8")
    f = finding(doc, "attention-backend")
    assert (f["flag"], f["value"]) == ("VLLM_ATTENTION_BACKEND", "FLASHMLA")


def test_fp8_kv_cache_where_the_only_sparse_kernel_takes_bf16(cli):
    doc = run(cli, "--gpu", "a100", "--", *GLM52_SM80, "--kv-cache-dtype", "fp8", *GLM_PARSERS)
    f = finding(doc, "kv-dtype")
    assert (f["severity"], f["flag"], f["value"]) == ("error", "--kv-cache-dtype", "fp8")
    assert "sm80" in f["what"] and "not accepted (bf16)" in f["why"]
    assert f["fix"] == "--kv-cache-dtype bfloat16"
    assert doc["build"] == "vllm-glm52-sm80-pr38476"


def test_nvfp4_is_not_a_vllm_quantization_method(cli):
    doc = run(
        cli,
        "--gpu",
        "b200",
        "--",
        "vllm",
        "serve",
        "/models/GLM-5.2-NVFP4",
        "-tp",
        "8",
        "--quantization",
        "nvfp4",
        *GLM_PARSERS,
    )
    f = finding(doc, "bad-choice")
    assert (f["severity"], f["flag"], f["value"], f["fix"]) == (
        "error",
        "--quantization",
        "nvfp4",
        "drop --quantization",
    )
    assert any("docs.vllm.ai" in s for s in f["sources"])


def test_glm_tool_parser_on_glm5_is_refused_by_vllm_and_silent_on_sglang(cli):
    vllm = run(
        cli,
        "--gpu",
        "h200",
        "--",
        "vllm",
        "serve",
        "/models/GLM-5.2-NVFP4",
        "-tp",
        "8",
        "--tool-call-parser",
        "glm",
        "--reasoning-parser",
        "glm45",
    )
    f = finding(vllm, "bad-choice")
    assert (f["flag"], f["value"], f["fix"]) == ("--tool-call-parser", "glm", "--tool-call-parser glm47")
    sglang = run(
        cli,
        "--gpu",
        "gb10",
        "--gpus",
        "1",
        "--nodes",
        "2",
        "--",
        "docker",
        "run",
        "lmsysorg/sglang:glm-5.3-flash-arm64",
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "/models/GLM-5.3-Flash-NVFP4",
        "--tp-size",
        "2",
        "--tool-call-parser",
        "glm",
        "--reasoning-parser",
        "glm45",
    )
    f = finding(sglang, "tool-parser")
    assert (f["severity"], f["value"], f["fix"]) == ("silent", "glm", "--tool-call-parser glm47")
    assert "tool_calls null" in f["why"]  # the model's own pitfall, seed 003


def test_repo_id_where_the_engine_needs_a_local_folder(cli):
    doc = run(cli, "--gpu", "h200", "--", "vllm", "serve", "zai-org/GLM-5.3-Flash", "-tp", "8", *GLM_PARSERS)
    f = finding(doc, "repo-id")
    assert f["severity"] == "error" and f["value"] == "zai-org/GLM-5.3-Flash"
    assert "processor_config.json" in f["why"] and f["fix"].startswith("hf download zai-org/GLM-5.3-Flash --local-dir")
    # a model without that pitfall: downloading at start-up works, said as info
    other = run(cli, "--gpu", "h200", "--", "vllm", "serve", "Qwen/Qwen3-32B", "-tp", "2")
    assert finding(other, "repo-id")["severity"] == "info"


def test_a_folder_as_llama_server_model_fails_lint(cli, tmp_path):
    # the README's consumer example as it was generated: llama-server exits at load ("failed to read magic")
    doc = run(cli, "--", "llama-server", "--model", "/models/gpt-oss-120b-GGUF", "--port", "8080")
    f = finding(doc, "model-not-file")
    assert f["severity"] == "error" and f["value"] == "/models/gpt-oss-120b-GGUF"
    assert "FNAME" in f["why"] and f["fix"].startswith("--model /models/gpt-oss-120b-GGUF/")
    # through a bind mount the folder is looked at, and the fix names its first split part
    weights = tmp_path / "weights" / "m-GGUF"
    weights.mkdir(parents=True)
    for n in (1, 2):
        (weights / f"m-Q4_K_M-0000{n}-of-00002.gguf").write_bytes(b"GGUF")
    mounted = ["docker", "run", "-v", f"{tmp_path / 'weights'}:/models:ro", "recipegen/llama-cpp-0c1e570:0c1e570"]
    doc = run(cli, "--", *mounted, "--model", "/models/m-GGUF", "--port", "8080")
    f = finding(doc, "model-not-file")
    assert f["fix"] == "--model /models/m-GGUF/m-Q4_K_M-00001-of-00002.gguf"
    assert "is the folder" in f["why"]
    # a file is fine, mounted or not
    for args in (
        ["--", "llama-server", "--model", "/models/x.gguf"],
        ["--", *mounted, "--model", f"/models/m-GGUF/{next(weights.glob('*1-of*')).name}"],
    ):
        assert not [x for x in run(cli, *args)["findings"] if x["code"] == "model-not-file"]
    # vLLM's model argument is a folder or a repo id: not this rule
    vllm = run(cli, "--", "vllm", "serve", "/models/Qwen3-32B", "-tp", "2")
    assert not [x for x in vllm["findings"] if x["code"] == "model-not-file"]


def test_tensor_parallel_that_does_not_divide_the_kv_heads(cli):
    doc = run(cli, "--gpu", "l40s", "--", "vllm", "serve", "/models/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "7")
    f = finding(doc, "topology")
    assert (f["severity"], f["flag"], f["value"]) == ("error", "--tensor-parallel-size", "7")
    assert "4 KV heads" in f["why"] and f["fix"] == "--tensor-parallel-size 1"


def test_a_context_the_kv_pool_cannot_hold(cli):
    doc = run(
        cli,
        "--gpu",
        "a100",
        "--",
        *GLM52_SM80,
        "--kv-cache-dtype",
        "bfloat16",
        "--max-model-len",
        "1000000",
        *GLM_PARSERS,
    )
    f = finding(doc, "context")
    assert (f["severity"], f["flag"], f["value"], f["gate"]) == ("error", "--max-model-len", "1000000", "memory")
    assert f["fix"] == "--max-model-len 131072"


def test_latest_image_is_a_warning_and_pinned_to_a_release(cli):
    doc = run(
        cli,
        "--gpu",
        "h200",
        "--",
        "docker",
        "run",
        "--gpus",
        "all",
        "vllm/vllm-openai:latest",
        "/models/Qwen3-32B",
        "-tp",
        "2",
        "--tool-call-parser",
        "hermes",
        "--reasoning-parser",
        "qwen3",
    )
    f = finding(doc, "latest-image")
    assert f["severity"] == "warn" and f["fix"] == "pin a release: vllm/vllm-openai:v0.33.0-x86_64"
    assert not doc["failing"]


def test_gb10_reasoning_parser_choice_of_seed_003(cli):
    doc = run(
        cli,
        "--gpu",
        "gb10",
        "--gpus",
        "1",
        "--nodes",
        "2",
        "--",
        "vllm",
        "serve",
        "/models/GLM-5.3-Flash-NVFP4",
        "-tp",
        "2",
        "--tool-call-parser",
        "glm47",
        "--reasoning-parser",
        "glm45",
    )
    f = finding(doc, "reasoning-parser")
    assert (f["severity"], f["value"], f["fix"]) == ("silent", "glm45", "--reasoning-parser deepseek_r1")
    assert "https://huggingface.co/LibertAIDAI/GLM-5.3-Flash-NVFP4" in " ".join(f["sources"])
    # the same parser is right for SGLang on the same GPU
    sglang = run(
        cli,
        "--gpu",
        "gb10",
        "--gpus",
        "1",
        "--nodes",
        "2",
        "--",
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "/models/GLM-5.3-Flash-NVFP4",
        "--reasoning-parser",
        "glm45",
    )
    assert not [f for f in sglang["findings"] if f["code"] == "reasoning-parser"]


GB10_PAIR = ["--gpu", "gb10", "--gpus", "1", "--nodes", "2", "--"]
SGLANG_GLM53 = [
    "python3",
    "-m",
    "sglang.launch_server",
    "--model-path",
    "/models/GLM-5.3-Flash-NVFP4",
    "--tp-size",
    "2",
]
TILELANG_BF16 = ["--attention-backend", "dsa", "--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"]
TILELANG_BF16 += ["--kv-cache-dtype", "bfloat16", "--tool-call-parser", "glm47", "--reasoning-parser", "glm45"]


def test_sglang_dsa_backends_pinned_with_a_kv_dtype_that_leaves_no_kernel(cli):
    doc = run(cli, *GB10_PAIR, *SGLANG_GLM53, *TILELANG_BF16)
    f = finding(doc, "attention-backend")
    assert f["flag"] == "--dsa-prefill-backend/--dsa-decode-backend" and "101,376 B" in f["why"]
    assert f["fix"] == "remove --dsa-prefill-backend/--dsa-decode-backend and set --kv-cache-dtype fp8_e4m3"
    # the model image with the GB10 tile runs the same command as written
    same = run(cli, *GB10_PAIR, "docker", "run", "lmsysorg/sglang:glm-5.3-flash-arm64", *SGLANG_GLM53, *TILELANG_BF16)
    assert not same["failing"], same["findings"]


def test_data_parallel_counts_gpus(cli):
    doc = run(
        cli,
        "--gpu",
        "h200",
        "--",
        "vllm",
        "serve",
        "/models/Qwen3-32B",
        "-dp",
        "4",
        "-tp",
        "2",
        "--tool-call-parser",
        "hermes",
        "--reasoning-parser",
        "qwen3",
    )
    assert (doc["gpus_per_node"], doc["settings"]["tensor_parallel"], doc["findings"]) == (8, 2, [])


# --- the flag vocabulary --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "flag", "severity"),
    [
        (["--tp", "8"], "unknown-flag", "--tp", "error"),
        (["--max-model", "4096"], "abbreviation", "--max-model", "warn"),
        (["--enable-expert-parallel=true"], "switch-value", "--enable-expert-parallel", "error"),
        (["--max-num-seqs"], "missing-value", "--max-num-seqs", "error"),
        (["--kv-cache-dtype", "fp9"], "bad-choice", "--kv-cache-dtype", "error"),
        (["--dp", "2"], "ambiguous", "--dp", "error"),
        (["extra-positional"], "positional", "extra-positional", "error"),
    ],
)
def test_flag_vocabulary_findings(cli, args, code, flag, severity):
    doc = run(cli, "--", "vllm", "serve", "/models/Qwen3-32B", *args)
    f = finding(doc, code)
    assert (f["flag"], f["severity"]) == (flag, severity) and f["fix"]


def test_underscores_and_dotted_keys_are_read_like_vllm_does(catalog):
    inv = from_argv(
        catalog,
        [
            "vllm",
            "serve",
            "/models/Qwen3-32B",
            "--tensor_parallel_size",
            "2",
            "--speculative-config.num_speculative_tokens",
            "1",
        ],
    )
    result = lint(catalog, inv, "h200")
    assert not [f for f in result.findings if f.severity == "error"]
    assert result.settings is not None and result.settings.tp == 2


def test_without_gpu_only_the_vocabulary_and_parsers_are_checked(cli):
    doc = run(cli, "--", "vllm", "serve", "/models/GLM-5.2-NVFP4", "--attention-backend", "FLASHMLA")
    assert finding(doc, "no-gpu")["fix"].startswith("add --gpu")
    assert not [f for f in doc["findings"] if f["code"] == "attention-backend"]


def test_an_unknown_model_gets_the_vocabulary_check_only(cli):
    doc = run(cli, "--gpu", "h200", "--", "vllm", "serve", "/models/my-own-model", "--tp", "2")
    assert finding(doc, "model")["severity"] == "info" and finding(doc, "unknown-flag")["flag"] == "--tp"


def test_kernel_and_platform_walls_name_the_build(cli):
    doc = run(
        cli,
        "--gpu",
        "a100",
        "--",
        "docker",
        "run",
        "vllm/vllm-openai:v0.33.0-x86_64",
        "/models/GLM-5.2-NVFP4",
        "-tp",
        "8",
        *GLM_PARSERS,
    )
    f = finding(doc, "kernel")
    assert f["flag"] == "image" and "attention.sparse_mla" in f["why"] and "sm80" in f["what"]
    assert doc["plan"]["build"] == "vllm-glm52-sm80-pr38476"  # the plan that runs on the same GPUs
    gb10 = run(
        cli,
        "--gpu",
        "gb10",
        "--gpus",
        "1",
        "--nodes",
        "2",
        "--",
        "docker",
        "run",
        "vllm/vllm-openai:glm53-flash-arm64-cu130",
        "/models/GLM-5.3-Flash-NVFP4",
        "-tp",
        "2",
    )
    assert finding(gb10, "platform")["why"].startswith("vllm-glm53-flash-image (CUDA 12.9) is not compiled for sm121")


# --- input forms and exit codes -------------------------------------------------------------------


def test_shell_script_with_continuations_exports_and_bash_c(cli, tmp_path):
    script = tmp_path / "serve.sh"
    script.write_text(
        "#!/bin/bash\nset -e\nexport VLLM_ATTENTION_BACKEND=FLASHMLA\nIMG=vllm/vllm-openai:v0.33.0-x86_64\n"
        'docker run --rm --gpus all -v /data:/models -e HF_HOME=/cache \\\n  "$IMG" \\\n'
        "  /models/GLM-5.2-NVFP4 --tensor-parallel-size 8 \\\n  --tool-call-parser glm47 # tools\n"
    )
    doc = run(cli, str(script), "--gpu", "h200")
    assert (doc["engine"], doc["build"], doc["image"]) == ("vllm", "vllm-0.33.0", "vllm/vllm-openai:v0.33.0-x86_64")
    assert doc["env"] == {"HF_HOME": "/cache"} and doc["settings"]["tensor_parallel"] == 8
    wrapped = run(
        cli,
        "--gpu",
        "h200",
        "--",
        "docker run lmsysorg/sglang:v0.5.23-cu130 bash -c "
        "'python3 -m sglang.launch_server --model-path /models/GLM-5.2-NVFP4 --tp-size 8'",
    )
    assert (wrapped["engine"], wrapped["build"]) == ("sglang", "sglang-0.5.23")


def test_compose_file_with_a_string_command(cli, tmp_path):
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        "services:\n  llm:\n    image: lmsysorg/sglang:v0.5.23-cu130\n    environment:\n      - A=1\n"
        "    command: python3 -m sglang.launch_server --model-path /models/Qwen3-32B --tp 2\n"
    )
    doc = run(cli, str(compose), "--gpu", "h200")
    assert (doc["engine"], doc["where"], doc["env"]) == ("sglang", "service llm", {"A": "1"})
    assert finding(doc, "abbreviation")["fix"] == "--tensor-parallel-size"


def test_bad_input_exits_2_with_one_line(cli, tmp_path):
    note = tmp_path / "notes.txt"
    note.write_text("echo hello\n")
    for args in (
        [str(note)],
        [str(tmp_path / "missing.sh")],
        ["--", "echo", "hi"],
        ["--gpu", "nope", "--", "vllm", "serve", "x"],
    ):
        result = cli("lint", *args)
        assert result.code == 2, (args, result.out)
        assert result.err.startswith("error:") and len(result.err.strip().splitlines()) == 1
        assert "Traceback" not in result.err


def test_text_output_is_one_screen_with_the_plan(cli):
    result = cli("lint", "--gpu", "a100", "--", *GLM52_SM80, "--kv-cache-dtype", "fp8", *GLM_PARSERS)
    assert result.code == 1
    assert "✗ error  --kv-cache-dtype fp8" in result.out and "fix: --kv-cache-dtype bfloat16" in result.out
    assert "plan recipegen would generate: vLLM vllm-glm52-sm80-pr38476" in result.out
    assert len(result.out.splitlines()) < 40


# --- generated artifacts are clean ----------------------------------------------------------------

GENERATED = sorted(
    (d, name) for d in EXAMPLES.iterdir() if (d / "plan.json").is_file() for name in ("launch.sh", "docker-compose.yml")
)


@pytest.mark.parametrize(("folder", "name"), GENERATED, ids=[f"{d.name}/{n}" for d, n in GENERATED])
def test_every_generated_example_lints_clean(cli, folder, name):
    plan = json.loads((folder / "plan.json").read_text())
    if not plan["plans"]:
        pytest.skip("blocked example: nothing generated")
    top = plan["plans"][0]
    doc = run(
        cli,
        str(folder / name),
        "--gpu",
        plan["request"]["hardware"],
        "--gpus",
        str(top["gpus"]),
        "--nodes",
        str(top["nodes"]),
    )
    assert not doc["failing"], [(f["code"], f["flag"], f["why"]) for f in doc["findings"]]
    assert (doc["build"], doc["model"], doc["variant"]) == (top["build"], plan["request"]["model"], top["variant"])


# --- property: generated commands lint clean; one flipped flag gives the matching finding -----------

MODELS = [
    "glm-5.2",
    "glm-5.3-flash",
    "deepseek-v3.2",
    "deepseek-v4-flash",
    "qwen3-32b",
    "llama-3.3-70b",
    "gpt-oss-120b",
]
HARDWARE = ["a100-80gb", "h200", "rtx-pro-6000", "gb10", "b200", "l40s", "rtx-4090"]


def _command(plan):
    args = list(plan.argv[len(plan.engine.command) :])
    if plan.image is None:  # a fork built from source: the image recipegen's Dockerfile tags
        return ["docker", "run", local_image(plan.build), *plan.engine.command, *args]
    if plan.engine.image_entrypoint:
        return ["docker", "run", plan.image, *args]
    return ["docker", "run", plan.image, *plan.engine.command, *args]


def _replace(argv, flag, value):
    out, index = list(argv), argv.index(flag)
    out[index + 1] = value
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(MODELS), hardware=st.sampled_from(HARDWARE), gpus=st.sampled_from([1, 2, 4, 8, None]))
def test_generated_commands_lint_clean_and_a_flipped_flag_is_caught(catalog, model, hardware, gpus):
    hw = catalog.hardware[hardware]
    resolution = resolve(catalog, Request(model=catalog.models[model], hardware=hw, gpus_per_node=gpus))
    if not resolution.plans:
        return
    plan = resolution.plans[0]
    layout = plan.candidate.layout
    argv = _command(plan)

    def check(command):
        return lint(catalog, from_argv(catalog, command), hardware, layout.gpus_per_node, layout.nodes)

    clean = check(argv)
    assert not [f for f in clean.findings if f.severity != "info"], [(f.code, f.flag, f.why) for f in clean.findings]
    flags = plan.engine.flags
    vocab = vocabulary(plan.build.cli_reference or "")
    # a wrong but accepted tool parser: starts, and tool calls silently never parse
    if flags.tool_call_parser and flags.tool_call_parser in argv:
        wanted = plan.settings.tool_parser
        allowed = vocab.options[flags.tool_call_parser].get("valid_values") or vocab.options[
            flags.tool_call_parser
        ].get("choices")
        wrong = next(v for v in allowed if v != wanted)
        flipped = check(_replace(argv, flags.tool_call_parser, wrong))
        # (an info finding may add that this build's parser list is not sourced)
        found = [(f.severity, f.code) for f in flipped.findings if f.flag == flags.tool_call_parser]
        assert [f for f in found if f[0] != "info"] == [("silent", "tool-parser")]
    # a misspelled load-bearing flag: the engine exits at argument parsing
    if flags.context_length in argv:
        misspelled = [a + "x" if a == flags.context_length else a for a in argv]
        assert "unknown-flag" in {f.code for f in check(misspelled).findings if f.severity == "error"}
    # a tensor-parallel size that does not divide the attention heads
    heads = catalog.models[model].attention.num_heads
    if flags.tensor_parallel in argv and plan.engine.parallelism == "tensor":
        bad_tp = next(tp for tp in (3, 5, 7, 9, 11) if heads % tp)
        flipped = check(_replace(argv, flags.tensor_parallel, str(bad_tp)))
        assert "topology" in {f.code for f in flipped.findings if f.severity == "error"}


def test_terminal_control_characters_from_the_command_are_not_printed(cli):
    result = cli("lint", "--", "vllm", "serve", "/models/Qwen3-32B", "--bogus\x1b]0;owned\x07", "1")
    assert result.code == 1 and "\x1b" not in result.out and "\x07" not in result.out
    assert "--bogus?]0;owned?" in result.out


def test_a_script_on_stdin(cli, monkeypatch):
    import io
    import sys

    script = "docker run --gpus all vllm/vllm-openai:v0.33.0-x86_64 /models/Qwen3-32B -tp 2 --tp 2\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(script.encode())))
    doc = run(cli, "-", "--gpu", "h200")
    assert doc["where"] == "line 1" and finding(doc, "unknown-flag")["flag"] == "--tp"


def test_an_argument_the_catalog_requires_for_the_path_is_missing(cli):
    command = ("--gpu", "h200", "--", "vllm", "serve", "/models/DeepSeek-V3.2", "-tp", "8")
    parsers = ("--tool-call-parser", "deepseek_v32", "--reasoning-parser", "deepseek_v3")
    doc = run(cli, *command, *parsers)
    f = finding(doc, "required-arg")
    assert (f["severity"], f["flag"], f["fix"]) == ("warn", "--tokenizer-mode", "--tokenizer-mode deepseek_v32")
    fixed = run(cli, *command, *parsers, "--tokenizer-mode", "deepseek_v32")
    assert not [f for f in fixed["findings"] if f["code"] == "required-arg"]


def test_an_image_tag_between_releases_is_checked_against_the_nearest_one_below(cli):
    doc = run(
        cli, "--gpu", "a100", "--", "docker", "run", "vllm/vllm-openai:v0.27.5", "/models/GLM-5.2-NVFP4", "-tp", "8"
    )
    assert doc["build"] == "vllm-0.27.1" and "nearest known release at or below" in doc["build_note"]


def test_a_known_defect_of_the_build_on_this_path(cli):
    doc = run(
        cli,
        "--gpu",
        "h200",
        "--",
        "docker",
        "run",
        "vllm/vllm-openai:v0.27.1-x86_64",
        "/models/DeepSeek-V4-Flash",
        "-tp",
        "8",
        "--trust-remote-code",
    )
    defects = [x for x in doc["findings"] if x["code"] == "defect"]
    (f,) = [x for x in defects if "CUDA_ERROR_ILLEGAL_ADDRESS" in x["why"]]
    # the release's other CUDA-graph defect on Hopper (vllm#52457) has no workaround: an error, not a warning
    (allreduce,) = [x for x in defects if "custom_all_reduce" in x["why"]]
    assert allreduce["severity"] == "error" and allreduce["flag"] == "--enforce-eager"
    # the defect needs CUDA graphs (FULL capture), and this command runs with them
    assert (
        f["severity"] == "warn" and f["what"] == "the engine crashes with this command's configuration (CUDA graphs on)"
    )
    assert f["flag"] == "--enforce-eager"
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in f["why"] and "PIECEWISE" in f["fix"]
    assert any("vllm-project/vllm/issues/51181" in s for s in f["sources"])


def test_a_pinned_backend_does_not_replace_the_models_own_attention(catalog):
    # the curated SGLang recipe of DeepSeek-V4-Flash on 2×RTX PRO 6000 pins --attention-backend triton, as its report
    # ran it; DeepSeek-V4 keeps its own dsv4 attention (model_selected), so the command is not an error
    hw = "rtx-pro-6000"
    resolution = resolve(
        catalog, Request(model=catalog.models["deepseek-v4-flash"], hardware=catalog.hardware[hw], gpus_per_node=2)
    )
    plan = resolution.plans[0]
    argv = _command(plan)
    assert "--attention-backend" in argv
    found = lint(catalog, from_argv(catalog, argv), hw, 2, 1)
    assert not [f for f in found.findings if f.severity == "error"], [(f.code, f.why) for f in found.findings]
    # a pin still counts where the model has no attention of its own: GLM-5.2's DSA under vLLM's FLASH_ATTN
    glm = resolve(
        catalog,
        Request(model=catalog.models["glm-5.2"], hardware=catalog.hardware["h200"], gpus_per_node=8, engine="vllm"),
    )
    bad = [*_command(glm.plans[0]), "--attention-backend", "FLASH_ATTN"]
    assert "attention-backend" in {f.code for f in lint(catalog, from_argv(catalog, bad), "h200", 8, 1).findings}
