"""The real Docker engine for the tests: tiny local images (static busybox, no registry) and launch.sh runs.

`argv_image` prints each argument its entrypoint receives; `images` are the engine stand-ins of
tests/data/fake-engine (one serves the OpenAI API, one crashes with a known failure, one never gets healthy).
Both skip when busybox or a Docker engine is missing (scripts/test.sh installs and starts them).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.data import DATA

FAKE = DATA / "fake-engine"
DOCKERFILE = (
    "FROM scratch\nCOPY busybox /bin/busybox\n"
    'ENTRYPOINT ["/bin/busybox", "sh", "-c", "for a in \\"$@\\"; do echo \\"<$a>\\"; done", "argv"]\n'
)


def _client_and_busybox() -> tuple[Any, str]:
    """A Docker client that answers and the static busybox the images are made of; skips without either."""
    docker = pytest.importorskip("docker")
    busybox = shutil.which("busybox")
    if busybox is None:
        pytest.skip("busybox-static is installed by scripts/test.sh")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # the daemon is started by scripts/test.sh
        pytest.skip(f"no Docker engine reachable: {exc}")
    return client, busybox


@pytest.fixture(scope="module")
def argv_image(tmp_path_factory):
    client, busybox = _client_and_busybox()
    context = tmp_path_factory.mktemp("image")
    shutil.copy(busybox, context / "busybox")
    (context / "Dockerfile").write_text(DOCKERFILE)
    tag = f"recipegen-test/argv:{uuid.uuid4().hex[:12]}"  # other test runs share this Docker engine
    client.images.build(path=str(context), tag=tag, rm=True)
    yield client, tag
    client.images.remove(tag, force=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_launch(client: Any, out: Path, name: str, env: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """Run the folder's launch.sh (no GPUs, a free port) against the real Docker engine; the container
    named `name` is waited for and removed. Returns what it printed and its `docker inspect` attributes."""
    stand_in = out.parent / "hf-stand-in"  # launch.sh always calls `hf download`; no network here
    stand_in.mkdir(exist_ok=True)
    (stand_in / "hf").write_text("#!/bin/sh\nexit 0\n")
    (stand_in / "hf").chmod(0o755)
    path = f"{stand_in}:/usr/local/bin:/usr/bin:/bin"
    env = {"PATH": path, "DOCKER_GPUS": "", "PORT": str(free_port()), **env}
    subprocess.run(["docker", "rm", "-f", name], capture_output=True)
    try:
        proc = subprocess.run(["bash", str(out / "launch.sh")], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        container = client.containers.get(name)
        container.wait(timeout=60)
        return container.logs().decode(), container.attrs
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


def _image(client: Any, root: Path, tag: str, entry: str) -> str:
    busybox = shutil.which("busybox")
    assert busybox is not None
    root.mkdir()
    shutil.copy(busybox, root / "busybox")
    shutil.copy(FAKE / entry, root / "entry")
    shutil.copy(FAKE / "handler.sh", root / "handler")
    (root / "Dockerfile").write_text(
        "FROM scratch\nCOPY busybox /bin/busybox\n"
        'RUN ["/bin/busybox", "--install", "-s", "/bin"]\n'
        "COPY entry /bin/entry\nCOPY handler /bin/handler\n"
        'RUN ["/bin/busybox", "chmod", "+x", "/bin/handler"]\n'
        'ENTRYPOINT ["/bin/busybox", "sh", "/bin/entry"]\n'
    )
    client.images.build(path=str(root), tag=tag, rm=True)
    return tag


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Iterator[dict[str, str]]:  # type: ignore[no-untyped-def]
    client, _ = _client_and_busybox()
    tag = uuid.uuid4().hex[:10]
    base = tmp_path_factory.mktemp("images")
    made = {
        "serve": _image(client, base / "serve", f"recipegen-test/fake-engine:{tag}", "serve.sh"),
        "crash": _image(client, base / "crash", f"recipegen-test/crash-engine:{tag}", "crash.sh"),
    }
    hang = base / "hang"
    hang.mkdir()
    (hang / "Dockerfile").write_text(
        f"FROM {made['serve']}\n"
        'ENTRYPOINT ["/bin/busybox", "sh", "-c", "echo INFO fake engine: compiling kernels; exec sleep 600"]\n'
    )
    made["hang"] = f"recipegen-test/hang-engine:{tag}"
    client.images.build(path=str(hang), tag=made["hang"], rm=True)
    yield made
    for image in made.values():
        client.images.remove(image, force=True)
