"""Generated hostile input through the CLI, in-process: checkpoint folders, commands, compose files and
scripts, logs and recipe folders. Every run ends within its budget (tests/support/budget.py) in a
documented exit code, never 70, and no plan is made for a model with a non-positive dimension.

Sized for CI (well under a minute); RECIPEGEN_FUZZ_EXAMPLES=N runs N examples per property, randomly
seeded (the default run is derandomized, so CI sees the same cases every time).
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recipegen.errors import ExitCode
from tests.support.budget import timed_cli
from tests.support.data import DATA, REPO

LONG = "RECIPEGEN_FUZZ_EXAMPLES" in os.environ
DOCUMENTED = {ExitCode.OK, ExitCode.CHECKS_FAILED, ExitCode.USAGE, ExitCode.BLOCKED, ExitCode.CONFLICT}


def _settings(examples: int) -> Any:
    return settings(
        max_examples=int(os.environ.get("RECIPEGEN_FUZZ_EXAMPLES", examples)),
        deadline=None,
        derandomize=not LONG,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _ends_well(result: Any, what: str) -> None:
    assert result.code in DOCUMENTED, (what, result.code, result.err[-500:])
    assert "internal error" not in result.err and "Traceback" not in result.err, (what, result.err[-500:])
    if result.code == ExitCode.USAGE:
        assert result.err.strip(), what


NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 3, 2**31, 2**63, 10**15, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
)
HOSTILE = st.one_of(NUMBERS, st.text(max_size=6), st.none(), st.booleans(), st.lists(st.integers(-3, 3), max_size=4))
FIELDS = [
    "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
    "max_position_embeddings", "intermediate_size", "moe_intermediate_size", "num_experts", "num_experts_per_tok",
    "full_attention_interval", "linear_num_value_heads", "linear_key_head_dim", "kv_lora_rank", "qk_rope_head_dim",
    "sliding_window", "max_window_layers", "first_k_dense_replace", "no_rope_layer_interval", "layer_types",
    "no_rope_layers", "attention_chunk_size", "n_routed_experts", "q_lora_rank", "v_head_dim",
]  # fmt: skip
CORE = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "vocab_size")
BASES = [
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-Next-80B-A3B-Thinking",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "deepseek-ai/DeepSeek-V3",
]


def _header(tensors: Any) -> bytes:
    raw = json.dumps(tensors).encode()
    return struct.pack("<Q", len(raw)) + raw


TENSOR = st.fixed_dictionaries(
    {"dtype": st.sampled_from(["BF16", "F32", "I8", "F8_E4M3", 7]), "shape": st.lists(NUMBERS, max_size=3)},
    optional={"data_offsets": st.lists(NUMBERS, min_size=2, max_size=2)},
)
HEADERS = st.one_of(st.dictionaries(st.text(max_size=4), TENSOR, max_size=3), st.lists(st.integers(), max_size=2))


@_settings(14)
@given(
    base=st.sampled_from(BASES),
    changes=st.dictionaries(st.sampled_from(FIELDS), HOSTILE, min_size=1, max_size=4),
    header=st.one_of(st.none(), HEADERS),
    total=st.one_of(st.none(), NUMBERS),
    command=st.sampled_from(["inspect", "inspect-json", "explain"]),
)
def test_a_generated_checkpoint_folder_ends_in_a_documented_exit_and_no_plan_on_a_bad_dimension(
    base, changes, header, total, command
):
    config = json.loads((DATA / "hub" / base / "config.json").read_text())
    fields = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    fields.update(changes)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "ck"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        if header is not None:
            (folder / "model.safetensors").write_bytes(_header(header))
        if total is not None:
            (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
        if command == "explain":
            result = timed_cli("explain", "--gpu", "h100", "--model", str(folder))
        else:
            result = timed_cli("inspect", str(folder), *(["--format", "json"] if command == "inspect-json" else []))
    _ends_well(result, changes)
    bad = [k for k in CORE if isinstance(fields.get(k), int | float) and not fields[k] > 0]
    if command == "explain" and bad:
        assert "VERDICT: runnable" not in result.out, (bad, result.out[:400])


SIZES = st.one_of(st.integers(-5, 2**64).map(str), st.sampled_from(["0", "9" * 5000, "٣", "²", "1e9", "", "-"]))
FLAGS = ["--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size", "--max-model-len", "-tp"]


@_settings(14)
@given(
    engine=st.sampled_from(["vllm", "sglang", "llama.cpp"]),
    model=st.sampled_from(["Qwen/Qwen3-8B", "zai-org/GLM-5.2", "/models/x", "nosuch/m"]),
    flags=st.lists(st.tuples(st.sampled_from([*FLAGS, "--tp", "--nnodes", "--dp"]), SIZES), max_size=4),
    gpu=st.sampled_from([[], ["--gpu", "h100"], ["--gpu", "sm80", "--gpus", "1024"]]),
)
def test_a_generated_engine_command_ends_in_a_documented_exit(engine, model, flags, gpu):
    start = {
        "vllm": ["vllm", "serve", model],
        "sglang": ["python3", "-m", "sglang.launch_server", "--model-path", model],
        "llama.cpp": ["llama-server", "-m", model],
    }[engine]
    argv = [*start, *[word for pair in flags for word in pair]]
    _ends_well(timed_cli("lint", *gpu, "--", *argv), argv)


def _compose(fanout: int, depth: int, nesting: int, as_list: bool) -> str:
    refs = ", ".join(["*a{}"] * fanout)
    lines = ["x-a0: &a0 [vllm, serve, Qwen/Qwen3-8B]"]
    lines += [f"x-a{i}: &a{i} [{refs.format(*[i - 1] * fanout)}]" for i in range(1, depth + 1)]
    command = f"*a{depth}" if as_list else "'vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2'"
    lines += ["services:", "  engine:", "    image: vllm/vllm-openai:v0.11.0", f"    command: {command}"]
    lines += ["    labels: " + "[" * nesting + "]" * nesting]
    return "\n".join(lines) + "\n"


def _script(fanout: int, depth: int, array_lines: int, closed: bool) -> str:
    lines = ["#!/bin/bash", "A0=vllm"]
    lines += [f'A{i}="' + "".join([f"${{A{i - 1}}}"] * fanout) + '"' for i in range(1, depth + 1)]
    lines += ["args=("] + ["  --max-model-len 4096"] * array_lines + ([")"] if closed else [])
    lines += [f'"$A{depth}" serve Qwen/Qwen3-8B "${{args[@]}}"']
    return "\n".join(lines) + "\n"


@_settings(10)
@given(
    compose=st.booleans(),
    fanout=st.integers(1, 64),
    depth=st.integers(0, 10),
    size=st.integers(0, 40_000),
    flag=st.booleans(),
)
def test_a_generated_compose_file_or_script_is_read_in_bounded_time(compose, fanout, depth, size, flag):
    with tempfile.TemporaryDirectory() as tmp:
        name = "docker-compose.yml" if compose else "launch.sh"
        path = Path(tmp) / name
        text = _compose(fanout, depth, size % 200, flag) if compose else _script(fanout, depth, size, flag)
        path.write_text(text)
        _ends_well(timed_cli("lint", "--gpu", "h100", str(path)), (name, fanout, depth, size, flag))


FRAGMENTS = [
    "model='qwen3-8b' ", "model='nosuch/m' ", "--model zai-org/GLM-5.2 ", "Device 0: NVIDIA H100 80GB HBM3 ",
    "GPU 0: NVIDIA A100-SXM4-80GB ", "compute capability 8.0 ", "Assertion error (", "trtllm ", "vllm ",
    "LLM engine (v0.11.0) ", "no kernel image is available for execution on the device", "x" * 100, "é\u202e\x1b[2J",
    "tensor_parallel_size=", "--tensor-parallel-size ", "Traceback (most recent call last):",
]  # fmt: skip


@_settings(10)
@given(
    pieces=st.lists(
        st.tuples(st.sampled_from(FRAGMENTS), st.one_of(st.none(), SIZES), st.integers(1, 20_000), st.booleans()),
        max_size=6,
    ),
    hints=st.sampled_from([[], ["--gpu", "h100"], ["--gpus", "1024", "--gpu", "a100"]]),
)
def test_a_generated_log_is_diagnosed_in_bounded_time(pieces, hints):
    parts = [(text + (size or "")) * count if same_line else f"{text}{size or ''}\n" * count
             for text, size, count, same_line in pieces]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "engine.log"
        log.write_text("\n".join(parts), encoding="utf-8", errors="surrogatepass")
        _ends_well(timed_cli("diagnose", str(log), *hints), [(p[0][:20], p[2]) for p in pieces])


ATOMS = ["a", "a+", "(a+)+", "(?:a|ab)*", "[^)]*", ".*", r"\d+", r"(?P<x>\w+)", "(", ")", "b?", "{2}", "x*y*", "$"]
FINGERPRINT = """id: generated
title: a generated fingerprint
pattern: {pattern}
stage: other
gate: platform
explanation: generated
fix: none
sources:
  - url: https://example.com/generated
"""


@_settings(4)
@given(
    atoms=st.lists(st.sampled_from(ATOMS), min_size=1, max_size=6),
    layers=st.one_of(NUMBERS, st.just(36)),
    folder_named_yaml=st.booleans(),
)
def test_a_generated_recipe_folder_is_validated_and_used_in_bounded_time(atoms, layers, folder_named_yaml):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "fingerprints").mkdir()
        (root / "models").mkdir()
        (root / "fingerprints" / "generated.yaml").write_text(FINGERPRINT.format(pattern=json.dumps("".join(atoms))))
        model = (REPO / "recipes" / "models" / "qwen3-8b.yaml").read_text().replace("layers: 36", f"layers: {layers}")
        (root / "models" / "qwen3-8b.yaml").write_text(model)
        if folder_named_yaml:
            (root / "models" / "x.yaml").mkdir()
        result = timed_cli("validate", str(root))
        _ends_well(result, atoms)
        if not (isinstance(layers, int) and 1 <= layers <= 4096):
            assert result.code == ExitCode.USAGE, (layers, result.out[-300:])
        log = root / "engine.log"
        log.write_text(("a" * 3000 + "!\n") * 20)
        _ends_well(timed_cli("diagnose", str(log), "--recipes", str(root)), atoms)
        if result.code == ExitCode.OK:
            explained = timed_cli("explain", "--gpu", "h100", "--model", "qwen3-8b", "--recipes", str(root))
            _ends_well(explained, layers)
