"""Each hang, blow-up and exit-70 input of the fuzz campaign (issue 24), as a time-bounded run of the CLI:
every one ends within the budget in a documented exit code, with a one-line error naming file and field,
and no plan is made on an impossible dimension."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from tests.support.budget import timed_cli
from tests.support.data import DATA

HUB = DATA / "hub"
QWEN3 = "Qwen/Qwen3-8B"
NEXT = "Qwen/Qwen3-Next-80B-A3B-Thinking"
LLAMA4 = "meta-llama/Llama-4-Scout-17B-16E-Instruct"
MOE = "Qwen/Qwen3-30B-A3B"


def _config(repo: str, **changes: object) -> dict[str, object]:
    config: dict[str, object] = json.loads((HUB / repo / "config.json").read_text())
    config.update(changes)
    return config


def _folder(tmp_path: Path, config: dict[str, object] | str, **files: bytes) -> str:
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    for name, content in files.items():
        (folder / name.replace("__", ".")).write_bytes(content)
    return str(folder)


def _header(header: object) -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw


def _one_line_error(result, *words: str) -> None:  # type: ignore[no-untyped-def]
    assert result.code == 2, (result.code, result.out[-300:], result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize(
    ("repo", "field", "value", "shown"),
    [
        (NEXT, "num_hidden_layers", 10**15, "num_hidden_layers 1000000000000000 is out of range; use 1 to 4,096"),
        (QWEN3, "num_hidden_layers", -32, "num_hidden_layers -32 is out of range"),
        (QWEN3, "num_key_value_heads", -8, "num_key_value_heads -8 is out of range"),
        (QWEN3, "num_attention_heads", 0, "num_attention_heads 0 is out of range"),
        (QWEN3, "hidden_size", 10**300, "hidden_size a 301-digit number is out of range"),
        (QWEN3, "vocab_size", 1.5, "vocab_size 1.5 is out of range"),
    ],
)
def test_an_impossible_config_dimension_is_refused_naming_it(tmp_path, repo, field, value, shown):
    folder = _folder(tmp_path, _config(repo, **{field: value}))
    result = timed_cli("explain", "--gpu", "h100", "--model", folder)
    _one_line_error(result, f"config.json: {shown}")
    assert "RUNNABLE" not in result.out and "runnable" not in result.out


def test_a_layer_count_under_text_config_is_bounded_before_any_per_layer_count(tmp_path):
    config = _config(LLAMA4)
    config["text_config"] = {**config["text_config"], "num_hidden_layers": 10**15}  # type: ignore[dict-item]
    result = timed_cli("inspect", _folder(tmp_path, config), "--no-headers")
    assert result.code == 0, result.err
    assert "num_hidden_layers 1000000000000000 is out of range" in result.out


def test_nan_and_infinity_in_config_json_are_no_dimension(tmp_path):
    text = json.dumps(_config(QWEN3, num_hidden_layers=36)).replace('"hidden_size": 4096', '"hidden_size": Infinity')
    _one_line_error(timed_cli("explain", "--gpu", "h100", "--model", _folder(tmp_path, text)), "hidden_size inf")
    nan = text.replace("Infinity", "NaN")
    (Path(tmp_path) / "ck" / "config.json").write_text(nan)
    _one_line_error(timed_cli("explain", "--gpu", "h100", "--model", str(tmp_path / "ck")), "hidden_size nan")


def test_a_derived_model_the_schema_refuses_is_refused_with_the_field(tmp_path):
    """More experts per token than experts: `validate` refuses it in a models/*.yaml, so derivation does too."""
    folder = _folder(tmp_path, _config(MOE, num_experts_per_tok=500))
    result = timed_cli("explain", "--gpu", "h100", "--model", folder)
    _one_line_error(result, "is not accepted: moe: top_k 500 is more than the 128 experts")


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ([1, 2], "the safetensors header is not a JSON object"),
        ({"w": {"dtype": "BF16", "shape": ["a"], "data_offsets": [0, 2]}}, "tensor 'w': shape ['a']"),
        (
            {"w": {"dtype": "I8", "shape": [4], "data_offsets": [10**12, 0]}},
            "data_offsets [1000000000000, 0]",
        ),
        ({"w": {"dtype": "I8", "shape": [4], "data_offsets": ["x", "y"]}}, "tensor 'w': data_offsets ['x', 'y']"),
        ({"w": {"dtype": "I8", "shape": [-4], "data_offsets": [0, 4]}}, "tensor 'w': shape [-4]"),
    ],
)
def test_a_safetensors_header_no_file_can_have_is_an_error_naming_the_tensor(tmp_path, header, said):
    folder = _folder(tmp_path, _config(QWEN3), model__safetensors=_header(header))
    _one_line_error(timed_cli("inspect", folder), "model.safetensors", said)


def test_an_index_total_size_beyond_any_checkpoint_is_an_error(tmp_path):
    index = b'{"metadata": {"total_size": 1e400}, "weight_map": {}}'
    folder = _folder(tmp_path, _config(QWEN3), model__safetensors__index__json=index)
    for command in (["inspect", folder], ["explain", "--gpu", "h100", "--model", folder]):
        _one_line_error(timed_cli(*command), "model.safetensors.index.json: metadata.total_size inf is out of range")


def test_a_card_nested_thousands_deep_is_read_without_its_base_model(tmp_path):
    folder = _folder(tmp_path, _config(QWEN3), README__md=b"---\n" + b"[" * 5000 + b"\n---\n")
    result = timed_cli("inspect", folder, "--no-headers")
    assert result.code == 0, result.err


def test_a_fifo_or_a_link_loop_in_the_folder_is_never_opened(tmp_path):
    folder = Path(_folder(tmp_path, _config(QWEN3)))
    os.mkfifo(folder / "model.safetensors")
    os.mkfifo(folder / "README.md")
    os.symlink("loop.safetensors", folder / "loop.safetensors")
    result = timed_cli("inspect", str(folder))
    assert result.code == 0, result.err
    os.symlink(".", folder / "sub")
    result = timed_cli("explain", "--gpu", "h100", "--model", str(folder))
    assert result.code in (0, 2, 3), result.err
    assert "internal error" not in result.err
    result = timed_cli("--gpu", "h100", "--model", str(folder), "--out", str(tmp_path / "out"))  # checks the links
    assert result.code == 0, result.err


def test_a_long_non_ascii_model_name_is_an_unknown_model(tmp_path):
    _one_line_error(timed_cli("explain", "--gpu", "h100", "--model", "é" * 200), "unknown model")


def test_a_folder_named_like_a_recipe_file_is_a_problem_of_that_file(tmp_path):
    (tmp_path / "models" / "x.yaml").mkdir(parents=True)
    result = timed_cli("validate", str(tmp_path))
    assert result.code == 2, result.err
    assert "models/x.yaml: (file): not a regular file" in result.err


FINGERPRINT = """id: redos
title: a pattern that backtracks
pattern: '{pattern}'
stage: other
gate: platform
explanation: e
fix: f
sources:
  - url: https://example.com/redos
"""


def test_validate_refuses_a_fingerprint_pattern_that_backtracks_exponentially(tmp_path):
    (tmp_path / "fingerprints").mkdir()
    patterns = {"plus": "^(a+)+$", "alternation": "(x|xy)*z", "star": "(?:a*b?)+c"}
    for name, pattern in patterns.items():
        (tmp_path / "fingerprints" / f"{name}.yaml").write_text(FINGERPRINT.format(pattern=pattern))
    log = tmp_path / "a.log"
    log.write_text("a" * 40 + "!\n")
    for command in (["validate", str(tmp_path)], ["diagnose", str(log), "--recipes", str(tmp_path)]):
        result = timed_cli(*command)
        assert result.code == 2, result.err
        for name in patterns:
            assert f"{name}.yaml:3: pattern:" in result.err, result.err
        assert "inside a repeated group" in result.err


H100 = "Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0\n"


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("long-line", "trtllm" + " x" * 500_000 + "\n", None),
        ("model-repeated", "model='qwen3-8b' " * 150_000 + "\n", None),
        ("model-lines", "model='nosuch/m' \n" * 60_000, None),
        ("assertion", "Assertion error (" * 60_000 + "\n", None),
        ("tp-huge", f"vllm\nmodel='{QWEN3}'\n{H100}tensor_parallel_size=1000000000\n", "1000000000 is out of range"),
        # a printed configuration: nesting never closed, and more pairs than any engine prints
        ("config-nesting", "vLLM API server version 0.11.0\nnon-default args: {" + "{'a': [" * 300_000 + "\n", None),
        (
            "config-pairs",
            "sglang==0.5.12\nserver_args=ServerArgs(" + "kv_cache_dtype='fp8_e4m3', " * 100_000 + ")\n",
            "kv_cache_dtype=fp8_e4m3",
        ),
        ("config-quotes", "vLLM API server version 0.11.0\nwith config: model='" + "\\'" * 500_000 + "\n", None),
        ("tp-zero", f"vllm\nmodel='{QWEN3}'\n{H100}tensor_parallel_size=0\n", "size 0 is out of range"),
        (
            "tp-digits",
            f"vllm\nmodel='{QWEN3}'\n{H100}tensor_parallel_size={'9' * 5000}\n",
            "-digit number is out of range",
        ),
    ],
)
def test_diagnose_reads_a_hostile_log_within_the_budget(tmp_path, name, text, said):
    log = tmp_path / f"{name}.log"
    log.write_text(text)
    result = timed_cli("diagnose", str(log))
    assert result.code == 0, result.err
    if said is not None:
        assert said in result.out


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (
            ["--tensor-parallel-size", "10000000000"],
            "--tensor-parallel-size 10000000000 in the command",
        ),
        (["--tensor-parallel-size", "0"], "--tensor-parallel-size 0 in the command is out of range"),
        (["--pipeline-parallel-size", "9" * 5000], "--pipeline-parallel-size a 5000-digit number"),
        (["--tensor-parallel-size", "1024", "--pipeline-parallel-size", "1024"], "at most 1,024 are planned"),
    ],
)
def test_lint_bounds_the_parallel_sizes_a_command_states(flags, said):
    result = timed_cli("lint", "--gpu", "h100", "--", "vllm", "serve", QWEN3, *flags)
    _one_line_error(result, said)


def _bomb() -> str:
    refs = ", ".join(["*a{}"] * 9)
    lines = ["x-a0: &a0 [vllm]"]
    lines += [f"x-a{i}: &a{i} [{refs.format(*[i - 1] * 9)}]" for i in range(1, 10)]
    return "\n".join([*lines, "services:", "  s:", "    image: vllm/vllm-openai:v0.11.0", "    command: *a9", ""])


def _doubling() -> str:
    refs = "".join(["${{A{}}}"] * 200)
    lines = ["#!/bin/bash", "A0=vllm"] + [f'A{i}="{refs.format(*[i - 1] * 200)}"' for i in range(1, 9)]
    return "\n".join([*lines, "$A8 serve Qwen/Qwen3-8B", ""])


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("docker-compose.yml", _bomb(), "more than 100,000 values once YAML aliases are expanded"),
        ("deep-compose.yml", "services: " + "[" * 100_000 + "\n", "not valid YAML"),
        ("bomb.sh", _doubling(), "variables expand to more than 256 KiB"),
        ("args.sh", "#!/bin/bash\nargs=(\n" + "  --x\n" * 100_000, "no engine invocation found"),
    ],
)
def test_lint_reads_a_hostile_script_or_compose_file_in_linear_time(tmp_path, name, text, said):
    path = tmp_path / name
    path.write_text(text)
    _one_line_error(timed_cli("lint", "--gpu", "h100", str(path)), said)


def test_the_leftovers_of_a_killed_run_are_removed_by_the_next_one(tmp_path):
    out = tmp_path / "plan"
    request = ("--gpu", "h100", "--model", "qwen3-8b", "--out", str(out))
    assert timed_cli(*request).code == 0
    staging = tmp_path / ".plan.k1ll3d.recipegen-staging"  # what kill -9 during the first write leaves
    staging.mkdir()
    (staging / "launch.sh").write_text("#!/bin/bash\n")
    (out / ".launch.sh.k1ll3d.recipegen-tmp").write_text("half a file")
    (out / "notes.recipegen-tmp.txt").write_text("mine")  # not recipegen's name: kept
    (tmp_path / "mine.recipegen-staging").mkdir()  # not hidden: not recipegen's
    assert timed_cli(*request).code == 0
    assert not staging.exists() and not (out / ".launch.sh.k1ll3d.recipegen-tmp").exists()
    assert (out / "notes.recipegen-tmp.txt").read_text() == "mine" and (tmp_path / "mine.recipegen-staging").is_dir()


def test_launch_build_shows_the_recipes_build_argv_and_its_file_before_docker_builds(tmp_path):
    import subprocess

    out = tmp_path / "plan"
    request = ("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--host-memory", "128")
    assert timed_cli(*request, "--out", str(out)).code == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"  # stands in for Docker: records the call, after what was printed
    docker.write_text('#!/bin/sh\necho "docker $*" >&2\n')
    docker.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(out / "launch.sh"), "build"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "docker build runs these commands from the recipe engines/llama.cpp.yaml (built-in):"
    assert lines[1].startswith("  configure: cmake -B build") and "-DCMAKE_CUDA_ARCHITECTURES=86" in lines[1]
    assert lines[2].startswith("  build:     cmake --build build")
    assert lines[3].startswith("docker build --tag ")
