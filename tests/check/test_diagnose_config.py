"""`recipegen diagnose` on logs with no error line: the configuration the log prints (vLLM's non-default args,
SGLang's server_args, llama-server's command and KV-cache line) read as flags, and the catalog's defects of the
log's release that this configuration is in — silent wrong output included — reported with their fix. The logs are
real excerpts (tests/data/logs/config-*.log, each with its source); a variant of one changes a single knob to show
the verdict follows the configuration, not the release alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_diagnose import LOGS, fixture

LLAMA = "config-llamacpp-b9333-q4-kv.log"
VLLM_011 = "config-vllm-0.11-nondefault-args-tp4.log"
VLLM_025 = "config-vllm-0.25-dsv4-nondefault-args-dp8.log"
SGLANG = "config-sglang-server-args-minimax-m2-tp2.log"


def _log(tmp_path: Path, name: str, *edits: tuple[str, str]) -> str:
    body = fixture(LOGS / name)[2]
    for old, new in edits:
        assert old in body, old
        body = body.replace(old, new)
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return str(path)


def _json(cli, *args: str) -> dict:
    result = cli("diagnose", *args, "--format", "json")
    assert result.code == 0, result.err
    doc: dict = json.loads(result.out)
    return doc


def test_a_llamacpp_run_with_a_quantized_kv_cache_on_sm120_is_known_to_answer_garbage(cli, tmp_path):
    log = _log(tmp_path, LLAMA)
    result = cli("diagnose", log, "--gpu", "rtx-5090")
    assert result.code == 0, result.err
    out = result.out
    assert out.startswith("diagnose: no error line matches, but the configuration this log shows is in 1 known")
    assert "⚠ this configuration is known to give wrong output" in out
    assert "(llama.cpp-b9333-sm120-quantized-kv-fa-garbled)" in out
    assert "configuration: llama.cpp (llama-server) llama.cpp-b9333, sm120, KV cache q8_0/q4_0" in out
    assert "fix: keep the f16 KV cache" in out and "https://github.com/ggml-org/llama.cpp/issues/23693" in out
    assert "lines looked at" not in out  # the defect is the answer, not the tail of the log
    doc = _json(cli, log, "--gpu", "rtx-5090")
    assert doc["known"] is False  # no error line: the configuration, not a fingerprint, found it
    [hit] = doc["configuration"]["defects"]
    assert (hit["id"], hit["symptom"], hit["build"]) == (
        "llama.cpp-b9333-sm120-quantized-kv-fa-garbled",
        "wrong-output",
        "llama.cpp-b9333",
    )


def test_a_defect_the_log_cannot_settle_is_named_with_the_hint_that_settles_it(cli, tmp_path):
    log = _log(tmp_path, LLAMA)
    out = cli("diagnose", log).out
    assert "known to give wrong output" not in out
    assert "depend on what the log does not name: add --gpu (llama.cpp-b9333-sm120-quantized-kv-fa-garbled)" in out
    # a defect of GLM-5.2 is ruled out: the log names a model, and it is not one the catalog knows
    assert "llama.cpp-glm52" not in out
    doc = _json(cli, log)
    assert doc["configuration"]["undecided"] == [
        {"id": "llama.cpp-b9333-sm120-quantized-kv-fa-garbled", "needs": "--gpu"}
    ]


@pytest.mark.parametrize(
    ("gpu", "edit"),
    [
        ("rtx-4090", None),  # sm89: not a GPU the defect hits
        ("rtx-5090", ("--cache-type-k q4_0 --cache-type-v q4_0", "--cache-type-k f16 --cache-type-v f16")),
    ],
    ids=["other-gpu", "f16-cache"],
)
def test_the_same_release_with_another_gpu_or_kv_cache_is_not_flagged(cli, tmp_path, gpu, edit):
    log = _log(tmp_path, LLAMA, *([edit] if edit else []))
    doc = _json(cli, log, "--gpu", gpu)
    assert doc["configuration"]["defects"] == []
    assert "known to give wrong output" not in cli("diagnose", log, "--gpu", gpu).out


def test_vllm_non_default_args_are_read_and_the_context_decides_the_b200_defect(cli, tmp_path):
    at_bound = _log(tmp_path, VLLM_011)
    out = cli("diagnose", at_bound, "--gpu", "b200").out
    assert (
        "configuration the log prints (vLLM's non-default args): tensor_parallel_size=4, max_model_len=131072, "
        "max_num_seqs=10; KV cache auto: taken as bf16, the engine's default"
    ) in out
    assert "⚠" not in out  # 131072 tokens of context is not above the defect's 131072
    longer = ("'max_model_len': 131072", "'max_model_len': 262144")
    above = _log(tmp_path, VLLM_011, longer, ("--max-model-len 131072", "--max-model-len 262144"))
    out = cli("diagnose", above, "--gpu", "b200").out
    assert "⚠ this configuration is known to give wrong output: on B200, long-context GQA models" in out
    assert "(vllm-0.11-b200-full-cudagraph-trtllm-attention-mismatch)" in out
    assert "Qwen3-30B-A3B-Instruct-2507" in out and "a max context above 131,072 tokens" in out
    assert """fix: pass --compilation-config '{"cudagraph_mode": "PIECEWISE"}'""" in out
    assert "(fixed in vllm-0.11.1)" in out
    # run eagerly (no CUDA graphs), the same configuration is clean
    eager = _log(tmp_path, VLLM_011, longer, ("'max_num_seqs': 10}", "'max_num_seqs': 10, 'enforce_eager': True}"))
    assert _json(cli, eager, "--gpu", "b200")["configuration"]["defects"] == []
    # and on B300 (sm103) the defect's kernel choice is not made
    assert _json(cli, above, "--gpu", "b300")["configuration"]["defects"] == []


def test_a_workaround_already_in_the_command_clears_the_defect(cli, tmp_path):
    longer = ("'max_model_len': 131072", "'max_model_len': 262144")
    piecewise = ("--max-num-seqs 10", """--max-num-seqs 10 --compilation-config '{"cudagraph_mode": "PIECEWISE"}'""")
    log = _log(tmp_path, VLLM_011, longer, piecewise)
    assert _json(cli, log, "--gpu", "b200")["configuration"]["defects"] == []


def test_the_vllm_banner_names_the_release_and_nested_configs_do_not_derail_the_reading(cli, tmp_path):
    log = _log(tmp_path, VLLM_025)
    doc = _json(cli, log, "--gpu", "rtx-pro-6000")
    assert (doc["log"]["engine"], doc["log"]["version"], doc["configuration"]["build"]) == (
        "vllm",
        "0.25.0",
        "vllm-0.25.0",
    )
    shown = doc["configuration"]["shown"]
    assert "kv_cache_dtype=fp8" in shown and "data_parallel_size=8" in shown and "enable_expert_parallel=True" in shown
    assert [d["id"] for d in doc["configuration"]["defects"]] == ["vllm-0.24-dsv4-sm120-flashinfer-api"]
    assert "this configuration is known to crash" in cli("diagnose", log, "--gpu", "rtx-pro-6000").out
    assert _json(cli, log, "--gpu", "b200")["configuration"]["defects"] == []


def test_sglang_server_args_are_read_and_a_log_without_a_release_matches_no_defect(cli, tmp_path):
    out = cli("diagnose", _log(tmp_path, SGLANG), "--gpu", "h200").out
    assert "configuration the log prints (SGLang's server_args): kv_cache_dtype=auto, dtype=auto, tp_size=2" in out
    assert "the log names no release of the engine, so no release's known defects were matched" in out
    assert "⚠" not in out


def test_the_vllm_engine_config_line_gives_the_dtype_an_auto_kv_cache_stands_for(cli, tmp_path):
    doc = _json(cli, _log(tmp_path, "config-vllm-0.10-engine-config-qwen3-coder-fp8.log"), "--gpu", "h200")
    config = doc["configuration"]
    assert config["read_from"] == ["vLLM's engine config"] and config["build"] == "vllm-0.10.1"
    assert config["kv_note"] == "KV cache auto: the model dtype bfloat16 the log prints"
    assert "quantization=fp8" in config["shown"] and "max_model_len=131072" in config["shown"]
    assert "pipeline_parallel_size" not in config["shown"]  # a size of 1 is the default, not worth a word


def test_a_printed_speculative_config_and_an_uncatalogued_kv_dtype_are_read_as_printed(cli, tmp_path):
    out = cli("diagnose", _log(tmp_path, "config-vllm-0.25-engine-config-mtp-nvfp4-kv.log"), "--gpu", "rtx-5090").out
    assert "kv_cache_dtype=nvfp4, dtype=torch.bfloat16, quantization=compressed-tensors, tensor_parallel_size=1" in out
    assert 'speculative_config={"method": "mtp", "num_speculative_tokens": 2}, max_model_len=1048576' in out
    assert "KV cache auto" not in out  # nvfp4 is what the run used, not the engine's default
    # the model (unsloth/Qwen3.6-27B-NVFP4) is the catalog's dense qwen3.6-27b: the dense-model defect of the
    # release's Model Runner V2 is decided by it, not left for --model
    assert "model Qwen3.6-27B (unsloth/Qwen3.6-27B-NVFP4)" in out
    assert "1 known defect(s) of vllm-0.25.0" in out and "VLLM_USE_V2_MODEL_RUNNER=0" in out
    assert "depend on what the log does not name: add --model" not in out
    # a model the catalog does not know leaves that defect undecided, and says what would decide it
    renamed = ("Qwen3.6-27B-NVFP4'", "Acme-27B-NVFP4'")
    unknown = _log(tmp_path, "config-vllm-0.25-engine-config-mtp-nvfp4-kv.log", renamed)
    assert "depend on what the log does not name: add --model" in cli("diagnose", unknown, "--gpu", "rtx-5090").out


def test_llama_server_start_up_lines_give_the_kv_types_the_offload_and_the_slots(cli, tmp_path):
    log = _log(tmp_path, "config-llamacpp-0c1e570-q8-kv-override-slots.log")
    doc = _json(cli, log, "--gpu", "rtx-5090")
    # `build 1 (0c1e570)`: a tree without git history counts 1, so the commit names the catalog build
    assert doc["log"]["build"] == "llama.cpp-0c1e570" and doc["configuration"]["build"] == "llama.cpp-0c1e570"
    assert doc["configuration"]["read_from"] == ["llama.cpp's KV-cache, offload and slot lines"]
    assert (
        doc["configuration"]["shown"] == "cache_type_k=q8_0, cache_type_v=q8_0, override_tensor=tensors=CPU, parallel=2"
    )
    assert doc["configuration"]["defects"] == []  # no defect of 0c1e570 is scoped to this configuration
