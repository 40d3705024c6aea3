"""The real engines of the end-to-end stage: where scripts/e2e/prepare.sh left them, and how to start, wait for
and stop them. Nothing here fakes an engine: a missing one is a skip with one line saying why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

E2E_RECIPES = Path(__file__).resolve().parents[1] / "e2e" / "recipes"
MODEL = "tiny-chatml"
GGUF_DIR = "tiny-chatml-GGUF"  # the folder names the test recipe's variants map to under MODEL_DIR
HF_DIR = "tiny-chatml"


@dataclass(frozen=True)
class Engines:
    models: Path  # MODEL_DIR: holds tiny-chatml/ (Hugging Face) and tiny-chatml-GGUF/
    llama_server: Path | None
    vllm_python: Path | None
    why_no_vllm: str


def engines() -> Engines:
    """What prepare.sh made, read from RECIPEGEN_E2E (its folder); skip when the stage was not prepared."""
    root = os.environ.get("RECIPEGEN_E2E")
    if not root:
        pytest.skip("e2e: RECIPEGEN_E2E is not set (scripts/test.sh prepares the engines and sets it)")
    base = Path(root)
    models = base / "models"
    if not (models / GGUF_DIR).is_dir() or not (models / HF_DIR / "config.json").is_file():
        pytest.skip(f"e2e: no tiny models under {models} (scripts/e2e/prepare.sh did not finish; see its log)")
    server = Path(os.environ.get("RECIPEGEN_LLAMA_SERVER") or base / "llama-server" / "llama-server")
    vllm = base / "vllm-venv" / "bin" / "python"
    note = base / "vllm-skipped.txt"
    return Engines(
        models,
        server if server.is_file() else None,
        vllm if vllm.is_file() and not note.exists() else None,
        note.read_text(encoding="utf-8").strip() if note.exists() else f"no vLLM venv at {vllm}",
    )


def wait_healthy(url: str, alive: object, timeout: float, log: Path | None = None) -> None:
    """Poll url until it answers 200; fail with the log's tail when the engine exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(alive) and not alive():
            break
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    tail = log.read_text(encoding="utf-8", errors="replace")[-3000:] if log and log.exists() else ""
    pytest.fail(f"{url} never answered 200 within {timeout:.0f} s (or the engine exited):\n{tail}")


def stream_chunks(base: str, model: str) -> list[dict[str, object]]:
    """A streamed chat completion's `data:` chunks (the [DONE] marker checked and left out)."""
    body = {"model": model, "stream": True, "max_tokens": 64, "messages": [{"role": "user", "content": "17 * 23?"}]}
    req = urllib.request.Request(
        base + "/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        lines = [ln.decode().strip() for ln in resp if ln.strip()]
    data = [ln.removeprefix("data:").strip() for ln in lines if ln.startswith("data:")]
    assert data and data[-1] == "[DONE]", lines[-3:]
    return [json.loads(d) for d in data[:-1]]


def scratch_image(binary: Path, tag: str, work: Path) -> None:
    """A FROM-scratch image of llama-server and the libraries ldd lists (no registry, ~1 s)."""
    ctx = work / "image"
    ctx.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, ctx / "llama-server")
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False).stdout
    libs = [p for line in out.splitlines() for p in line.split() if p.startswith("/")]
    for lib in libs:
        dest = ctx / lib.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(lib), dest)
    (ctx / "Dockerfile").write_text('FROM scratch\nCOPY . /\nENTRYPOINT ["/llama-server"]\n', encoding="utf-8")
    subprocess.run(["docker", "build", "-q", "-t", tag, str(ctx)], check=True, capture_output=True)


def docker_ok() -> bool:
    return (
        shutil.which("docker") is not None
        and subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0
    )
