"""llama-server started by what recipegen writes for the tiny model: launch.sh with the real Docker engine and
a FROM-scratch image of the binary, `recipegen up`, and the binary run with the generated argv; then verify.sh
and `recipegen verify` against its real replies, with the right reasoning handling and with it switched off."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.docker import free_port
from tests.support.engines import GGUF_DIR, docker_ok, engines, scratch_image, stream_chunks, wait_healthy

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(the generated folder, MODEL_DIR, the llama-server binary)."""
    e = engines()
    if e.llama_server is None:
        pytest.skip("e2e: no llama-server binary (scripts/e2e/prepare.sh builds it; RECIPEGEN_LLAMA_SERVER reuses one)")
    out = tmp_path_factory.mktemp("llama") / "folder"
    r = run_cli(
        "--gpu", "rtx-4090", "--gpus", "1", "--model", str(e.models / GGUF_DIR), "--engine", "llama.cpp",
        "--out", str(out),
    )  # the local checkpoint folder itself, read through its GGUF header  # fmt: skip
    assert r.code == 0, r.err
    return out, e.models, e.llama_server


def _container(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "plan.json").read_text())["container"])


def _args(out: Path) -> list[str]:
    return list(_container(out)["nodes"][0]["args"])


def _on_host(out: Path, args: list[str]) -> list[str]:
    """The argv with its container paths read from the host folder they are mounted from."""
    volume = _container(out)["volumes"][0]
    inside, host = volume["container"].rstrip("/"), volume["host"].rstrip("/")
    return [host + a[len(inside) :] if a == inside or a.startswith(inside + "/") else a for a in args]


def _verify(base: str, out: Path, folder_checks: bool = False) -> tuple[int, str]:
    """`recipegen verify`: every check, or (folder_checks) only those the folder's plan implies. llama-server
    splits reasoning and tool calls by the model's chat template, with no parser flag in the plan, so the
    folder's own choice runs health, models and chat only."""
    args = ["verify", "--url", base, "--model", _container(out)["served_name"], "--format", "json"]
    r = run_cli(*args, *(["--dir", str(out)] if folder_checks else []))
    return r.code, r.out


def _serve(out: Path, args: list[str], binary: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The generated argv run directly, its paths read from the mounted host folder and its port a free one."""
    port = free_port()
    argv = _on_host(out, args)
    argv[argv.index("--port") + 1] = str(port)
    argv[argv.index("--host") + 1] = "127.0.0.1"
    proc = subprocess.Popen([str(binary), *argv], stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(base + "/health", lambda: proc.poll() is None, 60, log)
    return proc, base


def test_launch_sh_serves_in_docker_and_verify_sh_passes(folder: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out, models, binary = folder
    if not docker_ok():
        pytest.skip("e2e: no Docker engine answers (scripts/test.sh starts one)")
    image = json.loads((out / "plan.json").read_text())["container"]["image"]
    scratch_image(binary, image, tmp_path)  # the folder's own image name: launch.sh finds it and builds nothing
    port = free_port()
    name = f"recipegen-e2e-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "MODEL_DIR": str(models), "PORT": str(port), "DOCKER_GPUS": ""}
    launch = re.sub(r"^NAME=.*$", f"NAME='{name}'", (out / "launch.sh").read_text(), count=1, flags=re.M)
    (out / "launch.sh").write_text(launch)
    started = subprocess.run(["bash", str(out / "launch.sh")], env=env, capture_output=True, text=True, check=False)
    try:
        assert started.returncode == 0, started.stderr
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base + "/health", lambda: True, 60)
        sh = subprocess.run(
            ["bash", str(out / "verify.sh")], env={**env, "BASE_URL": base}, capture_output=True, text=True, check=False
        )
        assert sh.returncode == 0, sh.stdout + sh.stderr
        assert "PASS  chat" in sh.stdout
    finally:
        logs = subprocess.run(["docker", "logs", f"{name}-0"], capture_output=True, text=True, check=False)
        subprocess.run(["docker", "rm", "-f", f"{name}-0"], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True, check=False)
    assert "model loaded" in logs.stdout + logs.stderr or "listening" in logs.stdout + logs.stderr


def test_recipegen_up_starts_and_verifies(folder: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out, _models, binary = folder
    if not docker_ok():
        pytest.skip("e2e: no Docker engine answers (scripts/test.sh starts one)")
    tag = f"recipegen-e2e/llama-server:{uuid.uuid4().hex[:8]}"
    scratch_image(binary, tag, tmp_path)
    port = free_port()
    name = f"recipegen-e2e-up-{uuid.uuid4().hex[:8]}"
    try:
        r = run_cli(
            "up", str(out), "--no-gpu", "--image", tag, "--port", str(port),
            "--name", name, "--timeout", "60",
        )  # fmt: skip
        assert r.code == 0, r.out + r.err
        assert "all checks passed" in r.out, r.out
    finally:
        run_cli("down", str(out))
        subprocess.run(["docker", "rm", "-f", f"{name}-0"], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)


def test_generated_argv_streams_splits_reasoning_and_calls_tools(
    folder: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    out, _models, binary = folder
    proc, base = _serve(out, _args(out), binary, tmp_path / "server.log")
    try:
        code, text = _verify(base, out)
        checks = {c["check"]: c for c in json.loads(text)["checks"]}
        assert code == 0, text
        assert set(checks) == {"health", "models", "chat", "reasoning", "tools"}
        chunks = stream_chunks(base, _container(out)["served_name"])
        deltas = [c["choices"][0]["delta"] for c in chunks if c.get("choices")]  # type: ignore[index]
        said = "".join(str(d.get("content") or "") for d in deltas)
        thought = "".join(str(d.get("reasoning_content") or "") for d in deltas)
        assert (said, thought) == ("391", "17 * 23 = 391"), deltas
    finally:
        proc.terminate()
        proc.wait(10)


def test_verify_catches_reasoning_left_in_content(folder: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """The same server with its reasoning split switched off: `</think>` reaches `content` and verify fails."""
    out, _models, binary = folder
    proc, base = _serve(out, [*_args(out), "--reasoning-format", "none"], binary, tmp_path / "server.log")
    try:
        code, text = _verify(base, out)
        checks = {c["check"]: c for c in json.loads(text)["checks"]}
        assert code != 0
        assert not checks["reasoning"]["ok"]
        assert "</think> leaked into content" in checks["reasoning"]["detail"]
        assert checks["chat"]["ok"]
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_folder_as_model_does_not_start_and_lint_says_so(folder: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out, _models, binary = folder
    args = _args(out)
    model = args.index("--model") + 1
    args[model] = args[model].rsplit("/", 1)[0]  # the folder instead of its file, as recipegen once wrote it
    argv = _on_host(out, args)
    ran = subprocess.run([str(binary), *argv], capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode != 0
    assert "failed to read magic" in ran.stdout + ran.stderr
    script = tmp_path / "broken.sh"
    script.write_text("llama-server " + " ".join(args) + "\n")
    r = run_cli("lint", str(script))
    assert r.code == 1 and "model-not-file" not in r.out  # the text names the rule by what it does
    assert "opens --model as one GGUF file" in r.out


def test_docker_compose_up_serves(folder: tuple[Path, Path, Path], tmp_path: Path) -> None:
    out, models, binary = folder
    if not docker_ok() or subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("e2e: no `docker compose` plugin here (Debian's docker.io ships none)")
    image = json.loads((out / "plan.json").read_text())["container"]["image"]
    scratch_image(binary, image, tmp_path)
    port = free_port()
    # this machine has no GPU: the override drops the folder's NVIDIA device reservation, nothing else
    (tmp_path / "cpu.yml").write_text('services:\n  "engine":\n    deploy: !reset {}\n')
    project = f"recipegen-e2e-{uuid.uuid4().hex[:8]}"
    files = ["-f", str(out / "docker-compose.yml"), "-f", str(tmp_path / "cpu.yml")]
    compose = ["docker", "compose", "-p", project, *files]
    env = {**os.environ, "MODEL_DIR": str(models), "PORT": str(port)}
    try:
        up = subprocess.run([*compose, "up", "-d", "--no-build"], env=env, capture_output=True, text=True, check=False)
        assert up.returncode == 0, up.stderr
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base + "/health", lambda: True, 60)
        code, text = _verify(base, out, folder_checks=True)
        assert code == 0, text
    finally:
        subprocess.run([*compose, "down", "-t", "1"], env=env, capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True, check=False)
