"""Commands that act on this machine: detect, preflight, up, down, status, logs, verify."""

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import ChecksFailedError, RecipegenError
from . import values as cli_values
from .options import Format, FormatOpt, Recipes, load_catalog

commands = typer.Typer()

if TYPE_CHECKING:
    from ..artifacts.folder import Folder
    from ..machine.preflight import Options

Dir = Annotated[
    str,
    typer.Argument(metavar="DIR", callback=cli_values.path, help="a folder written by recipegen (holds plan.json)"),
]
ModelDir = Annotated[
    str | None,
    typer.Option(
        "--model-dir", callback=cli_values.path, help="host folder of the weights (default $MODEL_DIR or ~/models)"
    ),
]
Port = Annotated[int | None, typer.Option("--port", min=1, max=65535, help="host port (default $PORT or the engine's)")]
NoGpu = Annotated[
    bool,
    typer.Option("--no-gpu", help="start without GPUs and skip the GPU checks (a CPU-only test image)"),
]
NodeRank = Annotated[int, typer.Option("--node", min=0, help="multi-node: this machine's rank (0 = head)")]
HeadAddr = Annotated[
    str | None,
    typer.Option("--head-addr", callback=cli_values.name, help="multi-node: the head's address (default $HEAD_ADDR)"),
]
DistPort = Annotated[
    int | None, typer.Option("--dist-port", min=1, max=65535, help="multi-node: default $DIST_PORT or 20000")
]
Image = Annotated[
    str | None,
    typer.Option("--image", callback=cli_values.name, help="run this image instead of the plan's (default $IMAGE)"),
]
Name = Annotated[
    str | None, typer.Option("--name", callback=cli_values.name, help="container name prefix (default: the plan's)")
]


def _folder(path: str) -> "Folder":
    from ..artifacts.folder import load

    return load(Path(path))


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise RecipegenError(f"${name}={value!r} is not a number", f"unset {name} or give a port number") from None


def _options(
    folder: "Folder",
    model_dir: str | None,
    port: int | None,
    no_gpu: bool,
    node: int,
    head_addr: str | None,
    dist_port: int | None,
    image: str | None = None,
) -> "Options":
    from ..artifacts.folder import IMAGE_REF
    from ..machine.preflight import Options

    folder.node(node)  # a rank the plan does not have is bad input
    local = folder.container.get("weights_folder")
    if local and model_dir is not None:
        raise RecipegenError(
            f"--model-dir {model_dir} does not apply: this plan mounts the local checkpoint folder {local}",
            "leave --model-dir out, or regenerate the folder with --model pointing at another checkpoint folder",
        )
    image = image or os.environ.get("IMAGE") or None
    head_addr = head_addr or os.environ.get("HEAD_ADDR") or None
    if image is not None and not re.fullmatch(IMAGE_REF, image):
        raise RecipegenError(f"--image {image!r} is not an image reference", "e.g. --image vllm/vllm-openai:v0.33.0")
    if head_addr is not None and not re.fullmatch(r"[A-Za-z0-9_.:-]+", head_addr):
        raise RecipegenError(f"--head-addr {head_addr!r} is not a host name or address", "e.g. --head-addr 10.0.0.1")
    return Options(
        model_dir=Path(model_dir or os.environ.get("MODEL_DIR") or Path.home() / "models"),
        port=port or _env_int("PORT", int(folder.container["port"])),
        gpus=not no_gpu,
        rank=node,
        head_addr=head_addr,
        dist_port=dist_port or _env_int("DIST_PORT", 20000),
        image=image,
    )


@commands.command("detect")
def detect(
    fmt: FormatOpt = Format.text,
    containers: Annotated[
        bool, typer.Option("--containers", help="only the engine containers running here (no GPU needed)")
    ] = False,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """This machine's NVIDIA GPUs (NVML, else nvidia-smi), mapped to catalog hardware, and the engine containers
    running here (through the Docker engine), each named as a build."""
    from ..machine.containers import containers_json, containers_text, engine_containers
    from ..machine.detect import detect_json, detect_text, require_gpus
    from ..machine.dockerhost import connect, try_connect
    from ..machine.localgpu import probe

    machine = None if containers else require_gpus(probe())
    catalog = load_catalog(recipes)
    client = connect() if containers else try_connect()[0]
    found = engine_containers(catalog, client) if client is not None else None
    if fmt is Format.json:
        document = detect_json(catalog, machine) if machine is not None else {}
        document["containers"] = containers_json(found) if found is not None else None
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    lines = [detect_text(catalog, machine)] if machine is not None else []
    if found is not None:
        lines += containers_text(found)
    typer.echo("\n".join(lines))


@commands.command("preflight")
def preflight_(
    path: Dir,
    model_dir: ModelDir = None,
    port: Port = None,
    no_gpu: NoGpu = False,
    node: NodeRank = 0,
    head_addr: HeadAddr = None,
    dist_port: DistPort = None,
    image: Image = None,
    k8s: Annotated[
        bool,
        typer.Option("--k8s", help="check the folder's k8s/ manifests, and the cluster when kubectl has a context"),
    ] = False,
    fmt: FormatOpt = Format.text,
) -> None:
    """Every check the folder's plan implies on this machine, each ✓/✗/? with the fix; exit 1 when one blocks."""
    from ..machine.preflight import as_json, blocking, run_checks, text

    if Path(path).name == "k8s" and (Path(path).parent / "plan.json").is_file():
        path, k8s = str(Path(path).parent), True  # `preflight DIR/k8s` means the manifests
    folder = _folder(path)
    if k8s:
        from ..machine.kube_preflight import k8s_checks

        checks = k8s_checks(folder)
    else:
        checks = run_checks(folder, _options(folder, model_dir, port, no_gpu, node, head_addr, dist_port, image))
    if fmt is Format.json:
        typer.echo(json.dumps({"folder": str(path), "checks": as_json(checks)}, indent=2, ensure_ascii=False))
    else:
        typer.echo(text(checks))
    bad = blocking(checks)
    if bad:
        raise ChecksFailedError(f"preflight: {bad[0].detail}", bad[0].fix or None)


@commands.command("up")
def up(
    path: Dir,
    model_dir: ModelDir = None,
    port: Port = None,
    no_gpu: NoGpu = False,
    node: NodeRank = 0,
    head_addr: HeadAddr = None,
    dist_port: DistPort = None,
    image: Image = None,
    name: Name = None,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="seconds to wait for healthy")] = 1800,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="stop once healthy, without the chat checks")] = False,
) -> None:
    """Preflight, pull or build the image, start the engine as launch.sh does, follow its log until healthy, verify."""
    from ..artifacts.folder import CONTAINER_NAME
    from ..machine.up import UpOptions
    from ..machine.up import up as run_up

    if name is not None and not re.fullmatch(CONTAINER_NAME, name):
        raise RecipegenError(f"--name {name!r} is not a container name", "letters, digits, '_', '.', '-'")
    folder = _folder(path)
    opts = _options(folder, model_dir, port, no_gpu, node, head_addr, dist_port, image)
    run_up(folder, UpOptions(opts, name=name, timeout_s=timeout, verify=not no_verify), typer.echo)


@commands.command("down")
def down(path: Dir) -> None:
    """Remove the containers `recipegen up` started from this folder (and nothing else)."""
    from ..machine.dockerhost import connect, ours

    folder = _folder(path)
    found = ours(connect(), folder.path)
    for container in found:
        container.remove(force=True)
        typer.echo(f"removed {container.name}")
    if not found:
        typer.echo(f"nothing started from {path}")


@commands.command("status")
def status(path: Dir, fmt: FormatOpt = Format.text) -> None:
    """The containers `recipegen up` started from this folder: state and health."""
    from ..machine.dockerhost import connect, ours

    folder = _folder(path)
    rows = []
    for container in ours(connect(), folder.path):
        state = container.attrs.get("State", {})
        rows.append(
            {
                "name": container.name,
                "status": container.status,
                "health": (state.get("Health") or {}).get("Status", "none"),
                "exit_code": state.get("ExitCode"),
                "image": folder.container["image"],
            }
        )
    if fmt is Format.json:
        typer.echo(json.dumps(rows, indent=2))
    elif not rows:
        typer.echo(f"nothing started from {path}")
    else:
        for r in rows:
            typer.echo(f"{r['name']}: {r['status']}, health {r['health']}, exit code {r['exit_code']} ({r['image']})")


@commands.command("logs")
def logs(
    path: Dir,
    tail: Annotated[int, typer.Option("--tail", min=1, help="last lines to show")] = 100,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="keep following the log")] = False,
) -> None:
    """The engine's log of the containers started from this folder."""
    from ..machine.dockerhost import connect, log_lines, ours
    from ..machine.dockerhost import follow as follow_log

    folder = _folder(path)
    found = ours(connect(), folder.path)
    if not found:
        raise RecipegenError(f"nothing started from {path}", f"run `recipegen up {path}` first")
    for container in found:
        if len(found) > 1:
            typer.echo(f"== {container.name}")
        if follow:
            try:
                for chunk in follow_log(container):
                    typer.echo(chunk, nl=False)
            except KeyboardInterrupt:  # Ctrl-C ends following; the container keeps running
                return
        else:
            for line in log_lines(container)[-tail:]:
                typer.echo(line)


@commands.command("verify")
def verify_(
    url: Annotated[
        str, typer.Option("--url", callback=cli_values.name, help="the endpoint, e.g. http://localhost:8000")
    ],
    model: Annotated[
        str | None,
        typer.Option("--model", callback=cli_values.name, help="served model name (default: the first listed)"),
    ] = None,
    path: Annotated[
        str | None,
        typer.Option(
            "--dir", callback=cli_values.path, help="artifact folder: run only the checks its plan's parsers imply"
        ),
    ] = None,
    fmt: FormatOpt = Format.text,
) -> None:
    """verify.sh in Python: health, models, a chat, the reasoning split, a tool-call round trip."""
    from ..machine.verify import ALL_CHECKS, checks_for_container, run_checks, table

    if not url.startswith(("http://", "https://")):
        raise RecipegenError(f"--url {url!r} is not an http(s) URL", "e.g. --url http://localhost:8000")
    health: str = "/health"
    checks: tuple[str, ...] = ALL_CHECKS
    if path is not None:
        container = _folder(path).container
        health, checks = container["health_path"], checks_for_container(container)
        model = model or container["served_name"]
    results = run_checks(url, model, health, checks)
    if fmt is Format.json:
        payload = [{"check": r.name, "ok": r.ok, "detail": r.detail} for r in results]
        typer.echo(json.dumps({"url": url, "model": model, "checks": payload}, indent=2))
    else:
        typer.echo(table(results))
    failed = [r for r in results if not r.ok]
    if failed:
        raise ChecksFailedError(f"verify: {len(failed)} check(s) failed, first {failed[0].name}: {failed[0].detail}")
