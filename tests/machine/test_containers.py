"""`recipegen detect` and `lint --container` read running engine containers through the real Docker engine:
the image tag (or, where it names no build, the image's version label) and the argv name the build."""

from __future__ import annotations

import datetime as dt
import shutil
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.docker import _client_and_busybox

ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/Llama-3.3-70B-Instruct", "--tp", "2"]


@pytest.fixture(scope="module")
def running(tmp_path_factory) -> Iterator[dict[str, str]]:  # type: ignore[no-untyped-def]
    """Two sleeping containers whose command is an SGLang launch: one under a dated nightly tag, one under a
    private name whose label says the version."""
    client, busybox = _client_and_busybox()
    context = tmp_path_factory.mktemp("engine")
    shutil.copy(busybox, context / "busybox")
    (context / "Dockerfile").write_text(
        "FROM scratch\nCOPY busybox /bin/busybox\nLABEL org.opencontainers.image.version=0.5.3\n"
        'ENTRYPOINT ["/bin/busybox", "sh", "-c", "exec /bin/busybox sleep 300", "argv"]\n'
    )
    unique = uuid.uuid4().hex[:8]
    nightly = f"lmsysorg/sglang:nightly-dev-cu13-20260624-{unique}"  # a tag of its own: nothing real is shadowed
    private = f"recipegen-test/private-sglang:{unique}"
    # no build cache: other runs on this Docker engine remove images made of the same layers at any time
    image, _ = client.images.build(path=str(context), tag=nightly, rm=True, nocache=True)
    image.tag(private)
    names = {"nightly": f"rg-nightly-{unique}", "private": f"rg-private-{unique}"}
    started: list[Any] = []
    try:
        for key, tag in (("nightly", nightly), ("private", private)):
            started.append(client.containers.run(tag, ARGV, name=names[key], detach=True))
        yield names
    finally:
        for container in started:
            container.remove(force=True)
        for tag in (nightly, private):
            client.images.remove(tag, force=True)


def test_detect_names_the_build_of_each_engine_container(cli, running, catalog):
    result = cli("detect", "--containers", "--format", "json")
    assert result.code == 0, result.err
    found = {c["name"]: c for c in result.json()["containers"]}
    nightly, private = found[running["nightly"]], found[running["private"]]
    day = dt.date(2026, 6, 24)
    before = max(
        (b for b in catalog.engines["sglang"].builds if b.provenance == "official" and b.released <= day),
        key=lambda b: b.released,
    )
    assert (nightly["engine"], nightly["build"], nightly["build_resolution"]["rule"]) == (
        "sglang",
        before.id,
        "rolling",
    )
    assert nightly["args"][-2:] == ["--tp", "2"]
    assert private["build"] == "sglang-0.5.3"
    assert private["build_resolution"]["how"].startswith("label org.opencontainers.image.version=0.5.3")
    text = cli("detect", "--containers")
    assert f"lint it: recipegen lint --container {running['private']}" in text.out


def test_lint_reads_a_running_container(cli, running):
    result = cli("lint", "--container", running["private"], "--gpu", "h200", "--format", "json")
    assert result.code in (0, 1), result.err
    document = result.json()
    assert document["build"] == "sglang-0.5.3" and document["where"] == f"container {running['private']}"
    missing = cli("lint", "--container", f"no-such-{uuid.uuid4().hex[:6]}")
    assert missing.code == 2 and "no such container" in missing.err
