"""preflight, up, status, logs and down against the real Docker engine.

The engine stand-ins are tiny local images (static busybox, no registry): one answers the
OpenAI API on the engine's port with netcat and a shell handler; one prints a known failure
and exits. `up` runs them with --no-gpu and --image (launch.sh's IMAGE= override).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.data import DATA, REPO
from tests.support.docker import free_port

FAKE = DATA / "fake-engine"


@pytest.fixture
def folder(cli, tmp_path) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path / "glm folder"
    assert cli("--gpu", "sm80", "--model", "glm-5.2", "--out", str(out)).code == 0
    return out


def weights(models: Path, name: str, shards: int = 2) -> Path:
    where = models / name
    where.mkdir(parents=True)
    files = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
    (where / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {f"w{i}": f for i, f in enumerate(files)}})
    )
    for f in files:
        (where / f).write_bytes(b"\0" * 64)
    return where


def checks(result: Any) -> dict[str, dict[str, str]]:
    return {c["check"]: c for c in result.json()["checks"]}


@pytest.fixture
def docker_client(images):  # type: ignore[no-untyped-def]
    import docker

    return docker.from_env()


def test_up_reaches_healthy_passes_verify_and_down_leaves_nothing(cli, folder, tmp_path, images, docker_client):
    models = tmp_path / "models"
    weights(models, "GLM-5.2-NVFP4")
    name = f"rgtest-{uuid.uuid4().hex[:8]}"
    port = free_port()
    args = ["--no-gpu", "--image", images["serve"], "--model-dir", str(models), "--port", str(port)]
    try:
        r = cli("up", str(folder), *args, "--name", name, "--timeout", "60")
        assert r.code == 0, r.out + r.err
        assert "INFO fake engine: loading weights for glm-5.2" in r.out  # the engine's log, streamed
        assert "healthy after" in r.out and "all checks passed" in r.out
        assert r.out.splitlines()[-1].startswith(f"{name}-0 serves glm-5.2 at http://127.0.0.1:{port}/v1")
        for check in ("health", "models", "chat", "reasoning", "tools"):
            assert f"PASS  {check}" in r.out
        container = docker_client.containers.get(f"{name}-0")
        spec = json.loads((folder / "plan.json").read_text())["container"]
        attrs = container.attrs
        # created exactly as the spec (and so launch.sh / compose) says
        assert attrs["Config"]["Cmd"] == spec["nodes"][0]["args"]
        assert attrs["HostConfig"]["IpcMode"] == "host"
        assert spec["shm_size"].endswith("g")
        assert attrs["HostConfig"]["ShmSize"] == int(spec["shm_size"][:-1]) * 1024**3
        assert attrs["HostConfig"]["Binds"] == [f"{models}:/models:ro"]
        assert attrs["Config"]["Healthcheck"]["Test"] == spec["healthcheck"]["test"]
        assert attrs["HostConfig"]["PortBindings"]["8000/tcp"][0]["HostPort"] == str(port)

        st = cli("status", str(folder), "--format", "json")
        assert [row["name"] for row in st.json()] == [f"{name}-0"] and st.json()[0]["status"] == "running"
        assert "listening on 8000" in cli("logs", str(folder)).out
        again = cli("up", str(folder), *args, "--name", name)
        assert again.code == 1 or again.code == 2
        assert "already" in again.err or "in use" in again.err
    finally:
        down = cli("down", str(folder))
    assert down.code == 0 and f"removed {name}-0" in down.out
    assert docker_client.containers.list(all=True, filters={"name": name}) == []
    assert "nothing started" in cli("status", str(folder)).out


def test_a_container_that_exits_ends_in_the_line_that_killed_it(cli, folder, tmp_path, images, docker_client):
    models = tmp_path / "models"
    weights(models, "GLM-5.2-NVFP4")
    name = f"rgtest-{uuid.uuid4().hex[:8]}"
    try:
        r = cli(
            "up", str(folder), "--no-gpu", "--image", images["crash"], "--model-dir", str(models),
            "--port", str(free_port()), "--name", name, "--timeout", "60",
        )  # fmt: skip
        assert r.code == 1
        assert r.err.count("\n") == 1
        assert r.err.startswith(
            f"error: {name}-0 exited with code 1: vLLM's attention selector found no backend for this layer"
        )
        assert "| ERROR [core.py:708] EngineCore failed to start." in r.out  # the log tail
        # diagnose's explanation, with the folder's model and GPU filling what the log does not say
        assert "✗ vLLM's attention selector found no backend" in r.out and "(vllm-no-attention-backend)" in r.out
        assert "    fix: When a backend refused only for a setting" in r.out and "run `recipegen explain" in r.out
    finally:
        assert cli("down", str(folder)).code == 0
    assert docker_client.containers.list(all=True, filters={"name": name}) == []


def test_an_engine_that_never_gets_healthy_times_out_in_one_sentence(cli, folder, tmp_path, images, docker_client):
    models = tmp_path / "models"
    weights(models, "GLM-5.2-NVFP4")
    name = f"rgtest-{uuid.uuid4().hex[:8]}"
    try:
        r = cli(
            "up", str(folder), "--no-gpu", "--image", images["hang"], "--model-dir", str(models),
            "--port", str(free_port()), "--name", name, "--timeout", "3",
        )  # fmt: skip
        assert r.code == 1 and r.err.count("\n") == 1
        assert r.err.startswith(
            f"error: {name}-0 did not become healthy within 3s: INFO fake engine: compiling kernels"
        )
        assert "diagnose: no known failure in this log" in r.out
    finally:
        assert cli("down", str(folder)).code == 0
    assert docker_client.containers.list(all=True, filters={"name": name}) == []


def test_without_nvidia_runtime_up_stops_at_preflight_in_one_sentence(cli, folder, tmp_path, images, docker_client):
    from recipegen.machine.dockerhost import nvidia_runtime

    if nvidia_runtime(docker_client):
        pytest.skip("this Docker has the NVIDIA runtime")
    models = tmp_path / "models"
    weights(models, "GLM-5.2-NVFP4")
    r = cli("up", str(folder), "--image", images["serve"], "--model-dir", str(models), "--port", str(free_port()))
    assert r.code == 1
    assert r.err.count("\n") == 1
    assert r.err.startswith("error: preflight: Docker has no NVIDIA container runtime")
    assert "nvidia-ctk runtime configure" in r.err
    assert cli("status", str(folder)).out.startswith("nothing started")


def test_a_missing_daemon_is_one_line(cli, folder):
    env = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    r = cli("down", str(folder), env=env)
    assert r.code == 2
    assert r.err.startswith("error: cannot reach the Docker daemon at unix:///nonexistent/docker.sock")
    assert r.err.count("\n") == 1
    r = cli("up", str(folder), "--no-gpu", env=env)
    assert r.code == 1 and r.err.startswith("error: preflight: cannot reach the Docker daemon")
    assert r.err.count("\n") == 1


def test_a_folder_without_plan_is_bad_input(cli, tmp_path):
    r = cli("up", str(tmp_path))
    assert r.code == 2 and "plan.json not found" in r.err


# preflight: each check both ways --------------------------------------------------------------


def test_preflight_all_ready(cli, folder, tmp_path, images):
    models = tmp_path / "models"
    weights(models, "GLM-5.2-NVFP4")
    r = cli(
        "preflight", str(folder), "--no-gpu", "--image", images["serve"], "--model-dir", str(models),
        "--port", str(free_port()), "--format", "json",
    )  # fmt: skip
    assert r.code == 0, r.out + r.err
    c = checks(r)
    assert c["docker"]["status"] == "ok"
    assert c["image"]["status"] == "ok" and images["serve"] in c["image"]["detail"]
    assert c["weights"]["status"] == "ok" and "all 2 shards" in c["weights"]["detail"]
    assert c["port"]["status"] == "ok"
    assert c["nvidia-runtime"]["status"] == "skip" and c["hf-token"]["status"] == "skip"


def test_preflight_missing_shard_blocks(cli, folder, tmp_path, images):
    models = tmp_path / "models"
    where = weights(models, "GLM-5.2-NVFP4", shards=3)
    (where / "model-00002-of-00003.safetensors").unlink()
    r = cli("preflight", str(folder), "--no-gpu", "--model-dir", str(models), "--format", "json")
    assert r.code == 1
    w = checks(r)["weights"]
    assert w["status"] == "fail" and "1 of 3 shards" in w["detail"] and "model-00002-of-00003" in w["detail"]
    assert r.err.startswith("error: preflight: 1 of 3 shards")


def test_preflight_not_downloaded_disk_and_token(cli, tmp_path, images):
    out = tmp_path / "big"
    assert cli("--gpu", "sm80", "--model", "glm-5.2", "--out", str(out)).code == 0
    env = {"HF_TOKEN": "", "HUGGING_FACE_HUB_TOKEN": "", "HF_HOME": str(tmp_path / "hf")}
    r = cli("preflight", str(out), "--no-gpu", "--model-dir", str(tmp_path / "m"), "--format", "json", env=env)
    c = checks(r)
    assert c["weights"]["status"] == "fail" and "not downloaded yet" in c["weights"]["detail"]
    free = shutil.disk_usage(tmp_path).free
    size = json.loads((out / "plan.json").read_text())["container"]["weights_bytes"]
    assert c["disk"]["status"] == ("ok" if free >= size * 1.05 else "fail")
    assert c["hf-token"]["status"] == "unknown" and "gated" in c["hf-token"]["detail"]
    secret = "hf_" + uuid.uuid4().hex
    r = cli("preflight", str(out), "--no-gpu", "--model-dir", str(tmp_path / "m"), "--format", "json",
            env={"HF_TOKEN": secret})  # fmt: skip
    assert checks(r)["hf-token"]["status"] == "ok" and secret not in r.out + r.err


def test_preflight_fails_a_llama_server_model_that_is_a_folder(cli, tmp_path):
    out = tmp_path / "gguf"
    assert cli("--gpu", "rtx-3090", "--model", "gpt-oss-120b", "--gpus", "2", "--host-memory", "128", "--out",
               str(out)).code == 0  # fmt: skip
    args = json.loads((out / "plan.json").read_text())["container"]["nodes"][0]["args"]
    model = args[args.index("--model") + 1]
    host = tmp_path / "m" / model.removeprefix("/models/")
    if model.endswith(".gguf"):  # the plan names the file: a folder there is what this check catches
        host.mkdir(parents=True)
        r = cli("preflight", str(out), "--no-gpu", "--model-dir", str(tmp_path / "m"), "--format", "json")
        assert checks(r)["model-file"]["status"] == "fail"
        host.rmdir()
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_bytes(b"GGUF")
        r = cli("preflight", str(out), "--no-gpu", "--model-dir", str(tmp_path / "m"), "--format", "json")
        assert checks(r)["model-file"]["status"] == "ok"
    else:  # the plan names a folder: llama-server would exit at load, so preflight blocks
        host.mkdir(parents=True)
        r = cli("preflight", str(out), "--no-gpu", "--model-dir", str(tmp_path / "m"), "--format", "json")
        c = checks(r)["model-file"]
        assert c["status"] == "fail" and "opens --model as one GGUF file" in c["detail"]
    # vLLM takes a folder: no such check
    vllm = tmp_path / "vllm"
    assert cli("--gpu", "sm80", "--model", "glm-5.2", "--out", str(vllm)).code == 0
    r = cli("preflight", str(vllm), "--no-gpu", "--model-dir", str(tmp_path / "m"), "--format", "json")
    assert "model-file" not in checks(r)


def test_preflight_disk_enough_for_a_small_model(cli, tmp_path):
    out = tmp_path / "small"
    assert cli("--gpu", "rtx-4090", "--model", "gpt-oss-20b", "--out", str(out)).code == 0
    if shutil.disk_usage(tmp_path).free < 14e9:
        pytest.skip("less than 14 GB free here")
    r = cli("preflight", str(out), "--no-gpu", "--model-dir", str(tmp_path / "m"), "--format", "json")
    assert checks(r)["disk"]["status"] == "ok"


def test_preflight_port_in_use(cli, folder, tmp_path):
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        port = s.getsockname()[1]
        r = cli("preflight", str(folder), "--no-gpu", "--port", str(port), "--format", "json")
    p = checks(r)["port"]
    assert p["status"] == "fail" and f"port {port} is already in use" in p["detail"]


def test_preflight_image_not_here_and_registry_unreachable_is_unknown(cli, folder, tmp_path):
    absent = f"recipegen-test/absent-{uuid.uuid4().hex[:8]}:1"
    r = cli("preflight", str(folder), "--no-gpu", "--image", absent, "--format", "json")
    img = checks(r)["image"]
    assert img["status"] != "ok"
    if img["status"] == "unknown":
        assert "cannot be reached" in img["detail"]


def test_preflight_driver_against_the_image_minimum(cli, folder, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").symlink_to(REPO / "tests" / "support" / "fake_nvidia_smi.py")
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_SMI_DIR": str(REPO / "tests" / "data" / "nvidia-smi" / "h200"),
    }
    import sys

    saved = sys.modules.get("pynvml")
    sys.modules["pynvml"] = None  # type: ignore[assignment]
    try:
        driver = checks(cli("preflight", str(folder), "--format", "json", env=env))["driver"]
        need = json.loads((folder / "plan.json").read_text())["container"]["driver_min"]
        assert driver["status"] == "ok" and f"590.48.01 ≥ {need}" in driver["detail"]
        plan = json.loads((folder / "plan.json").read_text())
        plan["container"]["driver_min"] = "600.10"  # an image built for a newer CUDA than this driver
        (folder / "plan.json").write_text(json.dumps(plan))
        driver = checks(cli("preflight", str(folder), "--format", "json", env=env))["driver"]
        assert driver["status"] == "fail" and "590.48.01 is older than 600.10" in driver["detail"]
        none = checks(cli("preflight", str(folder), "--format", "json", env={"PATH": str(tmp_path)}))["driver"]
        assert none["status"] == "fail" and "no NVIDIA driver" in none["detail"]
        # the folder is for 8x A100; this machine has one H200
        gpus = checks(cli("preflight", str(folder), "--format", "json", env=env))["gpus"]
        assert (
            gpus["status"] == "fail" and "the plan is for a100-80gb, this machine has 1x NVIDIA H200" in gpus["detail"]
        )
        one = tmp_path / "one"
        assert cli("--gpu", "h200", "--model", "gpt-oss-20b", "--out", str(one)).code == 0
        gpus = checks(cli("preflight", str(one), "--format", "json", env=env))["gpus"]
        assert gpus["status"] == "ok" and "1x h200 here" in gpus["detail"]
        four = tmp_path / "four"
        assert cli("--gpu", "h200", "--model", "glm-5.2", "--out", str(four)).code == 0
        gpus = checks(cli("preflight", str(four), "--format", "json", env=env))["gpus"]
        assert gpus["status"] == "fail" and "needs 4x h200 per node, this machine has 1" in gpus["detail"]
    finally:
        if saved is None:
            sys.modules.pop("pynvml", None)
        else:
            sys.modules["pynvml"] = saved


def test_preflight_multi_node_head_address(cli, tmp_path):
    out = tmp_path / "two"
    assert cli("--gpu", "h200", "--model", "glm-5.2", "--nodes", "2", "--out", str(out)).code == 0
    env = {"HEAD_ADDR": ""}
    c = checks(cli("preflight", str(out), "--no-gpu", "--format", "json", env=env))
    assert c["head-address"]["status"] == "fail" and c["same-image"]["status"] == "unknown"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = str(s.getsockname()[1])
        ok = checks(cli("preflight", str(out), "--no-gpu", "--node", "1", "--head-addr", "127.0.0.1",
                        "--dist-port", port, "--format", "json"))  # fmt: skip
    assert ok["head-address"]["status"] == "ok"
    down = checks(cli("preflight", str(out), "--no-gpu", "--node", "1", "--head-addr", "127.0.0.1",
                      "--dist-port", port, "--format", "json"))  # fmt: skip
    assert down["head-address"]["status"] == "fail"
    bad = cli("preflight", str(out), "--node", "5")
    assert bad.code == 2 and "no node with rank 5" in bad.err


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("image", "evil image; rm -rf /", "container.image: String should match pattern"),
        ("model_dir", "..", "container.model_dir: Value error, must name a folder under MODEL_DIR"),
        ("port", 0, "container.port: Input should be greater than or equal to 1"),
        ("surprise", 1, "container.surprise: Extra inputs are not permitted"),
    ],
)
def test_a_tampered_plan_is_refused_before_anything_runs(cli, folder, field, value, message):
    plan = json.loads((folder / "plan.json").read_text())
    plan["container"][field] = value
    (folder / "plan.json").write_text(json.dumps(plan))
    r = cli("preflight", str(folder), "--no-gpu")
    assert r.code == 2 and r.err.count("\n") == 1
    assert message in r.err and "plan.json" in r.err


def test_image_pullable_or_not_from_a_registry_and_up_pulls_it(cli, folder, tmp_path, images, docker_client):
    from tests.support.registry import export, registry

    tag = uuid.uuid4().hex[:8]
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "stamp").write_text(tag)  # one layer no other image has, so the pull fetches it
    (context / "Dockerfile").write_text(f"FROM {images['serve']}\nCOPY stamp /stamp\n")
    local = f"recipegen-test/pull-source:{tag}"
    docker_client.images.build(path=str(context), tag=local, rm=True)
    manifest, blobs = export(docker_client, local)
    docker_client.images.remove(local, force=True)
    repo = f"recipegen-test/pulled-{tag}"
    models = tmp_path / "models"
    weights(models, "GLM-5.2-NVFP4")
    name = f"rgtest-{tag}"
    with registry(repo, "1", manifest, blobs) as port:
        ref, absent = f"127.0.0.1:{port}/{repo}:1", f"127.0.0.1:{port}/{repo}:2"
        common = ["--no-gpu", "--model-dir", str(models), "--port", str(free_port())]
        img = checks(cli("preflight", str(folder), *common, "--image", ref, "--format", "json"))["image"]
        assert img["status"] == "ok" and "pullable" in img["detail"]
        img = checks(cli("preflight", str(folder), *common, "--image", absent, "--format", "json"))["image"]
        assert img["status"] == "fail" and "the registry has no" in img["detail"]
        try:
            r = cli("up", str(folder), *common, "--image", ref, "--name", name, "--timeout", "60")
            assert r.code == 0, r.out + r.err
            assert f"pull {ref}: 1/" in r.out and "all checks passed" in r.out
        finally:
            assert cli("down", str(folder)).code == 0
            docker_client.images.remove(ref, force=True)


def test_preflight_shm_with_ipc_host_or_shm_size(cli, folder, tmp_path):
    import yaml

    from recipegen.catalog.index import builtin_root

    c = checks(cli("preflight", str(folder), "--no-gpu", "--format", "json"))["shm"]
    st = os.statvfs("/dev/shm")
    have = st.f_frsize * st.f_blocks
    want = json.loads((folder / "plan.json").read_text())["container"]["shm_size"]
    assert "--ipc host shares the host's /dev/shm" in c["detail"]
    assert c["status"] == ("ok" if have >= int(want[:-1]) * 1024**3 else "unknown")
    recipe = yaml.safe_load((builtin_root() / "deployments" / "glm-5.2-nvfp4-8xa100-vllm-sm80.yaml").read_text())
    recipe["docker"] = {"ipc_host": False, "shm_size": "8g"}
    user = tmp_path / "r" / "deployments"
    user.mkdir(parents=True)
    (user / f"{recipe['id']}.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    own = tmp_path / "own"
    assert cli("--gpu", "sm80", "--model", "glm-5.2", "--recipes", str(tmp_path / "r"), "--out", str(own)).code == 0
    c = checks(cli("preflight", str(own), "--no-gpu", "--format", "json"))["shm"]
    assert c == {"check": "shm", "status": "ok", "detail": "the container gets --shm-size 8g", "fix": ""}


def test_a_worker_node_gets_the_head_address_and_the_host_network(cli, tmp_path, images, docker_client):
    out = tmp_path / "two"
    assert cli("--gpu", "h200", "--model", "glm-5.2", "--nodes", "2", "--out", str(out)).code == 0
    models = tmp_path / "models"
    spec = json.loads((out / "plan.json").read_text())["container"]
    weights(models, spec["model_dir"])
    name = f"rgtest-{uuid.uuid4().hex[:8]}"
    with socket.socket() as head:  # stands in for the head's rendezvous port
        head.bind(("127.0.0.1", 0))
        head.listen()
        dist = str(head.getsockname()[1])
        try:
            r = cli(
                "up", str(out), "--no-gpu", "--image", images["hang"], "--model-dir", str(models), "--node", "1",
                "--head-addr", "127.0.0.1", "--dist-port", dist, "--name", name,
            )  # fmt: skip
            assert r.code == 0, r.out + r.err
            assert "is a worker: the head serves the API" in r.out
            attrs = docker_client.containers.get(f"{name}-1").attrs
            worker = spec["nodes"][1]
            expected = [a.replace("${HEAD_ADDR}", "127.0.0.1").replace("${DIST_PORT}", dist) for a in worker["args"]]
            assert attrs["Config"]["Cmd"] == expected and expected != worker["args"]
            assert attrs["HostConfig"]["NetworkMode"] == "host"
            assert {"HEAD_ADDR=127.0.0.1", f"DIST_PORT={dist}"} <= set(attrs["Config"]["Env"])
        finally:
            assert cli("down", str(out)).code == 0


def test_preflight_reads_model_dir_and_port_like_launch_sh(cli, folder, tmp_path):
    models = tmp_path / "models"
    weights(models, "GLM-5.2-NVFP4")
    port = str(free_port())
    c = checks(
        cli("preflight", str(folder), "--no-gpu", "--format", "json", env={"MODEL_DIR": str(models), "PORT": port})
    )
    assert c["weights"]["status"] == "ok" and c["port"]["detail"] == f"port {port} is free"
    bad = cli("preflight", str(folder), "--no-gpu", env={"PORT": "eighty"})
    assert bad.code == 2 and bad.err == "error: $PORT='eighty' is not a number — unset PORT or give a port number\n"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--image", "evil image $(id)", "--image 'evil image $(id)' is not an image reference"),
        ("--head-addr", "10.0.0.1; reboot", "--head-addr '10.0.0.1; reboot' is not a host name or address"),
        ("--name", "../x", "--name '../x' is not a container name"),
    ],
)
def test_bad_option_values_are_one_line(cli, folder, option, value, message):
    r = cli("up", str(folder), "--no-gpu", option, value)
    assert r.code == 2 and r.err.startswith(f"error: {message}") and r.err.count("\n") == 1
