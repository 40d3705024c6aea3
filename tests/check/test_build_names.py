"""Lint and diagnose name the build the way --build does (catalog/buildnames.py): the image of a `docker run`
line or compose service, `lint --build`, and the version line of a log, each with its rule in the JSON."""

from __future__ import annotations

import datetime as dt

SERVE = ["vllm", "serve", "/models/Llama-3.3-70B-Instruct", "--tensor-parallel-size", "2"]


def lint(cli, *args):  # type: ignore[no-untyped-def]
    result = cli("lint", "--gpu", "h200", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return result.json()


def test_a_docker_run_of_an_ngc_container_is_checked_against_its_release(cli):
    doc = lint(cli, "--", "docker", "run", "--gpus", "all", "nvcr.io/nvidia/vllm:26.03-py3", *SERVE)
    assert doc["build"] == "vllm-0.17.0"  # the release its notes name (0.17.1)
    assert doc["build_resolution"]["rule"] == "vendor" and "NGC vLLM 26.03" in doc["build_note"]


def test_a_docker_run_of_an_ngc_container_the_catalog_records_is_that_build(cli):
    doc = lint(cli, "--", "docker", "run", "--gpus", "all", "nvidia/vllm:26.01-py3", *SERVE)
    assert (doc["build"], doc["build_resolution"]["rule"]) == ("vllm-ngc-26.01", "image")


def test_a_compose_service_on_latest_is_read_today(cli, catalog, tmp_path):
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        "services:\n  llm:\n    image: vllm/vllm-openai:latest\n"
        "    command: [/models/Llama-3.3-70B-Instruct, --tensor-parallel-size, '2']\n"
    )
    doc = lint(cli, str(compose))
    today = dt.date.today()
    newest = max(
        (b for b in catalog.engines["vllm"].builds if b.provenance == "official" and b.released <= today),
        key=lambda b: b.released,
    )
    assert doc["build"] == newest.id and doc["build_resolution"]["rule"] == "rolling"
    assert f":latest on {today} was vLLM {newest.version}" in doc["build_note"]


def test_lint_build_overrides_the_image_and_must_be_the_same_engine(cli):
    doc = lint(cli, "--build", "vllm/vllm-openai:latest", "--pulled", "2026-03-01", "--", *SERVE)
    assert doc["build"] == "vllm-0.16.0" and doc["build_note"].startswith(
        "vllm-0.16.0 (--build vllm/vllm-openai:latest"
    )
    wrong = cli("lint", "--build", "sglang==0.5.3", "--", *SERVE)
    assert wrong.code == 2 and "a SGLang build, but the command runs vLLM" in wrong.err


def test_diagnose_reads_a_development_version_line(cli, tmp_path):
    log = tmp_path / "engine.log"
    log.write_text(
        "INFO 06-03 10:00:00 [api_server.py:1] vLLM API server version 0.22.1rc1.dev124+gace95c9cf\n"
        "RuntimeError: a failure nobody catalogued\n"
    )
    result = cli("diagnose", str(log), "--format", "json")
    assert result.code == 0, result.err
    facts = result.json()["log"]
    assert facts["build"] == "vllm-0.22.0"
    assert (
        facts["build_resolution"]["rule"] == "version-string" and "commit ace95c9cf" in facts["build_resolution"]["how"]
    )


def test_a_docker_run_of_the_llama_cpp_cuda_image_is_checked_against_that_release(cli):
    command = ["docker", "run", "--gpus", "all", "ghcr.io/ggml-org/llama.cpp:server-cuda-b7190"]
    doc = lint(cli, "--", *command, "-m", "/models/Qwen3-8B-Q4_K_M.gguf", "-ngl", "99")
    # b7190 is a master build between the catalog's release tags: the release tag at or below it answers
    assert (doc["build"], doc["build_resolution"]["rule"]) == ("llama.cpp-b7186", "image-version")


def test_diagnose_reads_llama_cpp_build_line(cli, tmp_path):
    log = tmp_path / "llama-server.log"
    log.write_text(  # the first line llama-server prints: master's build number and commit
        "build: 7190 (8ad7b3e6) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu\n"
        "llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'x'\n"
    )
    result = cli("diagnose", str(log), "--format", "json")
    assert result.code == 0, result.err
    facts = result.json()["log"]
    assert facts["build"] == "llama.cpp-b7186" and "b7190" in facts["build_resolution"]["how"]
