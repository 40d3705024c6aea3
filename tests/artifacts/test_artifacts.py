"""Generated artifacts checked by the real tools: shellcheck, the Compose schema, the engines'
flag vocabularies; one argv across launch.sh, compose, README and plan.json; safe quoting."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from recipegen.catalog.vocabulary import check_argv, vocabulary
from tests.support.data import COMPOSE_SPEC

SEED_REQUESTS = {
    "glm52-a100": ["--gpu", "sm80", "--model", "glm-5.2"],
    "dsv4-a100": ["--gpu", "a100", "--model", "deepseek-v4-flash"],
    "glm53-spark": ["--gpu", "gb10", "--model", "glm-5.3-flash", "--nodes", "2"],
    "glm52-h200": ["--gpu", "h200", "--model", "glm-5.2", "--variant", "int4-int8mix"],
    "dsv4-h200": ["--gpu", "h200", "--model", "deepseek-ai/DeepSeek-V4-Flash-0731"],
    "qwen-derived": ["--gpu", "h100", "--model", "qwen3-32b"],
}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    from tests.support.cli import run_cli

    root = tmp_path_factory.mktemp("out")
    folders = {}
    for name, args in SEED_REQUESTS.items():
        result = run_cli(*args, "--out", str(root / name))
        assert result.code == 0, (name, result.err, result.out[-2000:])
        folders[name] = root / name
    return folders


def plan_of(folder: Path) -> dict:
    return json.loads((folder / "plan.json").read_text())


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is installed by .ci/run")
@pytest.mark.parametrize("name", list(SEED_REQUESTS))
def test_scripts_pass_shellcheck(rendered, name):
    scripts = [str(rendered[name] / s) for s in ("launch.sh", "verify.sh")]
    proc = subprocess.run(["shellcheck", "--severity=style", *scripts], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("name", list(SEED_REQUESTS))
def test_compose_file_matches_the_compose_schema(rendered, name):
    schema = json.loads(COMPOSE_SPEC.read_text())
    document = yaml.safe_load((rendered[name] / "docker-compose.yml").read_text())
    jsonschema.Draft7Validator(schema).validate(document)


@pytest.mark.parametrize("name", list(SEED_REQUESTS))
def test_engine_command_uses_only_real_flags(rendered, name, catalog):
    plan = plan_of(rendered[name])["plans"][0]
    vocab = vocabulary(catalog.build(plan["build"])[1].cli_reference)
    command = {"vllm": 2, "sglang": 3, "llama.cpp": 1}[plan["engine"]]
    assert check_argv(vocab, plan["argv"][command:]) == []


def test_vocabulary_check_catches_bad_flags():
    vllm = vocabulary("vllm-0.33.0")
    assert check_argv(vllm, ["/models/x", "--tp", "8"]) == ["--tp is not a vllm 0.33.0 option"]
    assert check_argv(vllm, ["/models/x", "--reasoning-parser", "glm5"]) == [
        "--reasoning-parser 'glm5' is not one of the accepted values"
    ]
    assert check_argv(vllm, ["/models/x", "--speculative-config.method", "mtp", "--no-async-scheduling"]) == []
    sglang = vocabulary("sglang-0.5.23")
    assert check_argv(sglang, ["--kv-cache-dtype", "fp8"]) == [
        "--kv-cache-dtype 'fp8' is not one of the accepted values"
    ]


def _compose_argv(folder: Path, service: str) -> list[str]:
    document = yaml.safe_load((folder / "docker-compose.yml").read_text())
    return [token.replace("$$", "$") for token in document["services"][service]["command"]]


def _launch_argv(folder: Path, rank: int) -> list[str]:
    text = (folder / "launch.sh").read_text()
    block = text.split(f"args_{rank}=(\n", 1)[1].split("\n)\n", 1)[0]
    lines = [line for line in block.splitlines() if not line.strip().startswith("#")]
    return shlex.split("\n".join(lines))


@pytest.mark.parametrize("name", list(SEED_REQUESTS))
def test_one_argv_everywhere(rendered, name):
    folder = rendered[name]
    plan = plan_of(folder)["plans"][0]
    engine_args = plan["argv"][{"vllm": 2, "sglang": 3, "llama.cpp": 1}[plan["engine"]] :]
    service = "engine" if plan["nodes"] == 1 else "head"
    launch = _launch_argv(folder, 0)
    compose = _compose_argv(folder, service)
    if plan["engine"] == "sglang":
        compose = compose[3:]
    # the head node adds its multi-node flags after the plan's argv
    assert launch[: len(engine_args)] == engine_args
    assert compose[: len(engine_args)] == engine_args
    readme = (folder / "README.md").read_text()
    for flag in plan["flags"]:
        if flag["flag"]:
            assert f"`{flag['flag']}`" in readme


def test_generation_is_byte_identical_and_refuses_to_clobber(cli, tmp_path):
    out = tmp_path / "plan"
    first = cli("--gpu", "sm80", "--model", "glm-5.2", "--out", str(out))
    assert first.code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = cli("--gpu", "sm80", "--model", "glm-5.2", "--out", str(out))
    assert again.code == 0 and "unchanged" in again.out
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    other = cli("--gpu", "sm80", "--model", "glm-5.2", "--context", "65536", "--out", str(out))
    assert other.code == 4
    assert "exists with different content" in other.err and "--force" in other.err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    forced = cli("--gpu", "sm80", "--model", "glm-5.2", "--context", "65536", "--out", str(out), "--force")
    assert forced.code == 0
    assert "'65536'" in (out / "launch.sh").read_text()


def test_blocked_request_writes_nothing(cli, tmp_path):
    result = cli(
        "--gpu",
        "rtx-4090",
        "--model",
        "glm-5.3-flash",
        "--engine",
        "vllm",
        "--build",
        "vllm==0.33.0",
        "--gpus",
        "8",
        cwd=tmp_path,
    )
    assert result.code == 3
    assert "VERDICT: blocked" in result.out
    assert "nothing written" in result.err
    assert list(tmp_path.iterdir()) == []


def test_no_secret_is_written(cli, tmp_path):
    result = cli(
        "--gpu", "sm80", "--model", "glm-5.2", "--out", str(tmp_path / "o"), env={"HF_TOKEN": "hf_secret_value_123"}
    )
    assert result.code == 0
    for path in (tmp_path / "o").iterdir():
        assert "hf_secret_value_123" not in path.read_text()


def test_every_plan_in_the_default_matrix_uses_real_flags(catalog):
    from recipegen.catalog.targets import DEFAULT_TARGETS, parse_target
    from recipegen.plan.resolve import resolve
    from recipegen.plan.types import Request

    checked = 0
    for model in catalog.models.values():
        for text in DEFAULT_TARGETS:
            target = parse_target(catalog, text)
            request = Request(
                model=model,
                hardware=target.hardware,
                gpus_per_node=target.gpus_per_node,
                nodes=target.nodes,
                shrink=True,
            )
            for plan in resolve(catalog, request).plans:
                skip = len(plan.engine.command)
                assert plan.build.cli_reference is not None, plan.build.id
                problems = check_argv(vocabulary(plan.build.cli_reference), list(plan.argv[skip:]))
                assert problems == [], (model.id, text, plan.build.id, plan.variant.id, problems)
                checked += 1
    assert checked > 100
