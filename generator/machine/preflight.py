"""Every check a folder's plan implies before its engine can start here, each ✓/✗/? with the fix.

✗ blocks `up`; ? means this machine cannot tell (no registry reachable, no fact in the catalog).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..artifacts.folder import Folder
from ..frozen import frozen

if TYPE_CHECKING:
    from .localgpu import Machine

Status = Literal["ok", "fail", "unknown", "skip"]
MARK = {"ok": "✓", "fail": "✗", "unknown": "?", "skip": "–"}
DOWNLOAD_MARGIN = 1.05  # what launch.sh's README asks for: the weights plus 5%


@frozen
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


@frozen
class Options:
    model_dir: Path
    port: int
    gpus: bool = True
    rank: int = 0
    head_addr: str | None = None
    dist_port: int = 20000
    image: str | None = None  # launch.sh's IMAGE= override


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def _size(text: str) -> int | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)b?", text.strip().lower())
    if not m:
        return None
    return int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))


def weights_state(folder: Folder, opts: Options) -> tuple[Status, str, int]:
    """(status, detail, bytes already there) of the weights folder under MODEL_DIR."""
    c = folder.container
    local = c.get("weights_folder")
    where = Path(local) if local else opts.model_dir / c["model_dir"]
    if not where.is_dir():
        if local:
            return "fail", f"the checkpoint folder {where} does not exist (moved or deleted?)", 0
        return "fail", f"{where} does not exist: not downloaded yet", 0
    present = sum(p.stat().st_size for p in where.rglob("*") if p.is_file())
    if local:
        from ..checkpoint.folder import cache_blobs, outside_links

        links = outside_links(where)
        blobs = cache_blobs(where) if links else None
        if links and (blobs is None or str(blobs) != c.get("weights_blobs")):
            return "fail", f"{where} holds links out of it that the container cannot follow ({links[0]})", present
    projector = c.get("weights_mmproj")
    if projector and not (where / projector).is_file():  # llama-server refuses to start without the --mmproj file
        return "fail", f"{where / projector} is missing (the vision projector --mmproj loads)", present
    if c.get("weights_file"):
        target = where / c["weights_file"]
        split = re.search(r"-00001-of-(\d{5})\.gguf$", target.name)
        if split and target.is_file():  # llama.cpp opens the other parts next to the first
            count = int(split.group(1))
            missing = [
                n
                for n in range(2, count + 1)
                if not (target.parent / target.name.replace("-00001-of-", f"-{n:05d}-of-")).is_file()
            ]
            if missing:
                return "fail", f"{len(missing)} of the {count} parts of {target.name} are missing", present
            return "ok", f"all {count} parts of {target.name} are there ({present / 1e9:.1f} GB)", present
        if target.is_file():
            return "ok", f"{target.name} is there ({present / 1e9:.1f} GB)", present
        return "fail", f"{target} is missing", present
    if local and not (where / "config.json").is_file():
        return "fail", f"{where} holds no config.json: not a Hugging Face checkpoint folder", present
    index = where / "model.safetensors.index.json"
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return "fail", f"{index} is unreadable ({exc})", present
        files = sorted(set(weight_map.values()))
        missing = [f for f in files if not (where / f).is_file()]
        if missing:
            return (
                "fail",
                f"{len(missing)} of {len(files)} shards listed in the index are missing (e.g. {missing[0]})",
                present,
            )
        return "ok", f"all {len(files)} shards of the index are there ({present / 1e9:.1f} GB)", present
    shards = list(where.glob("*.safetensors"))
    if shards:
        return "ok", f"{len(shards)} safetensors file(s), no index to check them against", present
    return "fail", f"{where} holds no weights (no index, no *.safetensors)", present


def _free_bytes(path: Path) -> int:
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


def _hf_token() -> bool:
    if os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"):
        return True
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    return (home / "token").is_file()


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def run_checks(folder: Folder, opts: Options) -> list[Check]:
    from . import dockerhost
    from .localgpu import probe

    c = folder.container
    checks: list[Check] = []
    client, how = dockerhost.try_connect()
    checks.append(
        Check("docker", "ok", how)
        if client
        else Check("docker", "fail", how, "start Docker (`sudo systemctl start docker`) or set DOCKER_HOST")
    )
    if not opts.gpus:
        checks.append(Check("nvidia-runtime", "skip", "--no-gpu: the container gets no GPU"))
        checks.append(Check("driver", "skip", "--no-gpu"))
    else:
        if client is None:
            checks.append(Check("nvidia-runtime", "unknown", "Docker does not answer"))
        elif dockerhost.nvidia_runtime(client):
            checks.append(Check("nvidia-runtime", "ok", "Docker knows the nvidia runtime"))
        else:
            checks.append(
                Check(
                    "nvidia-runtime",
                    "fail",
                    "Docker has no NVIDIA container runtime, so no container here can see a GPU",
                    "install nvidia-container-toolkit and run `sudo nvidia-ctk runtime configure --runtime=docker`",
                )
            )
        machine = probe()
        checks.append(_gpus_check(folder, machine))
        need = c.get("driver_min")
        if machine is None or machine.driver is None:
            checks.append(
                Check("driver", "fail", "no NVIDIA driver answers (NVML, nvidia-smi)", "install the NVIDIA driver")
            )
        elif not need:
            checks.append(Check("driver", "unknown", f"driver {machine.driver}; the build states no minimum driver"))
        elif _version(machine.driver) >= _version(need):
            checks.append(Check("driver", "ok", f"driver {machine.driver} ≥ {need} the image's CUDA needs"))
        else:
            checks.append(
                Check(
                    "driver",
                    "fail",
                    f"driver {machine.driver} is older than {need}, the minimum for the image's CUDA",
                    f"upgrade the NVIDIA driver to {need} or newer",
                )
            )
    checks.append(_image_check(client, c, opts.image))
    state, detail, present = weights_state(folder, opts)
    local = c.get("weights_folder")
    fix = (
        "regenerate with --model pointing at the checkpoint folder"
        if local
        else "run `./launch.sh download` (needs the hf CLI)"
    )
    checks.append(Check("weights", state, detail, "" if state == "ok" else fix))
    model_file = _model_file_check(folder, opts)
    if model_file is not None:
        checks.append(model_file)
    if local:
        checks.append(Check("disk", "skip", "the weights are the local checkpoint folder; nothing is downloaded"))
    else:
        checks.append(_disk_check(folder, opts, state == "ok", present))
    checks.append(_shm_check(c))
    port = c["port"] if c["host_network"] else opts.port
    if folder.node(opts.rank)["role"] == "worker":
        checks.append(Check("port", "skip", "a worker serves no API; the head does"))
    elif port_free(port):
        checks.append(Check("port", "ok", f"port {port} is free"))
    else:
        checks.append(
            Check("port", "fail", f"port {port} is already in use", "stop what listens there, or pass --port")
        )
    if local:
        checks.append(Check("hf-token", "skip", "nothing is downloaded: the weights are a local folder"))
    elif state == "ok":
        checks.append(Check("hf-token", "skip", "weights are already here"))
    elif _hf_token():
        checks.append(Check("hf-token", "ok", "a Hugging Face token is present (not shown)"))
    else:
        checks.append(
            Check(
                "hf-token",
                "unknown",
                "no Hugging Face token; needed only if the repo is gated (the catalog does not record gating)",
                "export HF_TOKEN=… before downloading a gated repo",
            )
        )
    if folder.multi_node:
        checks.extend(_multi_node_checks(client, c, opts))
    return checks


def _model_file_check(folder: Folder, opts: Options) -> Check | None:
    """An engine that opens its model option as one file (its own option table: FNAME), pointed at a folder
    here: it would exit at load ("failed to read magic"). None when the engine takes a folder or a repo id."""
    from ..catalog.load import load
    from ..catalog.vocabulary import vocabulary
    from ..errors import RecipegenError

    plans = folder.plan.get("plans") or []
    if not plans:
        return None
    try:
        engine, build = load([]).build(str(plans[0].get("build")))
    except (RecipegenError, KeyError):
        return None  # a build from a --recipes folder: its option table is not at hand here
    flag = engine.flags.model
    if not flag or not build.cli_reference:
        return None
    spec = vocabulary(build.cli_reference).options.get(flag)
    if spec is None or spec.get("value_hint") != "FNAME":
        return None
    args = list(folder.node(opts.rank)["args"])
    if flag not in args[:-1]:
        return None
    value = str(args[args.index(flag) + 1])
    c = folder.container
    inside = str(c["volumes"][0]["container"]).rstrip("/")
    host_root = Path(c["weights_folder"]) if c.get("weights_folder") else opts.model_dir
    if not (value == inside or value.startswith(inside + "/")):
        return None
    host = Path(str(host_root) + value[len(inside) :])
    if host.is_dir():
        return Check(
            "model-file",
            "fail",
            f"{flag} {value} is the folder {host}: {engine.name} opens {flag} as one GGUF file and exits at load",
            f"regenerate the folder with a recipegen that names the .gguf file, or pass {flag} {value}/FILE.gguf "
            "(the first part of a split model)",
        )
    if host.is_file():
        return Check("model-file", "ok", f"{flag} {value} is a file")
    return None  # not downloaded yet: the weights check says so


def _gpus_check(folder: Folder, machine: Machine | None) -> Check:
    """The plan's GPU kind and count per node against the GPUs here."""
    from ..catalog.load import load
    from .detect import match

    request = folder.plan.get("request") or {}
    want_hw, want_n = request.get("hardware"), request.get("gpus_per_node")
    if machine is None:
        return Check(
            "gpus", "fail", "no NVIDIA GPU answers here", "install the NVIDIA driver, or run on the GPU machine"
        )
    catalog = load([])
    found = [match(catalog, g) for g in machine.gpus]
    same = [m for m in found if m.hardware is not None and m.hardware.id == want_hw]
    names = ", ".join(sorted({m.gpu.name for m in found}))
    if not same:
        return Check(
            "gpus",
            "fail",
            f"the plan is for {want_hw}, this machine has {len(found)}x {names}",
            "generate the folder for these GPUs (`recipegen --model …` detects them)",
        )
    if isinstance(want_n, int) and len(same) < want_n:
        return Check(
            "gpus",
            "fail",
            f"the plan needs {want_n}x {want_hw} per node, this machine has {len(same)}",
            "run on a machine with enough GPUs, or generate with --gpus for this one",
        )
    return Check("gpus", "ok", f"{len(same)}x {want_hw} here, the plan uses {want_n} per node")


def _image_check(client: Any, c: dict[str, Any], override: str | None) -> Check:
    from . import dockerhost

    image = override or c["image"]
    if client is None:
        return Check("image", "unknown", f"{image}: Docker does not answer")
    local = dockerhost.image_id(client, image)
    if local:
        return Check("image", "ok", f"{image} is here ({local[:19]})")
    if c["built_locally"] and not override:
        return Check("image", "unknown", f"{image} is not built yet; `recipegen up` builds it from the Dockerfile")
    state, detail = dockerhost.registry_state(client, image)
    if state is True:
        return Check("image", "ok", detail + "; `recipegen up` pulls it")
    if state is False:
        return Check("image", "fail", detail, "check the image name in the recipe")
    return Check("image", "unknown", detail, "`docker pull` it on a machine with network, or check the proxy")


def _disk_check(folder: Folder, opts: Options, complete: bool, present: int) -> Check:
    size = folder.container.get("weights_bytes")
    if complete:
        return Check("disk", "skip", "weights already downloaded")
    if not size:
        return Check("disk", "unknown", "the variant's size is not in the catalog")
    need = int(size * DOWNLOAD_MARGIN) - present
    free = _free_bytes(opts.model_dir)
    if free >= need:
        return Check("disk", "ok", f"{free / 1e9:.0f} GB free under {opts.model_dir} for {need / 1e9:.0f} GB")
    return Check(
        "disk",
        "fail",
        f"{free / 1e9:.0f} GB free under {opts.model_dir}, the weights need {need / 1e9:.0f} GB",
        "free space or point MODEL_DIR / --model-dir at a larger disk",
    )


def _shm_check(c: dict[str, Any]) -> Check:
    want = _size(c["shm_size"])
    if not c["ipc_host"]:
        return Check("shm", "ok", f"the container gets --shm-size {c['shm_size']}")
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return Check("shm", "unknown", "--ipc host shares /dev/shm, which this host does not have")
    have = st.f_frsize * st.f_blocks
    if want is None or have >= want:
        return Check("shm", "ok", f"--ipc host shares the host's /dev/shm ({have / 2**30:.1f} GiB)")
    return Check(
        "shm",
        "unknown",
        f"--ipc host shares the host's /dev/shm of {have / 2**30:.1f} GiB, less than {c['shm_size']}",
        # the size asked for, never below what is already there (have < want here)
        f"enlarge /dev/shm (`sudo mount -o remount,size={-(-max(want, have) // 2**30)}G /dev/shm`) if NCCL fails",
    )


def _multi_node_checks(client: Any, c: dict[str, Any], opts: Options) -> list[Check]:
    from . import dockerhost

    out: list[Check] = []
    if not opts.head_addr:
        out.append(
            Check("head-address", "fail", "HEAD_ADDR is not set", "set HEAD_ADDR (or --head-addr) on every node")
        )
    elif opts.rank == 0:
        out.append(Check("head-address", "ok", f"this is the head ({opts.head_addr})"))
    else:
        try:
            with socket.create_connection((opts.head_addr, opts.dist_port), timeout=3):
                out.append(Check("head-address", "ok", f"{opts.head_addr}:{opts.dist_port} answers"))
        except OSError as exc:
            out.append(
                Check(
                    "head-address",
                    "fail",
                    f"{opts.head_addr}:{opts.dist_port} does not answer ({exc.strerror or exc})",
                    "start the head first, and open the port between the nodes",
                )
            )
    local = dockerhost.image_id(client, opts.image or c["image"]) if client else None
    out.append(
        Check(
            "same-image",
            "unknown",
            f"image id here: {local or 'not present'}; other nodes cannot be seen from here",
            "run `recipegen preflight` on every node and compare the image ids",
        )
    )
    return out


def blocking(checks: list[Check]) -> list[Check]:
    return [c for c in checks if c.status == "fail"]


def text(checks: list[Check]) -> str:
    lines = []
    for c in checks:
        line = f"{MARK[c.status]} {c.name:<15} {c.detail}"
        if c.fix and c.status in {"fail", "unknown"}:
            line += f" — fix: {c.fix}"
        lines.append(line)
    bad = blocking(checks)
    lines.append("ready to start" if not bad else f"{len(bad)} check(s) block the start")
    return "\n".join(lines)


def as_json(checks: list[Check]) -> list[dict[str, str]]:
    return [{"check": c.name, "status": c.status, "detail": c.detail, "fix": c.fix} for c in checks]
