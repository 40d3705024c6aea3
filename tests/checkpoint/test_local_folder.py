"""`generate` from a local checkpoint folder: the artifacts mount that folder read-only at the
engine's model path and download nothing; launch.sh, docker-compose.yml and `up` share one mount,
checked by shellcheck, the Compose schema and the real Docker engine (busybox stand-ins)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import uuid
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.support.contract import rejections
from tests.support.data import COMPOSE_SPEC
from tests.support.docker import free_port, run_launch
from tests.support.hubserver import HUB_DATA

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
TOTAL = 16_400_000_000  # what the index says: the plan's memory and README use it


def checkpoint(parent: Path, name: str = "my-qwen3-8b") -> Path:
    """A real Qwen3-8B config.json, an index naming one shard, and that shard (a real, tiny safetensors)."""
    folder = parent / name
    folder.mkdir(parents=True)
    shutil.copy(HUB_DATA / "Qwen" / "Qwen3-8B" / "config.json", folder / "config.json")
    shard = "model-00001-of-00001.safetensors"
    header = json.dumps({"model.embed_tokens.weight": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]}})
    (folder / shard).write_bytes(struct.pack("<Q", len(header)) + header.encode() + bytes(64))
    index = {"metadata": {"total_size": TOTAL}, "weight_map": {"model.embed_tokens.weight": shard}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return folder


def generate(cli, folder: Path | str, out: Path, *extra: str, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    return cli("--gpu", "h100", "--model", str(folder), "--out", str(out), *extra, env=OFFLINE, cwd=cwd)


def shellcheck(out: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is installed by scripts/test.sh")
    scripts = [str(out / "launch.sh"), str(out / "verify.sh")]
    proc = subprocess.run(["shellcheck", "--severity=style", *scripts], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def compose_of(out: Path) -> dict:  # type: ignore[type-arg]
    document = yaml.safe_load((out / "docker-compose.yml").read_text())
    jsonschema.Draft7Validator(json.loads(COMPOSE_SPEC.read_text())).validate(document)
    return document  # type: ignore[no-any-return]


def test_generate_mounts_the_folder_and_downloads_nothing(cli, tmp_path):
    folder = checkpoint(tmp_path / "ckpts")
    out = tmp_path / "out"
    result = generate(cli, folder, out)
    assert result.code == 0, result.err
    plan = json.loads((out / "plan.json").read_text())
    assert plan["request"]["weights_folder"] == str(folder) and plan["request"]["model_facts"] == "files"
    top, container = plan["plans"][0], plan["container"]
    assert top["repo"] == "local/my-qwen3-8b" and top["status"] == "derived"
    assert top["memory"]["weights_gib"] * top["gpus"] == pytest.approx(TOTAL / 2**30, rel=0.01)
    assert container["weights_folder"] == str(folder)
    assert container["volumes"] == [{"host": str(folder), "container": "/models/my-qwen3-8b", "read_only": True}]
    assert container["model_path"] == "/models/my-qwen3-8b" and "/models/my-qwen3-8b" in top["argv"]
    # the served name comes from the folder's name, the same in argv, verify.sh and plan.json
    assert container["served_name"] == "my-qwen3-8b"
    assert top["argv"][top["argv"].index("--served-model-name") + 1] == "my-qwen3-8b"
    assert "MODEL='my-qwen3-8b'" in (out / "verify.sh").read_text()

    launch = (out / "launch.sh").read_text()
    readme = (out / "README.md").read_text()
    assert "hf download" not in launch and "MODEL_DIR" not in launch
    assert f"--mount 'type=bind,\"source={folder}\",target=/models/my-qwen3-8b,readonly'" in launch
    assert "hf download" not in readme and "launch.sh download" not in readme
    assert f"the local checkpoint folder `{folder}`, mounted read-only" in readme
    shellcheck(out)
    volumes = compose_of(out)["services"]["engine"]["volumes"]
    assert volumes == [
        {
            "type": "bind",
            "source": str(folder),
            "target": "/models/my-qwen3-8b",
            "read_only": True,
            "bind": {"create_host_path": False},
        }
    ]
    # lint follows the bind mount to the folder and plans from its files, for both files alike
    for name in ("launch.sh", "docker-compose.yml"):
        lint = cli("lint", str(out / name), "--gpu", "h100", "--format", "json", env=OFFLINE)
        assert lint.code == 0, lint.out + lint.err
        doc = lint.json()
        assert (doc["model"], doc["variant"]) == ("my-qwen3-8b", "bf16")
        assert any(f["code"] == "model-folder" and str(folder) in f["what"] for f in doc["findings"])


def test_a_relative_folder_is_made_absolute_and_reruns_are_byte_identical(cli, tmp_path):
    folder = checkpoint(tmp_path / "work")
    out = tmp_path / "out"
    first = generate(cli, "my-qwen3-8b", out, cwd=tmp_path / "work")
    assert first.code == 0, first.err
    assert "--model my-qwen3-8b made absolute" in first.out and f"the local folder {folder}, mounted" in first.out
    assert f"--model {folder}" in (out / "launch.sh").read_text().splitlines()[3]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = generate(cli, folder, out)  # the absolute path, from anywhere: the same request
    assert again.code == 0 and "unchanged" in again.out
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # --force replaces only what recipegen wrote; the user's notes stay
    (out / "notes.txt").write_text("mine")
    other = generate(cli, folder, out, "--context", "8192")
    assert other.code == 4 and "--force" in other.err
    forced = generate(cli, folder, out, "--context", "8192", "--force")
    assert forced.code == 0, forced.err
    assert (out / "notes.txt").read_text() == "mine" and "'8192'" in (out / "launch.sh").read_text()
    assert folder.joinpath("config.json").is_file() and sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "model-00001-of-00001.safetensors",
        "model.safetensors.index.json",
    ]


def test_the_checkpoint_folder_itself_is_never_written_into(cli, tmp_path):
    folder = checkpoint(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for extra in ((), ("--force",)):
        result = generate(cli, folder, folder, *extra)
        assert result.code == 4, result.err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


HOSTILE_NAMES = [
    'it\'s "quoted"',
    "$(touch {pwn})",
    "`touch {pwn}` ${{HOME}}",
    "a b,c:d=e",
    "-rf --force",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_folder_names_are_encoded_and_never_run(cli, tmp_path, argv_image, name):
    client, image = argv_image
    pwn = tmp_path / "pwned"
    folder = checkpoint(tmp_path / "ck", name.format(pwn=pwn).replace("/", "_"))
    out = tmp_path / "out"
    result = generate(cli, folder, out)
    assert result.code == 0, result.err
    shellcheck(out)
    compose = compose_of(out)
    assert compose["services"]["engine"]["volumes"][0]["source"].replace("$$", "$") == str(folder)
    plan = json.loads((out / "plan.json").read_text())
    planned, target = plan["plans"][0]["argv"][2:], plan["container"]["volumes"][0]["container"]
    printed, attrs = run_launch(client, out, f"{plan['container']['name']}-0", {"HOME": str(tmp_path), "IMAGE": image})
    received, mounts = printed.splitlines(), attrs["Mounts"]
    assert received == [f"<{arg}>" for arg in planned]
    assert [(m["Type"], m["Source"], m["Destination"], m["RW"]) for m in mounts] == [
        ("bind", str(folder), target, False)
    ]
    assert not pwn.exists(), "a value was executed by the shell"


def test_a_name_with_a_newline_is_refused(cli, tmp_path):
    odd = tmp_path / "two\nlines"
    checkpoint(tmp_path, "two\nlines")
    typed = generate(cli, odd, tmp_path / "out")
    assert typed.code == 2 and "control character" in typed.err and len(typed.err.strip().splitlines()) == 1
    link = tmp_path / "plain"
    link.symlink_to(odd)  # the name typed is plain; the folder it resolves to is not
    linked = generate(cli, link, tmp_path / "out")
    assert linked.code == 2 and "control character" in linked.err and len(linked.err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_missing_folder_or_config_is_one_line(cli, tmp_path):
    gone = generate(cli, tmp_path / "nowhere", tmp_path / "out")
    assert gone.code == 2 and "does not exist" in gone.err and len(gone.err.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    bare = generate(cli, empty, tmp_path / "out")
    assert bare.code == 2 and "has no config.json" in bare.err and len(bare.err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_preflight_and_launch_notice_a_folder_that_vanished(cli, tmp_path):
    folder = checkpoint(tmp_path / "ck")
    out = tmp_path / "out"
    assert generate(cli, folder, out).code == 0
    ready = cli("preflight", str(out), "--no-gpu", "--format", "json", env=OFFLINE)
    assert ready.out, ready.err
    found = {c["check"]: c for c in ready.json()["checks"]}
    assert found["weights"]["status"] == "ok" and "all 1 shards" in found["weights"]["detail"]
    assert found["disk"]["status"] == "skip" and found["hf-token"]["status"] == "skip"
    refused = cli("preflight", str(out), "--no-gpu", "--model-dir", str(tmp_path), env=OFFLINE)
    assert refused.code == 2 and "does not apply" in refused.err
    (folder / "config.json").unlink()
    no_config = cli("preflight", str(out), "--no-gpu", "--format", "json", env=OFFLINE)
    weights = {c["check"]: c for c in no_config.json()["checks"]}["weights"]
    assert no_config.code == 1 and weights["status"] == "fail" and "no config.json" in weights["detail"]
    shutil.rmtree(folder)
    vanished = cli("preflight", str(out), "--no-gpu", "--format", "json", env=OFFLINE)
    weights = {c["check"]: c for c in vanished.json()["checks"]}["weights"]
    assert vanished.code == 1 and "does not exist (moved or deleted?)" in weights["detail"]
    assert "regenerate with --model" in weights["fix"]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "DOCKER_GPUS": ""}
    proc = subprocess.run(["bash", str(out / "launch.sh")], capture_output=True, text=True, env=env, timeout=60)
    assert (
        proc.returncode == 1
        and proc.stderr
        == f"{folder}/config.json is missing; regenerate with --model pointing at the checkpoint folder\n"
    )


def test_up_mounts_the_same_folder(cli, tmp_path, images):
    import docker

    client = docker.from_env()
    folder = checkpoint(tmp_path / "ck", "my qwen, local")
    out = tmp_path / "out"
    assert generate(cli, folder, out).code == 0
    name = f"rgtest-{uuid.uuid4().hex[:8]}"
    port = free_port()
    args = ["--no-gpu", "--image", images["serve"], "--port", str(port), "--name", name, "--timeout", "60"]
    try:
        up = cli("up", str(out), *args, env=OFFLINE)
        assert up.code == 0, up.out + up.err
        assert "loading weights for my-qwen-local" in up.out and "all checks passed" in up.out
        attrs = client.containers.get(f"{name}-0").attrs
        spec = json.loads((out / "plan.json").read_text())["container"]
        assert attrs["Config"]["Cmd"] == spec["nodes"][0]["args"]
        assert [(m["Type"], m["Source"], m["Destination"], m["RW"]) for m in attrs["Mounts"]] == [
            ("bind", str(folder), "/models/my-qwen-local", False)
        ]
    finally:
        down = cli("down", str(out))
    assert down.code == 0


def test_a_gguf_folder_runs_the_file_the_plan_picks(cli, tmp_path):
    folder = tmp_path / "my-gguf"
    folder.mkdir()
    (folder / "README.md").write_text("---\nbase_model: Qwen/Qwen3-32B\n---\n# a local GGUF copy\n")
    for name, gib in (("Qwen3-32B-Q4_K_M.gguf", 19), ("Qwen3-32B-Q8_0.gguf", 33)):
        with (folder / name).open("wb") as handle:
            handle.truncate(gib * 2**30)  # sparse: the size is what counts
    out = tmp_path / "out"
    several = cli("--gpu", "h100", "--model", str(folder), "--out", str(out), env=OFFLINE)
    assert several.code == 0, several.err
    plan = json.loads((out / "plan.json").read_text())
    # only the folder's files are candidates: never a catalog variant downloaded from the Hub
    assert {p["repo"] for p in plan["plans"]} == {"local/my-gguf"}
    assert {r["variant"] for r in rejections(plan)} <= {"gguf-q4-k-m", "gguf-q8-0"}
    picked = cli(
        "--gpu", "h100", "--model", str(folder), "--variant", "gguf-q8-0", "--out", str(tmp_path / "q8"), env=OFFLINE
    )
    assert picked.code == 0, picked.err
    container = json.loads((tmp_path / "q8" / "plan.json").read_text())["container"]
    assert container["weights_file"] == "Qwen3-32B-Q8_0.gguf"
    assert container["model_path"] == "/models/my-gguf/Qwen3-32B-Q8_0.gguf"
    assert container["volumes"][0] == {"host": str(folder), "container": "/models/my-gguf", "read_only": True}
    assert container["served_name"] == "my-gguf"  # the folder's name, as for a safetensors folder
    launch = (tmp_path / "q8" / "launch.sh").read_text()
    assert "'/models/my-gguf/Qwen3-32B-Q8_0.gguf'" in launch and "'Qwen3-32B-Q8_0.gguf' ]" in launch
    shellcheck(tmp_path / "q8")
    compose_of(tmp_path / "q8")
    catalog_variant = cli("explain", "--gpu", "h100", "--model", str(folder), "--variant", "fp8", env=OFFLINE)
    assert catalog_variant.code == 2
    pf = cli("preflight", str(tmp_path / "q8"), "--no-gpu", "--format", "json", env=OFFLINE)
    weights = {c["check"]: c for c in pf.json()["checks"]}["weights"]
    assert weights["status"] == "ok" and "Qwen3-32B-Q8_0.gguf is there" in weights["detail"]


def test_a_cache_snapshot_mounts_its_blobs_beside_it_and_other_outside_links_are_refused(cli, tmp_path, argv_image):
    """A Hugging Face cache snapshot links its files to ../../blobs: the container gets blobs/ mounted where
    those links land, so it reads the real files; links anywhere else are refused with the fix."""
    client, _ = argv_image
    repo = tmp_path / "hub" / "models--Qwen--Qwen3-8B"
    plain = checkpoint(repo, "blobs")
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    for f in plain.iterdir():
        (snapshot / f.name).symlink_to(Path("../../blobs") / f.name)
    out = tmp_path / "out"
    result = generate(cli, snapshot, out)
    assert result.code == 0, result.err
    assert f"its links point into {plain}" in result.out
    container = json.loads((out / "plan.json").read_text())["container"]
    assert container["served_name"] == "qwen3-8b" and container["model_path"] == "/models/Qwen3-8B"
    assert container["volumes"] == [
        {"host": str(snapshot), "container": "/models/Qwen3-8B", "read_only": True},
        {"host": str(plain), "container": "/blobs", "read_only": True},
    ]
    shellcheck(out)
    assert [v["target"] for v in compose_of(out)["services"]["engine"]["volumes"]] == ["/models/Qwen3-8B", "/blobs"]
    ready = cli("preflight", str(out), "--no-gpu", "--format", "json", env=OFFLINE).json()["checks"]
    assert next(c for c in ready if c["check"] == "weights")["status"] == "ok"
    # inside the container the snapshot's links resolve: a reader image cats the config through them
    context = tmp_path / "reader"
    context.mkdir()
    shutil.copy(shutil.which("busybox") or "", context / "busybox")
    (context / "Dockerfile").write_text(
        "FROM scratch\nCOPY busybox /bin/busybox\n"
        'ENTRYPOINT ["/bin/busybox", "sh", "-c", "/bin/busybox cat /models/Qwen3-8B/config.json", "reader"]\n'
    )
    tag = f"recipegen-test/reader:{uuid.uuid4().hex[:12]}"
    client.images.build(path=str(context), tag=tag, rm=True)
    try:
        printed, _ = run_launch(client, out, f"{container['name']}-0", {"HOME": str(tmp_path), "IMAGE": tag})
    finally:
        client.images.remove(tag, force=True)
    assert json.loads(printed) == json.loads((plain / "config.json").read_text())
    # a link anywhere else cannot be followed: refused, with the exact fix
    odd = tmp_path / "models--Qwen--Qwen3-8B-odd" / "snapshots" / "def456"
    odd.mkdir(parents=True)
    for f in plain.iterdir():
        (odd / f.name).symlink_to(f)  # absolute links
    refused = generate(cli, odd, tmp_path / "out2")
    assert refused.code == 2 and "holds links to files outside it" in refused.err
    assert f"hf download Qwen/Qwen3-8B-odd --local-dir {Path.home()}/models/Qwen3-8B-odd" in refused.err
    assert len(refused.err.strip().splitlines()) == 1 and not (tmp_path / "out2").exists()
    # links inside the folder are fine
    inside = tmp_path / "inside"
    shutil.copytree(plain, inside)
    (inside / "model.safetensors.index.json").rename(inside / "index.real")
    (inside / "model.safetensors.index.json").symlink_to("index.real")
    assert generate(cli, inside, tmp_path / "ok").code == 0


def test_a_split_gguf_in_a_folder_is_one_variant_loaded_from_its_first_part(cli, tmp_path):
    folder = tmp_path / "split-gguf"
    folder.mkdir()
    (folder / "README.md").write_text("---\nbase_model: Qwen/Qwen3-32B\n---\n")
    for part in (1, 2):
        with (folder / f"Qwen3-32B-Q8_0-{part:05d}-of-00002.gguf").open("wb") as handle:
            handle.truncate(17 * 2**30)
    with (folder / "Qwen3-32B-Q2_K-00001-of-00003.gguf").open("wb") as handle:  # parts 2 and 3 missing
        handle.truncate(4 * 2**30)
    out = tmp_path / "out"
    result = cli("--gpu", "h100", "--model", str(folder), "--out", str(out), env=OFFLINE)
    assert result.code == 0, result.err
    plan = json.loads((out / "plan.json").read_text())
    top, container = plan["plans"][0], plan["container"]
    assert top["variant"] == "gguf-q8-0" and container["weights_file"] == "Qwen3-32B-Q8_0-00001-of-00002.gguf"
    assert top["memory"]["weights_gib"] * top["gpus"] == pytest.approx(34, rel=0.01)  # both parts
    assert "/models/split-gguf/Qwen3-32B-Q8_0-00001-of-00002.gguf" in top["argv"]
    assert "Qwen3-32B-Q2_K-00001-of-00003.gguf" in plan["request"]["understood_as"]  # incomplete: left out
    ready = cli("preflight", str(out), "--no-gpu", "--format", "json", env=OFFLINE).json()["checks"]
    weights = next(c for c in ready if c["check"] == "weights")
    assert weights["status"] == "ok" and "all 2 parts" in weights["detail"]
    (folder / "Qwen3-32B-Q8_0-00002-of-00002.gguf").unlink()
    broken = cli("preflight", str(out), "--no-gpu", "--format", "json", env=OFFLINE).json()["checks"]
    weights = next(c for c in broken if c["check"] == "weights")
    assert weights["status"] == "fail" and "1 of the 2 parts" in weights["detail"]


def test_lint_reads_the_checkpoint_a_docker_run_mounts(cli, tmp_path):
    folder = checkpoint(tmp_path, "mine")
    command = ["docker", "run", "--gpus", "all", "-v", f"{folder}:/model:ro", "vllm/vllm-openai:v0.33.0", "/model"]
    too_long = cli("lint", "--gpu", "rtx-4090", "--", *command, "--max-model-len", "200000", env=OFFLINE)
    assert too_long.code == 1, too_long.out + too_long.err
    assert "✗ error  --max-model-len 200000" in too_long.out
    assert f"the container reads the bind-mounted checkpoint {folder}" in too_long.out
    assert f"write it: recipegen --gpu rtx-4090 --model {folder} --gpus 1" in too_long.out
    gguf = tmp_path / "q8"
    assert (
        cli(
            "--gpu",
            "h100",
            "--model",
            str(_gguf_folder(tmp_path)),
            "--variant",
            "gguf-q8-0",
            "--out",
            str(gguf),
            env=OFFLINE,
        ).code
        == 0
    )
    linted = cli("lint", str(gguf / "launch.sh"), "--gpu", "h100", "--format", "json", env=OFFLINE).json()
    assert (linted["model"], linted["variant"]) == ("qwen3-32b", "gguf-q8-0")


def _gguf_folder(parent: Path) -> Path:
    folder = parent / "my-gguf"
    folder.mkdir()
    (folder / "README.md").write_text("---\nbase_model: Qwen/Qwen3-32B\n---\n")
    for name, gib in (("Qwen3-32B-Q4_K_M.gguf", 19), ("Qwen3-32B-Q8_0.gguf", 33)):
        with (folder / name).open("wb") as handle:
            handle.truncate(gib * 2**30)
    return folder
